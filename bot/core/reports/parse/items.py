"""Single report items: a key-file bullet, a related-PR bullet, levels, a PR link, a time.

Each reader takes one line's text and returns plain values (or None when it cannot read it);
the section readers decide what to warn about. Index scans only, linear on any input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlsplit

from bot.core.reports.model import ImpactLevel, RecommendationLevel
from bot.core.reports.parse.lines import COLONS, read_number, read_pr_number, split_list

_OPENING_PARENS = "（("
_CLOSING_PARENS = "）)"
# Single character classes only: a scan in C, linear, nothing to backtrack.
_ATTRIBUTE_SEPARATOR = re.compile("[；;，,、]")
_COLON = re.compile("[:：]")
# CJK punctuation (。、「」), ideographs, full-width forms (：，（）)
_CJK = re.compile("[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
# attribute word → KeyFile field; longer words first so `symbols` wins over `symbol`
_ATTRIBUTE_KEYS = {
    "模块": "module",
    "module": "module",
    "类别": "category",
    "category": "category",
    "类型": "kind",
    "kind": "kind",
    "type": "kind",
    "符号": "symbols",
    "symbols": "symbols",
    "symbol": "symbols",
}
_ATTRIBUTES_BY_INITIAL: dict[str, list[tuple[str, str]]] = {}
for _word, _name in _ATTRIBUTE_KEYS.items():
    _ATTRIBUTES_BY_INITIAL.setdefault(_word[0], []).append((_word, _name))
_NOTE_LEADS = ":：-—– \t"


@dataclass
class KeyFileDraft:
    """A key-file bullet being read; `problems` are the attribute pieces not understood."""

    path: str
    module: str | None = None
    category: str | None = None
    kind: str | None = None
    symbols: list[str] = field(default_factory=list)
    note: str = ""
    problems: list[str] = field(default_factory=list)
    more: list[str] = field(default_factory=list)  # the note's wrapped lines, joined once

    def full_note(self) -> str:
        return " ".join(part for part in (self.note, *self.more) if part)


def read_key_file(text: str) -> KeyFileDraft | None:
    """``\\`path\\`（模块 M；类别 C；类型 T；符号 S1, S2）: note`` → a draft, or None."""
    text = text.strip()
    if text.startswith("`"):
        closing_tick = text.find("`", 1)
        if closing_tick <= 1:
            return None
        path, rest = text[1:closing_tick].strip(), text[closing_tick + 1 :].lstrip()
    else:
        end = 0
        while end < len(text) and text[end] not in "（(:： \t":
            end += 1
        path, rest = text[:end], text[end:].lstrip()
        if not ("/" in path or "." in path) or _CJK.search(path):
            return None  # prose, not a path: only a backticked path may look unusual
    if not path:
        return None
    draft = KeyFileDraft(path)
    if rest.startswith(tuple(_OPENING_PARENS)):
        close = _matching_paren(rest)
        if close is None:
            return None
        _read_attributes(rest[1:close], draft)
        rest = rest[close + 1 :]
    draft.note = rest.lstrip(_NOTE_LEADS).strip()
    return draft


def _matching_paren(text: str) -> int | None:
    """Index of the paren closing the one at 0, nested parens allowed (`符号 f()`)."""
    closing = [index for index in (text.find(")"), text.find("）")) if index != -1]
    first_close = min(closing, default=-1)
    if first_close != -1 and "(" not in text[1:first_close] and "（" not in text[1:first_close]:
        return first_close  # the usual case, without a Python loop over the characters
    depth = 0
    for index, char in enumerate(text):
        if char in _OPENING_PARENS:
            depth += 1
        elif char in _CLOSING_PARENS:
            depth -= 1
            if depth == 0:
                return index
    return None


def _read_attributes(text: str, draft: KeyFileDraft) -> None:
    """Pieces start at a known attribute word; a separator before anything else (the `,` in
    `符号 a, b`, or `、` in a module name) belongs to the value. So `；`, `;`, `，` all work."""
    found = [(0, _attribute_at(text, 0))] + [
        (separator.end(), attribute)
        for separator in _ATTRIBUTE_SEPARATOR.finditer(text)
        if (attribute := _attribute_at(text, separator.end())) is not None
    ]
    ends = [start - 1 for start, _ in found[1:]] + [len(text)]
    for (start, attribute), end in zip(found, ends, strict=True):
        if attribute is None:
            if text[start:end].strip():
                draft.problems.append(text[start:end].strip())
            continue
        name, value_at = attribute
        value = text[value_at:end].strip().lstrip(COLONS).strip()
        if name == "symbols":
            draft.symbols.extend(split_list(value))
        else:
            setattr(draft, name, value or None)


def _attribute_at(text: str, start: int) -> tuple[str, int] | None:
    """(field, index after the word) when an attribute word starts at `start` (after spaces)."""
    while start < len(text) and text[start] in " \t":
        start += 1
    for word, name in _ATTRIBUTES_BY_INITIAL.get(text[start : start + 1].lower(), ()):
        end = start + len(word)
        if text[start:end].lower() == word and (end == len(text) or text[end] in " \t:："):
            return name, end
    return None


@dataclass(frozen=True, slots=True)
class RelatedDraft:
    number: int
    title: str
    relation: str


def read_related(text: str) -> RelatedDraft | None:
    """``PR #7434 [vllm] fix: title: relation`` → number, title, relation; None without `#N`."""
    text = text.strip()
    found = read_pr_number(text)
    if found is None:
        return None
    number, pos = found
    rest = text[pos:].lstrip(" \t").lstrip(_NOTE_LEADS)
    title, relation = split_title_relation(rest)
    return RelatedDraft(number, title, relation)


