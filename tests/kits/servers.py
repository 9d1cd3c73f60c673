"""Shared by the benchmarks and the fault suite: servers as subprocesses, signed Slack commands.

- `Server`: a Python module run as a subprocess on a free loopback port (`prdigest run`, or a
  benchmark's peer app), its output in files, ready when `/readyz` (or a given path) answers.
- `SignedSlack`: slash commands signed like Slack signs them (slack_sdk's own signer, not
  ours), each with a fresh `response_url` on the fake Slack; the environment that points
  `prdigest run` at that fake.
- `python -m tests.kits.servers fake-slack --keys N`: the fake Slack in its own process (so its
  work does not share an event loop with the clients being timed); prints its URLs as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
from slack_sdk.signature import SignatureVerifier

from tests.kits.paths import ROOT

SIGNING_SECRET = "bench-signing-secret-8f7e6d5c4b3a"
CHANNEL = "C0BENCH1"
USER = "U0BENCH1"
# Commands come from this many people, one after another: a benchmark's clients are a team,
# not one person (the bot limits the answers one person may ask for at once, and a minute).
PEOPLE = 10_000


def bench_user(number: int) -> str:
    """Who sends the command numbered `number`."""
    return f"U0BENCH{number % PEOPLE:05d}"


SLASH = "/pr"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without platform credentials, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "TELEGRAM_", "BOT_"))}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


class Server:
    """`python -m MODULE ARGS...` listening on `port`; stdout/stderr go to files in `logs`."""

    def __init__(
        self,
        env: dict[str, str],
        module: str = "bot",
        args: tuple[str, ...] = ("run",),
        logs: Path | None = None,
        ready_path: str = "/readyz",
    ) -> None:
        self.port = free_port()
        self.env = {**env, "BOT_HTTP_PORT": str(self.port), "BOT_HTTP_HOST": "127.0.0.1"}
        # prdigest reads BOT_HTTP_PORT; any other module is told its port with --port.
        port_flag = [] if module == "bot" else ["--port", str(self.port)]
        self.argv = [sys.executable, "-m", module, *args, *port_flag]
        self.logs = logs or Path(os.devnull)
        self.ready_path = ready_path
        self.proc: asyncio.subprocess.Process | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    async def start(self) -> None:
        out = err = None
        if self.logs != Path(os.devnull):
            self.logs.mkdir(parents=True, exist_ok=True)
            out = (self.logs / "stdout.log").open("wb")
            err = (self.logs / "stderr.log").open("wb")
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv,
            cwd=ROOT,
            env=self.env,
            stdout=out or asyncio.subprocess.DEVNULL,
            stderr=err or asyncio.subprocess.DEVNULL,
        )

    def stderr_tail(self) -> str:
        path = self.logs / "stderr.log"
        return path.read_text(errors="replace")[-3000:] if path.is_file() else ""

    async def check_alive(self) -> None:
        assert self.proc is not None
        if self.proc.returncode is not None:
            raise RuntimeError(f"{self.argv[2]} exited early:\n{self.stderr_tail()}")

    async def wait_ready(self, within: float = 60.0) -> None:
        deadline = time.monotonic() + within
        async with httpx.AsyncClient() as client:
            while time.monotonic() < deadline:
                await self.check_alive()
                try:
                    answer = await client.get(self.url + self.ready_path, timeout=1)
                    if answer.status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.1)
        raise RuntimeError(f"{self.argv[2]} not ready in {within}s:\n{self.stderr_tail()}")

    async def stop(self, within: float = 20.0) -> int | None:
        if self.proc is None:
            return None
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), within)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        return self.proc.returncode


def slash_body(text: str, response_url: str, trigger: int) -> bytes:
    """`/pr text` as Slack posts it, from the person `bench_user(trigger)`."""
    return urlencode(
        {
            "token": "legacy-verification-token",
            "team_id": "T0TEST",
            "team_domain": "bench",
            "channel_id": CHANNEL,
            "channel_name": "bench",
            "user_id": bench_user(trigger),
            "user_name": "bench",
            "command": SLASH,
            "text": text,
            "api_app_id": "A0BENCH",
            "is_enterprise_install": "false",
            "response_url": response_url,
            "trigger_id": f"1337.{trigger}.bench",
        }
    ).encode()


def signed_headers(body: bytes, secret: str = SIGNING_SECRET) -> dict[str, str]:
    timestamp = str(int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    assert signature is not None
    return {
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": signature,
        "Content-Type": "application/x-www-form-urlencoded",
    }


class SignedSlack:
    """Signed `/pr` commands whose answers go to a fake Slack (in this process, or another:
    then `response_url` uses the keys that process registered up front)."""

    def __init__(self, fake: Any = None, api_url: str = "", base_url: str = "") -> None:
        self.fake = fake
        self.api_url = api_url or fake.api_url
        self.base_url = base_url or fake.base_url
        self.bot_token = fake.bot_token if fake is not None else "xoxb-test-token"
        self.keys = itertools.count()

    def env(self, db: Path, config: Path | None = None, **extra: str) -> dict[str, str]:
        return clean_env(
            BOT_DATABASE_URL=f"sqlite:///{db}",
            BOT_CONFIG=str(config) if config else "",
            SLACK_BOT_TOKEN=self.bot_token,
            SLACK_SIGNING_SECRET=SIGNING_SECRET,
            SLACK_API_URL=self.api_url,
            **extra,
        )

    def next_command(self, text: str) -> tuple[str, bytes]:
        """(response_url key, body) for `/pr text`."""
        number = next(self.keys)
        key = f"R{number}"
        if self.fake is not None:
            url = self.fake.response_url(key, channel=CHANNEL, user=bench_user(number))
        else:
            url = f"{self.base_url}/response/{key}"
        return key, slash_body(text, url, number)

    def answered(self, key: str) -> bool:
        assert self.fake is not None
        path = f"/response/{key}"
        return any(c.path == path and c.ok for c in self.fake.calls("response_url"))

    async def command(
        self, url: str, text: str, wait_answer: bool = False, within: float = 30.0
    ) -> tuple[int, float]:
        """POST a signed `/pr text`: (HTTP status, seconds to the ack); optionally wait for
        the answer to reach the fake through response_url."""
        key, body = self.next_command(text)
        headers = signed_headers(body)
        async with httpx.AsyncClient(timeout=within) as client:
            started = time.perf_counter()
            answer = await client.post(f"{url}/slack/events", content=body, headers=headers)
            ack = time.perf_counter() - started
        deadline = time.monotonic() + within
        while wait_answer and not self.answered(key):
            if time.monotonic() > deadline:
                raise RuntimeError(f"no answer to /pr {text} through response_url")
            await asyncio.sleep(0.02)
        return answer.status_code, ack


def answered_count(fake: Any) -> int:
    return sum(1 for call in fake.calls("response_url") if call.ok)


async def serve_fake_slack(keys: int) -> None:
    """The fake Slack with `keys` response_urls (R0..), until SIGTERM or stdin closes.

    A second loopback port answers `GET /answered` with how many response_url posts succeeded,
    so a benchmark can wait for the bot's answers to drain."""
    from aiohttp import web

    from tests.fakes.slack.api import FakeSlack

    async def count(request: web.Request) -> web.Response:
        return web.Response(text=str(answered_count(fake)))

    async with FakeSlack() as fake:
        for number in range(keys):
            fake.response_url(f"R{number}", channel=CHANNEL, user=bench_user(number))
        status = web.Application()
        status.router.add_get("/answered", count)
        runner = web.AppRunner(status, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        status_url = f"http://127.0.0.1:{runner.addresses[0][1]}/answered"
        urls = {"api_url": fake.api_url, "base_url": fake.base_url, "status_url": status_url}
        print(json.dumps(urls), flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_reader(sys.stdin.fileno(), stop.set)
        await stop.wait()
        await runner.cleanup()
        print(json.dumps({"answered": answered_count(fake)}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fake = sub.add_parser("fake-slack", help="serve the fake Slack Web API and response_urls")
    fake.add_argument("--keys", type=int, default=1000)
    args = parser.parse_args()
    asyncio.run(serve_fake_slack(args.keys))


if __name__ == "__main__":
    main()
