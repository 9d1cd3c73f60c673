"""The caps on chat-made subscriptions: per destination, and per person across the private
chats they own subscriptions in; config channels are not counted."""

from __future__ import annotations

import pytest

from bot.core.digest.select import DigestFilter
from bot.core.models import Locale, Platform
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import NewSubscription, SubscriptionStore
from bot.core.store.subscriptions.limits import SubscriptionLimitReached, SubscriptionLimits
from tests.kits.delivery import channel, setup_destinations


def new(query: str, owner: str | None) -> NewSubscription:
    return NewSubscription(
        name=query,
        filter=DigestFilter(query=query),
        schedule="0 9 * * *",
        cadence="daily 09:00",
        timezone="UTC",
        locale=Locale.EN,
        owner=owner,
        actor="test",
    )


async def test_a_destination_takes_its_cap_of_chat_subscriptions_and_no_more(
    store: ReportStore,
) -> None:
    await setup_destinations(store.engine, channel("team", "C1", platform="slack"))
    subs = SubscriptionStore(store.engine)
    limits = SubscriptionLimits(per_destination=3, per_person=100)
    for n in range(3):  # the config channel's own subscription is not counted
        await subs.add(Platform.SLACK, "C1", new(f"tag:t{n}", None), limits)

    with pytest.raises(SubscriptionLimitReached) as refused:
        await subs.add(Platform.SLACK, "C1", new("tag:t3", None), limits)

    assert (refused.value.scope, refused.value.limit) == ("destination", 3)
    assert len(await subs.of(Platform.SLACK, "C1")) == 4, "nothing was added, nothing lost"


async def test_a_person_reaches_their_cap_across_their_private_chats(store: ReportStore) -> None:
    subs = SubscriptionStore(store.engine)
    limits = SubscriptionLimits(per_destination=10, per_person=3)
    for n, target in enumerate(["D1", "D1", "D2"]):
        await subs.add(Platform.SLACK, target, new(f"tag:t{n}", "U1"), limits)

    with pytest.raises(SubscriptionLimitReached) as refused:
        await subs.add(Platform.SLACK, "D3", new("tag:t9", "U1"), limits)

    assert (refused.value.scope, refused.value.limit) == ("person", 3)
    await subs.add(Platform.SLACK, "D3", new("tag:t9", "U2"), limits)  # another person
    await subs.add(Platform.TELEGRAM, "77", new("tag:t9", "U1"), limits)  # another platform
