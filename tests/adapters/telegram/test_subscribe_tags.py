"""`/subscribe rollout -ci` in a Telegram chat means the tags when they are known: the reply
shows the reading (`tag:rollout -tag:ci`) with how to mean the words instead, the stored
filter is that reading, and it keeps #7422 (tagged rollout, its text holding "ci" inside
"specific") while leaving out a report without the tag. A quoted word keeps meaning the text."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.core.models import Platform
from bot.core.query import matches, parse
from bot.core.reports.model import Report
from bot.core.reports.parse.parser import parse_file
from tests.fakes.telegram.api import FakeTelegram
from tests.kits.paths import SEED
from tests.kits.telegram import USER, TelegramBot, texts, until

NOW = datetime(2026, 12, 5, tzinfo=UTC)


def ci_report() -> Report:
    """A stored report tagged ci, so `ci` is a known tag."""
    seed = parse_file(SEED).report
    return seed.model_copy(
        update={"number": 7999, "title": "[ci] chore: pin runners", "tags": ["ci"]}
    )


async def test_bare_words_that_name_known_tags_subscribe_to_those_tags(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    await bot.service.ctx.reports.upsert(ci_report(), source="test")
    fake.push_message(USER, "/subscribe rollout -ci")
    fake.push_message(USER, '/subscribe "rollout"')

    await until(lambda: len(fake.sent_to(USER)) == 2, timeout=8)
    as_tags, as_text = texts(fake, USER)
    assert as_tags.startswith("Added subscription 1: tag:rollout -tag:ci (")
    assert "rollout, ci: read as tags" in as_tags and 'e.g. "rollout"' in as_tags
    assert as_text.startswith('Added subscription 2: "rollout" (')
    assert "read as tags" not in as_text

    first, second = await bot.service.subscriptions.of(Platform.TELEGRAM, str(USER))
    assert first.filter.query == "tag:rollout -tag:ci"
    assert second.filter.query == '"rollout"'
    stored = parse(first.filter.query)
    seed = parse_file(SEED).report
    assert "ci" in seed.implementation.lower() or "ci" in seed.recommendation.lower()
    assert matches(stored, seed, now=NOW), "#7422 is tagged rollout and not ci"
    untagged = seed.model_copy(update={"number": 7000, "tags": ["fix"]})
    assert not matches(stored, untagged, now=NOW)


async def test_find_keeps_bare_words_as_text_and_says_which_are_also_tags(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    fake.push_message(USER, "/find rollout 权重")
    fake.push_message(USER, '/find "rollout"')

    await until(lambda: len(fake.sent_to(USER)) == 2, timeout=8)
    bare, quoted = texts(fake, USER)
    assert "#7422" in bare
    assert bare.endswith("(rollout: also a tag; for the PRs with that tag only, write tag:rollout)")
    assert "also a tag" not in quoted


async def test_subscriptions_flags_stored_words_that_became_tags(
    fake: FakeTelegram, bot: TelegramBot
) -> None:
    """A subscription keeps the meaning it was stored with; the listing says which of its
    words are tags now, and how to switch."""
    fake.push_message(USER, "/subscribe runners -tag:docs")
    await until(lambda: len(fake.sent_to(USER)) == 1, timeout=8)
    await bot.service.ctx.reports.upsert(
        ci_report().model_copy(update={"tags": ["runners"]}), source="test"
    )
    fake.push_message(USER, "/subscriptions")
    await until(lambda: len(fake.sent_to(USER)) == 2, timeout=8)
    listing = texts(fake, USER)[-1]
    assert "1. runners -tag:docs" in listing
    assert (
        "1. matches runners in the text, not as tags (a tag has that name now). To mean the tags: "
        "/unsubscribe 1, then /subscribe tag:runners -tag:docs at "
    ) in listing
    [sub] = await bot.service.subscriptions.of(Platform.TELEGRAM, str(USER))
    assert sub.filter.query == "runners -tag:docs", "the stored meaning is kept"
