"""What templates receive: plain data cut from a Report or a Digest, never escaped here.

Each platform's template environment escapes every value it prints; these views only choose
and shape report text (the lead sentence, the key-file metadata line) without altering it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from urllib.parse import urlsplit

from bot.core.digest.select import OTHER_TAG, Digest, StoredReport
from bot.core.models import Locale, Verbosity
from bot.core.render.labels import count_label, labels
from bot.core.reports.model import RecommendationLevel, Report

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


_COLONS = ("：", ":", "﹕", "︰")
_POINT = re.compile(r"^\s*(?:\d{1,3}[.)）、．]|[（(]\d{1,3}[)）]|[-*•·])\s*\S")


def lead_sentence(text: str) -> str:
    """The recommendation's opening, on one line: sentences up to LEAD_MIN characters, never
    stopping at a colon (a lead that announces points takes them, up to a sentence end), at
    most LEAD_MAX characters."""
    text = text.strip()
    end = len(text)
    for match in _SENTENCE_END.finditer(text):
        newline = match.group() == "\n"
        stop = match.start() if newline else match.end()
        lead = text[:stop].strip()
        if lead.endswith(_COLONS) or (newline and _after_colon(text, stop)):
            continue
        if newline or len(lead) >= LEAD_MIN:
            end = stop
            break
    lead = " ".join(line.strip() for line in text[:end].splitlines() if line.strip())
    if len(lead) > LEAD_MAX:
        lead = lead[:LEAD_MAX].rstrip() + "…"
    return lead


def _after_colon(text: str, stop: int) -> bool:
    """Whether the line break at `stop` is inside points a colon announced: some line before
    it ends with a colon (then only a sentence end closes the lead)."""
    return any(line.rstrip().endswith(_COLONS) for line in text[:stop].splitlines())


def recommendation_points(text: str) -> tuple[str, ...]:
    """The recommendation's numbered (or bulleted) points, one per line, as written."""
    return tuple(line.strip() for line in text.splitlines() if _POINT.match(line))


def lead_before_points(text: str) -> str:
    """The recommendation up to its first point, on one line (verbosity full shows the points
    themselves below it), at most LEAD_MAX characters."""
    lines: list[str] = []
    for line in text.strip().splitlines():
        if _POINT.match(line):
            break
        if line.strip():
            lines.append(line.strip())
    lead = " ".join(lines)
    return lead[:LEAD_MAX].rstrip() + "…" if len(lead) > LEAD_MAX else lead


def github_pr_url(repo: str, number: int) -> str | None:
    """`https://github.com/{repo}/pull/{n}` when `repo` looks like owner/name."""
    if not _REF_REPO.fullmatch(repo) or repo.startswith(".") or "/." in repo:
        return None
    return link_url(f"https://github.com/{repo}/pull/{number}")


BUTTON_TAG_MAX = 24  # a tag on a button: longer ones are cut with "…"
_BUTTON_UNSAFE = str.maketrans("", "", "<>&@|`*_~\n\r\t")


def button_tag(tag: str) -> str:
    """A tag as a button label shows it (plain text): markup characters dropped, so `<!here>`
    reads `!here` and can never ping, at most BUTTON_TAG_MAX characters."""
    shown = tag.translate(_BUTTON_UNSAFE).strip() or "…"
    return shown if len(shown) <= BUTTON_TAG_MAX else shown[: BUTTON_TAG_MAX - 1] + "…"


def display_ref(repo: str, number: int, show_repo: bool) -> str:
    """`#9087`, or `sglang#9087` (the repo's name without its owner) when the digest mixes
    repos."""
    if not show_repo:
        return f"#{number}"
    name = repo.rsplit("/", 1)[-1].strip() or repo
    return f"{name}#{number}"


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
    label: str = ""  # how the entry names the PR: `#7422`, or `verl#7422` in a multi-repo digest
    pr_url: str | None = None  # the PR on GitHub (linkable), None when repo is not owner/name
    report_url: str | None = None  # the full report (linkable) when it is not pr_url
    tag: str = ""  # the group the entry is shown under (what "Mute tag here" mutes)
    verbosity: Verbosity = Verbosity.STANDARD
    points: tuple[str, ...] = ()  # the recommendation's numbered points (verbosity full)
    flag_count: int = 0  # how many risk flags (verbosity oneline)
    impact_mark: str = ""  # 🔴 🟡 ⚪ (the legend explains them), "" if unknown
    buttons: bool = False  # the platform adds the digest buttons (Read, Snooze, Mute, Report)


