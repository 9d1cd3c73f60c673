"""The brute-force evaluator, term by term, over a few built reports; explain and needles."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.core.query import (
    TEXT_FIELDS,
    explain,
    matches,
    normalize_text,
    parse,
    text_needles,
)
from bot.core.reports.model import ImpactLevel, KeyFile, RecommendationLevel, Report

NOW = datetime(2026, 11, 10, 12, 0, tzinfo=UTC)
SEEN = datetime(2026, 11, 9, 12, 0, tzinfo=UTC)


def _report(number: int, **fields: Any) -> Report:
    values: dict[str, Any] = {"repo": "verl-project/verl", "title": f"PR {number}"} | fields
    return Report(number=number, **values)


ROLLOUT = _report(
    7422,
    title="[rollout] fix: preserve dummy load_format",
    summary="移除 dummy 格式覆盖，修复分离式 rollout 权重广播",
    risks="FP8 例外被删除",
    risk_flags=["FP8 例外", "跨后端行为变化"],
    impact_level=ImpactLevel.HIGH,
    recommendation_level=RecommendationLevel.MUST_READ,
    key_files=[
        KeyFile(path="verl/workers/rollout/vllm_rollout/vllm_async_server.py", symbols=["X.y"]),
        KeyFile(path="tests/test_standalone_rollout.py"),
    ],
    key_symbols=["SGLangHttpServer.__init__", "LLMServerClient"],
    tags=["rollout", "fix"],
    merged_at=datetime(2026, 11, 5, 9, 0, tzinfo=UTC),
)
CI = _report(
    7458,
    title="[ci] chore: bump the runner",
    motivation="显存 不足 on the CI runner",
    impact_level=ImpactLevel.LOW,
    recommendation_level=RecommendationLevel.SKIP,
    key_files=[KeyFile(path=".github/workflows/ci.yml")],
    tags=["ci", "chore"],
    merged_at=datetime(2026, 10, 1, tzinfo=UTC),
)
SGLANG = _report(
    9087,
    repo="sgl-project/sglang",
    title="Weight sync over NCCL",
    implementation="Adds a weight   sync path",
    impact_level=ImpactLevel.MEDIUM,
    recommendation_level=RecommendationLevel.READ,
    tags=["rollout", "ci"],
)  # no merged_at: time terms read seen_at
REPORTS = {"rollout": ROLLOUT, "ci": CI, "sglang": SGLANG}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("tag:rollout", {"rollout", "sglang"}),
        ("tag:ROLLOUT", {"rollout", "sglang"}),
        ("repo:verl-project/verl", {"rollout", "ci"}),
        ("repo:sglang", {"sglang"}),
        ("repo:sgl-project", set()),
        ("risk:fp8", {"rollout"}),
        ("risk:跨后端", {"rollout"}),
        ("risk:*", {"rollout"}),
        ("impact:high", {"rollout"}),
        ("impact>=medium", {"rollout", "sglang"}),
        ("impact>low", {"rollout", "sglang"}),
        ("impact<=medium", {"ci", "sglang"}),
        ("impact<high", {"ci", "sglang"}),
        ("rec:must_read", {"rollout"}),
        ("rec>=read", {"rollout", "sglang"}),
        ("rec<skim", {"ci"}),
        ("file:vllm_async_server.py", {"rollout"}),
        ("file:*rollout*", {"rollout"}),
        ("file:verl/workers/**", {"rollout"}),
        ("file:VERL/workers/**/*.py", {"rollout"}),
        ("file:workers/**", set()),  # a glob with a slash is anchored at the path's start
        ("file:*.yml", {"ci"}),
        ("symbol:LLMServerClient", {"rollout"}),
        ("symbol:sglanghttpserver", {"rollout"}),
        ("symbol:SGLangHttpServer.__init__", {"rollout"}),
        ("symbol:x.y", {"rollout"}),
        ("symbol:Server", set()),  # a symbol or a dotted part, not any substring
        ("since:7d", {"rollout", "sglang"}),
        ("since:2026-11-05", {"rollout", "sglang"}),
        ("before:2026-11-05", {"ci"}),
        ("before:36h", {"rollout", "ci"}),
        ("since:2d", {"sglang"}),
        ("number:7422", {"rollout"}),
        ("#7458", {"ci"}),
        ("number:7400..7500", {"rollout", "ci"}),
        ("number:7458..", {"ci", "sglang"}),
        ("number:..7422", {"rollout"}),
        ("number>7422", {"ci", "sglang"}),
        ("number<7458", {"rollout"}),
        ("权重", {"rollout"}),
        ("显存", {"ci"}),
        ("runner", {"ci"}),
        ("RUNNER", {"ci"}),
        ('"weight sync"', {"sglang"}),
        ('"sync over"', {"sglang"}),
        ('"weight nccl"', set()),
        # operators
        ("tag:rollout -tag:ci", {"rollout"}),
        ("tag:rollout NOT tag:ci", {"rollout"}),
        ("tag:ci OR risk:*", {"rollout", "ci", "sglang"}),
        ("tag:chore OR impact:high repo:sglang", {"ci"}),
        ("(tag:chore OR impact:high) repo:verl", {"rollout", "ci"}),
        ("-(tag:chore OR impact:high)", {"sglang"}),
        ("NOT NOT tag:fix", {"rollout"}),
        ("权重 OR 显存", {"rollout", "ci"}),
        ("-权重 -显存", {"sglang"}),
    ],
)
def test_terms_and_operators(query: str, expected: set[str]) -> None:
    parsed = parse(query)
    found = {
        name for name, report in REPORTS.items() if matches(parsed, report, seen_at=SEEN, now=NOW)
    }
    assert found == expected


def test_time_terms_need_a_time() -> None:
    """No merged_at and no seen_at: neither since: nor before: holds."""
    assert not matches(parse("since:9999w"), SGLANG, now=NOW)
    assert not matches(parse("before:1h"), SGLANG, now=NOW)
    assert matches(parse("-since:1h"), SGLANG, now=NOW)


def test_unknown_impact_matches_no_level() -> None:
    report = _report(1)
    assert report.impact_level is None
    assert not any(
        matches(parse(q), report, now=NOW) for q in ("impact:low", "impact<high", "impact>=low")
    )


@pytest.mark.parametrize("field", TEXT_FIELDS)
@pytest.mark.parametrize("word", ["权重", "显存", "Rollout", "weight sync"])
def test_every_text_field_is_searched(field: str, word: str) -> None:
    text = f"前文{word}后文" if word[0] > "\u2e80" else f"the {word} path"
    report = _report(1, **{field: text}) if field != "title" else _report(1, title=text)
    query = parse(f'"{word}"') if " " in word else parse(word)
    assert matches(query, report, now=NOW)
    assert explain(query, report, now=NOW) == [f"{_shown(word)} in {field}"]
    other = _report(2, **{field: "前文后文 nothing here"}) if field != "title" else _report(2)
    assert not matches(query, other, now=NOW)


def _shown(word: str) -> str:
    normal = normalize_text(word)
    return f'"{normal}"' if " " in normal else normal


def test_explain_names_each_matching_term() -> None:
    query = parse('tag:rollout -tag:ci (权重 OR "weight sync") impact>=medium #7422')
    assert explain(query, ROLLOUT, now=NOW) == [
        "tag:rollout",
        "-tag:ci",
        "权重 in summary",
        "impact>=medium",
        "number:7422",
    ]
    assert explain(query, CI, now=NOW) == []


def test_text_needles_are_the_top_level_words() -> None:
    assert text_needles(parse('权重 "Weight  Sync" tag:x (a OR b) -c 权重')) == [
        "权重",
        "weight sync",
    ]
    assert text_needles(parse("权重 OR 显存")) == []
    assert text_needles(parse("-权重")) == []
    assert text_needles(parse("ＦＰ８")) == ["fp8"]


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("ＦＰ８  Quant", "fp8 quant"),
        ("Straße", "strasse"),
        (" 权重\n广播 ", "权重 广播"),
        ("ﬁle", "file"),
    ],
)
def test_normalize_text(raw: str, normal: str) -> None:
    assert normalize_text(raw) == normal


def test_a_phrase_matches_across_line_breaks_and_full_width_forms() -> None:
    report = _report(1, risks="ＦＰ８\n  scaling may drift")
    assert matches(parse('"fp8 scaling"'), report, now=NOW)


@pytest.mark.parametrize(
    ("query", "text", "found"),
    [
        ("ci", "Fix CI: flaky", True),
        ("ci", "ci: bump", True),
        ("ci", "a specific decision", False),
        ("ci", "用ci测试", True),  # Chinese beside a Latin word is no word character
        ("roll*", "enroll the rollouts", True),
        ("roll*", "enroll", False),
        ("format", "load_format=dummy", False),  # `_` is a word character
        ("load_format", "load_format=dummy", True),
        ("fp8", "ＦＰ８ kernels", True),
        ("fp8", "fp80", False),
        ("重同", "权重同步", True),  # Chinese by substring
        ('"weight sync"', "the weight syncer", False),
        ('"weight sync"', "weight sync: done", True),
        ('"#12"', "see a#12.", True),  # no word character at its start; its end is whole
        ('"#12"', "see #123", False),
    ],
)
def test_latin_words_are_matched_whole(query: str, text: str, found: bool) -> None:
    report = Report(repo="verl-project/verl", number=1, title="t", summary=text)
    assert matches(parse(query), report, now=NOW) is found
