"""Issue 14 #1: the Report bounds every field the store bounds, and names what was wrong.

`number` (and a related PR's number) is 1..2^31-1, the store's INTEGER; JSON `true` is not a
number. `repo` is `owner/name` of at most 200 characters (the store's VARCHAR(200)), so a path
or a Slack mention is refused. Title and repo are never blank. `merged_at` must stay in range
once converted to UTC, as the store keeps it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.core.reports.model import MAX_PR_NUMBER, MAX_REPO_LENGTH, STORED, Report
from bot.core.reports.parse.parser import NotAReportError, parse_json, parse_markdown

BASE: dict[str, Any] = {"repo": "verl-project/verl", "number": 7422, "title": "fix: x"}


def _reason(change: dict[str, Any]) -> str:
    with pytest.raises(NotAReportError) as caught:
        parse_json(json.dumps({**BASE, **change}), "r.json")
    return caught.value.reason


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"number": 10**30}, "number: a PR number is at most 2147483647"),
        ({"number": 2**31}, "number: a PR number is at most 2147483647"),
        ({"number": True}, "number: a boolean is not a PR number"),
        ({"number": False}, "number: a boolean is not a PR number"),
        ({"number": 7.5}, "number: Input should be a valid integer"),
        ({"number": "7e3"}, "number: Input should be a valid integer"),
        ({"number": -3}, "number: Input should be greater than or equal to 1"),
        ({"repo": "../../etc/passwd"}, "repo: expected owner/name"),
        ({"repo": "<!channel>"}, "repo: expected owner/name"),
        ({"repo": "owner/.."}, "repo: expected owner/name"),
        ({"repo": "owner/name/extra"}, "repo: expected owner/name"),
        ({"repo": "owner name/x"}, "repo: expected owner/name"),
        ({"repo": "   "}, "repo: expected owner/name"),
        ({"repo": "o/" + "r" * 199}, "repo: a repository name is at most 200 characters, got 201"),
        ({"title": " \t\n"}, "title: blank (only whitespace)"),
        ({"merged_at": "9999-12-31T23:00-14:00"}, "merged_at: out of range once converted to UTC"),
        ({"merged_at": "0001-01-01T00:30+01:00"}, "merged_at: out of range once converted to UTC"),
        ({"related": [{"number": 10**12}]}, "related.0.number: a PR number is at most"),
        ({"related": [{"number": True}]}, "related.0.number: a boolean is not a PR number"),
    ],
)
def test_a_field_outside_the_store_bounds_is_refused_by_name(
    change: dict[str, Any], reason: str
) -> None:
    assert _reason(change).startswith(reason), _reason(change)


@pytest.mark.parametrize(
    ("change", "number", "repo"),
    [
        ({"number": MAX_PR_NUMBER}, MAX_PR_NUMBER, BASE["repo"]),
        ({"number": "7422"}, 7422, BASE["repo"]),  # a quoted number is still the number
        ({"number": 7422.0}, 7422, BASE["repo"]),  # and a whole float
        ({"repo": "o/" + "r" * (MAX_REPO_LENGTH - 2)}, 7422, "o/" + "r" * 198),
        ({"repo": "Org_1/my.repo-2"}, 7422, "Org_1/my.repo-2"),
    ],
)
def test_the_bounds_themselves_are_accepted(change: dict[str, Any], number: int, repo: str) -> None:
    report = parse_json(json.dumps({**BASE, **change})).report
    assert (report.number, report.repo) == (number, repo)


def test_a_markdown_number_past_the_store_is_refused() -> None:
    text = "# PR #3000000000\n\n- 仓库：verl-project/verl\n- 标题：x\n"
    with pytest.raises(NotAReportError, match="number: a PR number is at most 2147483647"):
        parse_markdown(text, "r.md")


def test_what_the_store_holds_is_read_back_unchecked() -> None:
    """A row written before the bounds existed must not break a digest that reads it."""
    old = {**BASE, "repo": "legacy repo", "number": 2**40, "title": " "}
    report = Report.model_validate(old, context=STORED)
    assert (report.repo, report.number) == ("legacy repo", 2**40)
