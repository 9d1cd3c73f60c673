"""Words fit the place and the language: Slack says 本频道 (never 本群), a Telegram group 本群, a
private chat speaks of the person (你的订阅, your subscriptions); an owner is "you", a name or a
mention, never "个人（77）"; a Chinese notice wraps Chinese errors; and a chat whose
subscriptions cannot take a schedule is told why, not that it has none."""

from __future__ import annotations

import re

import pytest

from bot.chat.answers import Answerer, Chat, Notice, render_notice
from bot.chat.commands import parse
from bot.core.clock import utc_clock
from bot.core.models import Format, Locale, Platform
from bot.core.render.labels import chat_words, slack_mention
from bot.core.render.renderer import Renderer
from bot.core.store.reports import ReportStore
from bot.core.store.subscriptions import SubscriptionStore
from bot.core.store.subscriptions.destination_store import DestinationStore
from bot.settings import BotConfig

CHANNEL = "C0TEAM"
DM = "D0BOB"
BOB = "U0BOB"


def _chat(
    platform: Platform,
    chat_id: str,
    user: str,
    locale: Locale,
    *,
    private: bool = False,
    name: str = "",
) -> Chat:
    async def is_admin() -> bool:
        return True

    return Chat(platform, chat_id, user, is_admin, locale, user_name=name, private=private)


def _answerer(store: ReportStore, config: BotConfig | None = None) -> Answerer:
    config = config or BotConfig()
    return Answerer(store, DestinationStore(store.engine), config, clock=utc_clock)


def _shown(notice: object, fmt: Format, locale: Locale) -> str:
    assert isinstance(notice, Notice), notice
    return render_notice(Renderer(), notice, fmt, locale).text


@pytest.mark.parametrize(
    ("platform", "private", "locale", "whose"),
    [
        (Platform.SLACK, False, Locale.ZH, "本频道的"),
        (Platform.TELEGRAM, False, Locale.ZH, "本群的"),
        (None, False, Locale.ZH, "本群的"),
        (Platform.SLACK, True, Locale.ZH, "你的"),
        (Platform.TELEGRAM, True, Locale.ZH, "你的"),
        (Platform.SLACK, False, Locale.EN, "this channel's"),
        (Platform.TELEGRAM, False, Locale.EN, "this chat's"),
        (Platform.TELEGRAM, True, Locale.EN, "your"),
    ],
)
def test_chat_words_name_the_place_or_the_person(
    platform: Platform | None, private: bool, locale: Locale, whose: str
) -> None:
    words = chat_words(platform, locale, private=private)
    assert words["whose"] == whose
    assert words["cmd"] == ("/pr " if platform is Platform.SLACK else "/")


async def test_a_zh_slack_channel_lists_its_subscriptions_as_the_channels(
    store: ReportStore,
) -> None:
    answerer = _answerer(store)
    admin = _chat(Platform.SLACK, CHANNEL, "U0ADMIN", Locale.ZH, name="root")
    empty = await answerer.answer(parse("subscriptions"), admin)
    assert _shown(empty.reply, Format.SLACK, Locale.ZH).startswith("本频道还没有订阅。")
    await answerer.answer(parse("subscribe", "tag:rollout at daily 09:00"), admin)
    listed = _shown(
        (await answerer.answer(parse("subscriptions"), admin)).reply, Format.SLACK, Locale.ZH
    )
    lines = listed.split("\n")
    assert lines[0] == "本频道的订阅："
    assert lines[1].startswith("1. tag:rollout · daily 09:00 · 下一次 ")
    assert lines[1].endswith(" · 本频道")
    assert "群" not in listed


@pytest.mark.parametrize(
    ("locale", "heading", "owner", "none"),
    [
        (Locale.ZH, "你的订阅：", " · 你", "你还没有订阅。"),
        (Locale.EN, "Your subscriptions:", " · you", "You have no subscription yet: "),
    ],
)
async def test_a_telegram_private_chat_speaks_of_the_person(
    store: ReportStore, locale: Locale, heading: str, owner: str, none: str
) -> None:
    answerer = _answerer(store)
    me = _chat(Platform.TELEGRAM, "77", "77", locale, private=True, name="ada")
    empty = await answerer.answer(parse("subscriptions"), me)
    assert _shown(empty.reply, Format.TELEGRAM, locale).startswith(none)
    await answerer.answer(parse("subscribe", "tag:rollout at daily 09:00"), me)
    listed = await answerer.answer(parse("subscriptions"), me)
    shown = _shown(listed.reply, Format.TELEGRAM, locale)
    lines = shown.split("\n")
    assert lines[0] == heading
    assert lines[1].endswith(owner), lines[1]
    assert "个人" not in shown and "77" not in lines[1] and "本群" not in shown


async def test_someone_elses_subscription_is_a_mention_on_slack_and_an_id_elsewhere(
    store: ReportStore,
) -> None:
    answerer = _answerer(store)
    bob = _chat(Platform.SLACK, DM, BOB, Locale.ZH, private=True)
    await answerer.answer(parse("subscribe", "tag:rollout"), bob)
    # Someone else reads the same destination (the CLI and admins see it as a third person).
    eve = _chat(Platform.SLACK, DM, "U0EVE", Locale.ZH)
    listed = (await answerer.answer(parse("subscriptions"), eve)).reply
    assert isinstance(listed, Notice)
    assert f" · <@{BOB}>" in _slack_blocks(listed)
    for fmt in (Format.TELEGRAM, Format.TEXT):
        plain = _shown(listed, fmt, Locale.ZH)
        assert plain.split("\n")[1].endswith(f" · {BOB}"), plain
        assert "\ue000" not in plain and "\ue001" not in plain


