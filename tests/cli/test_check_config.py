"""`prdigest check-config` says what will go wrong (issue 15): schedules that never fire,
Telegram's webhook rules, tokens that cannot be right, did-you-mean for unknown keys, secrets
put in the YAML, one path style, unquoted chat ids, `09:00` schedules, `postgres://` URLs and
the database in use. Messages are asserted word for word: they are what a user reads."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from pydantic import SecretStr
from sqlalchemy import text

from bot.chat.commands import parse
from bot.chat.requests import SetSchedule
from bot.cli import main
from bot.cli.config_cmd import describe, problems
from bot.core.calendar.ics import MAX_ICS_BYTES
from bot.core.models import Platform
from bot.core.store.sql.db import async_url, create_engine
from bot.settings import ENV_VARS, BotConfig, Channel, ConfigError, Env, load_config
from bot.settings.env_checks import is_placeholder
from tests.kits.slack import SIGNING_SECRET
from tests.kits.telegram import WEBHOOK_SECRET, WEBHOOK_URL
from tests.kits.wall_clock import set_wall_clock

NEVER = "0 9 31 2 *"
NEVER_REASON = (
    f"cron {NEVER!r} never fires within a year: no date matches it (e.g. February has no day 30"
    " or 31, and a 29th only once in four years)"
)
SLACK_OK = {"SLACK_BOT_TOKEN": "xoxb-1-2", "SLACK_SIGNING_SECRET": "s"}


@pytest.fixture(autouse=True)
def _clean_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_VARS.values():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BOT_DATABASE_URL", f"sqlite:///{tmp_path / 'bot.db'}")
    monkeypatch.setenv("BOT_CONFIG", "")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bot.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _config_error(tmp_path: Path, yaml_text: str) -> list[str]:
    """The lines of the ConfigError, without the `invalid config PATH:` head."""
    path = _write(tmp_path, yaml_text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    head, *lines = str(caught.value).splitlines()
    assert head == f"invalid config {path}:"
    return lines


def _env(**values: str) -> Env:
    return Env.from_environ({"BOT_CONFIG": "", **values})


# 1. A cron that never fires ------------------------------------------------------------------


def test_check_config_lists_a_never_firing_schedule_as_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(
        tmp_path,
        f"channels:\n  - {{name: verl-daily, platform: console, target: stdout, "
        f"schedule: '{NEVER}'}}\n",
    )
    monkeypatch.setenv("BOT_CONFIG", str(path))
    assert main(["check-config"]) == 2
    out = capsys.readouterr()
    assert out.err == (
        f"prdigest check-config: invalid config {path}:\n"
        f"  channels.verl-daily.schedule: {NEVER_REASON}\n"
    )
    assert "ok" not in out.out.split() and "?" not in out.out


def test_the_summary_never_prints_a_question_mark_for_the_next_digest() -> None:
    """A schedule that got past the config (built in code) is still an error, and its line
    says it never fires instead of `next ?`."""
    channel = Channel.model_construct(
        name="verl-daily",
        platform=Platform.CONSOLE,
        target="stdout",
        schedule=NEVER,
        timezone="UTC",
    )
    config = BotConfig.model_construct(**{**BotConfig().__dict__, "channels": [channel]})
    [line] = [line for line in describe(_env(), config) if line.startswith("channel:")]
    assert line == (
        f"channel:   verl-daily → console:stdout '{NEVER}' UTC, never fires (see the errors below)"
    )
    assert problems(_env(), config) == [f"channels.verl-daily.schedule: {NEVER_REASON}"]


# 2. Telegram's webhook rules -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        (
            "http://bot.example.com/telegram/webhook",
            "'http://bot.example.com/telegram/webhook' must be an https:// URL (Telegram sends "
            "webhooks over HTTPS only)",
        ),
        (
            "https://bot.example.com:8080/telegram/webhook",
            "port 8080 is not one Telegram sends webhooks to (443, 80, 88, 8443)",
        ),
        (
            "bot.example.com/telegram/webhook",
            "'bot.example.com/telegram/webhook' must be an "
            "https:// URL (Telegram sends webhooks over HTTPS only)",
        ),
    ],
)
def test_a_webhook_url_telegram_would_refuse_names_the_key(
    tmp_path: Path, url: str, reason: str
) -> None:
    lines = _config_error(tmp_path, f"telegram: {{webhook_url: '{url}'}}\n")
    assert lines == [f"  telegram.webhook_url: {reason}"]


@pytest.mark.parametrize("port", ["", ":443", ":80", ":88", ":8443"])
def test_the_webhook_ports_telegram_sends_to_are_accepted(tmp_path: Path, port: str) -> None:
    url = f"https://bot.example.com{port}/telegram/webhook"
    config = load_config(_write(tmp_path, f"telegram: {{webhook_url: '{url}'}}\n"))
    assert config.telegram.webhook_url == url


@pytest.mark.parametrize("secret", ["bad secret", "ümlaut", "a" * 257, "tab\there", "a.b"])
def test_a_webhook_secret_telegram_would_refuse_is_an_error(secret: str) -> None:
    env = Env(telegram_bot_token=SecretStr("123:abc"), telegram_webhook_secret=SecretStr(secret))
    config = BotConfig.model_validate({"telegram": {"webhook_url": WEBHOOK_URL}})
    assert problems(env, config) == [
        "TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z a-z 0-9 _ -"
    ]


@pytest.mark.parametrize("secret", [WEBHOOK_SECRET, "a" * 256, "A-z_0", "x"])
def test_a_webhook_secret_telegram_takes_passes(secret: str) -> None:
    env = Env(telegram_bot_token=SecretStr("123:abc"), telegram_webhook_secret=SecretStr(secret))
    config = BotConfig.model_validate({"telegram": {"webhook_url": WEBHOOK_URL}})
    assert problems(env, config) == []


# 3. Tokens that cannot be right --------------------------------------------------------------

SLACK_BOT_WHERE = "the Bot User OAuth Token (xoxb-…) on the Slack app's OAuth & Permissions page"
SLACK_APP_WHERE = "an App-Level Token (xapp-…) on the Slack app's Basic Information page"


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        (
            {**SLACK_OK, "SLACK_BOT_TOKEN": "xoxb-replace-me"},
            f"SLACK_BOT_TOKEN is a placeholder, not a secret: set {SLACK_BOT_WHERE}",
        ),
        (
            {**SLACK_OK, "SLACK_BOT_TOKEN": "xoxb-xxxx-xxxx-xxxxxxxx"},
            f"SLACK_BOT_TOKEN is a placeholder, not a secret: set {SLACK_BOT_WHERE}",
        ),
        (
            {**SLACK_OK, "SLACK_BOT_TOKEN": "<your bot token>"},
            f"SLACK_BOT_TOKEN is a placeholder, not a secret: set {SLACK_BOT_WHERE}",
        ),
        (
            {**SLACK_OK, "SLACK_BOT_TOKEN": "xapp-1-A0123-4567-abcdef"},
            f"SLACK_BOT_TOKEN holds an app-level token (xapp-…): it takes {SLACK_BOT_WHERE}; an "
            "xapp- token belongs in SLACK_APP_TOKEN",
        ),
        (
            {**SLACK_OK, "SLACK_BOT_TOKEN": "bot-token-123"},
            f"SLACK_BOT_TOKEN does not start with xoxb-: set {SLACK_BOT_WHERE}",
        ),
        (
            {**SLACK_OK, "SLACK_APP_TOKEN": "xoxb-1-2"},
            f"SLACK_APP_TOKEN holds a bot token (xoxb-…): it takes {SLACK_APP_WHERE}; the xoxb- "
            "token belongs in SLACK_BOT_TOKEN",
        ),
        (
            {**SLACK_OK, "SLACK_APP_TOKEN": "app-token"},
            f"SLACK_APP_TOKEN does not start with xapp-: set {SLACK_APP_WHERE}",
        ),
        (
            {**SLACK_OK, "SLACK_SIGNING_SECRET": "changeme"},
            "SLACK_SIGNING_SECRET is a placeholder, not a secret: set the Signing Secret on the "
            "Slack app's Basic Information page",
        ),
        (
            {"SLACK_BOT_TOKEN": "xoxb-1-2"},
            "SLACK_BOT_TOKEN is set but neither SLACK_SIGNING_SECRET nor SLACK_APP_TOKEN",
        ),
        (
            {"TELEGRAM_BOT_TOKEN": "123456789:replace-with-the-token-from-botfather"},
            "TELEGRAM_BOT_TOKEN is a placeholder, not a secret: set the token @BotFather gave "
            "(123456789:AA…)",
        ),
        (
            {"TELEGRAM_BOT_TOKEN": "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"},
            "TELEGRAM_BOT_TOKEN is not shaped like a Telegram token (digits, a colon, then "
            "letters, digits, _ or -): set the token @BotFather gave (123456789:AA…)",
        ),
        (
            {"BOT_INGEST_TOKEN": "replace-with-a-random-token"},
            "BOT_INGEST_TOKEN is a placeholder, not a secret: set a random token, e.g. "
            "`openssl rand -hex 32`",
        ),
    ],
)
def test_a_token_that_cannot_be_right_is_named_with_where_the_right_one_is(
    environ: dict[str, str], expected: str
) -> None:
    assert problems(_env(**environ), BotConfig()) == [expected]


@pytest.mark.parametrize(
    "token",
    [
        "xoxb-test-token",  # tests/fakes/slack
        "xoxb-1",
        "xoxb-1-2",
        "xoxb-dry-run",
        "123456:TEST-token",  # tests/fakes/telegram
        SIGNING_SECRET,
        WEBHOOK_SECRET,
        "ingest-token-5f0c1a2b3c4d5e6f",
        "xoxb-1234-5678-aXxxb9QxxxZ",  # random letters may hold "xxx"
        "kill-test-secret",
    ],
)
def test_real_looking_tokens_are_not_placeholders(token: str) -> None:
    assert not is_placeholder(token)


def test_the_summary_does_not_say_on_for_a_platform_that_cannot_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xapp-1-A0123-4567-abcdef")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "s")
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456789:replace-with-the-token-from-botfather")
    monkeypatch.setenv("BOT_INGEST_TOKEN", "<token>")
    assert main(["check-config"]) == 2
    out = capsys.readouterr().out.splitlines()
    assert "slack:     cannot run (see the errors below)" in out
    assert "telegram:  cannot run (see the errors below)" in out
    assert "ingest API: cannot run (see the errors below)" in out
    assert not any(line.startswith(("slack:", "telegram:")) and " on" in line for line in out)


def test_the_summary_says_on_and_how_for_platforms_that_can_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, value in SLACK_OK.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:TEST-token")
    assert main(["check-config"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "slack:     on (HTTP mode, POST /slack/events)" in out
    assert "telegram:  on (long polling)" in out
    assert "ingest API: off (no BOT_INGEST_TOKEN)" in out
    assert out[-1] == "ok"


# 4. Unknown keys and secrets in the YAML -----------------------------------------------------


def test_an_unknown_key_gets_a_did_you_mean(tmp_path: Path) -> None:
    lines = _config_error(
        tmp_path,
        "channels:\n  - {name: verl-daily, platform: slack, target: C1, tag: [x], max_item: 3}\n"
        "timezon: UTC\n",
    )
    assert lines == [
        "  channels.verl-daily.tag: unknown key; did you mean 'tags'?",
        "  channels.verl-daily.max_item: unknown key; did you mean 'max_items'?",
        "  timezon: unknown key; did you mean 'timezone'?",
    ]


def test_an_unknown_key_with_nothing_close_lists_the_keys_allowed_there(tmp_path: Path) -> None:
    assert _config_error(tmp_path, "delivery: {colour: red}\n") == [
        "  delivery.colour: unknown key (allowed here: lease_seconds, planner, tick_seconds)"
    ]


@pytest.mark.parametrize(
    ("yaml_text", "key", "var"),
    [
        ("slack: {bot_token: xoxb-1-2}\n", "slack.bot_token", "SLACK_BOT_TOKEN"),
        ("slack: {signing_secret: s}\n", "slack.signing_secret", "SLACK_SIGNING_SECRET"),
        ("slack: {app_token: xapp-1}\n", "slack.app_token", "SLACK_APP_TOKEN"),
        ("telegram: {bot_token: '1:a'}\n", "telegram.bot_token", "TELEGRAM_BOT_TOKEN"),
        ("telegram: {token: '1:a'}\n", "telegram.token", "TELEGRAM_BOT_TOKEN"),
        ("telegram: {webhook_secret: s}\n", "telegram.webhook_secret", "TELEGRAM_WEBHOOK_SECRET"),
        ("ingest_token: t\n", "ingest_token", "BOT_INGEST_TOKEN"),
        ("slack_bot_token: xoxb-1\n", "slack_bot_token", "SLACK_BOT_TOKEN"),
    ],
)
def test_a_secret_in_the_yaml_is_told_its_variable(
    tmp_path: Path, yaml_text: str, key: str, var: str
) -> None:
    lines = _config_error(tmp_path, yaml_text)
    assert lines == [
        f"  {key}: secrets come from {var} in the environment, never from the config file"
    ]


def test_a_setting_of_the_environment_in_the_yaml_is_told_its_variable(tmp_path: Path) -> None:
    assert _config_error(tmp_path, "database_url: sqlite:///x.db\nhttp_port: 80\n") == [
        "  database_url: not a config key: set BOT_DATABASE_URL in the environment",
        "  http_port: not a config key: set BOT_HTTP_PORT in the environment",
    ]


def test_the_secret_put_in_the_yaml_is_never_echoed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BOT_CONFIG", str(_write(tmp_path, "slack: {bot_token: xoxb-9-s3cr3t}\n")))
    assert main(["check-config"]) == 2
    out = capsys.readouterr()
    assert "s3cr3t" not in out.out + out.err and "SLACK_BOT_TOKEN" in out.err


# 5. One path style ---------------------------------------------------------------------------


def test_config_errors_and_check_config_name_a_channel_alike(tmp_path: Path) -> None:
    lines = _config_error(
        tmp_path,
        "channels:\n  - {name: verl-daily, platform: fax, target: C1}\n"
        "  - {name: other, platform: slack, target: C2, schedule: '0 9 * *'}\n",
    )
    assert lines[0].startswith("  channels.verl-daily.platform: Input should be ")
    assert lines[1] == (
        "  channels.other.schedule: cron '0 9 * *' needs 5 fields (minute hour day month "
        "day-of-week)"
    )
    config = BotConfig.model_validate(
        {"channels": [{"name": "verl-daily", "platform": "slack", "target": "C1"}]}
    )
    assert problems(_env(), config) == [
        "channels.verl-daily.platform: slack, but SLACK_BOT_TOKEN is not set"
    ]


def test_a_channel_without_a_unique_name_keeps_its_index(tmp_path: Path) -> None:
    lines = _config_error(
        tmp_path,
        "channels:\n  - {platform: console, target: stdout}\n"
        "sources:\n  - {dir: x, url: 'https://x'}\n",
    )
    assert lines == [
        "  sources.0: a source needs exactly one of `dir` or `url`",
        "  channels.0.name: Field required",
    ]


# 6. An unquoted Telegram chat id ---------------------------------------------------------------


def test_an_unquoted_telegram_chat_id_is_accepted(tmp_path: Path) -> None:
    config = load_config(
        _write(
            tmp_path,
            "channels:\n  - name: tg\n    platform: telegram\n    target: -1001234567890\n",
        )
    )
    assert config.channels[0].target == "-1001234567890"


# 7. schedule: "09:00" ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "cron"), [("09:00", "0 9 * * *"), ("9:30 mon-fri", "30 9 * * mon-fri")]
)
def test_a_clock_time_schedule_is_read_as_the_chat_reads_it(
    tmp_path: Path, written: str, cron: str
) -> None:
    config = load_config(
        _write(
            tmp_path,
            f"channels:\n  - {{name: a, platform: console, target: stdout, "
            f"schedule: '{written}'}}\n",
        )
    )
    assert config.channels[0].schedule == cron
    assert parse("schedule", written) == SetSchedule(cron)


def test_a_bad_clock_time_is_still_refused(tmp_path: Path) -> None:
    lines = _config_error(
        tmp_path, "channels:\n  - {name: a, platform: console, target: stdout, schedule: '25:00'}\n"
    )
    assert lines == [
        "  channels.a.schedule: cron '25:00' needs 5 fields (minute hour day month day-of-week)"
    ]


# 8. postgres:// URLs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["postgres://bot:pw@db:5432/prdigest", "postgres+psycopg://bot:pw@db:5432/prdigest"]
)
def test_a_postgres_url_is_postgresql(url: str) -> None:
    assert async_url(url) == "postgresql+psycopg://bot:pw@db:5432/prdigest"
    assert problems(_env(BOT_DATABASE_URL=url), BotConfig()) == []


@pytest.mark.postgres
async def test_a_postgres_url_reaches_the_database() -> None:
    url = os.environ.get("BOT_TEST_DATABASE_URL")
    if not url:
        pytest.skip("set BOT_TEST_DATABASE_URL to reach PostgreSQL")
    engine = create_engine("postgres://" + url.split("://", 1)[1])
    try:
        async with engine.connect() as conn:
            assert (await conn.execute(text("SELECT 1"))).scalar() == 1
    finally:
        await engine.dispose()


# 9. The database in use ----------------------------------------------------------------------


def test_check_config_names_the_database_as_status_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BOT_DATABASE_URL")
    assert main(["check-config"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert f"database: sqlite:///data/bot.db (in {tmp_path})" in out
    assert not (tmp_path / "data").exists(), "check-config must not create the database"


def test_check_config_masks_the_database_password(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BOT_DATABASE_URL", "postgres://bot:s3cret@db:5432/prdigest")
    assert main(["check-config"]) == 0
    out = capsys.readouterr().out
    assert "database: postgres://bot:***@db:5432/prdigest\n" in out and "s3cret" not in out


def test_env_vars_lists_what_the_environment_is_read_from() -> None:
    """ENV_VARS (the config's 'set X in the environment') agrees with Env.from_environ."""
    values = {
        "BOT_DATABASE_URL": "sqlite:///x.db",
        "BOT_HTTP_HOST": "0.0.0.0",
        "BOT_HTTP_PORT": "81",
        "SLACK_API_URL": "http://127.0.0.1:1/",
        "TELEGRAM_API_URL": "http://127.0.0.1:2",
    }
    environ = {var: values.get(var, f"v-{var}") for var in ENV_VARS.values()}
    env = Env.from_environ({"BOT_CONFIG": "", **environ})
    for field, var in ENV_VARS.items():
        value = getattr(env, field)
        shown = value.get_secret_value() if isinstance(value, SecretStr) else str(value)
        assert shown == environ[var], field


def test_a_source_directory_that_is_not_there_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Outside a checkout the built-in defaults' examples/reports is missing: `run` still
    works (it ingests nothing), so check-config warns and still ends with ok."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BOT_CONFIG", "")
    monkeypatch.setenv("BOT_DATABASE_URL", f"sqlite:///{tmp_path / 'bot.db'}")
    for name in ("SLACK_BOT_TOKEN", "TELEGRAM_BOT_TOKEN", "SLACK_APP_TOKEN", "BOT_INGEST_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert main(["check-config"]) == 0
    out = capsys.readouterr().out.splitlines()
    [source] = [line for line in out if line.startswith("source:")]
    assert source == (
        "source:    examples/reports every 60s "
        f"(warning: no such directory, relative to {tmp_path})"
    )
    assert out[-1] == "ok"


# The working calendar (issue 18) -------------------------------------------------------------


def test_check_config_shows_the_next_real_fire_after_golden_week(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(
        tmp_path,
        "timezone: Asia/Shanghai\n"
        "calendar: {workdays: [mon-fri], quiet_hours: '22:00-08:00', holidays: {country: CN}}\n"
        "channels:\n"
        "  - {name: team, platform: console, target: stdout, cadence: 'daily 09:00'}\n"
        "  - {name: saturday, platform: console, target: sat, cadence: 'weekly sat 10:00'}\n"
        "  - {name: weekend, platform: console, target: weekend, cadence: 'weekly sat 10:00',\n"
        "     calendar: {holidays: null}}\n"
        "  - {name: alerts, platform: console, target: alerts, cadence: now}\n",
    )
    monkeypatch.setenv("BOT_CONFIG", str(path))
    set_wall_clock(monkeypatch, datetime(2026, 9, 30, 10, tzinfo=ZoneInfo("Asia/Shanghai")))
    assert main(["check-config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    calendar = "  calendar: mon-fri, quiet 22:00-08:00, holidays CN, Asia/Shanghai"
    assert lines[lines.index(calendar) - 1] == (
        "channel:   team → console:stdout 'daily 09:00' Asia/Shanghai, next "
        "2026-10-08T09:00:00+08:00 (after the holidays 2026-10-01 to 2026-10-07: National Day, "
        "National Day (observed), ...)"
    )
    assert (  # 10 October 2026 is a Saturday China works, in exchange for a Golden Week day
        "channel:   saturday → console:sat 'weekly sat 10:00' Asia/Shanghai, next "
        "2026-10-10T10:00:00+08:00 (after the holidays 2026-10-03 to 2026-10-07: National Day, "
        "National Day (observed), ...)"
    ) in lines
    assert (
        "channel:   weekend → console:weekend 'weekly sat 10:00' Asia/Shanghai, warning: never "
        "fires on working time within a year (see its calendar)"
    ) in lines
    assert (
        "channel:   alerts → console:alerts 'now' Asia/Shanghai, posts each matching PR as it "
        "arrives, held outside working time"
    ) in lines
    assert lines[-1] == "ok"


def test_a_calendar_with_no_working_day_warns_for_now_channels_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ics = tmp_path / "all-year.ics"  # one holiday a year long, every year: no working day
    ics.write_text(
        "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20260101\n"
        "DTEND;VALUE=DATE:20270101\nRRULE:FREQ=YEARLY\nSUMMARY:closed\nEND:VEVENT\n"
        "END:VCALENDAR\n",
        encoding="utf-8",
    )
    path = _write(
        tmp_path,
        "timezone: UTC\n"
        f"calendar: {{holidays: {{ics: '{ics}'}}}}\n"
        "channels:\n"
        "  - {name: daily, platform: console, target: daily, cadence: 'daily 09:00'}\n"
        "  - {name: alerts, platform: console, target: alerts, cadence: now}\n",
    )
    monkeypatch.setenv("BOT_CONFIG", str(path))
    set_wall_clock(monkeypatch, datetime(2026, 9, 30, 10, tzinfo=UTC))
    assert main(["check-config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert (
        "channel:   daily → console:daily 'daily 09:00' UTC, warning: never fires on working "
        "time within a year (see its calendar)"
    ) in lines
    assert (
        "channel:   alerts → console:alerts 'now' UTC, warning: never posts: no working time "
        "within a year (see its calendar)"
    ) in lines


def test_an_ics_file_too_large_is_one_config_error_line(tmp_path: Path) -> None:
    ics = tmp_path / "huge.ics"
    ics.write_bytes(b"BEGIN:VCALENDAR\n" + b"X:y\n" * (MAX_ICS_BYTES // 4 + 1))
    lines = _config_error(tmp_path, f"calendar: {{holidays: {{ics: '{ics}'}}}}\n")
    assert lines == [
        f"  calendar.holidays.ics: {ics}: larger than 2 MB (a holiday calendar is a few KB)"
    ]


def test_without_a_calendar_check_config_reads_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    set_wall_clock(monkeypatch, datetime(2026, 9, 30, 1, tzinfo=UTC))
    config = BotConfig.model_validate(
        {"timezone": "UTC", "channels": [{"name": "a", "platform": "console", "target": "stdout"}]}
    )
    lines = describe(_env(), config)
    expected = "channel:   a → console:stdout '0 9 * * mon-fri' UTC, next 2026-09-30T09:00:00+00:00"
    assert expected in lines
    assert not any(line.startswith("  calendar:") for line in lines)


def test_topics_on_a_slack_channel_are_refused_at_load_with_the_channel_named(
    tmp_path: Path,
) -> None:
    lines = _config_error(
        tmp_path, "channels:\n  - {name: team, platform: slack, target: C0123, layout: topics}\n"
    )
    assert lines == [
        "  channels.team: layout: topics are Telegram forum topics; on slack use layout: "
        "threaded (a summary with one reply per tag group) or flat"
    ]


def test_check_config_prints_each_channels_layout_and_verbosity(tmp_path: Path) -> None:
    config = load_config(
        _write(
            tmp_path,
            "channels:\n"
            "  - {name: forum, platform: telegram, target: '-100123', layout: topics,"
            " verbosity: oneline}\n"
            "  - {name: team, platform: slack, target: C0123}\n",
        )
    )
    lines = describe(_env(), config)
    at = [n for n, line in enumerate(lines) if line.startswith("channel:   ")]
    assert [lines[n + 1] for n in at] == [
        "  layout:  topics, verbosity oneline",
        "  layout:  flat, verbosity standard",
    ]
