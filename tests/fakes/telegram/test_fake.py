"""The strict Telegram Bot API fake: what it accepts and refuses like the real API, its flood
limits and scripted faults, getUpdates and webhooks, chats and members.

Driven by python-telegram-bot's real Bot (and one whole PTB Application) and by raw httpx calls.
"""

from __future__ import annotations

import asyncio
import datetime as dtm
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import httpx
import pytest
import telegram
from telegram import Update
from telegram.error import BadRequest, ChatMigrated, Conflict, Forbidden, NetworkError, RetryAfter
from telegram.ext import Application, CommandHandler, ContextTypes
from telegram.request import HTTPXRequest

from tests.fakes.telegram.api import FakeTelegram, Fault
from tests.fakes.telegram.spec import ValueChecker
from tests.kits.clocks import SecondsClock
from tests.kits.waiting import until

USER = 4242  # a private chat: positive id
GROUP = -1001  # a group: negative id


@pytest.fixture
async def fake(clock: SecondsClock) -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(clock=clock) as server:
        server.add_chat(USER)
        server.add_chat(GROUP, "group", "PR readers")
        yield server


def ptb_bot(fake: FakeTelegram) -> telegram.Bot:
    """PTB's real Bot aimed at the fake. Plain-HTTP loopback: skipping the CA bundle load
    (verify=False) saves ~70 ms per Bot and changes nothing else."""
    return telegram.Bot(
        fake.token,
        base_url=f"{fake.url}/bot",
        request=HTTPXRequest(httpx_kwargs={"verify": False}),
        get_updates_request=HTTPXRequest(httpx_kwargs={"verify": False}),
    )


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[telegram.Bot]:
    async with ptb_bot(fake) as client:
        yield client


@pytest.fixture
async def http(fake: FakeTelegram) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=f"{fake.url}/bot{fake.token}/") as client:
        yield client


async def refused(
    fake: FakeTelegram, call: Awaitable[Any], error: type[Exception] = BadRequest
) -> str:
    """The fake's exact description for a call PTB raised `error` for (PTB rewords it)."""
    with pytest.raises(error):
        await call
    return fake.requests[-1].description


def seconds(value: int | dtm.timedelta) -> float:
    return value.total_seconds() if isinstance(value, dtm.timedelta) else float(value)


def new_private_chat(fake: FakeTelegram) -> int:
    return fake.add_chat(USER + len(fake.chats)).id


# -- accepted calls --------------------------------------------------------------------------


async def test_get_me_answers_the_bot_identity(fake: FakeTelegram, bot: telegram.Bot) -> None:
    me = await bot.get_me()

    assert me.username == "prdigest_test_bot"
    assert me.id == 123456
    assert me.is_bot


async def test_valid_html_is_accepted_and_recorded_as_the_reader_sees_it(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    text = '<b>PR #7422</b> &amp; <a href="https://github.com/o/r/pull/7422">link</a>'

    message = await bot.send_message(USER, text, parse_mode="HTML")

    assert message.text == "PR #7422 & link"
    assert [e.type for e in message.entities] == ["bold", "text_link"]
    (sent,) = fake.sent
    assert (sent.chat_id, sent.text, sent.plain_text) == (USER, text, "PR #7422 & link")
    assert fake.unknown_fields == []


async def test_message_ids_increase_per_chat(
    fake: FakeTelegram, bot: telegram.Bot, clock: SecondsClock
) -> None:
    first = await bot.send_message(USER, "one")
    in_group = await bot.send_message(GROUP, "other chat")
    clock.now += 1
    second = await bot.send_message(USER, "two")

    assert (first.message_id, second.message_id, in_group.message_id) == (1, 2, 1)


async def test_json_bodies_and_query_strings_are_accepted_like_form_posts(
    fake: FakeTelegram, http: httpx.AsyncClient
) -> None:
    by_json = await http.post("sendMessage", json={"chat_id": USER, "text": "json"})
    by_query = await http.get("sendMessage", params={"chat_id": GROUP, "text": "query"})

    assert by_json.json()["result"]["text"] == "json"
    assert by_query.json()["result"]["chat"]["id"] == GROUP
    assert [message.text for message in fake.sent] == ["json", "query"]


async def test_unknown_fields_are_ignored_but_recorded(
    fake: FakeTelegram, http: httpx.AsyncClient
) -> None:
    answer = await http.post("sendMessage", data={"chat_id": USER, "text": "x", "colour": "red"})

    assert answer.json()["ok"] is True
    assert fake.unknown_fields == [("sendMessage", "colour")]


# -- refused content -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "broken",
    ["<b>x", "<script>alert(1)</script>", "a & b", '<a href="javascript:alert(1)">x</a>'],
)
async def test_broken_html_is_refused_with_cant_parse_entities(
    fake: FakeTelegram, bot: telegram.Bot, broken: str
) -> None:
    reason = await refused(fake, bot.send_message(USER, broken, parse_mode="HTML"))

    assert reason.startswith("Bad Request: can't parse entities: ")
    assert fake.sent == []


