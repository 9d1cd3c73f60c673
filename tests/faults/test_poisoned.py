"""A source directory fed good reports and poisoned files in waves: every good report stored,
every poisoned file rejected by name, no exception out of the poller.

Each wave adds 10 good reports, edits a good one already stored, and adds 3 poisoned files
taken in turn from `tests/kits/poison.py` (a number past the store's INTEGER, JSON `true`, a
path or a Slack mention for a repo, a 250-character repo, a `merged_at` that overflows in UTC,
bytes that are not UTF-8, more than 2 MB, a blank title…); some earlier poisoned files are
removed. The real SourcePoller polls after each wave, on SQLite and on PostgreSQL. Before the
fix, the first poisoned number raised out of the poll and the good files of its poll were
remembered as seen and never stored.

Sample: 2 waves in `make test`; `pytest -m faults`: 100 waves (1,000 good reports, 300 poisoned).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from bot.core.store.reports import IngestOutcome, ReportStore
from bot.scheduling.sources import SourcePoller
from bot.settings import Source
from tests.kits.faults import counts, first_failures, report_line
from tests.kits.poison import GOOD_BASE, POISONS, Poison, good_report, write_good, write_poison

GOOD_PER_WAVE = 10
POISONED_PER_WAVE = 3
REMOVE_EVERY = 4  # every 4th wave removes the poisoned files of the wave before


@pytest.mark.parametrize("count", counts(2, 100))
async def test_poisoned_files_never_cost_a_good_report(
    count: int, store: ReportStore, tmp_path: Path
) -> None:
    poller = SourcePoller(Source(dir=tmp_path), store, ())
    rotation = itertools.cycle(POISONS)
    free_numbers = itertools.count(1)
    good: set[int] = set()
    poisoned: dict[str, Poison] = {}
    rejected: dict[str, str] = {}
    updated = escaped = 0
    failures: list[str] = []
    previous_wave: list[Path] = []
    for wave in range(count):
        good.update(write_good(tmp_path, GOOD_PER_WAVE, start=wave * GOOD_PER_WAVE + 1))
        if wave:  # edit a report stored by an earlier wave: it must come back as updated
            edited = GOOD_BASE + wave * GOOD_PER_WAVE - 1
            body = good_report(edited).replace(b"change", b"edited change")
            (tmp_path / f"good-{edited}.json").write_bytes(body)
        this_wave = []
        for poison in itertools.islice(rotation, POISONED_PER_WAVE):
            this_wave.append(write_poison(tmp_path, poison, next(free_numbers)))
            poisoned[str(this_wave[-1])] = poison
        if wave % REMOVE_EVERY == REMOVE_EVERY - 1:
            for path in previous_wave:
                path.unlink()
        previous_wave = this_wave
        try:
            result = await poller.poll()
        except Exception as error:  # the promise: none escapes
            escaped += 1
            failures.append(f"wave {wave}: {type(error).__name__}: {error}"[:300])
            continue
        updated += sum(1 for r in result.results if r.outcome is IngestOutcome.UPDATED)
        for failure in result.failures:
            rejected[failure.source] = failure.reason
    stored = {s.report.number for s in await store.since(0)}
    lost = len(good - stored)

    def check_rejections() -> None:
        assert rejected.keys() == poisoned.keys(), "every poisoned file rejected by name"
        for source, poison in poisoned.items():
            assert poison.reason in rejected[source], (poison.name, rejected[source])

    first_failures(check_rejections, failures)
    summary = (
        report_line(
            "poisoned",
            files=len(good) + len(poisoned),
            good_stored=len(good & stored),
            updated=updated,
            rejected=len(rejected),
            escaped=escaped,
            lost=lost,
        )
        + f"   ({store.engine.dialect.name})"
    )
    print(summary)
    assert lost == 0, summary
    assert stored == good, f"only good reports stored: {summary}"
    assert updated == count - 1, summary
    assert escaped == 0 and not failures, f"{summary}\n" + "\n".join(failures)
