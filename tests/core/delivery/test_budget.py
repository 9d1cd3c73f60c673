"""One budget per digest: new entries first, then unread ones as they fit (one line each), and
"+N more" counts each PR that is not shown exactly once, so its button always has a page."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.core.delivery.reading import Shown, entry_rows, with_unread
from bot.core.digest.select import Digest, DigestFilter, StoredReport, build_digest
from bot.core.models import Format, Locale
from bot.core.render.options import DigestOptions
from bot.core.render.renderer import Renderer
from bot.core.reports.model import ImpactLevel, RecommendationLevel, Report
from bot.core.store.editions import EntryKind
from bot.core.store.reading import Marks, ShownPR

NOW = datetime(2026, 11, 30, 9, 30, tzinfo=UTC)
REPO = "verl-project/verl"


def _item(number: int, seq: int) -> StoredReport:
    report = Report(
        repo=REPO,
        number=number,
        title=f"[rollout] fix: change {number}",
        url=f"http://prhub.com.cn/{REPO}/pull/{number}",
        summary=f"一句话 {number}",
        recommendation="值得精读。",
        recommendation_level=RecommendationLevel.MUST_READ,
        impact_level=ImpactLevel.HIGH,
        tags=["rollout"],
    )
    return StoredReport(report, seq)


def _shown_before(items: list[StoredReport]) -> Shown:
    prs = tuple(ShownPR(REPO, i.report.number, "rollout", NOW - timedelta(hours=1)) for i in items)
    return Shown(
        NOW - timedelta(days=1), prs, {pr.key: item for pr, item in zip(prs, items, strict=True)}
    )


def _scenario() -> tuple[list[StoredReport], Digest]:
    """13 must-read PRs the `now` route posted an hour ago; the daily (max_items 3) gets them
    as new, and the chat as 11 still unread (two were marked read)."""
    items = [_item(7700 + n, n) for n in range(1, 14)]
    digest = build_digest(items, DigestFilter(max_items=3), "team")
    marks = Marks(read=frozenset({f"{REPO}#7701", f"{REPO}#7702"}))
    return items, with_unread(digest, _shown_before(items), marks, 7, NOW)


def test_more_counts_only_prs_that_are_not_shown_and_each_has_a_page_row() -> None:
    items, digest = _scenario()
    shown, behind = entry_rows(digest, items, [tuple(i.seq for i in items)])
    assert len(shown) == 3, "one budget: the three new entries fill it, no unread on top"
    assert {r.kind for r in shown} == {EntryKind.NEW}
    assert digest.more == len(behind) == 10
    numbers = [r.item.report.number for r in shown] + [i.report.number for i in behind]
    assert len(numbers) == len(set(numbers)) == 13, "every PR once: shown or behind +N more"


def test_unread_fills_what_the_new_entries_leave_and_the_rest_goes_behind_more() -> None:
    old = [_item(7600 + n, n) for n in range(1, 9)]
    new = [_item(7800, 100)]
    digest = build_digest(new, DigestFilter(max_items=5), "team")
    digest = with_unread(digest, _shown_before(old), Marks(), 7, NOW)
    assert (len(digest.unread), len(digest.unread_over), digest.more) == (4, 4, 4)
    shown, behind = entry_rows(digest, new, [tuple(range(200))])
    assert len(behind) == digest.more
    assert [r.kind for r in shown].count(EntryKind.UNREAD) == len(digest.unread)


def test_unread_entries_are_one_line_each_and_the_digest_keeps_its_size() -> None:
    old = [_item(7600 + n, n) for n in range(1, 4)]
    digest = build_digest([_item(7800, 100)], DigestFilter(max_items=5), "team")
    digest = with_unread(digest, _shown_before(old), Marks(), 7, NOW)
    text = "\n".join(m.text for m in Renderer().digest(digest, Format.TEXT, Locale.EN))
    unread_part = text[text.index("[Still unread (3)]") : text.index("\n[rollout]\n")]
    assert len([line for line in unread_part.splitlines() if "#76" in line]) == 3
    assert "一句话 7601" not in unread_part, "the one-liner was shown in full before"
    slack = Renderer().digest(digest, Format.SLACK, Locale.EN, options=DigestOptions())
    assert sum(len(m.payload.get("blocks", [])) for m in slack) <= 20
