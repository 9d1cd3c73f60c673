"""The import graph of a source tree, read with `ast` (nothing is imported or run).

Every import counts: module level, inside functions, and under `if TYPE_CHECKING:` (a circle in
the types is one in the design). Relative imports are resolved against the importing module's
package; `from pkg import name` is an edge to `pkg.name` when that is a module, else to `pkg`.
Importing `a.b.c` does not count as importing the packages `a` and `a.b` (their `__init__`
files hold nothing here).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool


def modules(root: Path, top: str) -> dict[str, Module]:
    """Every module of the package `top` found under `root` (`root/top/**.py`)."""
    found: dict[str, Module] = {}
    for path in sorted((root / top).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = Module(".".join(parts), path, is_package)
    return found


def _resolve_relative(module: Module, node: ast.ImportFrom) -> str:
    base = module.name.split(".")
    if not module.is_package:
        base.pop()
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def imported_names(module: Module) -> Iterator[str]:
    """The dotted names a module imports, relative ones made absolute; `from a import b`
    yields `a.b` (a module or a name in `a`) and `a`."""
    tree = ast.parse(module.path.read_text(encoding="utf-8"), str(module.path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = _resolve_relative(module, node) if node.level else (node.module or "")
            yield source
            yield from (f"{source}.{alias.name}" for alias in node.names)


def internal_edges(found: Mapping[str, Module]) -> dict[str, set[str]]:
    """module → the modules of the same tree it imports."""
    edges = {
        name: {t for t in imported_names(module) if t in found and t != name}
        for name, module in found.items()
    }
    # `from pkg import name` is an edge to the package only when `name` is no submodule:
    # drop the package edges that are just the parent half of `from pkg import submodule`.
    for targets in edges.values():
        for target in list(targets):
            if found[target].is_package and any(
                t.startswith(target + ".") and t.count(".") == target.count(".") + 1
                for t in targets
            ):
                targets.discard(target)
    return edges


def cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return groups


def external_imports(module: Module, top: str) -> set[str]:
    """The top-level names of what a module imports from outside its tree (`slack_bolt`)."""
    return {
        name.split(".")[0] for name in imported_names(module) if name and name.split(".")[0] != top
    }


def long_functions(module: Module, limit: int) -> list[str]:
    tree = ast.parse(module.path.read_text(encoding="utf-8"))
    return [
        f"{module.name}.{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > limit
    ]
