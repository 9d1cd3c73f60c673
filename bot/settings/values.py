"""The config's value types: each checks what it reads and says what is wrong."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, BeforeValidator, Field

from bot.core.query import QueryError, parse
from bot.core.timing.schedules import schedule_cron

TELEGRAM_WEBHOOK_PORTS = (443, 80, 88, 8443)


def _valid_timezone(name: str) -> str:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(
            f"unknown time zone {name!r} (use an IANA name like Asia/Shanghai)"
        ) from exc
    return name


def _valid_cron(expr: str) -> str:
    """A 5-field cron that fires within a year (core/timing/cron refuses the rest, as the chat
    does).
    UTC here; `prdigest check-config` checks again in the channel's own zone. Imported here,
    not at the top: the core imports these models and must not pull in a scheduler library."""
    from bot.core.timing.cron import CronError, next_fire

    if expr == NOW_SCHEDULE:
        return expr
    try:
        next_fire(expr, "UTC", datetime.now(UTC))
    except CronError as exc:
        raise ValueError(str(exc)) from exc
    return expr


NOW_SCHEDULE = "now"  # a `now` cadence: each matching PR is posted as it arrives


def _clock_schedule(value: object) -> object:
    """`09:00` and `09:00 mon-fri` are read as `/schedule` reads them."""
    return schedule_cron(value) if isinstance(value, str) else value


def _id_text(value: object) -> object:
    """An unquoted chat id (`target: -1001234567890`) is a YAML int: the id is its text."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _valid_webhook_url(url: str) -> str:
    try:
        parsed = urlsplit(url)
        port = parsed.port or 443
    except ValueError:
        raise ValueError(f"{url!r} is not a URL") from None
    if parsed.scheme != "https" or not parsed.hostname:
        raise ValueError(
            f"{url!r} must be an https:// URL (Telegram sends webhooks over HTTPS only)"
        )
    if port not in TELEGRAM_WEBHOOK_PORTS:
        ports = ", ".join(str(p) for p in TELEGRAM_WEBHOOK_PORTS)
        raise ValueError(f"port {port} is not one Telegram sends webhooks to ({ports})")
    return url


def _lower_tag(tag: str) -> str:
    cleaned = tag.strip().lower()
    if not cleaned:
        raise ValueError("empty tag")
    return cleaned


def _repo_name(repo: str) -> str:
    cleaned = repo.strip()
    if not cleaned:
        raise ValueError("empty repo (use owner/name, or a name: verl-project/verl, verl)")
    return cleaned


def _valid_query(text: str) -> str:
    """A channel's `query:`, checked when the config is loaded (its QueryError line)."""
    try:
        parse(text)
    except QueryError as exc:
        raise ValueError(str(exc)) from None
    return text.strip()


def _urgent_switch(value: object) -> object:
    """A channel's `urgent:`: true or false, nothing YAML would read as another thing."""
    if isinstance(value, bool):
        return value
    raise ValueError(
        f"{value!r} is not true or false (urgent: true lets this channel's digests through"
        " its destination's quiet hours; its holidays still hold them)"
    )


def _holidays_switch(value: object) -> object:
    """A channel's `holidays:`: whether its destination's holidays hold this subscription.
    The holidays themselves are the destination's, under `calendar:`."""
    if isinstance(value, bool):
        return value
    if isinstance(value, dict):
        raise ValueError(
            "a channel's `holidays:` is true or false (false: its destination's holidays do"
            " not hold this channel); the holidays themselves go under `calendar:`"
            " (calendar: {holidays: {country: CN}})"
        )
    raise ValueError(
        f"{value!r} is not true or false (false: its destination's holidays do not hold this"
        " channel)"
    )


Timezone = Annotated[str, AfterValidator(_valid_timezone)]
Cron = Annotated[str, BeforeValidator(_clock_schedule), AfterValidator(_valid_cron)]
ChatId = Annotated[str, BeforeValidator(_id_text), Field(min_length=1)]
WebhookURL = Annotated[str, AfterValidator(_valid_webhook_url)]
Tag = Annotated[str, AfterValidator(_lower_tag)]
Repo = Annotated[str, AfterValidator(_repo_name)]
ChannelQuery = Annotated[str, AfterValidator(_valid_query)]
UrgentSwitch = Annotated[bool, BeforeValidator(_urgent_switch)]
HolidaysSwitch = Annotated[bool, BeforeValidator(_holidays_switch)]


def read_cadence(data: Any) -> Any:
    """A channel's `cadence:` (or `schedule:`, not both), read into `schedule` (a cron, or
    "now") and kept as written. Both take the same words: a cron, `09:00 [DAYS]`,
    `daily 09:00`, `workdays 09:30`, `weekly fri 17:00`, `now`, and the pickers' wording for
    them (`每天 09:00`), kept as its canonical text (bot.core.timing.cadence_words)."""
    if not isinstance(data, dict):
        return data
    text = data.get("cadence")
    if text is not None and data.get("schedule") is not None:
        raise ValueError("give `cadence:` or `schedule:`, not both")
    from bot.core.timing.cadence import CadenceError, is_shorthand, parse_cadence  # see _valid_cron
    from bot.core.timing.cron import next_fire

    if text is None:  # a `schedule:` in a shorthand is read as the same `cadence:`
        if not is_shorthand(str(data.get("schedule") or "")):
            return data
        text = data["schedule"]
    try:
        cadence = parse_cadence(str(text), next_fire=next_fire, now=datetime.now(UTC))
    except CadenceError as exc:
        raise ValueError(str(exc)) from None
    return {**data, "cadence": cadence.text, "schedule": cadence.cron or NOW_SCHEDULE}
