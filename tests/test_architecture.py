"""House rules that keep the layers apart (DESIGN §2), checked by package, subfolders and
relative imports included. Each rule is first shown to catch a made-up offender, so none of
them can pass by checking nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.kits.imports import (
    Module,
    cycles,
    external_imports,
    internal_edges,
    long_functions,
    modules,
)
from tests.kits.paths import ROOT

PLATFORM_LIBRARIES = frozenset({
    "slack_sdk", "slack_bolt", "telegram", "apscheduler", "starlette", "uvicorn", "aiohttp",
    "httpx", "prometheus_client",
})  # fmt: skip
# The core may lean on these modules outside it (logging helpers, frozen config); nothing that
# runs a scheduler, a web server or an adapter.
CORE_MAY_IMPORT = ("bot.core", "bot.logs", "bot.settings")
ADAPTER_FAMILIES = ("bot.adapters.slack", "bot.adapters.telegram")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 70


def core_violations(found: dict[str, Module]) -> list[str]:
    """What a `bot.core` module imports that the core must not: a platform, scheduler or web
    library, or a part of the bot outside the core (adapters, app, web, scheduler)."""
    offenders = []
    edges = internal_edges(found)  # once: it parses every module of the tree
    for name, module in found.items():
        if not name.startswith("bot.core"):
            continue
        offenders += [f"{name} imports {lib}" for lib in external_imports(module, "bot")
                      if lib in PLATFORM_LIBRARIES]  # fmt: skip
        offenders += [f"{name} imports {target}" for target in edges[name]
                      if not target.startswith(CORE_MAY_IMPORT)]  # fmt: skip
    return sorted(offenders)


def cross_adapter_imports(found: dict[str, Module]) -> list[str]:
    edges = internal_edges(found)
    offenders = []
    for family in ADAPTER_FAMILIES:
        others = [f for f in ADAPTER_FAMILIES if f != family]
        for name, targets in edges.items():
            if name == family or name.startswith(family + "."):
                offenders += [f"{name} imports {t}" for t in sorted(targets)
                              if t.startswith(tuple(others))]  # fmt: skip
    return offenders


def _write(root: Path, files: dict[str, str]) -> dict[str, Module]:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return modules(root, "bot")


# --- the checks on made-up trees -------------------------------------------------------------


def test_a_circle_through_a_type_only_relative_import_is_found(tmp_path: Path) -> None:
    found = _write(tmp_path, {
        "bot/__init__.py": "", "bot/core/__init__.py": "", "bot/core/store/__init__.py": "",
        "bot/core/store/a.py": "from bot.core.store.b import B\n",
        "bot/core/store/b.py": (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n"
        ),
        "bot/core/store/c.py": "from . import a\n",
    })  # fmt: skip
    assert cycles(internal_edges(found)) == [["bot.core.store.a", "bot.core.store.b"]]


def test_a_platform_import_in_a_core_subpackage_is_found(tmp_path: Path) -> None:
    found = _write(tmp_path, {
        "bot/__init__.py": "", "bot/core/__init__.py": "", "bot/core/render/__init__.py": "",
        "bot/core/render/slack.py": "def f() -> None:\n    import slack_sdk.web\n",
        "bot/core/render/text.py": "from ...adapters.console import x\n",
        "bot/adapters/__init__.py": "", "bot/adapters/console.py": "x = 1\n",
    })  # fmt: skip
    assert core_violations(found) == [
        "bot.core.render.slack imports slack_sdk",
        "bot.core.render.text imports bot.adapters.console",
    ]


def test_a_cross_adapter_import_is_found(tmp_path: Path) -> None:
    found = _write(tmp_path, {
        "bot/__init__.py": "", "bot/adapters/__init__.py": "",
        "bot/adapters/slack/__init__.py": "", "bot/adapters/telegram/__init__.py": "",
        "bot/adapters/slack/sender.py": "from ..telegram import pace\n",
        "bot/adapters/telegram/pace.py": "x = 1\n",
        "bot/adapters/telegram/reply.py": "from bot.adapters.telegram.pace import x\n",
    })  # fmt: skip
    assert cross_adapter_imports(found) == [
        "bot.adapters.slack.sender imports bot.adapters.telegram.pace"
    ]


# --- the rules on the real tree --------------------------------------------------------------


@pytest.fixture(scope="module")
def bot_modules() -> dict[str, Module]:
    found = modules(ROOT, "bot")
    assert "bot.core.store.reports" in found and "bot.adapters.slack.adapter" in found
    return {name: m for name, m in found.items() if not name.startswith("bot.migrations")}


def test_the_core_imports_no_platform_scheduler_or_web_library(
    bot_modules: dict[str, Module],
) -> None:
    assert core_violations(bot_modules) == []


def test_slack_and_telegram_adapters_never_import_each_other(
    bot_modules: dict[str, Module],
) -> None:
    assert cross_adapter_imports(bot_modules) == []


@pytest.mark.parametrize("top", ["bot", "tests", "bench"])
def test_there_is_no_import_circle(top: str) -> None:
    assert cycles(internal_edges(modules(ROOT, top))) == []


def test_tests_and_bench_do_not_import_each_other() -> None:
    """bench/ may use the test fakes and kits (one place for shared helpers); tests never
    import bench/, and test modules never import other test modules."""
    tests = modules(ROOT, "tests")
    offenders = [f"{n} imports bench" for n, m in tests.items()
                 if "bench" in external_imports(m, "tests")]  # fmt: skip
    edges = internal_edges(tests)
    offenders += [f"{n} imports {t}" for n, targets in edges.items() for t in sorted(targets)
                  if t.rsplit(".", 1)[-1].startswith("test_")]  # fmt: skip
    assert offenders == []


def test_modules_and_functions_stay_small(bot_modules: dict[str, Module]) -> None:
    too_long = [
        f"{name} ({n} lines)"
        for name, module in bot_modules.items()
        if (n := len(module.path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    for module in bot_modules.values():
        too_long += long_functions(module, MAX_FUNCTION_LINES)
    assert too_long == []


def _vulture(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vulture", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,  # where pyproject.toml's [tool.vulture] is read
    )


def test_dead_code_is_found_in_a_made_up_tree(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(
        "def used() -> int:\n    return 1\n\n\ndef only_tests_call_me() -> int:\n"
        "    return 2\n\n\nprint(used())\n",
        encoding="utf-8",
    )
    found = _vulture(str(tmp_path / "bot.py"), "--min-confidence", "60")
    assert "unused function 'only_tests_call_me'" in found.stdout
    assert "'used'" not in found.stdout


def test_bot_has_no_dead_code_or_test_hook() -> None:
    found = _vulture()  # [tool.vulture] of pyproject.toml: bot/ and the reasoned whitelist
    assert found.returncode == 0, found.stdout + found.stderr
