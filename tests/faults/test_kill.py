"""Random SIGKILLs during digests: nothing is lost, and nothing arrives twice on Slack.

`prdigest run` delivers the catch-up digests of 50 reports to 5 Slack channels (the strict fake
Slack), and is SIGKILLed after a random number of posts, at a random moment (often right after
the fake recorded a post, before the bot could commit it). It is restarted on the same store
and runs until the outbox is empty. What the channels received is compared with the dry-run
payloads: every message arrives, once. A kill often lands inside a send (the fake had accepted
the post, the store had not yet recorded it); the restart looks for such a row in the channel's
history by the key in its metadata before it sends it again (adapters/slack/sender.py), so it
is recorded, not repeated.

A killed process's claims are leased for `LEASE` (60 s) so another replica does not take a send
in flight; the restarted process frees them at once (same host, the pid is gone:
delivery/heartbeat.py), and the test reports how long the restart took to deliver the rest
(`resume_s`, from its start; aim: well under the lease).

Sample: 2 runs in `SLOW=1 make test` (CI); `pytest -m faults`: 200 runs.
"""

from __future__ import annotations

import asyncio
import json
import random
import shutil
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.fakes.slack.api import FakeSlack
from tests.kits.faults import counts, report_line
from tests.kits.proc import BotProcess, run_cli, write_json_reports

pytestmark = pytest.mark.slow

CHANNELS = [f"C0KILL{n}" for n in range(1, 6)]
REPORTS = 50
FINISH_SECONDS = 90.0
# The restart delivers the rest within this, from its start (the 60 s lease is not waited out:
# start-up, the rows' pacing and a few claims take the time).
RESUME_BOUND = 30.0
Delivery = Counter[tuple[str, str]]  # (channel, text) → times


