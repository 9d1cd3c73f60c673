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
from tests.kits.layers import (
    adapter_violations,
    chat_violations,
    core_violations,
    dialect_violations,
    folder_cycles,
)
from tests.kits.paths import ROOT

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 70


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
        "bot.core.render.text imports bot.adapters.console (core)",
    ]


def test_an_adapter_reaching_past_the_chat_layer_is_found(tmp_path: Path) -> None:
    found = _write(tmp_path, {
        "bot/__init__.py": "", "bot/adapters/__init__.py": "",
        "bot/adapters/slack/__init__.py": "", "bot/adapters/telegram/__init__.py": "",
        "bot/adapters/slack/sender.py": "from ..telegram import pace\n",
        "bot/adapters/telegram/pace.py": "x = 1\n",
        "bot/adapters/telegram/reply.py": "from bot.adapters.telegram.pace import x\n",
        "bot/adapters/slack/home.py": (
            "from bot.chat.home import HomeData\nfrom bot.core.store.reports import ReportStore\n"
        ),
        "bot/chat/__init__.py": "", "bot/chat/home.py": "HomeData = 1\n",
        "bot/core/__init__.py": "", "bot/core/store/__init__.py": "",
        "bot/core/store/reports.py": "ReportStore = 1\n",
    })  # fmt: skip
    assert adapter_violations(found) == [
        "bot.adapters.slack.home imports bot.core.store.reports (adapter)",
        "bot.adapters.slack.sender imports bot.adapters.telegram.pace (other platform)",
    ]


def test_a_chat_layer_importing_an_adapter_or_a_platform_is_found(tmp_path: Path) -> None:
    found = _write(tmp_path, {
        "bot/__init__.py": "", "bot/chat/__init__.py": "", "bot/adapters/__init__.py": "",
        "bot/chat/answers.py": "import slack_sdk\nfrom bot.adapters import base\n",
        "bot/adapters/base.py": "x = 1\n",
    })  # fmt: skip
    assert chat_violations(found) == [
        "bot.chat.answers imports slack_sdk",
        "bot.chat.answers imports bot.adapters.base (chat)",
    ]


def test_a_circle_between_packages_is_found_through_their_loose_modules(tmp_path: Path) -> None:
    """No module imports itself back, yet the store's loose modules and its search package
    need each other: a circle between packages."""
    found = _write(tmp_path, {
        "bot/__init__.py": "", "bot/core/__init__.py": "", "bot/core/store/__init__.py": "",
        "bot/core/store/search/__init__.py": "",
        "bot/core/store/reports.py": "from bot.core.store.search import index\n",
        "bot/core/store/search/index.py": "from bot.core.store.tables import t\n",
        "bot/core/store/tables.py": "t = 1\n",
    })  # fmt: skip
    assert cycles(internal_edges(found)) == []
    assert folder_cycles(found) == [["bot.core.store", "bot.core.store.search"]]


def test_a_dialect_check_outside_the_store_is_found(tmp_path: Path) -> None:
    found = _write(tmp_path, {
        "bot/__init__.py": "", "bot/chat/__init__.py": "", "bot/core/__init__.py": "",
        "bot/core/store/__init__.py": "",
        "bot/chat/search.py": "def f(conn):\n    return conn.dialect.name == 'sqlite'\n",
        "bot/core/store/db.py": (
            "from sqlalchemy.dialects.postgresql import insert\n"
            "def g(conn):\n    return conn.dialect.name\n"
        ),
    })  # fmt: skip
    assert dialect_violations(found) == ["bot.chat.search checks the SQL dialect"]


# --- the rules on the real tree --------------------------------------------------------------


@pytest.fixture(scope="module")
def bot_modules() -> dict[str, Module]:
    found = modules(ROOT, "bot")
    assert "bot.core.store.reports" in found and "bot.adapters.slack.adapter" in found
    assert {"bot.adapters.telegram.adapter", "bot.adapters.lark.adapter"} <= set(found)
    return {name: m for name, m in found.items() if not name.startswith("bot.migrations")}


def test_the_core_imports_nothing_of_the_bot_outside_it_nor_a_platform_library(
    bot_modules: dict[str, Module],
) -> None:
    assert core_violations(bot_modules) == []


def test_adapters_talk_only_to_the_chat_layer_and_never_to_each_other(
    bot_modules: dict[str, Module],
) -> None:
    assert adapter_violations(bot_modules) == []


def test_the_chat_layer_imports_no_adapter_nor_platform_library(
    bot_modules: dict[str, Module],
) -> None:
    assert chat_violations(bot_modules) == []


def test_there_is_no_circle_between_packages(bot_modules: dict[str, Module]) -> None:
    assert folder_cycles(bot_modules) == []


def test_only_the_store_looks_at_the_sql_dialect(bot_modules: dict[str, Module]) -> None:
    assert dialect_violations(bot_modules) == []


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
