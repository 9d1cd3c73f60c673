"""PR references as users type them: `7422`, `#7422`, `owner/repo#7422`, a digest's own label
`verl#7422` (the repo's name without its owner), or a report/PR URL."""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_PR_NUMBER = 2**31 - 1
_REPO = r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+"
_NAME = r"[A-Za-z0-9_.-]+"
# `owner/repo#7422`, or `repo#7422` as a digest labels a PR (store/lookup.py resolves the name)
_REPO_REF = re.compile(rf"^(?P<repo>{_REPO}|{_NAME})#(?P<number>[0-9]+)$")
_URL_REF = re.compile(
    rf"^https?://[^\s/]+/(?P<repo>{_REPO})/pulls?/(?P<number>[0-9]+)(?:[/?#].*)?$"
)


class BadRefError(ValueError):
    """The text is not a PR reference; str() says what was expected."""


@dataclass(frozen=True, slots=True)
class PRRef:
    number: int
    repo: str | None = None  # `owner/name`, or a name alone (`verl`): any owner's repo so named

    def __str__(self) -> str:
        return f"{self.repo}#{self.number}" if self.repo else f"#{self.number}"


def _number(digits: str, original: str) -> int:
    # str.isdigit() accepts Arabic-Indic and other digits; a PR number is ASCII only.
    if not (digits.isascii() and digits.isdigit()):
        raise BadRefError(f"{original!r} is not a PR number (expected digits like 7422)")
    value = int(digits[:12])
    if len(digits) > 12 or not 1 <= value <= MAX_PR_NUMBER:
        raise BadRefError(f"{original!r} is out of range for a PR number")
    return value


def parse_ref(text: str) -> PRRef:
    """Parse a PR reference or raise BadRefError naming what was wrong."""
    raw = text.strip()
    if not raw:
        raise BadRefError(
            "missing PR reference (expected 7422, repo#7422, owner/repo#7422 or a PR URL)"
        )
    if raw.startswith("<") and raw.endswith(">"):  # Slack wraps URLs as <url> or <url|label>
        raw = raw[1:-1].split("|", 1)[0]
    match = _REPO_REF.match(raw) or _URL_REF.match(raw)
    if match is not None:
        return PRRef(_number(match["number"], text), match["repo"])
    return PRRef(_number(raw.removeprefix("#"), text))