def write_config(path: Path, schedule: str) -> None:
    lines = ["timezone: UTC", "channels:"]
    for n, channel in enumerate(CHANNELS, 1):
        locale = "zh" if n % 2 else "en"
        lines.append(
            f"  - {{name: team{n}, platform: slack, target: {channel}, max_items: 500,"
            f" schedule: '{schedule}', locale: {locale}}}"
        )
        # A second subscription of the destination, planned in the same runs: it matches
        # nothing here, so the digests stay what `digest team{n} --dry-run` says.
        lines.append(
            f"  - {{name: watch{n}, platform: slack, target: {channel}, query: 'tag:no-such',"
            f" schedule: '{schedule}', locale: {locale}}}"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@dataclass
class Template:
    """A store with the 50 reports ingested, and what each channel's digest must contain."""

    db: Path
    config: Path
    expected: Delivery


async def make_template(folder: Path, base_env: dict[str, str]) -> Template:
    write_json_reports(
        folder / "reports", REPORTS, 20_000, "[rollout, trainer] fix: kill-safe change {n}"
    )
    config = folder / "bot.yaml"
    # Daily at the minute the template is made: every run's first digest is then the same
    # as the dry run's (one window of the cadence back from that fire, which holds the
    # reports) for a day. An every-minute schedule's window moved past the reports a minute
    # after they were ingested, and the later runs' digests were empty.
    made = datetime.now(UTC)
    write_config(config, f"{made.minute} {made.hour} * * *")
    db = folder / "template.db"
    env = {**base_env, "BOT_DATABASE_URL": f"sqlite:///{db}", "BOT_CONFIG": str(config)}
    env["SLACK_BOT_TOKEN"] = "xoxb-dry-run"
    await run_cli(env, "ingest", "-q", str(folder / "reports"))
    outputs = await asyncio.gather(
        *(
            run_cli(env, "digest", f"team{n}", "--dry-run", "--format", "slack")
            for n in range(1, len(CHANNELS) + 1)
        )
    )
    expected: Delivery = Counter()
    for channel, out in zip(CHANNELS, outputs, strict=True):
        expected.update((channel, json.loads(line)["text"]) for line in out.splitlines())
    return Template(db, config, expected)


def copy_store(template: Template, folder: Path) -> Path:
    folder.mkdir()
    db = folder / "bot.db"
    shutil.copyfile(template.db, db)
    return db


def recorded_as_sent(db: Path) -> Delivery:
    """(channel, text) of the outbox rows the store says were sent."""
    with sqlite3.connect(db, timeout=30) as conn:
        rows = conn.execute(
            "SELECT d.target, COALESCE(o.payload, m.payload) FROM outbox o"
            " JOIN destinations d ON d.id = o.destination_id"
            " LEFT JOIN digest_runs r ON r.id = o.run_id"  # a digest's message is its edition's
            " LEFT JOIN edition_messages m ON m.edition_id = r.edition_id AND m.part = o.part"
            " WHERE o.status = 'sent'"
        ).fetchall()
    return Counter((str(target), json.loads(payload)["text"]) for target, payload in rows)


def unfinished(db: Path) -> int:
    with sqlite3.connect(db, timeout=30) as conn:
        query = "SELECT count(*) FROM outbox WHERE status IN ('pending', 'sending')"
        return int(conn.execute(query).fetchone()[0])


def posted(fake: FakeSlack) -> Delivery:
    return Counter((m.channel, m.text or "") for m in fake.posted if m.method == "chat.postMessage")


@dataclass
class KillRun:
    killed_after: int
    in_flight: int
    resume_s: float
    lost: int
    duplicates: int
    unexpected: int


async def kill_and_resume(
    template: Template, folder: Path, base_env: dict[str, str], rng: random.Random
) -> KillRun:
    db = copy_store(template, folder)
    async with FakeSlack() as fake:
        for channel in CHANNELS:
            fake.add_channel(channel)
        env = {
            **base_env,
            "BOT_DATABASE_URL": f"sqlite:///{db}",
            "BOT_CONFIG": str(template.config),
            "SLACK_BOT_TOKEN": fake.bot_token,
            "SLACK_SIGNING_SECRET": "kill-test-secret",
            "SLACK_API_URL": fake.api_url,
        }
        first = BotProcess(dict(env))
        await first.start()
        target = rng.randrange(sum(template.expected.values()))
        deadline = time.monotonic() + FINISH_SECONDS
        while len(fake.posted) < target:
            assert time.monotonic() < deadline, first.stderr.decode()[-2000:]
            await asyncio.sleep(0.002)
        await asyncio.sleep(rng.choice([0.0, 0.0, rng.uniform(0.0, 0.6)]))
        await first.kill()
        await asyncio.sleep(0.3)  # a request the dead process had sent is still answered
        at_kill = posted(fake)
        in_flight = sum((at_kill - recorded_as_sent(db)).values())
        second = BotProcess(dict(env))
        restarted = time.monotonic()
        await second.start()
        try:
            await second.wait_ready()
            while unfinished(db) or not set(template.expected) <= set(posted(fake)):
                assert time.monotonic() < deadline + FINISH_SECONDS, "not delivered in time"
                await asyncio.sleep(0.1)
            resume_s = time.monotonic() - restarted
        finally:
            code = await second.terminate()
        assert code == 0, second.stderr.decode()[-2000:]
        final = posted(fake)
    return KillRun(
        killed_after=sum(at_kill.values()),
        in_flight=in_flight,
        resume_s=round(resume_s, 1),
        lost=sum((template.expected - final).values()),
        duplicates=sum((final - template.expected).values()),
        unexpected=len(set(final) - set(template.expected)),
    )


@pytest.mark.parametrize("count", counts(2, 200))
async def test_random_kills_lose_nothing_and_repeat_only_sends_in_flight(
    count: int, subprocess_env: dict[str, str], tmp_path: Path
) -> None:
    template = await make_template(tmp_path, subprocess_env)
    assert len(template.expected) >= 2 * len(CHANNELS), "each digest should split in parts"
    runs: list[KillRun] = []
    for number in range(count):
        rng = random.Random(f"kill-{number}")
        runs.append(await kill_and_resume(template, tmp_path / f"run{number}", subprocess_env, rng))
    summary = report_line(
        "kills",
        runs=len(runs),
        messages_per_run=sum(template.expected.values()),
        kills_inside_a_send=sum(1 for r in runs if r.in_flight),
        sends_in_flight=sum(r.in_flight for r in runs),
        lost=sum(r.lost for r in runs),
        duplicates=sum(r.duplicates for r in runs),
        slowest_resume_s=max(r.resume_s for r in runs),
    )
    print(summary)
    bad = [
        (n, r)
        for n, r in enumerate(runs)
        if r.lost or r.unexpected or r.duplicates or r.resume_s >= RESUME_BOUND
    ]
    assert not bad, f"{summary}\nruns that broke the rules (seed kill-N): {bad[:5]}"
