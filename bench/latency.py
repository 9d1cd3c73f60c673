"""Command latency: `/pr 7422` through the real HTTP endpoint, beside a bare bolt app.

`prdigest run` serves a SQLite store of 100,000 reports with Slack enabled; the fake Slack runs
in its own process and takes the answers sent through `response_url`. 50 concurrent clients
(one httpx.AsyncClient each, keep-alive) POST signed slash commands `/pr 7422`, each with its
own response_url, and time the HTTP response, which is Slack's ack. The peer is a bare bolt
`AsyncApp` behind `AsyncSlackRequestHandler` in Starlette under uvicorn, in its own process,
same signing secret, acking a constant string; the same clients time it the same way.

    python -m bench.latency [--quick]          # --quick: 10,000 reports, fewer requests
    python -m bench.latency peer --port 8099   # the peer app alone
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from bench.memory import FULL_REPORTS, QUICK_REPORTS, build_store, copy_store  # noqa: E402
from tests.kits.servers import (  # noqa: E402
    SIGNING_SECRET,
    Server,
    SignedSlack,
    clean_env,
    signed_headers,
)

CLIENTS = 50
WARMUP_PER_CLIENT = 2
SETTLE_SECONDS = 0.5
DRAIN_SECONDS = 120.0
AIM_P99_RATIO = 1.2
PEER_ANSWER = "PR 7422: constant answer"
COMMAND_TEXT = "7422"


def peer_app() -> Any:
    """The floor: bolt's own Starlette adapter, a listener that only acks."""
    from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
    from slack_bolt.async_app import AsyncApp
    from slack_bolt.authorization import AuthorizeResult
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse, Response
    from starlette.routing import Route

    async def authorize(**_: Any) -> AuthorizeResult:
        # Like prdigest's cached auth.test identity: no Web API call per request.
        return AuthorizeResult(
            enterprise_id=None,
            team_id="T0TEST",
            bot_token="xoxb-peer",
            bot_id="B0PEER",
            bot_user_id="U0PEER",
        )

    app = AsyncApp(signing_secret=SIGNING_SECRET, authorize=authorize)

    @app.command("/pr")
    async def pr(ack: Any) -> None:
        await ack(PEER_ANSWER)

    handler = AsyncSlackRequestHandler(app)

    async def events(request: Request) -> Response:
        return await handler.handle(request)

    async def ready(request: Request) -> Response:
        return PlainTextResponse("ok")

    return Starlette(
        routes=[
            Route("/slack/events", events, methods=["POST"]),
            Route("/readyz", ready, methods=["GET"]),
        ]
    )


def serve_peer(port: int) -> None:
    import uvicorn

    app = peer_app()
    # Like `prdigest run` once started: start-up objects out of the collector's full passes,
    # so the two servers differ in what they do per request, not in how they collect.
    gc.collect()
    gc.freeze()
    uvicorn.run(app, host="127.0.0.1", port=port, log_config=None, access_log=False, lifespan="on")


async def client_loop(
    slack: SignedSlack,
    client: httpx.AsyncClient,
    requests: int,
    latencies: list[float],
    errors: list[str],
) -> None:
    """One client: `requests` signed `/pr 7422` in a row on its keep-alive connection."""
    for _ in range(requests):
        _, body = slack.next_command(COMMAND_TEXT)
        headers = signed_headers(body)
        started = time.perf_counter()
        try:
            answer = await client.post("/slack/events", content=body, headers=headers)
        except httpx.HTTPError as exc:
            errors.append(type(exc).__name__)
            continue
        latencies.append(time.perf_counter() - started)
        if answer.status_code != 200:
            errors.append(f"HTTP {answer.status_code}")


def percentile(ordered: list[float], q: float) -> float:
    """The q-quantile in milliseconds (nearest rank)."""
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Target:
    """One server under test, its connected clients and what they measured."""

    url: str
    clients: list[httpx.AsyncClient] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    sent: int = 0

    async def connect(self, slack: SignedSlack) -> None:
        """`CLIENTS` keep-alive clients, connected and warmed up."""
        self.clients = [httpx.AsyncClient(base_url=self.url, timeout=30) for _ in range(CLIENTS)]
        await self.round(slack, WARMUP_PER_CLIENT, timed=False)

    async def round(self, slack: SignedSlack, per_client: int, timed: bool = True) -> None:
        sink: list[float] = self.latencies if timed else []
        started = time.perf_counter()
        await asyncio.gather(
            *(client_loop(slack, c, per_client, sink, self.errors) for c in self.clients)
        )
        if timed:
            self.seconds += time.perf_counter() - started
        self.sent += per_client * len(self.clients)

    async def close(self) -> None:
        await asyncio.gather(*(c.aclose() for c in self.clients))

    def figures(self) -> dict[str, Any]:
        ordered = sorted(self.latencies)
        return {
            "requests": len(ordered),
            "errors": len(self.errors),
            "p50_ms": round(percentile(ordered, 0.50), 2),
            "p99_ms": round(percentile(ordered, 0.99), 2),
            "max_ms": round(1000 * ordered[-1], 2),
            "mean_ms": round(1000 * statistics.fmean(ordered), 2),
            "per_s": round(len(ordered) / self.seconds, 1),
        }


async def answers_drained(status_url: str, expected: int) -> None:
    """Wait until the fake Slack got an answer for each of the bot's commands so far."""
    deadline = time.monotonic() + DRAIN_SECONDS
    async with httpx.AsyncClient() as client:
        while int((await client.get(status_url)).text) < expected:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the bot's answers did not drain in {DRAIN_SECONDS}s")
            await asyncio.sleep(0.05)