def split_title_relation(text: str) -> tuple[str, str]:
    """Split `title: relation` where both may hold colons.

    The title's own `type:` prefix is never the separator. A PR title is usually ASCII and
    the relation the report's (Chinese) prose, which often has a `：` of its own: so when the
    text turns CJK, the separator is the last colon before the first CJK character. Otherwise
    (all ASCII, or a Chinese title) it is the first colon after the prefix.
    """
    # A prefix-looking first word (`Cleanup: 清理…`) may be the whole title: then look again.
    separators = _colon_separators(text, _title_prefix_end(text)) or _colon_separators(text, 0)
    if not separators:
        return text.strip(), ""
    cjk = _CJK.search(text)
    first_cjk = cjk.start() if cjk else len(text)
    before_cjk = [index for index in separators if index < first_cjk]
    chosen = before_cjk[-1] if before_cjk and first_cjk < len(text) else separators[0]
    return text[:chosen].strip(), text[chosen + 1 :].strip()


def _colon_separators(text: str, start: int) -> list[int]:
    """`：` anywhere, `:` followed by a space or a CJK character (so never `http://`)."""
    found: list[int] = []
    for colon in _COLON.finditer(text, start):
        index = colon.start()
        after = text[index + 1 : index + 2]
        if colon.group() == "：" or after in (" ", "\t") or (after and _CJK.match(after)):
            found.append(index)
    return found


def _title_prefix_end(text: str) -> int:
    """Index after a title's `[mods] type:` / `type(scope)!:` / `[mods]:` prefix, else 0."""
    pos = _skip_spaces(text, 0)
    had_brackets = False
    while text.startswith("[", pos):
        close = text.find("]", pos)
        if close == -1:
            return 0
        pos, had_brackets = _skip_spaces(text, close + 1), True
    word_end = pos
    while word_end < len(text) and (text[word_end].isascii() and text[word_end].isalnum()):
        word_end += 1
    if word_end == pos and not had_brackets:
        return 0
    pos = word_end
    if text.startswith("(", pos):
        close = text.find(")", pos)
        pos = close + 1 if close != -1 else pos
    if text.startswith("!", pos):
        pos += 1
    return pos + 1 if text[pos : pos + 1] in (":", "：") else 0


def _skip_spaces(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


_MUST_READ_LEADS = ("值得精读", "建议精读", "推荐精读", "must read", "must-read")
_SKIM_LEADS = ("可略读", "选读", "skim")
_SKIP_LEADS = ("可跳过", "无需", "skip")
_LEAD_NOISE = " \t*_>`【[「“\"'"


def recommendation_level(recommendation: str) -> RecommendationLevel:
    """The level a recommendation's lead phrase gives (`值得精读。…` → must_read)."""
    lead = recommendation.lstrip(_LEAD_NOISE)[:16].lower()
    if lead.startswith(_MUST_READ_LEADS):
        return RecommendationLevel.MUST_READ
    if lead.startswith(_SKIM_LEADS):
        return RecommendationLevel.SKIM
    if lead.startswith(_SKIP_LEADS):
        return RecommendationLevel.SKIP
    return RecommendationLevel.READ


_LEVEL_WORDS = {
    "高": ImpactLevel.HIGH,
    "中": ImpactLevel.MEDIUM,
    "低": ImpactLevel.LOW,
    "high": ImpactLevel.HIGH,
    "medium": ImpactLevel.MEDIUM,
    "moderate": ImpactLevel.MEDIUM,
    "low": ImpactLevel.LOW,
}
_LEVEL_MARKERS = ("影响程度", "impact level")
_LEVEL_NOISE = " \t:：*`为是较偏"


def level_word(text: str) -> ImpactLevel | None:
    """`中`, `中。`, `High`, `较高` → the level; anything else → None."""
    lead = text.lstrip(_LEVEL_NOISE).lower()
    for word, level in _LEVEL_WORDS.items():
        if lead.startswith(word):
            return level
    return None


def impact_level(text: str) -> ImpactLevel | None:
    """The level after an `影响程度：` (or `Impact level:`) marker anywhere in `text`."""
    lowered = text.lower()  # indexes into `lowered` only: lower() may change the length
    for marker in _LEVEL_MARKERS:
        index = lowered.find(marker)
        while index != -1:
            level = level_word(lowered[index + len(marker) : index + len(marker) + 24])
            if level is not None:
                return level
            index = lowered.find(marker, index + 1)
    return None


def pull_request_ref(url: str) -> tuple[str | None, int | None]:
    """`…/owner/name/pull/7422` → (`owner/name`, 7422); parts it cannot find are None."""
    try:
        path = urlsplit(url.strip()).path if "://" in url else url.strip()
    except ValueError:  # e.g. an unbalanced `[` in the host
        return None, None
    index = path.rfind("/pull/")
    if index == -1:
        return None, None
    found = read_number(path, index + len("/pull/"))
    segments = [segment for segment in path[:index].split("/") if segment]
    repo = "/".join(segments[-2:]) if len(segments) >= 2 else None
    return repo, (found[0] if found else None)


def is_repo_name(text: str) -> bool:
    owner, slash, name = text.partition("/")
    return bool(owner and slash and name) and "/" not in name and not any(c.isspace() for c in text)


def read_time(text: str) -> datetime | None:
    """`2026-08-17 12:51` (naive), ISO 8601 with an offset (aware), `2026/08/17 12:51`."""
    text = text.strip().strip("`").strip()
    if not text or len(text) > 40:
        return None
    try:
        return datetime.fromisoformat(text.replace("/", "-"))
    except ValueError:
        return None
