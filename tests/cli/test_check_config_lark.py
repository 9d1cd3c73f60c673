"""`prdigest check-config` for Feishu/Lark: how events arrive, what an HTTP callback endpoint
needs, and the shape of the app id. Messages are asserted word for word."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from bot.settings import ENV_VARS

APP = {"LARK_APP_ID": "cli_a1b2c3d4e5f6a7b8", "LARK_APP_SECRET": "app-secret-value"}
WEBHOOK = "lark:\n  receive: webhook\n"
NO_GUARD = (
    "lark.receive: webhook needs LARK_ENCRYPT_KEY (or at least LARK_VERIFICATION_TOKEN): without"
    " them anyone who finds POST /lark/events can send the bot events"
)
NO_KEY = (
    "warning: LARK_ENCRYPT_KEY is not set: Feishu's callbacks arrive unencrypted and unsigned, so"
    " only the verification token guards POST /lark/events and a replayed request is refused"
    " only by its event id (set an Encrypt Key in the console)"
)


@pytest.fixture(autouse=True)
def _clean_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_VARS.values():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BOT_DATABASE_URL", f"sqlite:///{tmp_path / 'bot.db'}")
    monkeypatch.setenv("BOT_CONFIG", "")
    for name, value in APP.items():
        monkeypatch.setenv(name, value)


def _check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, yaml_text: str) -> None:
    path = tmp_path / "bot.yaml"
    path.write_text(yaml_text, encoding="utf-8")
    monkeypatch.setenv("BOT_CONFIG", str(path))


def test_the_long_connection_is_the_default_and_needs_no_callback_secrets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check-config"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "lark:      on (long connection)" in out
    assert not any("LARK_ENCRYPT_KEY" in line for line in out)


def test_http_callbacks_without_any_guard_are_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _check(tmp_path, monkeypatch, WEBHOOK)
    assert main(["check-config"]) == 2
    printed = capsys.readouterr()
    out = printed.out + printed.err  # the summary, then the errors
    assert NO_GUARD in out and "lark:      cannot run (see the errors below)" in out


def test_http_callbacks_without_an_encrypt_key_are_a_warning_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _check(tmp_path, monkeypatch, WEBHOOK)
    monkeypatch.setenv("LARK_VERIFICATION_TOKEN", "vt-real-looking-token")
    assert main(["check-config"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "lark:      on (HTTP callbacks, POST /lark/events)" in out and NO_KEY in out
    monkeypatch.setenv("LARK_ENCRYPT_KEY", "ek-real-looking-key")
    assert main(["check-config"]) == 0
    assert NO_KEY not in capsys.readouterr().out


def test_an_app_id_of_the_wrong_shape_and_a_placeholder_key_are_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LARK_APP_ID", "a1b2c3d4")
    monkeypatch.setenv("LARK_ENCRYPT_KEY", "<encrypt-key>")
    assert main(["check-config"]) == 2
    errors = capsys.readouterr().err
    assert "LARK_APP_ID" in errors and "cli_" in errors
    assert "LARK_ENCRYPT_KEY is a placeholder" in errors