async def test_markdown_v2_is_checked_as_strictly_as_html(
    fake: FakeTelegram, bot: telegram.Bot, clock: SecondsClock
) -> None:
    await bot.send_message(USER, "*PR \\#7422* fixes rollout\\.", parse_mode="MarkdownV2")
    clock.now += 1

    reason = await refused(fake, bot.send_message(USER, "v1.2", parse_mode="MarkdownV2"))

    assert reason == (
        "Bad Request: can't parse entities: "
        "Character '.' is reserved and must be escaped with the preceding '\\'"
    )
    assert [m.plain_text for m in fake.sent] == ["PR #7422 fixes rollout."]


async def test_html_error_names_the_byte_offset(
    fake: FakeTelegram, http: httpx.AsyncClient
) -> None:
    form = {"chat_id": USER, "text": "é<script>", "parse_mode": "HTML"}

    answer = await http.post("sendMessage", data=form)

    assert answer.status_code == 400
    assert answer.json()["description"] == (
        'Bad Request: can\'t parse entities: Unsupported start tag "script" at byte offset 2'
    )


async def test_length_counts_utf16_units_after_entity_parsing(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    at_limit = "😀" * 2048  # 4096 UTF-16 units, 2048 characters
    await bot.send_message(USER, f"<b>{at_limit}</b>", parse_mode="HTML")

    too_long = bot.send_message(new_private_chat(fake), at_limit + "a")

    assert await refused(fake, too_long) == "Bad Request: message is too long"
    assert [len(message.plain_text) for message in fake.sent] == [2048]


async def test_empty_text_after_parsing_is_refused(fake: FakeTelegram, bot: telegram.Bot) -> None:
    blank = bot.send_message(USER, "<b> </b>", parse_mode="HTML")

    assert await refused(fake, blank) == "Bad Request: message text is empty"


async def test_unsupported_parse_mode_is_refused(fake: FakeTelegram, bot: telegram.Bot) -> None:
    bbcode = bot.send_message(USER, "x", parse_mode="BBCode")

    assert await refused(fake, bbcode) == "Bad Request: unsupported parse_mode"


@pytest.mark.parametrize(
    ("button", "reason"),
    [
        (telegram.InlineKeyboardButton("Open", callback_data="x" * 65), "BUTTON_DATA_INVALID"),
        (telegram.InlineKeyboardButton("Open", url="javascript:alert(1)"), "BUTTON_URL_INVALID"),
    ],
)
async def test_bad_inline_buttons_are_refused(
    fake: FakeTelegram, bot: telegram.Bot, button: telegram.InlineKeyboardButton, reason: str
) -> None:
    markup = telegram.InlineKeyboardMarkup([[button]])

    send = bot.send_message(USER, "x", reply_markup=markup)

    assert await refused(fake, send) == f"Bad Request: {reason}"


async def test_unknown_chat_is_not_found(fake: FakeTelegram, bot: telegram.Bot) -> None:
    assert await refused(fake, bot.send_message(999, "x")) == "Bad Request: chat not found"


# -- refused calls ---------------------------------------------------------------------------


async def test_unknown_method_is_404(fake: FakeTelegram, http: httpx.AsyncClient) -> None:
    answer = await http.post("sendMesage", data={"chat_id": USER, "text": "x"})

    assert answer.status_code == 404
    assert answer.json() == {"ok": False, "error_code": 404, "description": "Not Found"}


async def test_missing_chat_id_is_400(fake: FakeTelegram, http: httpx.AsyncClient) -> None:
    answer = await http.post("sendMessage", data={"text": "x"})

    assert answer.status_code == 400
    assert answer.json()["description"] == "Bad Request: chat_id is empty"


async def test_a_wrongly_typed_field_is_400(fake: FakeTelegram, http: httpx.AsyncClient) -> None:
    form = {"chat_id": USER, "text": "x", "reply_markup": "{not json"}

    answer = await http.post("sendMessage", data=form)

    assert answer.status_code == 400
    assert "reply_markup" in answer.json()["description"]


async def test_wrong_token_is_401(fake: FakeTelegram) -> None:
    async with httpx.AsyncClient() as client:
        answer = await client.post(f"{fake.url}/bot123456:wrong/getMe")

    assert answer.status_code == 401
    assert answer.json()["description"] == "Unauthorized"


# -- flood limits ----------------------------------------------------------------------------


async def test_second_message_to_a_chat_within_a_second_gets_429(
    fake: FakeTelegram, bot: telegram.Bot, clock: SecondsClock
) -> None:
    await bot.send_message(USER, "first")
    clock.now += 0.5

    with pytest.raises(RetryAfter) as caught:
        await bot.send_message(USER, "too soon")

    assert seconds(caught.value.retry_after) >= 1
    assert fake.flood_429s == 1
    assert fake.count_429 == {USER: 1}
    assert [message.text for message in fake.sent] == ["first"]


async def test_after_the_retry_after_the_chat_accepts_again(
    fake: FakeTelegram, bot: telegram.Bot, clock: SecondsClock
) -> None:
    await bot.send_message(USER, "first")
    with pytest.raises(RetryAfter) as caught:
        await bot.send_message(USER, "too soon")
    clock.now += seconds(caught.value.retry_after)

    await bot.send_message(USER, "waited")

    assert [message.text for message in fake.sent] == ["first", "waited"]
    assert fake.early_retries == []


async def test_a_retry_before_retry_after_is_refused_and_recorded(
    fake: FakeTelegram, bot: telegram.Bot, clock: SecondsClock
) -> None:
    await bot.send_message(USER, "first")
    with pytest.raises(RetryAfter):
        await bot.send_message(USER, "too soon")
    clock.now += 0.5

    with pytest.raises(RetryAfter):
        await bot.send_message(USER, "still too soon")

    assert [event.rule for event in fake.early_retries] == ["penalty"]


async def test_a_group_gets_at_most_20_messages_a_minute(
    fake: FakeTelegram, bot: telegram.Bot, clock: SecondsClock
) -> None:
    for number in range(20):
        await bot.send_message(GROUP, f"message {number}")
        clock.now += 1

    with pytest.raises(RetryAfter) as caught:
        await bot.send_message(GROUP, "one too many")

    assert seconds(caught.value.retry_after) == 40  # the first send leaves the window at 60 s
    assert [event.rule for event in fake.violations] == ["group"]


async def test_at_most_30_messages_a_second_overall(fake: FakeTelegram, bot: telegram.Bot) -> None:
    chats = [new_private_chat(fake) for _ in range(31)]
    for chat_id in chats[:30]:
        await bot.send_message(chat_id, "hello")

    with pytest.raises(RetryAfter):
        await bot.send_message(chats[30], "over the global limit")

    assert [event.rule for event in fake.violations] == ["global"]


async def test_time_scale_shrinks_the_windows(
    fake: FakeTelegram, bot: telegram.Bot, clock: SecondsClock
) -> None:
    fake.flood.time_scale = 0.1
    await bot.send_message(USER, "first")
    clock.now += 0.1

    await bot.send_message(USER, "a tenth of a second later")

    assert fake.flood_429s == 0


async def test_without_enforcement_violations_are_counted_not_refused(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    fake.flood.enforce = False
    await bot.send_message(USER, "first")
    await bot.send_message(USER, "second")

    assert len(fake.sent) == 2
    assert [event.rule for event in fake.violations] == ["chat"]
    assert fake.flood_429s == 0


# -- scripted faults -------------------------------------------------------------------------


async def test_scripted_block_raises_forbidden_once(
    fake: FakeTelegram, bot: telegram.Bot, clock: SecondsClock
) -> None:
    fake.script(USER, Fault.blocked())

    blocked = await refused(fake, bot.send_message(USER, "x"), Forbidden)
    await bot.send_message(USER, "unblocked")

    assert blocked == "Forbidden: bot was blocked by the user"
    assert [message.text for message in fake.sent] == ["unblocked"]


async def test_blocked_forever_refuses_every_call(fake: FakeTelegram, bot: telegram.Bot) -> None:
    fake.script(USER, Fault.blocked_forever)

    for _ in range(3):
        with pytest.raises(Forbidden):
            await bot.send_message(USER, "x")


async def test_kicked_from_a_group_raises_forbidden(fake: FakeTelegram, bot: telegram.Bot) -> None:
    fake.script(GROUP, Fault.kicked())

    kicked = await refused(fake, bot.send_message(GROUP, "x"), Forbidden)

    assert kicked == "Forbidden: bot was kicked from the group chat"


async def test_migrated_group_raises_chat_migrated_with_the_new_id(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    fake.script(GROUP, Fault.migrated(-1009))

    with pytest.raises(ChatMigrated) as caught:
        await bot.send_message(GROUP, "x")
    await bot.send_message(caught.value.new_chat_id, "moved")

    assert caught.value.new_chat_id == -1009
    assert fake.chats[-1009].type == "supergroup"
    with pytest.raises(ChatMigrated):
        await bot.send_message(GROUP, "the old id stays migrated")


async def test_scripted_retry_after_carries_its_seconds(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    fake.script(USER, Fault.retry_after(34))

    with pytest.raises(RetryAfter) as caught:
        await bot.send_message(USER, "x")
    await bot.send_message(USER, "immediately again")

    assert seconds(caught.value.retry_after) == 34
    assert [event.retry_after for event in fake.early_retries] == [34]


async def test_server_error_is_a_network_error(fake: FakeTelegram, bot: telegram.Bot) -> None:
    fake.script(USER, Fault.server_error())

    with pytest.raises(NetworkError):
        await bot.send_message(USER, "x")
    assert fake.sent == []


async def test_reset_after_accept_delivers_but_the_client_sees_an_error(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    fake.script(USER, Fault.reset_after_accept())

    with pytest.raises(NetworkError):
        await bot.send_message(USER, "delivered anyway")

    assert [message.text for message in fake.sent] == ["delivered anyway"]


# -- getUpdates and webhooks -----------------------------------------------------------------


async def test_get_updates_serves_pushed_updates_until_an_offset_confirms_them(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    first = fake.push_message(USER, "/pr 7422")
    second = fake.push_message(USER, "hello")

    updates = await bot.get_updates()
    again = await bot.get_updates()
    after_confirming = await bot.get_updates(offset=second + 1)

    assert [u.update_id for u in updates] == [first, second] == [u.update_id for u in again]
    assert updates[0].message is not None
    assert updates[0].message.text == "/pr 7422"
    assert after_confirming == ()
    assert (await bot.get_webhook_info()).pending_update_count == 0


async def test_updates_of_types_the_bot_did_not_allow_are_never_delivered(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    fake.push_update({"my_chat_member": {"chat": {"id": GROUP, "type": "group"}}})
    wanted = fake.push_message(USER, "/pr 1")

    updates = await bot.get_updates(allowed_updates=["message"])

    assert [update.update_id for update in updates] == [wanted]


async def test_a_long_poll_returns_as_soon_as_an_update_is_pushed(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    poll = asyncio.create_task(bot.get_updates(timeout=30))
    await until(lambda: fake.poll_in_flight)

    update_id = fake.push_message(USER, "/start")
    updates = await asyncio.wait_for(poll, timeout=2)

    assert [update.update_id for update in updates] == [update_id]


async def test_a_second_concurrent_long_poll_ends_the_first_with_409(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    first = asyncio.create_task(bot.get_updates(timeout=30))
    await until(lambda: fake.poll_in_flight)

    async with ptb_bot(fake) as other_replica:
        assert await other_replica.get_updates(timeout=0) == ()

    with pytest.raises(Conflict):
        await asyncio.wait_for(first, timeout=2)
    conflicts = [call.description for call in fake.calls("getUpdates") if call.status == 409]
    assert conflicts == [
        "Conflict: terminated by other getUpdates request; "
        "make sure that only one bot instance is running"
    ]


async def test_get_updates_is_refused_while_a_webhook_is_set(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    await bot.set_webhook("https://bot.example.com/telegram/webhook", secret_token="s3cret")

    conflict = await refused(fake, bot.get_updates(), Conflict)
    await bot.delete_webhook()

    assert conflict.startswith("Conflict: can't use getUpdates method while webhook is active")
    assert await bot.get_updates() == ()
    assert (await bot.get_webhook_info()).url == ""


async def test_a_plain_http_webhook_is_refused(fake: FakeTelegram, bot: telegram.Bot) -> None:
    plain_http = bot.set_webhook("http://bot.example.com/telegram/webhook")

    assert await refused(fake, plain_http) == (
        "Bad Request: bad webhook: An HTTPS URL must be provided for webhook"
    )


# -- chats, members, commands ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        ("member", telegram.ChatMemberMember),
        ("administrator", telegram.ChatMemberAdministrator),
        ("creator", telegram.ChatMemberOwner),
        ("kicked", telegram.ChatMemberBanned),
    ],
)
async def test_get_chat_member_reports_the_status_that_was_set(
    fake: FakeTelegram, bot: telegram.Bot, status: Any, kind: type
) -> None:
    fake.set_member(GROUP, 7, status)

    member = await bot.get_chat_member(GROUP, 7)

    assert isinstance(member, kind)
    assert member.status == status
    assert member.user.id == 7


async def test_a_member_nobody_set_is_a_plain_member(fake: FakeTelegram, bot: telegram.Bot) -> None:
    assert (await bot.get_chat_member(GROUP, 8)).status == "member"


async def test_get_chat_administrators_lists_admins_and_the_creator(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    fake.set_member(GROUP, 1, "creator")
    fake.set_member(GROUP, 2, "administrator")
    fake.set_member(GROUP, 3, "member")

    admins = await bot.get_chat_administrators(GROUP)

    assert sorted(admin.user.id for admin in admins) == [1, 2]


async def test_get_chat_describes_the_chat(fake: FakeTelegram, bot: telegram.Bot) -> None:
    chat = await bot.get_chat(GROUP)

    assert (chat.id, chat.type, chat.title) == (GROUP, "group", "PR readers")


async def test_commands_are_validated_and_stored(fake: FakeTelegram, bot: telegram.Bot) -> None:
    await bot.set_my_commands([("pr", "Show a PR report"), ("subscribe", "Follow a tag")])

    bad_name = bot.set_my_commands([("Bad-Name", "nope")])

    assert await refused(fake, bad_name) == "Bad Request: BOT_COMMAND_INVALID"
    assert [c.command for c in await bot.get_my_commands()] == ["pr", "subscribe"]


async def test_edit_replaces_the_text_of_a_sent_message(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    message = await bot.send_message(USER, "draft")

    edited = await edit(bot, message.message_id, "<i>final</i>")

    assert isinstance(edited, telegram.Message)
    assert edited.text == "final"
    assert [(m.method, m.plain_text) for m in fake.sent] == [
        ("sendMessage", "draft"),
        ("editMessageText", "final"),
    ]
    unchanged = await refused(fake, edit(bot, message.message_id, "<i>final</i>"))
    assert unchanged.startswith("Bad Request: message is not modified")
    missing = await refused(fake, edit(bot, 999, "x"))
    assert missing == "Bad Request: message to edit not found"


def edit(bot: telegram.Bot, message_id: int, text: str) -> Awaitable[Any]:
    return bot.edit_message_text(text, USER, message_id, parse_mode="HTML")


async def test_only_pushed_callback_queries_can_be_answered(
    fake: FakeTelegram, bot: telegram.Bot
) -> None:
    button = telegram.InlineKeyboardButton("Risks", callback_data="pr:7422:risks")
    message = await bot.send_message(
        USER, "PR #7422", reply_markup=telegram.InlineKeyboardMarkup([[button]])
    )
    fake.push_callback_query(USER, message.message_id, "pr:7422:risks", user_id=USER)
    (update,) = await bot.get_updates()
    assert update.callback_query is not None

    assert await bot.answer_callback_query(update.callback_query.id, text="ok")
    again = await refused(fake, bot.answer_callback_query(update.callback_query.id))
    assert again.startswith("Bad Request: query is too old")


async def test_answers_carry_every_field_the_spec_requires(
    fake: FakeTelegram, bot: telegram.Bot, http: httpx.AsyncClient
) -> None:
    fake.set_member(GROUP, 2, "administrator")
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("getMe", {}, "User"),
        ("sendMessage", {"chat_id": USER, "text": "x"}, "Message"),
        ("getChat", {"chat_id": GROUP}, "ChatFullInfo"),
        ("getChatMember", {"chat_id": GROUP, "user_id": 2}, "ChatMember"),
        ("getWebhookInfo", {}, "WebhookInfo"),
    ]
    for method, params, type_name in calls:
        result = (await http.post(method, data=params)).json()["result"]
        checker = ValueChecker(fake.spec)

        assert checker.check((type_name,), result, method) is None
        assert checker.unknown == []


# -- a whole PTB application -----------------------------------------------------------------


async def test_a_polling_ptb_application_answers_a_pushed_command(fake: FakeTelegram) -> None:
    async def answer_pr(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.effective_chat is not None
        number = context.args[0] if context.args else "?"
        await update.effective_chat.send_message(f"<b>PR #{number}</b>", parse_mode="HTML")

    app = (
        Application.builder()
        .token(fake.token)
        .base_url(f"{fake.url}/bot")
        .request(HTTPXRequest(httpx_kwargs={"verify": False}))
        .get_updates_request(HTTPXRequest(httpx_kwargs={"verify": False}))
        .build()
    )
    app.add_handler(CommandHandler("pr", answer_pr))
    async with app:
        await app.start()
        assert app.updater is not None
        await app.updater.start_polling(timeout=10, poll_interval=0)
        fake.push_message(USER, "/pr 7422")
        await until(lambda: bool(fake.sent))
        await app.updater.stop()
        await app.stop()

    assert [(m.chat_id, m.plain_text) for m in fake.sent] == [(USER, "PR #7422")]
    assert fake.unknown_fields == []
