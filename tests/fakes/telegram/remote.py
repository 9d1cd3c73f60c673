"""The fake Bot API in a process of its own, for figures that must not measure the test.

Telegram's servers do not share the bot's event loop, nor the test's: a fake in the same
process would (its strict HTML parse alone is ~3 ms a message), and a pause there (a full
collection in a test process that has run hundreds of tests) stamps the requests queued
meanwhile together, a burst the bot did not send. The benchmarks and the multi-replica rate
test use this one. The parent starts `python -m tests.fakes.telegram.remote --scale S --setup
FILE`, reads one JSON line with the URL, and closes stdin when done; the child answers with one
JSON line: every accepted message as [chat_id, sha1 of its text, monotonic time]
(CLOCK_MONOTONIC is system-wide, so the times compare with the parent's) and the flood counters.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import signal
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from tests.kits.paths import ROOT

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.fakes.telegram.api import FakeTelegram, Fault, FloodLimits

START_SECONDS = 60.0
SUMMARY_SECONDS = 120.0


def text_digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


@dataclass(frozen=True)
class Accepted:
    """One message the fake accepted; `text` is the sha1 of what was sent."""

    chat_id: int
    text: str
    time: float


@dataclass
class RemoteFake:
    """The fake in a child process; after the `async with`, what it saw."""

    token: str
    chats: list[int]
    scale: float
    folder: Path
    stalls: dict[int, float] = field(default_factory=dict)  # chat: its first answer comes late
    url: str = ""
    sent: list[Accepted] = field(default_factory=list)
    flood_429s: int = 0
    violations_by_rule: dict[str, int] = field(default_factory=dict)
    early_retries: int = 0
    _proc: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> Self:
        setup = self.folder / "telegram-fake-setup.json"
        setup.write_text(json.dumps({"chats": self.chats, "stalls": self.stalls}), "utf-8")
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.fakes.telegram.remote",
            "--token", self.token, "--scale", str(self.scale), "--setup", str(setup),
            cwd=ROOT,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=2**30,  # the summary is one long line
        )  # fmt: skip
        assert self._proc.stdout is not None
        line = await asyncio.wait_for(self._proc.stdout.readline(), START_SECONDS)
        if not line:
            raise RuntimeError("the fake Bot API process exited before it was ready")
        self.url = str(json.loads(line)["url"])
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        proc = self._proc
        assert proc is not None
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.close()
        line = await asyncio.wait_for(proc.stdout.readline(), SUMMARY_SECONDS)
        await proc.wait()
        if not line:
            raise RuntimeError("the fake Bot API process exited without its summary")
        summary: dict[str, Any] = json.loads(line)
        self.sent = [Accepted(int(c), str(t), float(at)) for c, t, at in summary["sent"]]
        self.flood_429s = int(summary["flood_429s"])
        self.violations_by_rule = dict(summary["violations_by_rule"])
        self.early_retries = int(summary["early_retries"])


def summary(fake: FakeTelegram) -> dict[str, Any]:
    by_rule = Counter(str(event.rule) for event in fake.violations)
    return {
        "sent": [[m.chat_id, text_digest(m.text), m.time] for m in fake.sent],
        "flood_429s": fake.flood_429s,
        "violations_by_rule": dict(by_rule),
        "early_retries": len(fake.early_retries),
    }


async def serve(token: str, scale: float, chats: list[int], stalls: dict[int, float]) -> None:
    fake = FakeTelegram(token, flood=FloodLimits(time_scale=scale))
    for chat in chats:
        fake.add_chat(chat, "private" if chat > 0 else "supergroup")
    for chat, seconds in stalls.items():
        fake.script(chat, Fault.stall(seconds))
    # The fake keeps every request it answered; with 20,000 of them a full collection pauses
    # it for tens of milliseconds, and the requests queued meanwhile are stamped together, a
    # burst the bot did not send. Telegram's edge stamps arrivals as they come.
    gc.disable()
    async with fake:
        print(json.dumps({"url": fake.url}), flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_reader(sys.stdin.fileno(), stop.set)
        await stop.wait()
    print(json.dumps(summary(fake)), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--token", required=True)
    parser.add_argument("--scale", type=float, required=True)
    parser.add_argument("--setup", type=Path, required=True, help="JSON: chats, stalls")
    args = parser.parse_args()
    setup = json.loads(args.setup.read_text(encoding="utf-8"))
    chats = [int(c) for c in setup["chats"]]
    stalls = {int(c): float(s) for c, s in setup["stalls"].items()}
    asyncio.run(serve(args.token, args.scale, chats, stalls))


if __name__ == "__main__":
    main()
