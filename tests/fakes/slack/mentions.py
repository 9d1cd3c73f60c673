"""Mention and link safety: nothing the bot sends may ping people or show a spoofed link.

Slack parses `<...>` in message text: `<!channel>`, `<!here>`, `<!everyone>`, `<!subteam^S1>`
and `<@U1>` notify people, `<url|label>` makes a link. Report text escaped as `&lt;` stays inert.
The bot may mention only the users in `allowed_users` (the person who asked) and link only to
http(s) URLs whose label, if it looks like a URL, names the same host.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Set
from dataclasses import dataclass
from urllib.parse import urlsplit

from tests.fakes.slack.text_objects import TextPiece

LIVE_MENTION = "fake_live_mention"
UNSAFE_LINK = "fake_unsafe_link"

_MARKUP = re.compile(r"<([^<>]*)>")
# Non-verbatim mrkdwn auto-links these even without angle brackets.
_BARE_BROADCAST = re.compile(r"(?<![\w@])@(?:channel|here|everyone)\b")
# A label that reads as a URL ("https://github.com/...", "www.github.com/...") must not lie.
_URL_LIKE_LABEL = re.compile(r"^\s*(?:https?://|www\.)([\w.-]+)", re.I)
_SAFE_SCHEMES = frozenset({"http", "https"})


@dataclass(frozen=True)
class Finding:
    """One piece of live markup: which error it earns, the markup itself, where, and why."""

    error: str
    token: str
    pointer: str
    reason: str


def _host(value: str) -> str:
    host = (urlsplit(value).hostname or "").lower()
    return host.removeprefix("www.")


def _judge_link(inner: str) -> tuple[str, str] | None:
    url, _, label = inner.partition("|")
    try:
        target = urlsplit(url)
        if target.scheme.lower() not in _SAFE_SCHEMES or not target.hostname:
            return UNSAFE_LINK, f"link to a non-http(s) URL: {url!r}"
        shown = _URL_LIKE_LABEL.match(label)
        if shown and shown.group(1).lower().removeprefix("www.") != _host(url):
            return UNSAFE_LINK, f"label {label!r} names another host than {url!r}"
    except ValueError:
        return UNSAFE_LINK, f"unparsable URL: {url!r}"
    return None


def _judge_markup(inner: str, allowed_users: Set[str]) -> tuple[str, str] | None:
    if inner.startswith("@"):
        user_id = inner[1:].split("|", 1)[0]
        if user_id in allowed_users:
            return None
        return LIVE_MENTION, f"mentions user {user_id}"
    if inner.startswith("!"):
        if inner.startswith("!date^"):
            return None  # a formatted date, not a mention
        return LIVE_MENTION, "special mention notifies a group"
    if inner.startswith("#"):
        return None  # a channel link notifies no one
    return _judge_link(inner)


def scan(pieces: Iterable[TextPiece], allowed_users: Set[str]) -> list[Finding]:
    """Every live mention or unsafe link in the pieces, in order."""
    findings: list[Finding] = []
    for piece in pieces:
        if piece.markup:
            for match in _MARKUP.finditer(piece.text):
                verdict = _judge_markup(match.group(1), allowed_users)
                if verdict:
                    findings.append(Finding(verdict[0], match.group(0), piece.pointer, verdict[1]))
        if piece.auto_parse:
            for match in _BARE_BROADCAST.finditer(piece.text):
                reason = "mrkdwn without verbatim=true auto-links it"
                findings.append(Finding(LIVE_MENTION, match.group(0), piece.pointer, reason))
    return findings
