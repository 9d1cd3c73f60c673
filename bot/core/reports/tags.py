"""Tags for a report: from its title, from its key-file paths, and from explicit lists.

Digests group PRs by tag and chats subscribe by tag, so every tag is lowercase, trimmed and
unique, in a stable order: title tags, then path-rule tags (rule order), then explicit tags.

Title forms understood (anything else is free text and gives no title tags):

- verl style: ``[1/N] [BREAKING][mod_a, mod_b] type: text`` → ``mod_a, mod_b, type, breaking``;
- conventional commits: ``fix(scope)!: text`` → ``fix, scope, breaking``;
- ``Revert "…"`` (nested too) → ``revert`` plus the tags of the quoted title.

Titles come from outside (GitHub, report files, the HTTP API), so the scanner never raises and
runs in linear time: hand-written loops plus anchored regexes without nested quantifiers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

__all__ = ["MAX_TITLE_TAG_LENGTH", "TagRule", "derive_tags", "path_tags", "title_tags"]


@dataclass(frozen=True, slots=True)
class TagRule:
    """Labeler-style rule: a key-file path matching any of `paths` (globs) gives `tag`.

    Globs: `**` matches any number of directories (zero included), `*` anything within one
    path segment, `?` one character; everything else is literal.
    """

    paths: tuple[str, ...]
    tag: str

    def __post_init__(self) -> None:
        # Rules are cache keys, so a list from YAML/JSON becomes a tuple; a lone string is one glob.
        paths: Iterable[str] = self.paths
        object.__setattr__(self, "paths", (paths,) if isinstance(paths, str) else tuple(paths))


def derive_tags(
    title: str,
    paths: Iterable[str] = (),
    rules: Sequence[TagRule] = (),
    explicit: Iterable[str] = (),
) -> list[str]:
    """All tags of a report: title tags, then path-rule tags, then explicit tags, deduplicated."""
    return _unique_clean([*title_tags(title), *path_tags(paths, rules), *explicit])


# --- titles -------------------------------------------------------------------------------

# Longer "tags" in a title are prose caught by the scanner (`[see the long note below]`), not
# labels anyone subscribes to; explicit and rule tags are chosen by people and kept as they are.
MAX_TITLE_TAG_LENGTH = 64
_OPENING_BRACKETS = frozenset("[【")
_CLOSING_BRACKET = re.compile(r"[\]】]")
_NON_SPACE = re.compile(r"\S")
_LIST_SEPARATOR = re.compile(r"[,，、]")
_PROGRESS = re.compile(r"\s*\d+\s*/\s*(?:\d+|n)\s*", re.IGNORECASE)  # `[1/N]`, via fullmatch
# A word, an optional `(scope)`, an optional `!`, then a colon (ASCII or full-width). Used with
# .match() at one position and no quantifier nests in another, so a miss costs one pass.
_TYPE_PREFIX = re.compile(r"([A-Za-z][A-Za-z0-9_-]*)(?:\(([^()\n]*)\))?(!)?[ \t]*([:：])")
_REVERT_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’"}


class _Brackets(NamedTuple):
    modules: list[str]
    breaking: bool
    end: int  # where the text after the bracket groups starts
    seen: bool  # any bracket group at all, even an ignored `[1/N]`


class _TypePrefix(NamedTuple):
    kind: str
    scopes: list[str]
    breaking: bool


def title_tags(title: str) -> list[str]:
    """Tags a PR title carries: modules, type (and scopes), `breaking`; `revert` for reverts."""
    start, end = _trim(title, 0, len(title))
    end = _without_pr_number(title, start, end)
    start, end, reverted = _unwrap_reverts(title, start, end)
    tags = ["revert"] if reverted else []
    brackets = _read_brackets(title, start, end)
    prefix = _read_type_prefix(title, brackets.end, end, strict=not brackets.seen)
    tags.extend(brackets.modules)
    if prefix is not None:
        tags.append(prefix.kind)
        tags.extend(prefix.scopes)
    if brackets.breaking or (prefix is not None and prefix.breaking):
        tags.append("breaking")
    return [tag for tag in _unique_clean(tags) if len(tag) <= MAX_TITLE_TAG_LENGTH]


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    found = _NON_SPACE.search(text, start, end)
    if found is None:
        return end, end
    start = found.start()
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _without_pr_number(text: str, start: int, end: int) -> int:
    """Drop a squash-merge suffix ` (#7422)`, so a revert's closing quote is last again."""
    if end - start < 4 or text[end - 1] != ")":
        return end
    pos = end - 2
    while pos > start and text[pos].isdigit():
        pos -= 1
    if pos == end - 2 or pos - 1 < start or text[pos] != "#" or text[pos - 1] != "(":
        return end
    return _trim(text, start, pos - 1)[1]


def _unwrap_reverts(text: str, start: int, end: int) -> tuple[int, int, bool]:
    """Peel `Revert "…"` layers (GitHub nests them as `Revert "Revert "…""`) by index, so that
    thousands of layers stay linear."""
    reverted = False
    while text[start : start + 6].lower() == "revert":
        quote_at = _NON_SPACE.search(text, start + 6, end)
        if quote_at is None or quote_at.group() not in _REVERT_QUOTES:
            break
        closing = _REVERT_QUOTES[quote_at.group()]
        inner_end = end - 1 if end - 1 > quote_at.start() and text[end - 1] == closing else end
        start, end = _trim(text, quote_at.start() + 1, inner_end)  # unclosed: GitHub truncated it
        reverted = True
    return start, end, reverted


