"""100,000 generated reports rendered for Slack, Telegram and Feishu: 0 live mentions, 0 parse
errors.

Reports are dealt from seeded random bytes by `test_render_safety.deal_report` (every field mixes
`<!channel>`, `<@U1>`, `<url|label>`, HTML, mrkdwn, `||`, emoji, bidi marks, CJK, control
characters). Each report appears in a digest (a few reports per digest, in a random layout and
verbosity, with the synthesis and a still-unread group) and is answered as a
`/pr` section, in each format and a random locale; every message goes through the checks of
the strict fakes (Slack's live-mention and Block Kit rules, Telegram's HTML entity parser and
4096 UTF-16 limit, Feishu's card tags, nesting and size, and no live `<at>`) and the
renderers' promised limits. Failures are counted by kind rather than
stopping at the first, so the figures are the suite's output.

Sample: 300 reports in `make test`; `pytest -m faults`: 100,000 (a few minutes).
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

from bot.core.digest.select import DigestEntry, DigestFilter, StoredReport, build_digest
from bot.core.models import Format, Layout, Verbosity
from bot.core.render.options import DigestOptions
from bot.core.render.renderer import RenderedMessage
from tests.fakes.lark.cards import CardError
from tests.fakes.slack.mentions import LIVE_MENTION, UNSAFE_LINK
from tests.fakes.slack.spec import SlackRefusal
from tests.fakes.telegram.spec import BotApiError
from tests.kits.faults import counts, report_line
from tests.kits.safety import (
    LOCALES,
    RENDERER,
    SECTIONS,
    Deck,
    assert_lark_message_is_safe,
    assert_slack_message_is_safe,
    assert_telegram_message_is_safe,
    deal_report,
)

PER_DIGEST = 4
DECK_BYTES = 700
CHECKS: dict[Format, Callable[[dict[str, Any]], None]] = {
    Format.SLACK: assert_slack_message_is_safe,
    Format.TELEGRAM: assert_telegram_message_is_safe,
    Format.LARK: assert_lark_message_is_safe,
}


def classify(fmt: Format, payload: dict[str, Any]) -> str | None:
    """None if the message is safe, else the kind of failure."""
    try:
        CHECKS[fmt](payload)
    except SlackRefusal as refusal:
        live = refusal.error in (LIVE_MENTION, UNSAFE_LINK)
        return "live_mention" if live else f"parse_error:{refusal.error}"
    except BotApiError as error:
        return f"parse_error:{error.description[:60]}"
    except CardError as error:  # a card Feishu would refuse
        return f"parse_error:{str(error)[:60]}"
    except AssertionError as error:
        return "live_mention" if "notify" in str(error) else f"limit:{str(error)[:60]}"
    return None


def render_batch(items: list[StoredReport], fmt: Format, rng: random.Random) -> list[Any]:
    locale = rng.choice(LOCALES)
    digest = build_digest(items, DigestFilter(), items[0].report.repo, synthesis=True)
    unread = tuple(DigestEntry(item, "<!here>") for item in items[: rng.randint(0, 2)])
    digest = dataclasses.replace(digest, unread=unread, unread_dropped=rng.randint(0, 1))
    options = DigestOptions(
        layout=rng.choice(list(Layout)),
        verbosity=rng.choice(list(Verbosity)),
        synthesis=rng.choice([True, False]),
        more_key=rng.choice(["", "run-7"]),
    )
    parts = RENDERER.digest_parts(digest, fmt, locale, date=date(2026, 8, 18), options=options)
    messages: list[RenderedMessage] = [m for part in parts for m in part.messages]
    for item in items:
        messages += RENDERER.section(item, rng.choice(SECTIONS), fmt, locale)
    return messages


@pytest.mark.parametrize("count", counts(300, 100_000))
def test_generated_reports_never_render_a_live_mention_or_a_parse_error(count: int) -> None:
    rng = random.Random(f"render-{count}")
    failures: Counter[str] = Counter()
    examples: list[str] = []
    messages = 0
    for first in range(0, count, PER_DIGEST):
        size = min(PER_DIGEST, count - first)
        reports = [deal_report(Deck(rng.randbytes(DECK_BYTES))) for _ in range(size)]
        items = [StoredReport(r, first + n + 1, revision=1) for n, r in enumerate(reports)]
        for fmt in CHECKS:
            for message in render_batch(items, fmt, rng):
                messages += 1
                kind = classify(fmt, message.payload)
                if kind is not None:
                    failures[kind] += 1
                    if len(examples) < 3:
                        examples.append(f"{fmt.value} {kind}: {message.payload!r}"[:800])
    summary = report_line(
        "render",
        reports=count,
        messages=messages,
        live_mentions=failures["live_mention"],
        parse_errors=sum(n for k, n in failures.items() if k.startswith("parse_error")),
        other=sum(n for k, n in failures.items() if k.startswith("limit")),
    )
    print(summary)
    assert not failures, f"{summary}\n{dict(failures)}\n" + "\n".join(examples)
