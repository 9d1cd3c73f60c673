"""`prdigest status` says whether Slack and Telegram can be reached from here (issue 15):
reachable, a refused token, or "cannot reach <host>", in the words the log uses."""

from __future__ import annotations

import pytest

from bot.cli import main
from bot.cli.probe import platform_lines
from bot.settings import Env
from tests.fakes.slack.api import FakeSlack, Fault
from tests.fakes.telegram.api import FakeTelegram
from tests.kits.servers import free_port

TELEGRAM_TOKEN = "123456:TEST-token"


def _env(slack_url: str, telegram_url: str, slack_token: str, telegram_token: str) -> Env:
    return Env.from_environ(
        {
            "BOT_CONFIG": "",
            "SLACK_BOT_TOKEN": slack_token,
            "SLACK_SIGNING_SECRET": "s" * 32,
            "SLACK_API_URL": slack_url,
            "TELEGRAM_BOT_TOKEN": telegram_token,
            "TELEGRAM_API_URL": telegram_url,
        }
    )


async def test_platforms_that_answer_are_reachable() -> None:
    async with FakeSlack() as slack, FakeTelegram(token=TELEGRAM_TOKEN) as telegram:
        env = _env(slack.api_url, telegram.url, slack.bot_token, TELEGRAM_TOKEN)
        lines = await platform_lines(env)
    slack_host, telegram_host = slack.api_url.split("/")[2], telegram.url.split("/")[2]
    assert lines == [
        f"slack: reachable ({slack_host}, auth.test ok as @prdigest)",
        f"telegram: reachable ({telegram_host}, getMe ok as @prdigest_test_bot)",
    ]


async def test_a_refused_token_is_not_an_unreachable_platform() -> None:
    async with FakeSlack() as slack, FakeTelegram(token=TELEGRAM_TOKEN) as telegram:
        env = _env(slack.api_url, telegram.url, "xoxb-not-this-one", "123456:not-this-one")
        lines = await platform_lines(env)
    slack_host, telegram_host = slack.api_url.split("/")[2], telegram.url.split("/")[2]
    assert lines == [
        f"slack: {slack_host} answered but refused the token (invalid_auth)",
        f"telegram: {telegram_host} answered but refused the token (Unauthorized)",
    ]


async def test_a_closed_port_or_an_error_page_is_cannot_reach() -> None:
    closed = f"http://127.0.0.1:{free_port()}"
    async with FakeSlack() as slack:
        slack.script("auth.test", Fault.server_error(502))
        env = _env(slack.api_url, closed, slack.bot_token, TELEGRAM_TOKEN)
        slack_line, telegram_line = await platform_lines(env)
    assert slack_line == (
        f"slack: cannot reach {slack.api_url.split('/')[2]}: HTTP 502, not an API answer"
    )
    assert telegram_line.startswith(f"telegram: cannot reach {closed.split('/')[2]}: ConnectError")
    assert TELEGRAM_TOKEN not in telegram_line


def test_status_says_a_platform_without_a_token_is_off(
    private_store: None, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["ingest", "-q", "examples/reports/verl-7422.md"])
    capsys.readouterr()
    assert main(["status"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:3] == [
        "slack: off (SLACK_BOT_TOKEN unset)",
        "telegram: off (TELEGRAM_BOT_TOKEN unset)",
    ]
    assert main(["status", "--no-probe"]) == 0
    assert "slack: off" not in capsys.readouterr().out
