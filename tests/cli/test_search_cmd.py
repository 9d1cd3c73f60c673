"""`prdigest search QUERY` as a new user tries it (issue 16): ingest examples/reports, then
search a Chinese two-character word and a file glob with an impact level."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from tests.kits.paths import ROOT

EXAMPLES = ROOT / "examples" / "reports"
pytestmark = pytest.mark.usefixtures("private_store")


def _lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.strip()]


@pytest.fixture
def ingested(private_store: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "-q", str(EXAMPLES)]) == 0
    capsys.readouterr()


@pytest.mark.usefixtures("ingested")
def test_a_chinese_two_character_word(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "权重"]) == 0
    lines = _lines(capsys.readouterr().out)
    assert lines[0] == "与「权重」匹配的报告："
    assert [line.split()[0] for line in lines[1:]] == [
        "verl-project/verl#7458",
        "verl-project/verl#7422",
    ]
    must_read = lines[2]
    assert must_read.startswith("verl-project/verl#7422 ★ [rollout] fix: preserve dummy")
    assert "— 移除 dummy 格式覆盖" in must_read and must_read.endswith("（影响：中）")


@pytest.mark.usefixtures("ingested")
def test_a_file_glob_and_an_impact_level_in_english(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--locale", "en", "file:*rollout* impact>=medium"]) == 0
    lines = _lines(capsys.readouterr().out)
    assert lines[0] == "Reports matching file:*rollout* impact>=medium:"
    assert [line.split()[0] for line in lines[1:]] == [
        "verl-project/verl#7458",
        "verl-project/verl#7422",
    ]
    assert lines[1].endswith("(impact: high)") and "★" not in lines[1]


@pytest.mark.usefixtures("ingested")
def test_past_the_limit_more_and_the_query_echoed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--locale", "en", "--limit", "2", "risk:*"]) == 0
    lines = _lines(capsys.readouterr().out)
    assert lines[0] == "Reports matching risk:* (6):"
    assert len(lines) == 4
    assert lines[-1] == (
        "+4 more. Add terms to narrow it, e.g. prdigest search 'risk:* impact>=medium'"
    )


@pytest.mark.usefixtures("ingested")
def test_json_lines_best_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--format", "json", "#7501 OR risk:fp8"]) == 0
    rows = [json.loads(line) for line in _lines(capsys.readouterr().out)]
    assert [(row["repo"], row["number"]) for row in rows] == [
        ("verl-project/verl", 7501),
        ("verl-project/verl", 7422),
    ]
    assert rows[0]["score"] > rows[1]["score"] and rows[0]["exact"] == ["number"]
    assert {"repo", "number", "title", "score"} <= set(rows[0])


@pytest.mark.usefixtures("ingested")
def test_nothing_found_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--locale", "en", "没有这个词"]) == 0
    assert capsys.readouterr().out.strip() == "No report matches 没有这个词."


def test_a_query_error_exits_2_with_its_line_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["search", "rsk:FP8"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == "query: unknown field 'rsk' at 1 (did you mean risk?)"


def test_no_store_yet_is_an_error_and_creates_none(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "权重"]) == 2
    assert "no database at" in capsys.readouterr().err


def test_a_bad_limit_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["search", "--limit", "0", "权重"])
    assert exited.value.code == 2
    assert "must be 1 or more" in capsys.readouterr().err


@pytest.mark.usefixtures("ingested")
def test_a_search_past_its_budget_says_so_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bot.yaml"
    config.write_text("search: {timeout_seconds: 0.000001}\n", encoding="utf-8")
    monkeypatch.setenv("BOT_CONFIG", str(config))

    assert main(["search", "rollout OR sglang OR trainer"]) == 2

    err = capsys.readouterr().err
    assert "took longer than" in err and "narrow the query" in err, err
    assert "Traceback" not in err
