"""What templates receive: plain data cut from a Report or a Digest, never escaped here.

Each platform's template environment escapes every value it prints; these views only choose
and shape report text (the lead sentence, the key-file metadata line) without altering it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from urllib.parse import urlsplit

from bot.core.models import Locale
from bot.core.render.labels import count_label
from bot.core.reports.model import RecommendationLevel, Report
from bot.core.select import OTHER_TAG, Digest, StoredReport

LEAD_MIN = 24  # a lead shorter than this ("值得精读。") takes the next sentence too
LEAD_MAX = 280  # code points; the full recommendation is one `/pr` away
URL_MAX = 2000  # longer URLs are shown as text, never linked
FLAG_SEPARATOR = " · "

_REF_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_SENTENCE_END = re.compile(r"[。！？!?]|\.(?=\s|$)|\n")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def link_url(url: str | None) -> str | None:
    """The URL when it is safe to make clickable: http(s), a host, no markup characters."""
    if not url or len(url) > URL_MAX or not url.isascii():
        return None
    if any(char in url for char in "|<>\"' \\`") or not url.isprintable():
        return None
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return url


def action_ref(view: EntryView, max_bytes: int) -> str:
    """The REF a button carries (`owner/repo#7422`), or just the number when the repo would
    not fit `max_bytes` or would not read back as a REF."""
    ref = f"{view.repo}#{view.number}"
    if _REF_REPO.fullmatch(view.repo) and len(ref.encode()) <= max_bytes:
        return ref
    return str(view.number)


def lead_sentence(text: str) -> str:
    """The recommendation's opening: sentences up to LEAD_MIN characters, one line at most."""
    text = text.strip()
    end = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end() if match.group() != "\n" else match.start()
        if match.group() == "\n" or len(text[:end].strip()) >= LEAD_MIN:
            break
    else:
        end = len(text)
    lead = text[:end].strip()
    if len(lead) > LEAD_MAX:
        lead = lead[:LEAD_MAX].rstrip() + "…"
    return lead


def split_paragraphs(text: str) -> list[str]:
    """Report text as paragraphs (blank-line separated), each kept verbatim."""
    return [part.strip("\n") for part in _PARAGRAPH_BREAK.split(text) if part.strip()]


@dataclass(frozen=True, slots=True)
class EntryView:
    """One PR as a digest line or a card head."""

    ref: str
    repo: str
    number: int
    url: str | None  # linkable (see link_url), else None
    raw_url: str  # shown as text when not linkable
    title: str
    summary: str
    lead: str
    impact: str  # localized label, "" if unknown
    flags: str  # joined risk flags
    updated: bool
    must_read: bool
    matched: str = ""  # the subscriptions that chose it, when a digest serves several
    posted: str = ""  # when a `now` subscription already posted it ("14:02"): a reference only


CUTTABLE_ENTRY_FIELDS = ("title", "summary", "lead", "flags", "raw_url", "repo")


def entry_view(
    report: Report, updated: bool, labels: Mapping[str, str], matched: str = "", posted: str = ""
) -> EntryView:
    url = link_url(report.url)
    flags = [flag.strip() for flag in report.risk_flags if flag.strip()]
    impact = labels[f"impact_{report.impact_level.value}"] if report.impact_level else ""
    return EntryView(
        ref=report.ref,
        repo=report.repo,
        number=report.number,
        url=url,
        raw_url="" if url else (report.url or ""),
        title=report.title,
        summary=report.summary,
        lead=lead_sentence(report.recommendation),
        impact=impact,
        flags=FLAG_SEPARATOR.join(flags),
        updated=updated,
        must_read=report.recommendation_level is RecommendationLevel.MUST_READ,
        matched=matched,
        posted=posted,
    )


@dataclass(frozen=True, slots=True)
class HeaderView:
    """The digest header: title line and rollup."""

    title: str
    date: str
    counts: str  # "8 个 PR · 2 个高影响"
    top_flags: str  # "a ×3 · b ×2"


def header_view(digest: Digest, locale: Locale, when: date | None) -> HeaderView:
    counts = [count_label(locale, "prs", digest.total)]
    if digest.high_impact:
        counts.append(count_label(locale, "high_impact", digest.high_impact))
    flags = FLAG_SEPARATOR.join(f"{flag} ×{count}" for flag, count in digest.top_flags)
    return HeaderView(
        title=digest.title,
        date=when.isoformat() if when else "",
        counts=" · ".join(counts),
        top_flags=flags,
    )


def group_label(tag: str, labels: Mapping[str, str]) -> str:
    return labels["other"] if tag == OTHER_TAG else tag


def as_stored(item: StoredReport | Report) -> tuple[Report, bool]:
    """The report and its "updated" mark, from either a stored item or a bare report."""
    if isinstance(item, StoredReport):
        return item.report, item.revision > 1
    return item, False
