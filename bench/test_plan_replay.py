"""bench.plan.replay: a tick's digest builds and renders are kept, run again alike, and the
planner's methods are put back afterwards."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bench.plan import replay
from bot.core.delivery.editions import EditionBook


def test_a_small_tick_is_kept_and_replayed_to_the_same_digests(tmp_path: Path) -> None:
    originals = (EditionBook.digest, EditionBook._render)
    kept = asyncio.run(replay.record(f"sqlite:///{tmp_path / 'plan.db'}", 200, 20))
    assert (EditionBook.digest, EditionBook._render) == originals  # the wrappers are gone
    assert len(kept.builds) == 20 and len(kept.renders) == 20  # one per audience
    rendered = [EditionBook._render(*args) for args in kept.renders]
    again = [EditionBook._render(*args) for args in kept.renders]
    assert [content for _, content in rendered] == [content for _, content in again]
    assert [build() for build in kept.builds] == [build() for build in kept.builds]
    best = replay.replay(kept, 2)
    assert set(best) == {"build digests", "render editions"}
    assert all(0 < seconds < float("inf") for seconds in best.values())
    lines = replay.report(kept, best, 2)
    assert lines[0] == "best of 2 rounds: seconds (calls, ms each)"
    assert lines[2].startswith("render editions ") and "(20, " in lines[2]