async def test_a_telegram_person_seen_by_others_is_the_word_for_user_and_the_id(
    store: ReportStore,
) -> None:
    answerer = _answerer(store)
    await answerer.answer(
        parse("subscribe", "tag:rollout"),
        _chat(Platform.TELEGRAM, "77", "77", Locale.ZH, private=True),
    )
    other = _chat(Platform.TELEGRAM, "77", "88", Locale.ZH, name="eve")
    shown = _shown(
        (await answerer.answer(parse("subscriptions"), other)).reply, Format.TEXT, Locale.ZH
    )
    assert shown.split("\n")[1].endswith(" · 用户 77")
    assert "个人" not in shown


def _slack_blocks(notice: Notice) -> str:
    """The mrkdwn Slack shows (the `text` of a RenderedMessage is the plain version)."""
    message = render_notice(Renderer(), notice, Format.SLACK, Locale.EN)
    return "".join(block["text"]["text"] for block in message.payload["blocks"])


def test_only_a_slack_user_id_becomes_a_mention() -> None:
    marked = slack_mention("<!channel>") + " " + slack_mention("!here") + " <@U1>"
    shown = _slack_blocks(Notice("owner_user", {"user": marked}))
    assert "<!channel>" not in shown and "<@" not in shown and "<!" not in shown
    assert _slack_blocks(Notice("owner_user", {"user": slack_mention(BOB)})) == f"<@{BOB}>"


@pytest.mark.parametrize("locale", list(Locale))
async def test_schedule_says_why_no_subscription_here_takes_one(
    store: ReportStore, locale: Locale
) -> None:
    config = BotConfig.model_validate(
        {"channels": [{"name": "team", "platform": "slack", "target": CHANNEL}]}
    )
    await SubscriptionStore(store.engine).sync_config(config)
    answerer = _answerer(store, config)
    admin = _chat(Platform.SLACK, CHANNEL, "U0ADMIN", locale, name="root")
    for query in ("tag:ci", "tag:fix", "tag:breaking"):
        await answerer.answer(parse("subscribe", f"{query} at now"), admin)
    answer = await answerer.answer(parse("schedule", "09:00"), admin)
    assert isinstance(answer.reply, Notice) and answer.reply.key == "schedule_none_own"
    shown = _shown(answer.reply, Format.SLACK, locale)
    lines = shown.split("\n")
    if locale is Locale.ZH:
        assert lines[0] == "本频道的订阅都不能设置推送时间："
        assert lines[1:5] == [
            "1. team（来自配置文件）",
            "2. tag:ci（立即推送）",
            "3. tag:fix（立即推送）",
            "4. tag:breaking（立即推送）",
        ]
        assert "还没有订阅" not in shown
    else:
        assert lines[0] == "None of this channel's subscriptions takes a schedule:"
        assert lines[1:3] == ["1. team (from the config)", "2. tag:ci (at now)"]
        assert "no subscription" not in shown
    subs = await SubscriptionStore(store.engine).of(Platform.SLACK, CHANNEL)
    assert [s.schedule for s in subs][1:] == ["now", "now", "now"], "nothing changed"


async def test_schedule_in_a_chat_without_subscriptions_still_says_none(
    store: ReportStore,
) -> None:
    answer = await _answerer(store).answer(
        parse("schedule", "09:00"), _chat(Platform.SLACK, CHANNEL, "U0ADMIN", Locale.ZH)
    )
    assert _shown(answer.reply, Format.SLACK, Locale.ZH).startswith("本频道还没有订阅。")


def test_help_on_slack_never_says_this_group() -> None:
    from bot.chat.answers import help_lines

    assert "群" not in help_lines(Platform.SLACK, Locale.ZH)


def test_no_slack_notice_says_group() -> None:
    from bot.core.render.labels import notice_keys
    from bot.core.render.notices import NOTICES

    renderer = Renderer()
    telegram_only = {"topics_not_forum"}  # Telegram's forum groups
    for key in sorted(notice_keys() - telegram_only):
        names = re.findall(r"{(\w+)}", NOTICES[Locale.ZH][key])
        params = {name: "x" for name in names if name not in chat_words(None, Locale.ZH)}
        text = render_notice(renderer, Notice(key, params), Format.SLACK, Locale.ZH).text
        assert "群" not in text, (key, text)


@pytest.mark.parametrize(
    ("verb", "text", "said"),
    [
        ("find", "rsk:fp8", "查询写法有误：不认识的字段 `rsk`（是不是 `risk`？）（第 1 个字符）"),
        (
            "subscribe",
            "rsk:fp8",
            "查询写法有误：不认识的字段 `rsk`（是不是 `risk`？）（第 1 个字符）",
        ),
        ("subscribe", "tag:ci at 每天 9点", "推送频率写法有误：时间 `9点` 写法有误，请写 `HH:MM`"),
        ("subscribe", "test tag:ci at sometimes", "推送频率写法有误：`sometimes` 不是推送频率。"),
        ("schedule", '"0 9 31 2 *"', "无法设置推送时间：定时表达式 `0 9 31 2 *` 一年内都不会触发"),
    ],
)
async def test_a_zh_chat_is_told_what_is_wrong_in_chinese(
    store: ReportStore, verb: str, text: str, said: str
) -> None:
    answerer = _answerer(store)
    me = _chat(Platform.TELEGRAM, "77", "77", Locale.ZH, private=True)
    if verb == "schedule":
        await answerer.answer(parse("subscribe", "tag:rollout"), me)
    answer = await answerer.answer(parse(verb, text), me)
    assert _shown(answer.reply, Format.TELEGRAM, Locale.ZH).startswith(said)
