"""The docs name only code that exists: every `bot/…` path and `bot.…` module in README.md and
docs/*.md is a file, folder or module of the tree (a rename that forgets the docs fails here)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from tests.kits.paths import ROOT

PATH = re.compile(r"(?<![\w/.-])bot/[\w/.-]*[\w/]")
MODULE = re.compile(r"(?<![\w/.-])bot(?:\.[a-z_][a-z0-9_]*)+")
# Names that look like modules but are files (`bot.yaml`, the SQLite `bot.db`, the systemd
# `bot.env`) or the package the wheel makes of templates/ (`bot.templates`, `bot/templates/`).
NOT_CODE = frozenset({"bot.yaml", "bot.db", "bot.env", "bot.templates", "bot/templates/"})


def _docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _exists(path: str) -> bool:
    """A file or folder; `bot/core/store/errors.is_outage` names a module's attribute."""
    if path in NOT_CODE:
        return True
    found = ROOT / path.rstrip("/")
    return found.exists() or found.with_suffix(".py").exists()


def _module_exists(name: str) -> bool:
    """`bot.core.timing.horizon.HORIZON` names a module and one of its attributes: the longest
    prefix that is a module must exist, and it must be more than `bot`."""
    if name in NOT_CODE:
        return True
    parts = name.split(".")
    for end in range(len(parts), 1, -1):
        try:
            if importlib.util.find_spec(".".join(parts[:end])) is not None:
                return True
        except ModuleNotFoundError:  # a prefix that is a module, not a package
            continue
    return False


def test_the_paths_the_docs_name_exist() -> None:
    missing = [
        f"{doc.name}: {path}"
        for doc in _docs()
        for path in PATH.findall(doc.read_text(encoding="utf-8"))
        if not _exists(path)
    ]
    assert missing == []


def test_the_modules_the_docs_name_exist() -> None:
    missing = [
        f"{doc.name}: {name}"
        for doc in _docs()
        for name in MODULE.findall(doc.read_text(encoding="utf-8"))
        if not _module_exists(name)
    ]
    assert missing == []


EMPTY_FENCE = re.compile(r"^```[\w-]*\n\s*^```$", re.MULTILINE)


def test_no_example_in_the_docs_is_an_empty_code_block() -> None:
    empty = [
        f"{doc.relative_to(ROOT)}:{doc.read_text(encoding='utf-8')[: m.start()].count(chr(10)) + 1}"
        for doc in _docs()
        for m in EMPTY_FENCE.finditer(doc.read_text(encoding="utf-8"))
    ]
    assert not empty, f"empty code blocks: {empty}"