# Every text an entry shows can be cut, so an entry fits whatever its fields hold.
CUTTABLE_ENTRY_FIELDS = (
    "title",
    "summary",
    "lead",
    "flags",
    "raw_url",
    "repo",
    "label",
    "tag",
    "matched",
    "posted",
)
MATCHED_SHOWN = 3  # the subscription names a "matched:" line shows before "+N"


def matched_names(names: Sequence[str]) -> str:
    """The subscriptions that chose an entry, as its "matched:" line shows them: the first
    MATCHED_SHOWN, then how many more (`a, b, c +29`)."""
    shown = ", ".join(names[:MATCHED_SHOWN])
    rest = len(names) - MATCHED_SHOWN
    return f"{shown} +{rest}" if rest > 0 else shown


@dataclass(frozen=True, slots=True)
class EntryStyle:
    """How a digest shows its entries: repo names, the group tag, verbosity, buttons."""

    show_repo: bool = False
    tag: str = ""
    verbosity: Verbosity = Verbosity.STANDARD
    buttons: bool = False


def entry_view(
    report: Report,
    updated: bool,
    labels: Mapping[str, str],
    matched: str = "",
    posted: str = "",
    style: EntryStyle | None = None,
) -> EntryView:
    style = style or EntryStyle()
    pr_url = github_pr_url(report.repo, report.number)
    url = link_url(report.url)
    # the full report's link: the report's own URL, unless it is the PR itself
    report_url = url if url is not None and url != pr_url else None
    flags = [flag.strip() for flag in report.risk_flags if flag.strip()]
    impact = labels[f"impact_{report.impact_level.value}"] if report.impact_level else ""
    full = style.verbosity is Verbosity.FULL
    points = recommendation_points(report.recommendation) if full else ()
    lead = lead_before_points(report.recommendation) if points else ""
    level = report.impact_level
    return EntryView(
        ref=report.ref,
        repo=report.repo,
        number=report.number,
        url=url,
        raw_url="" if url else (report.url or ""),
        title=report.title,
        summary=report.summary,
        lead=lead or lead_sentence(report.recommendation),
        impact=impact,
        flags=FLAG_SEPARATOR.join(flags),
        updated=updated,
        must_read=report.recommendation_level is RecommendationLevel.MUST_READ,
        matched=matched,
        posted=posted,
        label=display_ref(report.repo, report.number, style.show_repo),
        pr_url=pr_url,
        report_url=report_url,
        tag=style.tag,
        verbosity=style.verbosity,
        points=points,
        impact_mark=labels[f"impact_mark_{level.value}"] if level else "",
        flag_count=len(flags),
        buttons=style.buttons,
    )


@dataclass(frozen=True, slots=True)
class SynthLine:
    """One line of the synthesis: a `heading` (label), `counts` (label: text), a `pr` (refs,
    text = title), a `file` (text = path, refs) or a `story` (refs, label = kind, note)."""

    kind: str
    text: str = ""
    label: str = ""
    refs: tuple[tuple[str, str | None], ...] = ()
    note: str = ""


@dataclass(frozen=True, slots=True)
class HeaderView:
    """The digest header: title line and rollup."""

    title: str
    date: str
    counts: str  # "8 个 PR · 2 个高影响"
    top_flags: str  # "a ×3 · b ×2"
    since: str = ""  # a first digest: the reports since this ("12-04 09:00")


def header_view(digest: Digest, locale: Locale, when: date | None) -> HeaderView:
    counts = [count_label(locale, "prs", digest.total)]
    if digest.high_impact:
        counts.append(count_label(locale, "high_impact", digest.high_impact))
    flags = FLAG_SEPARATOR.join(f"{flag} ×{count}" for flag, count in digest.top_flags)
    return HeaderView(
        title=digest.title or labels(locale)["untitled"],
        date=digest.period or (when.isoformat() if when else ""),
        counts=" · ".join(counts),
        top_flags=flags,
        since=digest.first_since,
    )


def group_label(tag: str, labels: Mapping[str, str]) -> str:
    return labels["other"] if tag == OTHER_TAG else tag


def as_stored(item: StoredReport | Report) -> tuple[Report, bool]:
    """The report and its "updated" mark, from either a stored item or a bare report."""
    if isinstance(item, StoredReport):
        return item.report, item.revision > 1
    return item, False
