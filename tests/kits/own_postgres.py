"""A PostgreSQL server of the test's own, to stop and start in the middle of a digest.

`initdb` on a temporary directory, `pg_ctl start` on a free loopback port, trust auth, one
database `test`. The shared server at 127.0.0.1:5432 is never stopped: other tests use it.
Run as root (CI is), the server runs as the `postgres` user (PostgreSQL refuses root).
Where the binaries are missing, `unavailable()` says why, and the tests skip naming it
(`apt-get install postgresql` brings them; the Makefile's `faults-deps` does it).
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.kits.servers import free_port

BINARIES = ("initdb", "pg_ctl", "postgres")
SEARCH = ["/usr/lib/postgresql/*/bin"]
RUN_AS = "postgres"  # who runs the server when the tests run as root


def _bin_dir() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).resolve().parent
    for pattern in SEARCH:
        for candidate in sorted(Path("/").glob(pattern.lstrip("/")), reverse=True):
            if (candidate / "pg_ctl").is_file():
                return candidate
    return None


def unavailable() -> str | None:
    """Why no server of our own can run here, or None when one can."""
    folder = _bin_dir()
    if folder is None:
        return "no pg_ctl on PATH or in /usr/lib/postgresql/*/bin (apt-get install postgresql)"
    missing = [name for name in BINARIES if not (folder / name).is_file()]
    if missing:
        return f"{', '.join(missing)} missing beside {folder / 'pg_ctl'}"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(RUN_AS)
        except KeyError:
            return f"running as root and there is no {RUN_AS!r} user to run the server as"
    return None


class OwnPostgres:
    """One server in a fresh directory of the system's temporary folder (the `postgres` user
    must reach it: pytest's tmp_path is private to root); `url` is for SQLAlchemy (psycopg).
    `cleanup()` stops it and removes the directory."""

    def __init__(self) -> None:
        folder = _bin_dir()
        assert folder is not None, unavailable()
        self.bin = folder
        self.root = Path(tempfile.mkdtemp(prefix="prdigest-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.log = self.root / "server.log"

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/test"

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin / argv[0]), *argv[1:]]
        if os.geteuid() == 0:
            command = ["runuser", "-u", RUN_AS, "--", *command]
        return subprocess.run(command, check=check, capture_output=True, text=True, timeout=120)

    def init(self) -> None:
        if os.geteuid() == 0:
            user = pwd.getpwnam(RUN_AS)
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        settings = [
            f"port = {self.port}",
            "listen_addresses = '127.0.0.1'",
            "unix_socket_directories = ''",
            "fsync = off",
            "max_connections = 60",
        ]
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write("\n".join(settings) + "\n")

    async def start(self) -> None:
        await asyncio.to_thread(
            self._run, "pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "start"
        )

    async def stop(self, mode: str = "fast") -> None:
        """`fast` ends every session (clients see their connection die); `immediate` is a crash."""
        await asyncio.to_thread(
            self._run, "pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False
        )

    async def create_database(self, name: str = "test") -> None:
        await asyncio.to_thread(self._psql, "postgres", f'CREATE DATABASE "{name}"')

    async def kill_connections(self, database: str = "test") -> None:
        """Every session of `database` killed (pg_terminate_backend), the server stays up."""
        query = (
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE datname = '{database}' AND pid <> pg_backend_pid()"
        )
        await asyncio.to_thread(self._psql, "postgres", query)

    def _psql(self, database: str, sql: str) -> None:
        psql = shutil.which("psql") or str(self.bin / "psql")
        command = [psql, "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", database]
        subprocess.run([*command, "-v", "ON_ERROR_STOP=1", "-c", sql], check=True,
                       capture_output=True, text=True, timeout=60)  # fmt: skip

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:] if self.log.is_file() else ""

    async def cleanup(self) -> None:
        await self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)
