"""Config and environment errors end in one clear message, never a traceback (issue 14):
YAML nested 20,000 deep, a file that is not UTF-8, and a malformed BOT_DATABASE_URL, which is
never echoed with its password."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from bot.core.store.sql.db import DatabaseURLError, async_url, masked_url, url_password
from bot.settings import ConfigError, load_config
from bot.settings.yaml_file import MAX_CONFIG_DEPTH

DEEP = 20_000
SECRET = "s3cret-pw"


def _deep_flow(path: Path) -> Path:
    path.write_text("channels: " + "[" * DEEP + "]" * DEEP + "\n", encoding="utf-8")
    return path


def _deep_block(path: Path) -> Path:
    path.write_text("channels:\n" + "".join(" " * i + "k:\n" for i in range(1, 200)))
    return path


def _latin1(path: Path) -> Path:
    path.write_bytes("timezone: UTC\n# café\n".encode("latin-1"))
    return path


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (_deep_flow, f"nested more than {MAX_CONFIG_DEPTH} levels deep (line 1)"),
        (_deep_block, f"nested more than {MAX_CONFIG_DEPTH} levels deep (line {MAX_CONFIG_DEPTH})"),
        (_latin1, "not UTF-8 text (byte 0xe9 at offset 19)"),
    ],
)
def test_a_config_file_that_cannot_be_read_is_a_clear_error(
    tmp_path: Path, make: object, expected: str
) -> None:
    path = make(tmp_path / "bot.yaml")  # type: ignore[operator]
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: {expected}")


@pytest.mark.parametrize("command", ["check-config", "run", "status"])
@pytest.mark.parametrize("make", [_deep_flow, _latin1])
def test_every_command_names_the_file_and_exits_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    make: object,
) -> None:
    path = make(tmp_path / "bot.yaml")  # type: ignore[operator]
    monkeypatch.setenv("BOT_CONFIG", str(path))
    monkeypatch.setenv("BOT_DATABASE_URL", f"sqlite:///{tmp_path / 'bot.db'}")
    assert main([command]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"prdigest {command}: {path}: ") and "Traceback" not in err


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"postgresql://bot:{SECRET}@db:5432x/prdigest", "postgresql://bot:***@db:5432x/prdigest"),
        (f"postgres ql://bot:{SECRET}@db/prdigest", "postgres ql://bot:***@db/prdigest"),
        (f"postgresql://bot:{SECRET}@with@at@db/x", "postgresql://bot:***@db/x"),
        (f"postgresql://bot@db/x?password={SECRET}&a=1", "postgresql://bot@db/x?password=***&a=1"),
        (f"bot:{SECRET}@db/x", "***@db/x"),
        ("sqlite:///data/bot.db", "sqlite:///data/bot.db"),
    ],
)
def test_a_database_url_is_shown_without_its_password(url: str, shown: str) -> None:
    assert masked_url(url) == shown


@pytest.mark.parametrize(
    "url", [f"postgresql://bot:{SECRET}@db:5432x/prdigest", f"postgres ql://bot:{SECRET}@db/x"]
)
def test_a_malformed_database_url_is_refused_without_its_password(url: str) -> None:
    with pytest.raises(DatabaseURLError) as caught:
        async_url(url)
    assert SECRET not in str(caught.value) and "***" in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


@pytest.mark.parametrize("command", ["check-config", "status", "migrate"])
def test_no_command_echoes_the_password_of_a_malformed_database_url(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    monkeypatch.setenv("BOT_CONFIG", "")
    monkeypatch.setenv("BOT_DATABASE_URL", f"postgresql://bot:{SECRET}@db:5432x/prdigest")
    assert main([command]) == 2
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err
    assert "BOT_DATABASE_URL 'postgresql://bot:***@db:5432x/prdigest' is not a database URL" in (
        out.err
    )


@pytest.mark.parametrize(
    ("url", "password"),
    [
        ("postgresql+psycopg://bot:s3cr%40t@db:5432/prdigest", "s3cr@t"),
        ("postgresql://bot@db/prdigest", None),
        ("sqlite:///data/bot.db", None),
        ("postgresql://bot:pw@db:notaport/x", None),
    ],
)
def test_the_log_knows_the_database_password_to_redact(url: str, password: str | None) -> None:
    assert url_password(url) == password
