"""Field length caps at parse time: a report over a cap is kept with the field cut ("…") and a
warning naming the field and the cap, whether it came as Markdown or as JSON."""

from __future__ import annotations

import json

import pytest

from bot.core.reports.parse.caps import (
    CODE_MAX,
    KEY_FILES_MAX,
    LONG_TEXT_MAX,
    RISK_FLAGS_MAX,
    SUMMARY_MAX,
    TAGS_MAX,
    TITLE_MAX,
)
from bot.core.reports.parse.parser import parse_json, parse_markdown

HEADER = (
    "# PR #12 完整报告\n\n- 仓库：`o/r`\n- 标题：{title}\n"
    "- 合并时间：2026-09-01 10:00\n- 原文链接：https://github.com/o/r/pull/12\n\n"
)


def markdown(title: str = "fix: t", summary: str = "s", motivation: str = "m") -> str:
    return (
        HEADER.format(title=title)
        + f"# 执行摘要\n\n- 一句话：{summary}\n- 推荐动作：值得精读。\n\n"
        + f"# 功能与动机\n\n{motivation}\n"
    )


def warned(warnings: list[str], field: str, cap: int) -> bool:
    return any(w.startswith(f"{field} ") and str(cap) in w for w in warnings)


@pytest.mark.parametrize(
    ("field", "cap", "text"),
    [
        ("title", TITLE_MAX, markdown(title="x" * 5000)),
        ("summary", SUMMARY_MAX, markdown(summary="s" * 50_000)),
        ("motivation", LONG_TEXT_MAX, markdown(motivation="&" * 500_000)),
    ],
)
def test_markdown_field_over_its_cap_is_cut_with_a_warning(field: str, cap: int, text: str) -> None:
    result = parse_markdown(text)
    value = getattr(result.report, field)
    assert len(value) == cap
    assert value.endswith("…")
    assert warned(result.warnings, field, cap), result.warnings


def json_report(**fields: object) -> str:
    base: dict[str, object] = {"repo": "o/r", "number": 12, "title": "fix: t"}
    return json.dumps(base | fields)


def test_json_fields_over_their_caps_are_cut_with_warnings() -> None:
    result = parse_json(
        json_report(
            title="t" * 1000,
            risks="r" * 100_000,
            risk_flags=[f"f{i}" for i in range(RISK_FLAGS_MAX + 10)],
            tags=["x" * 1000] + [f"t{i}" for i in range(TAGS_MAX + 10)],
            key_files=[{"path": f"a/{i}.py"} for i in range(KEY_FILES_MAX + 1)],
            snippets=[{"path": "a.py", "code": "c" * (CODE_MAX + 1)}],
        )
    )
    report, warnings = result.report, result.warnings
    assert len(report.title) == TITLE_MAX and report.title.endswith("…")
    assert len(report.risks) == LONG_TEXT_MAX
    assert report.risk_flags == [f"f{i}" for i in range(RISK_FLAGS_MAX)]
    assert len(report.key_files) == KEY_FILES_MAX
    assert len(report.snippets[0].code) == CODE_MAX and report.snippets[0].code.endswith("…")
    assert len(report.tags) == TAGS_MAX  # the title "ttt…" gives no tags of its own
    for field, cap in [
        ("title", TITLE_MAX),
        ("risks", LONG_TEXT_MAX),
        ("risk_flags", RISK_FLAGS_MAX),
        ("tags", TAGS_MAX),
        ("key_files", KEY_FILES_MAX),
        ("snippets.0.code", CODE_MAX),
    ]:
        assert warned(warnings, field, cap), (field, warnings)


def test_markdown_and_json_of_one_long_report_give_the_same_report() -> None:
    md = parse_markdown(markdown(motivation="长" * 100_000)).report
    js = parse_json(md.model_dump_json()).report
    assert js == md


def test_a_report_within_every_cap_has_no_cap_warning() -> None:
    result = parse_markdown(markdown(motivation="m" * (LONG_TEXT_MAX - 10)))
    assert not any("characters: cut" in w or "items: the first" in w for w in result.warnings)
