"""Poisoned report files, and good ones beside them: what a source directory may hold.

Each `Poison` is one way a report can be hostile or broken (a number the store cannot hold,
JSON `true` for a number, a path or a Slack mention for a repo, a `merged_at` that overflows
in UTC, bytes that are not UTF-8, more than 2 MB, a blank title…) with the words its rejection
must contain. Shared by the source tests and the poisoned-source fault case.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from bot.core.reports.parse.parser import parse_file
from tests.kits.paths import SEED

GOOD_BASE = 10_000  # good reports are PRs 10001, 10002, …
TWO_MB = 2 * 1024 * 1024


@cache
def seed_fields() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(parse_file(SEED).report.model_dump_json())
    return loaded


def good_report(number: int) -> bytes:
    """The seed report as JSON under another number."""
    fields = {
        **seed_fields(),
        "number": number,
        "title": f"[rollout] fix: change {number}",
        "url": f"https://github.com/verl-project/verl/pull/{number}",
    }
    return json.dumps(fields, ensure_ascii=False).encode()


def _json(free: int, **change: Any) -> bytes:
    """A small JSON report (PR `free`) with `change` applied."""
    fields = {"repo": "verl-project/verl", "number": free, "title": f"poisoned {free}"}
    return json.dumps({**fields, **change}).encode()


def _markdown_number(number: int) -> bytes:
    return f"# PR #3000000000\n\n- 仓库：verl-project/verl\n- 标题：poisoned {number}\n".encode()


def _too_large(number: int) -> bytes:
    padding = "x" * (TWO_MB + 1)
    return _json(number, summary=padding)


@dataclass(frozen=True)
class Poison:
    name: str
    suffix: str
    make: Callable[[int], bytes]  # a free PR number → the file's bytes
    reason: str  # what the rejection says


POISONS: tuple[Poison, ...] = (
    Poison("huge-number", ".json", lambda n: _json(n, number=10**30), "at most 2147483647"),
    Poison("int32-overflow", ".json", lambda n: _json(n, number=2**31), "at most 2147483647"),
    Poison("markdown-number", ".md", _markdown_number, "at most 2147483647"),
    Poison("bool-number", ".json", lambda n: _json(n, number=True), "a boolean is not"),
    Poison("path-repo", ".json", lambda n: _json(n, repo="../../etc/passwd"), "owner/name"),
    Poison("mention-repo", ".json", lambda n: _json(n, repo="<!channel>"), "owner/name"),
    Poison("huge-repo", ".json", lambda n: _json(n, repo="o/" + "r" * 250), "at most 200"),
    Poison(
        "merged-at-overflow",
        ".json",
        lambda n: _json(n, merged_at="9999-12-31T23:00-14:00"),
        "out of range once converted to UTC",
    ),
    Poison("not-utf8", ".md", lambda n: b"# PR #1\n\xff\xfe\xfd", "invalid UTF-8"),
    Poison("blank-title", ".json", lambda n: _json(n, title=" \t "), "title: blank"),
    Poison(
        "related-number",
        ".json",
        lambda n: _json(n, related=[{"number": 10**12}]),
        "related.0.number",
    ),
    Poison("over-2mb", ".json", _too_large, "larger than 2 MB"),
)


def write_good(folder: Path, count: int, start: int = 1) -> list[int]:
    """`count` good reports as `good-N.json`; their PR numbers."""
    numbers = [GOOD_BASE + n for n in range(start, start + count)]
    for number in numbers:
        (folder / f"good-{number}.json").write_bytes(good_report(number))
    return numbers


def write_poison(folder: Path, poison: Poison, number: int) -> Path:
    path = folder / f"poison-{poison.name}-{number}{poison.suffix}"
    path.write_bytes(poison.make(number))
    return path
