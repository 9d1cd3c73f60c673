"""House rules that keep the layers apart (DESIGN §2)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.kits.paths import ROOT

PLATFORM_LIBRARIES = {
    "slack_sdk", "slack_bolt", "telegram", "apscheduler", "starlette", "uvicorn", "aiohttp",
    "httpx", "prometheus_client",
}  # fmt: skip


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_the_core_imports_no_platform_library() -> None:
    offenders = {
        f"{path.name}: {name}"
        for path in (ROOT / "bot" / "core").glob("*.py")
        for name in _imports(path)
        if name.split(".")[0] in PLATFORM_LIBRARIES or name.startswith(("bot.adapters", "bot.app"))
    }
    assert not offenders


def test_adapters_do_not_import_each_other() -> None:
    for path in (ROOT / "bot" / "adapters").glob("*.py"):
        family = path.stem.split("_")[0]
        others = {
            name
            for name in _imports(path)
            if name.startswith("bot.adapters.") and name.split(".")[2].split("_")[0] != family
        }
        assert not others, f"{path.name} imports {others}"
