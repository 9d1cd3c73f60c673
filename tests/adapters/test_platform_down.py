"""A platform that is down or cannot be reached (issue 15): an HTML error page where Slack's
JSON should be (a proxy's 502) is Slack being down, never a crash of the error handler; and a
DNS or connect failure at start is logged as "cannot reach <host>", not as a refused token."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.adapters.reach import api_host
from bot.adapters.slack.client import BotIdentity, interactive_client
from bot.adapters.slack.sender import SlackSender
from bot.adapters.telegram.adapter import TelegramAdapter
from bot.core.clock import utc_clock
from bot.core.delivery.port import Sent, Transient
from bot.core.store.reports import ReportStore
from bot.core.store.sql.db import create_engine, migrate
from bot.service.app import Service
from bot.service.context import Context
from bot.settings import DEFAULT_SLACK_API_URL, DEFAULT_TELEGRAM_API_URL, BotConfig, Env
from tests.fakes.slack.api import FakeSlack, Fault
from tests.fakes.telegram.api import FakeTelegram
from tests.kits.delivery import right_away
from tests.kits.slack import USER, slack_bot


def _records(caplog: pytest.LogCaptureFixture, event: str) -> list[dict[str, object]]:
    return [
        dict(getattr(r, "fields", {})) for r in caplog.records if getattr(r, "event", "") == event
    ]


def test_the_default_hosts_are_named_as_a_person_knows_them() -> None:
    assert api_host(DEFAULT_SLACK_API_URL) == "slack.com"
    assert api_host(DEFAULT_TELEGRAM_API_URL) == "api.telegram.org"
    assert api_host("http://127.0.0.1:8081/api/") == "127.0.0.1:8081"


# How a 502 page arrives: Slack's edge sends HTML, a proxy may send text/plain (slack_sdk keeps
# it as a string) or label a page JSON that is not (slack_sdk keeps the raw response).
PAGE_TYPES = ["text/html", "text/plain", "application/json"]


@pytest.mark.parametrize("content_type", PAGE_TYPES)
async def test_an_error_page_from_users_info_denies_and_answers(
    content_type: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with slack_bot(tmp_path) as bot:
        bot.fake.script("users.info", Fault.server_error(502, content_type))
        [answer] = await bot.command("subscribe rollout", user=USER)
        assert answer.text == "Only admins of this channel can change its subscriptions."
    [failed] = _records(caplog, "slack.users_info_failed")
    assert failed == {"user": USER, "reason": "HTTP 502 (not a Slack API answer: Slack is down)"}


@pytest.mark.parametrize("content_type", PAGE_TYPES)
async def test_an_error_page_from_auth_test_is_slack_being_down(
    content_type: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with FakeSlack() as fake:
        fake.script("auth.test", Fault.server_error(502, content_type))
        identity = BotIdentity(interactive_client(fake.bot_token, fake.api_url, utc_clock))
        assert await identity.result() is None
        host = fake.api_url.split("//")[1].split("/")[0]
    assert _records(caplog, "slack.auth_failed") == []
    [down] = _records(caplog, "slack.unreachable")
    assert down == {
        "message": f"cannot reach {host}",
        "host": host,
        "reason": "HTTP 502 (not a Slack API answer: Slack is down)",
    }


async def test_a_connect_failure_at_start_is_cannot_reach_not_auth_failed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake = FakeSlack()
    await fake.start()
    closed_url, token = fake.api_url, fake.bot_token
    await fake.stop()  # nothing listens there any more
    identity = BotIdentity(interactive_client(token, closed_url, utc_clock))
    assert await identity.result() is None
    host = closed_url.split("//")[1].split("/")[0]
    assert _records(caplog, "slack.auth_failed") == []
    [down] = _records(caplog, "slack.unreachable")
    assert down["message"] == f"cannot reach {host}"
    assert down["host"] == host
    reason = str(down["reason"])
    assert reason.startswith("ClientConnectorError: Cannot connect to host")
    assert "\n" not in reason


async def test_telegram_unreachable_at_start_names_its_host(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake = FakeTelegram()
    await fake.start()
    closed_url = fake.url
    await fake.stop()
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    env = Env(database_url=url, telegram_bot_token=fake.token, telegram_api_url=closed_url)
    engine = create_engine(url)
    await migrate(engine)
    service = Service(Context(env, BotConfig.model_validate({}), engine, ReportStore(engine)))
    [adapter] = service.adapters
    assert isinstance(adapter, TelegramAdapter)
    await adapter.start()
    await adapter.stop()
    await engine.dispose()
    host = closed_url.split("//")[1].split("/")[0]
    [down, *_] = _records(caplog, "telegram.unreachable")
    assert down["message"] == f"cannot reach {host}"
    assert down["host"] == host
    assert down["retry"] is True
    assert "\n" not in str(down["reason"])


@pytest.mark.parametrize("content_type", PAGE_TYPES)
@pytest.mark.parametrize("status", [502, 403])
async def test_an_error_page_for_a_digest_is_a_transient_failure(
    content_type: str, status: int
) -> None:
    async with FakeSlack() as fake:
        fake.script("chat.postMessage", Fault.server_error(status, content_type))
        sender = SlackSender(fake.bot_token, fake.api_url)
        payload = {"text": "hello", "unfurl_links": False}
        assert await sender.send("C0TEST1", payload, right_away) == Transient(f"HTTP {status}")
        assert isinstance(await sender.send("C0TEST1", payload, right_away), Sent)
