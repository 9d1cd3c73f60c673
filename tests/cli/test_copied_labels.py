"""A digest labels a PR `verl#7422` (the repo's name without its owner): that label, copied,
names the PR wherever one is named (`/pr verl#7422`, `prdigest pr verl#7422`, `search
verl#7422`), and a bare `search 7422` finds #7422 first, beside the reports whose text holds
the number."""

from __future__ import annotations

import pytest

from bot.chat.commands import parse, parse_mention
from bot.chat.requests import ShowReport
from bot.cli import main
from bot.core.models import Section
from bot.core.query import And, Field, Or, Text, unparse
from bot.core.query import parse as parse_query
from bot.core.reports.model import Report
from bot.core.reports.refs import PRRef, parse_ref
from bot.core.store.lookup import AmbiguousRefError, ReportNotFoundError, find_report
from bot.core.store.reports import ReportStore
from tests.kits.paths import ROOT

EXAMPLES = ROOT / "examples" / "reports"


def test_a_label_is_a_ref_of_a_repo_named_without_its_owner() -> None:
    assert parse_ref("verl#7422") == PRRef(7422, "verl")
    assert str(parse_ref("verl#7422")) == "verl#7422"
    assert parse_ref("verl-project/verl#7422") == PRRef(7422, "verl-project/verl")
    assert parse("pr", "verl#7422 risks") == ShowReport(PRRef(7422, "verl"), Section.RISKS)
    mention = parse_mention("<@U0BOT> what are the risks of verl#7422")
    assert isinstance(mention, ShowReport) and mention.ref == PRRef(7422, "verl")


def test_a_label_or_a_bare_number_in_a_query_names_the_pr() -> None:
    number = Field("number", ":", "7422")
    assert parse_query("verl#7422") == And((Field("repo", ":", "verl"), number))
    assert parse_query("7422") == Or((number, Text("7422")))
    assert parse_query('"7422"') == Text("7422", phrase=True)  # quoted: the word alone
    for text in ("7422", "tag:x 7422", "-7422", "7422 OR tag:x"):
        assert unparse(parse_query(text)) == text
    both = parse_query("verl#7422 OR 12")
    assert unparse(both) == "repo:verl number:7422 OR 12"
    assert parse_query(unparse(both)) == both


async def test_a_label_resolves_against_the_stored_repos_so_named(store: ReportStore) -> None:
    await store.upsert_many(
        [
            (Report(repo="verl-project/verl", number=7422, title="a"), ""),
            (Report(repo="sgl-project/sglang", number=7422, title="b"), ""),
            (Report(repo="verl-project/verl", number=9, title="c"), ""),
            (Report(repo="fork/verl", number=9, title="d"), ""),
        ]
    )
    found = await find_report(store, parse_ref("VERL#7422"))
    assert found.report.repo == "verl-project/verl"
    with pytest.raises(AmbiguousRefError) as ambiguous:
        await find_report(store, parse_ref("verl#9"))
    assert [c.report.repo for c in ambiguous.value.candidates] == [
        "fork/verl",
        "verl-project/verl",
    ]
    with pytest.raises(ReportNotFoundError):
        await find_report(store, parse_ref("vllm#7422"))


@pytest.fixture
def ingested(private_store: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "-q", str(EXAMPLES)]) == 0
    capsys.readouterr()


@pytest.mark.usefixtures("ingested")
def test_the_cli_takes_a_copied_label(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pr", "verl#7422", "--format", "json"]) == 0
    assert '"number": 7422' in capsys.readouterr().out
    assert main(["search", "--locale", "en", "verl#7422"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert [line.split()[0] for line in lines[1:]] == ["verl-project/verl#7422"]


@pytest.mark.usefixtures("ingested")
def test_a_bare_number_finds_that_pr_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "--locale", "en", "7422"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert lines[1].split()[0] == "verl-project/verl#7422"
