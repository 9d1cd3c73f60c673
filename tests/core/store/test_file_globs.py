"""`file:` patterns read as CODEOWNERS and gitignore read them: without a `/` a pattern
matches any part of the path, directories included; with one it is anchored at the repo root;
a directory matches what is inside it; a trailing `/` matches directories only; `**` is any
number of directories. The evaluator, SQLite and PostgreSQL answer the same (the `store`
fixture runs on both)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.core.query import Field, matches, parse
from bot.core.query.reading import compiled_glob, glob_text
from bot.core.reports.model import KeyFile, Report
from bot.core.reports.tags import glob_matches
from bot.core.store.finder.search import search
from bot.core.store.reports import ReportStore

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
PATHS = {
    1: "verl/workers/rollout/x.py",
    2: "setup.py",
    3: "docs/setup.py",
    4: "a/b/c.md",
    5: "rollout",
    6: "src/rollout_utils.py",
    7: "verl/workers/fsdp_workers.py",
    8: "Docs/Index.MD",
}
EXPECTED = {
    "*rollout*": {1, 5, 6},
    "rollout": {1, 5},
    "rollout/": {1},
    "/setup.py": {2},
    "setup.py": {2, 3},
    "verl/workers": {1, 7},
    "verl/workers/": {1, 7},
    "verl/**/x.py": {1},
    "**/c.md": {4},
    "*.md": {4, 8},
    "docs/": {3, 8},
    "docs": {3, 8},
    "a/*": {4},
    "a/*.md": set(),
    "workers": {1, 7},
    "*work*/*.py": set(),
    "verl/*/rollout": {1},
    "**/rollout/**": {1},
    "b/c.md": set(),
    "**": set(PATHS),
    "?etup.py": {2, 3},
    "fsdp_*": {7},
}


def _report(number: int, path: str) -> Report:
    return Report(repo="o/r", number=number, title=f"t{number}", key_files=[KeyFile(path=path)])


def test_a_pattern_is_the_glob_it_means_over_the_whole_path() -> None:
    assert glob_text("*rollout*") == "**/*rollout*/**"
    assert glob_text("/setup.py") == "setup.py/**"
    assert glob_text("rollout/") == "**/rollout/*/**"
    assert glob_text("verl/workers/**") == "verl/workers/*/**"


@pytest.mark.parametrize(("pattern", "expected"), EXPECTED.items(), ids=list(EXPECTED))
def test_the_evaluator_reads_a_pattern_as_gitignore_does(pattern: str, expected: set[int]) -> None:
    glob = compiled_glob(pattern)
    found = {n for n, path in PATHS.items() if glob_matches(glob, path.lower().split("/"))}
    assert found == expected
    for number, path in PATHS.items():
        report = _report(number, path)
        assert matches(Field("file", ":", pattern), report, now=NOW) == (number in expected)


async def test_the_store_answers_as_the_evaluator(store: ReportStore) -> None:
    await store.upsert_many([(_report(n, path), "") for n, path in PATHS.items()])
    for pattern, expected in EXPECTED.items():
        query = parse(f'file:"{pattern}"')
        result = await search(store, query, limit=100, now=NOW)
        assert {hit.report.number for hit in result.hits} == expected, pattern
        assert result.total == len(expected), pattern