def _read_brackets(text: str, start: int, end: int) -> _Brackets:
    """Leading `[…]` groups: `[i/N]` is ignored, `[BREAKING]` flags, the rest list modules."""
    modules: list[str] = []
    breaking = seen = False
    pos = start
    while pos < end and text[pos] in _OPENING_BRACKETS:
        closing = _CLOSING_BRACKET.search(text, pos + 1, end)
        if closing is None:
            break
        content = text[pos + 1 : closing.start()]
        seen = True
        if content.strip().lower() == "breaking":
            breaking = True
        elif _PROGRESS.fullmatch(content) is None:
            modules.extend(_LIST_SEPARATOR.split(content))
        found = _NON_SPACE.search(text, closing.end(), end)
        pos = end if found is None else found.start()
    return _Brackets(modules, breaking, pos, seen)


def _read_type_prefix(text: str, start: int, end: int, *, strict: bool) -> _TypePrefix | None:
    """`type(scope)!:` at `start`. Without bracket groups before it (`strict`), an ASCII colon
    must be followed by a space or the end, so `http://…` or `note:x` in free text is no type."""
    found = _TYPE_PREFIX.match(text, start, end)
    if found is None:
        return None
    kind, scope, bang, colon = found.groups()
    after = found.end()
    if strict and colon == ":" and after < end and not text[after].isspace():
        return None
    scopes = _LIST_SEPARATOR.split(scope) if scope else []
    return _TypePrefix(kind, scopes, bang is not None)


def _clean(tag: str) -> str:
    """Lowercase, trimmed, inner whitespace collapsed to one space (`Single  Controller`)."""
    return " ".join(tag.lower().split())


def _unique_clean(tags: Iterable[str]) -> list[str]:
    cleaned = (_clean(tag) for tag in tags)
    return list(dict.fromkeys(tag for tag in cleaned if tag))


# --- paths --------------------------------------------------------------------------------

_LEADING_DOT_SLASHES = re.compile(r"^(?:\.?/)+")  # `./a`, `/a`, `.//a` → `a`


def path_tags(paths: Iterable[str], rules: Sequence[TagRule]) -> list[str]:
    """Tags of the rules (in rule order) whose globs match at least one of `paths`."""
    normalised = [normalise_path(path).split("/") for path in paths]
    fired = (
        rule.tag
        for rule in rules
        if any(glob_matches(glob, path) for glob in _rule_globs(rule) for path in normalised)
    )
    return _unique_clean(fired)


def normalise_path(path: str) -> str:
    return _LEADING_DOT_SLASHES.sub("", path.strip().replace("\\", "/"))


# A compiled glob: its segments in order, `None` for a `**` segment (any number of segments).
# A segment is its literal pieces between `*`s, each a fixed-length regex (`?` is `.`): no
# quantifier anywhere, so a piece is found in one scan and nothing can backtrack.
_Piece = tuple[re.Pattern[str], int]  # the regex and how many characters it matches
_Segment = tuple[_Piece, ...]
Glob = tuple[_Segment | None, ...]


@lru_cache(maxsize=1024)
def _rule_globs(rule: TagRule) -> tuple[Glob, ...]:
    return tuple(compile_glob(normalise_path(glob)) for glob in rule.paths)


def compile_glob(glob: str) -> Glob:
    """Segments of a glob; `a/**/**/b` is `a/**/b`, and `**` inside a segment is one `*`."""
    compiled: list[_Segment | None] = []
    for segment in glob.split("/"):
        if segment == "**":
            if not compiled or compiled[-1] is not None:
                compiled.append(None)
        else:
            compiled.append(tuple(_piece(piece) for piece in segment.split("*")))
    return tuple(compiled)


def _piece(piece: str) -> _Piece:
    return re.compile(".".join(re.escape(part) for part in piece.split("?")), re.DOTALL), len(piece)


def glob_matches(glob: Glob, path: list[str]) -> bool:
    """Whether the path's segments match the glob's; no backtracking regex, no recursion.

    The classic wildcard walk on segments, `**` standing for any run of segments: on a
    mismatch, go back to the last `**` and let it take one more segment. Each (path segment,
    glob segment) pair is compared at most once per `**`, so a hostile 256 KB path costs
    O(len(path) · len(glob)), not the 34.9 s a regex with two `**` took."""
    g = p = 0
    star_g, star_p = -1, 0
    while p < len(path):
        current = glob[g] if g < len(glob) else ()
        if current is None:
            star_g, star_p = g, p
            g += 1
        elif current and _segment_matches(current, path[p]):
            g += 1
            p += 1
        elif star_g >= 0:
            star_p += 1
            g, p = star_g + 1, star_p
        else:
            return False
    while g < len(glob) and glob[g] is None:
        g += 1
    return g == len(glob)


def _segment_matches(pieces: _Segment, segment: str) -> bool:
    """`*` any run of characters, `?` one, within one segment: the first piece at the start,
    the last at the end, each piece between at its leftmost place after the one before (the
    greedy rule is exact for `*`). Linear scans in C."""
    (first, first_length), (last, last_length) = pieces[0], pieces[-1]
    if len(pieces) == 1:
        return first.fullmatch(segment) is not None
    end = len(segment) - last_length
    if end < first_length or first.match(segment, 0, end) is None:
        return False
    if last.fullmatch(segment, end) is None:
        return False
    pos = first_length
    for piece, _ in pieces[1:-1]:
        found = piece.search(segment, pos, end)
        if found is None:
            return False
        pos = found.end()
    return True
