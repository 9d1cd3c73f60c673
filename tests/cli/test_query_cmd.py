"""`prdigest query test QUERY [PATH...]` as a user runs it, on examples/reports."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

import bot.core.store.reports as report_store
from bot.cli import main
from tests.kits.paths import ROOT
from tests.kits.wall_clock import set_wall_clock

EXAMPLES = ROOT / "examples" / "reports"
pytestmark = pytest.mark.usefixtures("private_store")


def _lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.strip()]


def test_given_paths_match_a_chinese_two_character_word(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["query", "test", "权重", str(EXAMPLES)]) == 0
    lines = _lines(capsys.readouterr().out)
    matched = [line for line in lines if line.startswith("MATCH")]
    assert [line.split()[1] for line in matched] == [
        "verl-project/verl#7422",
        "verl-project/verl#7458",
    ]
    assert "(权重 in summary, motivation, implementation, risks, related, key_files)" in matched[0]
    assert sum(line.startswith("no match  ") for line in lines) == 4
    assert lines[-1] == "2 of 6 reports match '权重'"


def test_stored_reports_with_json_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "-q", str(EXAMPLES)]) == 0
    capsys.readouterr()
    assert main(["query", "test", "--format", "json", "file:*rollout* impact>=medium"]) == 0
    rows = [json.loads(line) for line in _lines(capsys.readouterr().out)]
    assert len(rows) == 6  # every stored report, matched or not
    assert {(row["repo"], row["number"]) for row in rows if row["match"]} == {
        ("verl-project/verl", 7422),
        ("verl-project/verl", 7458),
    }
    hit = next(row for row in rows if row["number"] == 7422)
    assert hit["matched"] == ["file:*rollout*", "impact>=medium"]
    assert set(hit) == {"repo", "number", "title", "match", "matched"}
    assert all(row["matched"] == [] for row in rows if not row["match"])


def test_matching_prints_only_matches(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", "test", "--matching", "#7501 OR risk:fp8", str(EXAMPLES)]) == 0
    lines = _lines(capsys.readouterr().out)
    assert [line.split()[1] for line in lines[:-1]] == [
        "verl-project/verl#7422",
        "verl-project/verl#7501",
    ]
    assert lines[-1] == "2 of 6 reports match '#7501 OR risk:fp8'"


def test_time_terms_read_the_clock(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """examples/reports/verl-7422.md was merged 2026-08-17 12:51."""
    one_week_later = datetime(2026, 8, 24, 12, 0, tzinfo=UTC)
    set_wall_clock(monkeypatch, one_week_later)
    path = str(EXAMPLES / "verl-7422.md")
    assert main(["query", "test", "since:7d", path]) == 0
    assert capsys.readouterr().out.startswith("MATCH     verl-project/verl#7422")
    assert main(["query", "test", "since:6d", path]) == 0
    assert capsys.readouterr().out.startswith("no match  verl-project/verl#7422")


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("rsk:FP8", "query: unknown field 'rsk' at 1 (did you mean risk?)"),
        ("tag:a (b", "query: unclosed '(' at 7"),
        ("", "query: empty"),
        ("since:yesterday", "query: bad date 'yesterday' at 7 (use 7d, 2w or 2026-11-01)"),
    ],
)
def test_a_query_error_exits_2_with_the_message_on_stderr(
    capsys: pytest.CaptureFixture[str], query: str, message: str
) -> None:
    assert main(["query", "test", query, str(EXAMPLES)]) == 2
    captured = capsys.readouterr()
    assert captured.err == message + "\n"
    assert captured.out == ""


def test_a_bad_path_is_named_and_the_rest_still_answered(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "junk.md").write_text("not a report\n", encoding="utf-8")
    paths = [str(EXAMPLES / "verl-7422.md"), str(tmp_path / "junk.md"), str(tmp_path / "gone")]
    assert main(["query", "test", "tag:rollout", *paths]) == 1
    captured = capsys.readouterr()
    assert _lines(captured.out)[-1] == "1 of 1 report match 'tag:rollout'"
    errors = _lines(captured.err)
    assert len(errors) == 2
    assert errors[0].startswith(f"error: {tmp_path / 'gone'}: no such file or directory")
    assert errors[1].startswith(f"error: {tmp_path / 'junk.md'}: ")


def test_no_store_is_an_error_not_a_new_database(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["query", "test", "tag:rollout"]) == 2
    assert "no database at" in capsys.readouterr().err
    assert not Path(os.environ["BOT_DATABASE_URL"].removeprefix("sqlite:///")).exists()


def test_the_store_is_read_in_chunks_without_missing_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["ingest", "-q", str(EXAMPLES)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(
        report_store, "EACH_CHUNK", 2
    )  # 6 reports: chunks of 2, 2, 2 and an empty one
    # a query that starts with `-` follows `--`, as any argument that looks like an option
    assert main(["query", "test", "--format", "json", "--", "-tag:nothing"]) == 0
    rows = [json.loads(line) for line in _lines(capsys.readouterr().out)]
    assert len({(row["repo"], row["number"]) for row in rows}) == 6
    assert all(row["match"] and row["matched"] == ["-tag:nothing"] for row in rows)


def test_bare_words_that_are_tags_are_tested_as_text_and_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`rollout` is a tag of the sample reports: tested as a word, and the last line says how
    `subscribe` would read the query."""
    assert main(["query", "test", "rollout -ci", str(EXAMPLES)]) == 0
    lines = _lines(capsys.readouterr().out)
    assert lines[-2] == "1 of 6 reports match 'rollout -ci'"
    assert lines[-1] == (
        "(rollout: a tag too, tested here as text; subscribe reads 'tag:rollout -ci')"
    )
    assert main(["query", "test", '"rollout" tag:fix', str(EXAMPLES)]) == 0
    assert "a tag too" not in capsys.readouterr().out
