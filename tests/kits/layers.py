"""The layer rules of bot/ (docs/architecture.md), as functions over an import graph.

Each returns the offenders as sorted `"a imports b"` lines, so a failing test names them.
tests/test_architecture.py shows each rule catching a made-up offender before it judges the tree.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Final

from tests.kits.imports import Module, cycles, external_imports, internal_edges

PLATFORM_LIBRARIES: Final = frozenset({
    "slack_sdk", "slack_bolt", "telegram", "lark_oapi", "apscheduler", "starlette", "uvicorn",
    "aiohttp", "httpx", "prometheus_client",
})  # fmt: skip

# What an adapter may import besides the standard library and its platform's SDK: the
# application layer, the shared words, the renderers, the clock, the delivery port (its
# Sender and outcome types), the settings, the logs, and the adapter layer itself.
ADAPTER_MAY_IMPORT: Final = (
    "bot.chat",
    "bot.core.models",
    "bot.core.render",
    "bot.core.clock",
    "bot.core.delivery.port",
    "bot.settings",
    "bot.logs",
    "bot.adapters",
)
ADAPTER_FAMILIES: Final = ("bot.adapters.slack", "bot.adapters.telegram", "bot.adapters.lark")
STORE: Final = "bot.core.store"


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _outside(
    found: Mapping[str, Module], layer: str, allowed: tuple[str, ...], what: str
) -> list[str]:
    """The imports of `layer`'s modules that reach `bot.*` outside `allowed`."""
    edges = internal_edges(found)
    return sorted(
        f"{name} imports {target} ({what})"
        for name, targets in edges.items()
        if _within(name, layer)
        for target in targets
        if not any(_within(target, prefix) for prefix in allowed)
    )


def _libraries(found: Mapping[str, Module], layer: str) -> list[str]:
    return sorted(
        f"{name} imports {lib}"
        for name, module in found.items()
        if _within(name, layer)
        for lib in external_imports(module, "bot")
        if lib in PLATFORM_LIBRARIES
    )


def core_violations(found: Mapping[str, Module]) -> list[str]:
    """The core imports no platform, scheduler or web library, and nothing of `bot.*` outside
    `bot.core`: it takes its settings as plain values and its loggers from `logging`."""
    return _libraries(found, "bot.core") + _outside(found, "bot.core", ("bot.core",), "core")


def adapter_violations(found: Mapping[str, Module]) -> list[str]:
    """An adapter talks to the application layer (`bot.chat`), never to the stores, the
    planner or the web server; and Slack never imports Telegram, nor the reverse."""
    offenders = _outside(found, "bot.adapters", ADAPTER_MAY_IMPORT, "adapter")
    edges = internal_edges(found)
    for family in ADAPTER_FAMILIES:
        others = tuple(f for f in ADAPTER_FAMILIES if f != family)
        offenders += [
            f"{name} imports {target} (other platform)"
            for name, targets in edges.items()
            if _within(name, family)
            for target in sorted(targets)
            if any(_within(target, other) for other in others)
        ]
    return sorted(offenders)


def chat_violations(found: Mapping[str, Module]) -> list[str]:
    """The application layer imports no adapter and no platform library."""
    edges = internal_edges(found)
    return _libraries(found, "bot.chat") + sorted(
        f"{name} imports {target} (chat)"
        for name, targets in edges.items()
        if _within(name, "bot.chat")
        for target in targets
        if _within(target, "bot.adapters")
    )


def unit_of(module: Module) -> str:
    """A package's loose modules count as one unit: the package."""
    return module.name if module.is_package else module.name.rpartition(".")[0]


def folder_cycles(found: Mapping[str, Module]) -> list[list[str]]:
    """Circles between packages, each package's loose modules (and its __init__) one unit."""
    edges = internal_edges(found)
    units: dict[str, set[str]] = {}
    for name, targets in edges.items():
        source = unit_of(found[name])
        units.setdefault(source, set())
        for target in targets:
            if target in found and (unit := unit_of(found[target])) != source:
                units[source].add(unit)
    return cycles(units)


def _checks_dialect(tree: ast.AST) -> bool:
    """`….dialect.name`, `dialect_name` or a dialect's own insert (`pg_insert`, `sqlite_insert`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "name":
            inner = node.value
            if isinstance(inner, ast.Attribute) and inner.attr == "dialect":
                return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "sqlalchemy.dialects"
        ):
            return True
    return False


def dialect_violations(found: Mapping[str, Module]) -> list[str]:
    """SQL dialects are the store's business: no module outside `bot.core.store` looks at one.
    Migrations are the exception: each is a frozen snapshot that imports nothing from `bot`
    (so not the store's helpers), and a schema step differs by dialect (FTS5 or pg_trgm)."""
    return sorted(
        f"{name} checks the SQL dialect"
        for name, module in found.items()
        if not _within(name, STORE)
        and not _within(name, "bot.migrations")
        and _checks_dialect(ast.parse(module.path.read_text(encoding="utf-8")))
    )