@contextlib.contextmanager
def clients_collect_between_rounds() -> Iterator[None]:
    """The 50 clients share this process, which also built the store: one full garbage
    collection here stalls every request in flight at once, and the round's p99 becomes that
    pause, whichever server is measured. The clients collect before a round, not during it."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def alternate(
    slack: SignedSlack, status_url: str, peer: Target, bot: Target, rounds: int, per: int
) -> None:
    """Peer and bot take turns, so drift on the machine hits both alike; each round starts
    once the bot has answered every command of the last one."""
    await peer.connect(slack)
    await bot.connect(slack)
    for _ in range(rounds):
        await answers_drained(status_url, bot.sent)
        for target in (peer, bot):
            await asyncio.sleep(SETTLE_SECONDS)
            with clients_collect_between_rounds():
                await target.round(slack, per)
    await answers_drained(status_url, bot.sent)


async def start_fake_slack(keys: int) -> tuple[asyncio.subprocess.Process, dict[str, str]]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.kits.servers",
        "fake-slack",
        "--keys",
        str(keys),
        cwd=ROOT,
        env=clean_env(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    urls = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
    return proc, urls


async def stop_fake_slack(proc: asyncio.subprocess.Process) -> dict[str, int]:
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.close()
    line = await asyncio.wait_for(proc.stdout.readline(), 30)
    await proc.wait()
    return dict(json.loads(line)) if line else {}


async def measure(db: Path, folder: Path, rounds: int, per_client: int) -> dict[str, Any]:
    keys = 2 * CLIENTS * (rounds * per_client + WARMUP_PER_CLIENT) + 10
    fake_proc, urls = await start_fake_slack(keys)
    slack = SignedSlack(api_url=urls["api_url"], base_url=urls["base_url"])
    config = folder / "bot.yaml"
    # No channels, no sources. The clients ask faster than the answers go out, and every
    # answer is counted: the queue holds a whole run's commands instead of answering the
    # ones past its default 32 "busy" (the flood guard that tests/faults/test_flood.py checks).
    config.write_text("timezone: UTC\nchat_work: {queue_length: 10000}\n", encoding="utf-8")
    servers = [
        Server(clean_env(), "bench.latency", ("peer",), logs=folder / "peer"),
        Server(slack.env(db, config), logs=folder / "bot"),
    ]
    peer, bot = Target(servers[0].url), Target(servers[1].url)
    try:
        for server in servers:
            await server.start()
            await server.wait_ready(within=300)
        await alternate(slack, urls["status_url"], peer, bot, rounds, per_client)
    finally:
        await peer.close()
        await bot.close()
        for server in servers:
            await server.stop()
        fake = await stop_fake_slack(fake_proc)
    return {
        "bot": bot.figures(),
        "peer": peer.figures(),
        "rounds": rounds,
        "bot_commands": bot.sent,
        "answered": fake.get("answered"),
    }


def run(quick: bool = False, work: Path | None = None) -> dict[str, Any]:
    count = QUICK_REPORTS if quick else FULL_REPORTS
    rounds, per_client = (2, 5) if quick else (4, 12)
    with tempfile.TemporaryDirectory() as tmp:
        base = work or Path(tmp)
        db, _ = build_store(base, count)
        run_dir = base / "latency"
        figures = asyncio.run(measure(copy_store(db, run_dir), run_dir, rounds, per_client))
    bot, peer = figures["bot"], figures["peer"]
    return {
        "reports": count,
        "clients": CLIENTS,
        **figures,
        "p50_ratio": round(bot["p50_ms"] / peer["p50_ms"], 2),
        "p99_ratio": round(bot["p99_ms"] / peer["p99_ms"], 2),
        "aim": AIM_P99_RATIO,
    }


def section(figures: dict[str, Any]) -> list[str]:
    """The docs/benchmarks.md section."""
    bot, peer = figures["bot"], figures["peer"]
    rows = [
        f"| {name} | {f['requests']:,} | {f['errors']} | {f['p50_ms']:.1f} | {f['p99_ms']:.1f} "
        f"| {f['max_ms']:.1f} | {f['per_s']:,.0f} |"
        for name, f in (("prdigest `/pr 7422`", bot), ("bare bolt AsyncApp, constant ack", peer))
    ]
    return [
        f"## Command latency: `/pr 7422`, {figures['reports']:,} reports, "
        f"{figures['clients']} concurrent clients",
        "",
        "| server | requests | errors | p50 ms | p99 ms | max ms | acks/s |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        f"**p50 {figures['p50_ratio']:.2f}×, p99 {figures['p99_ratio']:.2f}× the bare bolt app** "
        f"(aim ≤ {figures['aim']}× at p99). Both are real uvicorn servers in their own "
        "processes, verifying the same signing secret; the clients (one keep-alive "
        "`httpx.AsyncClient` each, signed requests, each with its own `response_url`) time "
        "the HTTP response, which is Slack's ack. prdigest answers every command after the ack "
        "through `response_url` on the fake Slack, which runs in a third process "
        f"({figures.get('answered') or 0:,} answers for its {figures['bot_commands']:,} commands, "
        "warm-up included); that work shares the CPUs with the acks, while the peer does "
        f"nothing after acking. The two servers take turns, {figures['rounds']} rounds each; "
        "a round starts once every earlier command has been answered. The store is SQLite. "
        "Both servers freeze their start-up objects out of the garbage collector "
        "(`gc.freeze()`, as `prdigest run` does once started), and the clients' process "
        "collects between rounds, not during them: one collection there stalls all 50 "
        "requests in flight at once, and would make the p99 a measure of the clients.",
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", nargs="?", choices=["bench", "peer"], default="bench")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--port", type=int, default=8099)
    args = parser.parse_args()
    if args.mode == "peer":
        serve_peer(args.port)
        return
    print(json.dumps(run(args.quick), indent=2))


if __name__ == "__main__":
    main()
