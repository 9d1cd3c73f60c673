"""Running `prdigest` as a subprocess in tests: start, wait for readiness, stop, read logs."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bot.core.reports.parse.parser import parse_file
from tests.kits.paths import ROOT, SEED


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class BotProcess:
    env: dict[str, str]
    args: list[str] = field(default_factory=lambda: ["run"])
    cwd: Path = ROOT
    proc: asyncio.subprocess.Process | None = None
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    _readers: list[asyncio.Task[None]] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.env["BOT_HTTP_PORT"])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self.env.setdefault("BOT_HTTP_PORT", str(free_port()))
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            *self.args,
            cwd=self.cwd,
            env=self.env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._readers = [
            asyncio.create_task(_pump(self.proc.stdout, self.stdout)),
            asyncio.create_task(_pump(self.proc.stderr, self.stderr)),
        ]

    async def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient() as client:
            while time.monotonic() < deadline:
                assert self.proc is not None
                if self.proc.returncode is not None:
                    raise AssertionError(f"bot exited early:\n{self.stderr.decode()[-3000:]}")
                try:
                    if (await client.get(f"{self.url}/readyz", timeout=1)).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.1)
        raise AssertionError(f"bot not ready in {timeout}s:\n{self.stderr.decode()[-3000:]}")

    async def wait_stdout(self, needle: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.stdout.decode(errors="replace"):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{needle!r} not printed; stderr:\n{self.stderr.decode()[-3000:]}"
                )
            await asyncio.sleep(0.05)

    async def terminate(self, timeout: float = 15.0) -> int:
        """SIGTERM and wait; a process that does not stop in time is killed and reported."""
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            await self.kill()
            tail = "\n".join(self.stderr.decode(errors="replace").splitlines()[-20:])
            raise AssertionError(
                f"no exit {timeout}s after SIGTERM; stderr tail:\n{tail}"
            ) from None
        await asyncio.gather(*self._readers)
        return code

    async def kill(self) -> None:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.kill()
        await self.proc.wait()
        await asyncio.gather(*self._readers)

    async def wait(self, timeout: float = 60.0) -> int:
        assert self.proc is not None
        code = await asyncio.wait_for(self.proc.wait(), timeout)
        await asyncio.gather(*self._readers)
        return code


async def _pump(stream: asyncio.StreamReader, sink: bytearray) -> None:
    while chunk := await stream.read(65536):
        sink.extend(chunk)


def bot_env(base: dict[str, str], **extra: str) -> dict[str, str]:
    env = dict(base)
    env.update(extra)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return {k: v for k, v in env.items() if v is not None}


def write_json_reports(
    folder: Path, count: int, first: int = 10_000, title: str = "[rollout] fix: change {n}"
) -> None:
    """`count` JSON reports (copies of the seed report, PRs first+1…, titled `title` with
    `{n}` counting from 1) in a new `folder`."""
    folder.mkdir(parents=True)
    base = json.loads(parse_file(SEED).report.model_dump_json())
    for n in range(1, count + 1):
        report = {
            **base,
            "number": first + n,
            "title": title.format(n=n),
            "url": f"https://github.com/verl-project/verl/pull/{first + n}",
        }
        (folder / f"r{n}.json").write_text(json.dumps(report, ensure_ascii=False))


async def run_cli(env: dict[str, str], *args: str) -> str:
    """`prdigest ARGS` as a subprocess; its stdout (a non-zero exit fails with its stderr)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()[-2000:]
    return out.decode()


async def dry_run_texts(env: dict[str, str]) -> list[str]:
    """What `prdigest digest team --dry-run` would send, one text per message."""
    out = await run_cli(env, "digest", "team", "--dry-run", "--format", "slack")
    return [json.loads(line)["text"] for line in out.splitlines()]
