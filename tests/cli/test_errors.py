"""Errors a person can act on (issue 15): one line naming what to fix, a non-zero exit, no
traceback. An unreachable database, a taken port, a closed pipe, a database that is not there."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from bot.cli import BROKEN_PIPE_STATUS, main
from tests.conftest import postgres_url
from tests.kits.paths import ROOT, SEED
from tests.kits.proc import free_port

SECRET = "s3cret-pw"
NO_DATABASE = "no database at data/bot.db (BOT_DATABASE_URL, relative to {cwd}); run `prdigest ingest` or `make run` first"  # noqa: E501


def _id(argv: list[str]) -> str:
    return " ".join("REPORT" if arg == str(SEED) else arg for arg in argv)


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "bot.yaml"
    path.write_text(
        "timezone: UTC\nchannels:\n"
        f"  - {{name: team, platform: console, target: '{tmp_path / 'out.txt'}', locale: en}}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("BOT_CONFIG", str(path))
    monkeypatch.setenv("BOT_HTTP_PORT", "0")
    for name in ("SLACK_BOT_TOKEN", "TELEGRAM_BOT_TOKEN", "SLACK_APP_TOKEN", "BOT_INGEST_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return path


EVERY_COMMAND = [
    ["status"],
    ["ingest", str(SEED)],
    ["migrate"],
    ["reactivate", "team"],
    ["digest", "team"],
    ["digest", "team", "--dry-run"],
    ["run"],
]


def _last_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.rstrip("\n").splitlines()[-1]


@pytest.mark.usefixtures("config")
@pytest.mark.parametrize("argv", EVERY_COMMAND, ids=_id)
def test_a_database_that_refuses_connections_is_named_with_the_drivers_reason(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    port = free_port()  # nothing listens there
    monkeypatch.setenv("BOT_DATABASE_URL", f"postgresql://bot:{SECRET}@127.0.0.1:{port}/prdigest")
    assert main(argv) == 2
    assert _last_error(capsys) == (
        f"prdigest {argv[0]}: cannot open the database "
        f"postgresql://bot:***@127.0.0.1:{port}/prdigest: Connection refused"
    )


@pytest.mark.postgres
@pytest.mark.usefixtures("config")
@pytest.mark.parametrize("argv", [["status"], ["ingest", str(SEED)], ["run"]], ids=_id)
def test_a_database_that_does_not_exist_on_the_server_is_named(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = postgres_url()
    if base is None:
        pytest.skip("set BOT_TEST_DATABASE_URL")
    url = make_url(base).set(database="nonexistent_db", query={})
    monkeypatch.setenv("BOT_DATABASE_URL", url.render_as_string(hide_password=False))
    assert main(argv) == 2
    shown = url.render_as_string(hide_password=True)
    assert _last_error(capsys) == (
        f'prdigest {argv[0]}: cannot open the database {shown}: database "nonexistent_db" '
        "does not exist"
    )


@pytest.mark.usefixtures("config")
@pytest.mark.parametrize("argv", [["ingest", str(SEED)], ["migrate"], ["run"]], ids=_id)
def test_a_sqlite_directory_that_cannot_be_created_is_named(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "afile").write_text("not a directory")
    monkeypatch.setenv("BOT_DATABASE_URL", f"sqlite:///{tmp_path}/afile/data/bot.db")
    assert main(argv) == 2
    assert _last_error(capsys) == (
        f"prdigest {argv[0]}: cannot open the database sqlite:///{tmp_path}/afile/data/bot.db: "
        f"cannot create the directory {tmp_path}/afile/data: Not a directory"
    )


def _run(env: dict[str, str], *args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-m", "bot", *args],
        env=env,
        cwd=ROOT,
        text=True,
        stderr=subprocess.PIPE,
        timeout=60,
        **kwargs,
    )


def test_the_whole_error_is_one_line_on_stderr(subprocess_env: dict[str, str]) -> None:
    port = free_port()
    subprocess_env["BOT_DATABASE_URL"] = f"postgresql://bot:{SECRET}@127.0.0.1:{port}/prdigest"
    done = _run(subprocess_env, "status", stdout=subprocess.PIPE)
    assert done.returncode == 2
    url = f"postgresql://bot:***@127.0.0.1:{port}/prdigest"
    assert done.stdout == (
        f"database: {url}\n"
        "slack: off (SLACK_BOT_TOKEN unset)\ntelegram: off (TELEGRAM_BOT_TOKEN unset)\n"
    )
    assert done.stderr == (f"prdigest status: cannot open the database {url}: Connection refused\n")


def test_a_taken_port_is_named_before_anything_starts(
    subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        subprocess_env["BOT_HTTP_HOST"] = "127.0.0.1"
        subprocess_env["BOT_HTTP_PORT"] = str(port)
        done = _run(subprocess_env, "run", "--log-format", "json", stdout=subprocess.PIPE)
    assert done.returncode == 2
    assert done.stderr == (
        f"prdigest run: cannot listen on 127.0.0.1:{port}: address already in use; "
        "set BOT_HTTP_PORT\n"
    )
    assert done.stdout == ""
    assert not (tmp_path / "bot.db").exists(), "nothing started: not even the database"


@pytest.mark.parametrize(
    "args", [["pr", "7422", "full"], ["schema"], ["status"], ["tags", "test", "x"]], ids=" ".join
)
def test_a_reader_that_closes_early_ends_the_command_quietly(
    subprocess_env: dict[str, str], args: list[str]
) -> None:
    assert (
        _run(subprocess_env, "ingest", "-q", str(SEED), stdout=subprocess.DEVNULL).returncode == 0
    )
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line (`| head -0`)
    try:
        done = _run(subprocess_env, *args, stdout=write_end)
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (BROKEN_PIPE_STATUS, "")


@pytest.mark.usefixtures("config")
@pytest.mark.parametrize(
    "argv",
    [
        ["status"],
        ["reactivate", "team"],
        ["digest", "team"],
        ["digest", "team", "--dry-run"],
        ["pr", "7422"],
    ],
    ids=_id,
)
def test_a_read_only_command_creates_no_database_where_it_stands(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BOT_DATABASE_URL", raising=False)  # the default: sqlite:///data/bot.db
    assert main(argv) == 2
    assert _last_error(capsys) == f"prdigest {argv[0]}: " + NO_DATABASE.format(cwd=tmp_path)
    assert not (tmp_path / "data").exists()


@pytest.mark.usefixtures("config")
def test_status_says_which_database_it_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BOT_DATABASE_URL", raising=False)
    assert main(["ingest", "-q", str(SEED)]) == 0
    assert (tmp_path / "data" / "bot.db").exists(), "ingest creates the default database"
    capsys.readouterr()
    assert main(["status"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"database: sqlite:///data/bot.db (in {tmp_path})"
