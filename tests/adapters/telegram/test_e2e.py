"""`prdigest run` as a real process with Telegram: chats subscribe, ask, and get their digest.

The process long-polls the strict fake Bot API, reports arrive through the ingest API, and the
scheduler's own tick plans the digest. The fake counts every send against the flood limits.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from bot.core.models import Format, Locale
from bot.core.render.renderer import Renderer
from bot.core.reports.parse.parser import parse_file
from tests.fakes.telegram.api import FakeTelegram
from tests.kits import waiting
from tests.kits.paths import SEED
from tests.kits.proc import BotProcess
from tests.kits.telegram import buttons

pytestmark = pytest.mark.slow

INGEST_TOKEN = "ingest-token-for-telegram-e2e"
ROLLOUT_GROUP = -1001  # subscribes to the tag rollout, not the tag ci
MEGATRON_GROUP = -1002  # subscribes to a tag no report has
ROLLOUT_QUERY = "tag:rollout -tag:ci"
READER = 4242  # a private chat that only asks
ADMIN, MEMBER, OTHER_ADMIN = 11, 13, 21
TICK_SECONDS = 1.0  # the scheduler looks for due digests every second (15 s by default)


def notice(key: str, **params: str) -> str:
    return Renderer().notice(key, Format.TELEGRAM, Locale.EN, **params).text


async def until(
    condition: Callable[[], object], timeout: float, bot: BotProcess, fake: FakeTelegram
) -> None:
    def failed() -> str:
        sent = [(m.chat_id, m.plain_text[:80]) for m in fake.sent]
        return f"timed out; sent: {sent}\nstderr:\n{bot.stderr.decode()[-3000:]}"

    await waiting.until(condition, timeout, failed)


def texts(fake: FakeTelegram, chat_id: int) -> list[str]:
    """The messages the bot posted to the chat (a keyboard swapped in place is none)."""
    sent = fake.sent_to(chat_id)
    return [m.plain_text for m in sent if m.method != "editMessageReplyMarkup"]


def shown_data(fake: FakeTelegram, chat_id: int, message_id: int, prefix: str) -> list[str]:
    """The callback_data starting with `prefix` of the keyboard the message shows now."""
    shown = fake.state.chat(chat_id).messages[message_id]
    return [b["callback_data"] for b in buttons(shown) if b["callback_data"].startswith(prefix)]


def report_json(number: int, title: str, tags: list[str]) -> str:
    base = parse_file(SEED).report
    url = f"https://github.com/verl-project/verl/pull/{number}"
    return base.model_copy(
        update={"number": number, "title": title, "url": url, "tags": tags}
    ).model_dump_json()


async def ingest(bot: BotProcess, *reports: str) -> None:
    headers = {"Authorization": f"Bearer {INGEST_TOKEN}", "Content-Type": "application/json"}
    async with httpx.AsyncClient() as client:
        for body in reports:
            response = await client.post(f"{bot.url}/api/reports", content=body, headers=headers)
            assert response.status_code == 201, response.text


def arrange_chats(fake: FakeTelegram) -> None:
    fake.add_chat(READER)
    for group, admin in ((ROLLOUT_GROUP, ADMIN), (MEGATRON_GROUP, OTHER_ADMIN)):
        fake.add_chat(group, "group", f"group {group}")
        fake.set_member(group, admin, "administrator")
        fake.set_member(group, MEMBER, "member")


def bot_process(subprocess_env: dict[str, str], tmp_path: Path, fake: FakeTelegram) -> BotProcess:
    reports = tmp_path / "reports"
    reports.mkdir()
    shutil.copy(SEED, reports / SEED.name)
    config = tmp_path / "bot.yaml"
    config.write_text(
        f"timezone: UTC\nsources:\n  - dir: {reports}\ndelivery:\n  tick_seconds: {TICK_SECONDS}\n",
        encoding="utf-8",
    )
    env = {
        **subprocess_env,
        "BOT_CONFIG": str(config),
        "BOT_INGEST_TOKEN": INGEST_TOKEN,
        "TELEGRAM_BOT_TOKEN": fake.token,
        "TELEGRAM_API_URL": fake.url,
        "PTB_TIMEDELTA": "true",
    }
    return BotProcess(env)


async def test_admins_subscribe_members_cannot_and_the_digest_reaches_only_matching_chats(
    subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    async with FakeTelegram() as fake:
        arrange_chats(fake)
        bot = bot_process(subprocess_env, tmp_path, fake)
        await bot.start()
        try:
            await bot.wait_ready()
            await until(lambda: fake.poll_in_flight, 10, bot, fake)
            fake.push_message(ROLLOUT_GROUP, f"/subscribe {ROLLOUT_QUERY}", user_id=ADMIN)
            fake.push_message(ROLLOUT_GROUP, "/subscribe tag:docs", user_id=MEMBER)
            fake.push_message(MEGATRON_GROUP, "/subscribe tag:megatron", user_id=OTHER_ADMIN)
            fake.push_message(READER, "/risks 7422")
            await until(lambda: len(fake.sent) == 4, 15, bot, fake)

            await ingest(
                bot,
                report_json(9001, "[rollout] fix: keep weights in sync", ["rollout", "fix"]),
                report_json(9002, "[rollout, ci] fix: flaky rollout test", ["rollout", "ci"]),
                report_json(9003, "[trainer] feat: new loss", ["trainer", "feat"]),
            )
            for group, admin in ((ROLLOUT_GROUP, ADMIN), (MEGATRON_GROUP, OTHER_ADMIN)):
                fake.push_message(group, '/schedule "* * * * *" UTC', user_id=admin)
            await until(
                lambda: any("#9001" in t for t in texts(fake, ROLLOUT_GROUP)), 20, bot, fake
            )
            await asyncio.sleep(5 * TICK_SECONDS)  # more ticks: nothing is sent twice
            digest = next(m for m in fake.sent_to(ROLLOUT_GROUP) if "#9001" in m.plain_text)
            [menu] = shown_data(fake, ROLLOUT_GROUP, digest.message_id, "menu:")
            assert menu.endswith("9001")
            fake.press(ROLLOUT_GROUP, digest.message_id, menu, user=MEMBER)  # ⋯: its menu
            await until(
                lambda: shown_data(fake, ROLLOUT_GROUP, digest.message_id, "risks:"), 10, bot, fake
            )
            [risks] = shown_data(fake, ROLLOUT_GROUP, digest.message_id, "risks:")
            assert risks.endswith("9001")
            fake.press(ROLLOUT_GROUP, digest.message_id, risks, user=MEMBER)
            await until(
                lambda: any("Risks and impact" in t for t in texts(fake, ROLLOUT_GROUP)),
                10,
                bot,
                fake,
            )
        finally:
            code = await bot.terminate()

    assert code == 0, bot.stderr.decode()[-3000:]
    rollout = texts(fake, ROLLOUT_GROUP)
    added = {"number": "1", "query": ROLLOUT_QUERY, "cadence": "0 9 * * mon-fri"}
    assert rollout[0] == notice("subscription_added", user=f"User {ADMIN}", **added)
    assert rollout[1] == notice("not_admin")
    digests = [t for t in rollout if "#9001" in t and "Risks and impact" not in t]
    assert len(digests) == 1, "the digest arrives once"
    assert "#9002" not in digests[0] and "#9003" not in digests[0]
    assert not any("#900" in t for t in texts(fake, MEGATRON_GROUP))
    [risks_answer] = texts(fake, READER)
    for flag in (
        "移除隐式配置兜底",
        "standalone 需显式 auto",
        "FP8 例外一并删除",
        "多后端行为一致性",
    ):
        assert flag in risks_answer
    assert fake.state.answered_callbacks, "the button press was answered"
    assert fake.flood_429s == 0 and fake.violations == [] and fake.early_retries == []
    assert fake.token not in bot.stderr.decode() + bot.stdout.decode()
