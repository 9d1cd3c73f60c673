"""Replicas stopped and continued at random moments keep Telegram's overall pace between them.

`python -m bench.paused`, run as a process, runs the 3-replica fan-out of `bench.fanout.pg`
(one PostgreSQL outbox, the shared pace in `pace_slots`, the strict fake Bot API in a process
of its own, time x0.5) while it stops each replica with SIGSTOP at random moments and
continues it with SIGCONT a moment later. A stop can land anywhere: while a replica waits for
its booked slot, while the database's answer to the booking is on its way, between the slot
and the request. A replica that then sent on its booked slot would land on another replica's
slot, and the fake counts arrivals: the pace re-books a slot that has passed instead
(bot/core/delivery/pacing.py).

Promise: 0 flood violations at the fake, 0 lost, 0 duplicates; the achieved rate divided by
the allowed one is shown beside them. Stops are kept shorter than the heartbeat's 4 s, after
which another replica would take the stopped one's claims (tests/faults/test_kill.py).

Sample (with SLOW=1): 40 chats; `pytest -m faults`: 150 chats (about 350 messages).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.kits.faults import counts, report_line
from tests.kits.paths import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

FINISH_SECONDS = 420.0


@pytest.mark.parametrize("chats", counts(40, 150))
def test_replicas_stopped_at_random_never_exceed_telegrams_overall_rate(
    chats: int, postgres_database_url: str
) -> None:
    command = [sys.executable, "-m", "bench.paused", "--url", postgres_database_url]
    done = subprocess.run(
        [*command, "--chats", str(chats)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=FINISH_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.splitlines()[-1])
    stops = found["stops"]
    summary = report_line(
        "paused replicas",
        replicas=found["replicas"],
        messages=found["messages"],
        stops=f"{stops['count']} ({'/'.join(map(str, stops['by_replica']))})",
        stopped_s=stops["seconds"],
        longest_stop_s=stops["longest"],
        seconds=found["seconds"],
        violations=found["violations"],
        violations_by_rule=found["violations_by_rule"],
        lost=found["lost"],
        duplicates=found["duplicates"],
        rate_ratio=found["rate_ratio"],
    )
    print(summary)
    assert stops["count"] >= found["replicas"], f"too few stops to mean anything: {summary}"
    assert found["violations"] == 0 and not found["violations_by_rule"], summary
    assert found["lost"] == 0, summary
    assert found["duplicates"] == 0, summary
