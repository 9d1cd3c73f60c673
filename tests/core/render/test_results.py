"""What a search's answer shows (`/pr find`, `/find`): each PR linked with its marks and the
digest's Full report and Read buttons, within the platform's limits; what "+N more" suggests;
and, in `/pr` answers, related PRs as links and code spans as code, never as backticks."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bot.chat.answers import FoundReports, render_notice
from bot.core.digest.select import StoredReport
from bot.core.models import Format, Locale, Section
from bot.core.query.parser import parse
from bot.core.render.actions import ENTRY_ACTION_PREFIX
from bot.core.render.limits.slack import SLACK_MAX_BLOCKS
from bot.core.render.limits.telegram import TELEGRAM_MAX_BUTTONS
from bot.core.render.renderer import RenderedMessage, Renderer
from bot.core.render.results import narrowings, result_notice
from bot.core.reports.model import Report
from bot.core.reports.parse.parser import parse_file
from tests.fakes.telegram.messages import parse_text
from tests.kits.paths import SAMPLES, SEED
from tests.kits.render import check_platform

RENDERER = Renderer()
SAMPLE_REPORTS = [parse_file(path).report for path in sorted(SAMPLES.glob("*.md"))]
SEED_REPORT = parse_file(SEED).report
GITHUB = "https://github.com/{repo}/pull/{number}"
_SLACK_LINK = re.compile(r"<(https://[^|>]+)\|([^>]+)>")


def _found(reports: list[Report], total: int | None = None, locale: Locale = Locale.EN) -> Any:
    total = len(reports) if total is None else total
    command = "/find rollout since:30d"
    key, params = result_notice(reports, total, "rollout", locale, command=command)
    return FoundReports(key, params, reports=tuple(reports))


def _render(found: FoundReports, fmt: Format, locale: Locale = Locale.EN) -> RenderedMessage:
    message = render_notice(RENDERER, found, fmt, locale)
    check_platform(fmt, [message])
    return message


def _github(report: Report) -> str:
    return GITHUB.format(repo=report.repo, number=report.number)


def _slack_buttons(message: RenderedMessage) -> list[list[dict[str, Any]]]:
    blocks = message.payload["blocks"]
    return [block["elements"] for block in blocks if block["type"] == "actions"]


def test_slack_links_every_result_and_gives_each_full_report_and_read() -> None:
    message = _render(_found(SAMPLE_REPORTS, total=13), Format.SLACK)
    sections = [b["text"]["text"] for b in message.payload["blocks"] if b["type"] == "section"]
    links = [link for text in sections for link in _SLACK_LINK.findall(text)]
    assert links == [(_github(r), r.ref) for r in SAMPLE_REPORTS], "each ref links its PR"
    rows = _slack_buttons(message)
    assert len(rows) == len(SAMPLE_REPORTS), "one actions block per result"
    for row, report in zip(rows, SAMPLE_REPORTS, strict=True):
        pressed = [(b["action_id"], b["value"], b["text"]["text"]) for b in row]
        assert pressed == [
            (ENTRY_ACTION_PREFIX + "report", f"report:{report.ref}", "📄 Full report"),
            (ENTRY_ACTION_PREFIX + "read", f"read:{report.ref}", "✅ Read"),
        ]
    assert sections[-1].startswith("+7 more. Add terms to narrow it, e.g. /find rollout")
    assert "verl-project/verl#7422 ★ [rollout] fix: preserve dummy" in message.payload["text"]


def test_telegram_links_every_result_and_gives_each_a_row_of_its_own() -> None:
    reports = [r for r in SAMPLE_REPORTS if r.repo == "verl-project/verl"]
    reports[0] = reports[0].model_copy(update={"summary": "keep `load_format=dummy` as set"})
    message = _render(_found(reports, locale=Locale.ZH), Format.TELEGRAM, Locale.ZH)
    html = message.payload["text"]
    _, entities = parse_text(html, "HTML", None)
    urls = [entity.url for entity in entities if entity.type == "text_link"]
    assert urls == [_github(report) for report in reports]
    rows = message.payload["reply_markup"]["inline_keyboard"]
    assert rows == [
        [
            {"text": f"📄 #{report.number}", "callback_data": f"report:{report.ref}"},
            {"text": f"✅ #{report.number}", "callback_data": f"read:{report.ref}"},
        ]
        for report in reports
    ]
    assert "`" not in message.text, "a one-liner's code span reads as code"
    assert "<code>load_format=dummy</code>" in html


@pytest.mark.parametrize("fmt", [Format.SLACK, Format.TELEGRAM, Format.TEXT])
def test_a_result_shows_the_digests_marks(fmt: Format) -> None:
    message = _render(_found(SAMPLE_REPORTS), fmt)
    # Slack: the notification text (the blocks' plain text shows each link's URL too)
    shown = (message.payload["text"] if fmt is Format.SLACK else message.text).splitlines()
    lines = {r.ref: next(line for line in shown if r.ref in line) for r in SAMPLE_REPORTS}
    for report in SAMPLE_REPORTS:
        must_read = report.recommendation_level.value == "must_read"
        assert (f"{report.ref} ★ " in lines[report.ref]) == must_read, lines[report.ref]
        if report.impact_level is not None:
            mark = {"high": "🔴", "medium": "🟡", "low": "⚪"}[report.impact_level.value]
            assert f"{mark} (impact: {report.impact_level.value})" in lines[report.ref]


def test_results_from_several_repos_name_the_repo_on_their_buttons() -> None:
    message = _render(_found(SAMPLE_REPORTS), Format.TELEGRAM)
    labels = [row[0]["text"] for row in message.payload["reply_markup"]["inline_keyboard"]]
    assert "📄 verl#7422" in labels and "📄 vllm#24817" in labels


@pytest.mark.parametrize("fmt", [Format.SLACK, Format.TELEGRAM])
def test_many_huge_results_stay_within_the_platforms_limits(fmt: Format) -> None:
    huge = SEED_REPORT.model_copy(update={"title": "&<" * 3000, "summary": "`x` " * 3000})
    reports = [huge.model_copy(update={"number": n}) for n in range(1, 25)]
    message = _render(_found(reports, total=2000), fmt)
    if fmt is Format.SLACK:
        assert len(message.payload["blocks"]) <= SLACK_MAX_BLOCKS
        assert all(len(row) <= 25 for row in _slack_buttons(message))
    else:
        rows = message.payload.get("reply_markup", {}).get("inline_keyboard", [])
        assert sum(len(row) for row in rows) <= TELEGRAM_MAX_BUTTONS


def test_ten_long_results_keep_their_links_with_shorter_lines() -> None:
    long = SEED_REPORT.model_copy(update={"title": "权重" * 200, "summary": "同步" * 200})
    reports = [long.model_copy(update={"number": n}) for n in range(1, 11)]
    message = _render(_found(reports, total=30), Format.TELEGRAM)
    assert message.payload["text"].count('<a href="https://github.com/') == 10
    assert len(message.payload["reply_markup"]["inline_keyboard"]) == 10


def test_more_without_a_narrower_query_says_so_without_an_example() -> None:
    key, params = result_notice(SAMPLE_REPORTS, 13, "rollout", Locale.EN, command=None)
    assert key == "find_results_more_bare" and "example" not in params
    text = _render(FoundReports(key, params, reports=tuple(SAMPLE_REPORTS)), Format.TEXT).text
    assert text.endswith("+7 more. Add terms to narrow it.")


def test_narrowings_add_a_term_to_the_whole_query_and_skip_named_fields() -> None:
    written = [text for text, _ in narrowings(parse("a OR b"), "a OR b")]
    assert written[0] == "(a OR b) impact>=medium"
    for text, query in narrowings(parse("a OR b"), "a OR b"):
        assert query == parse(text)
    named = [text for text, _ in narrowings(parse("x impact:low"), "x impact:low")]
    assert named and not any("impact" in text.removeprefix("x impact:low") for text in named)
    assert next(t for t, _ in narrowings(parse("7422"), "7422")) == "7422 impact>=medium"


@pytest.mark.parametrize("fmt", [Format.SLACK, Format.TELEGRAM])
@pytest.mark.parametrize("pages", [False, True])
def test_related_prs_link_to_github_in_the_same_repo(fmt: Format, pages: bool) -> None:
    item = StoredReport(SEED_REPORT, 1)
    if pages:
        messages = RENDERER.report_pages(item, fmt, Locale.ZH)
    else:
        messages = RENDERER.section(item, Section.RELATED, fmt, Locale.ZH)
    shown = str([message.payload for message in messages])
    assert len(SEED_REPORT.related) == 3
    for related in SEED_REPORT.related:
        url = GITHUB.format(repo=SEED_REPORT.repo, number=related.number)
        linked = f"<{url}|#{related.number}>" if fmt is Format.SLACK else f'<a href="{url}">'
        assert linked in shown, related.number


@pytest.mark.parametrize("path", [SEED, *sorted(SAMPLES.glob("*.md"))], ids=lambda p: p.name)
def test_telegram_pr_answers_show_no_literal_backticks(path: Any) -> None:
    item = StoredReport(parse_file(path).report, 1)
    for locale in Locale:
        answers = [RENDERER.report_pages(item, Format.TELEGRAM, locale)]
        answers += [RENDERER.section(item, s, Format.TELEGRAM, locale) for s in Section]
        for messages in answers:
            check_platform(Format.TELEGRAM, messages)
            assert not [m.text for m in messages if "`" in m.text]
