"""The package's import graph, read from its source with ``ast`` (nothing is imported).

Shared by ``test_registry.py`` (no cycle, the course module imports only
from below it) and ``test_layers.py`` (the README's layer diagram is the
real graph). Imports inside functions count: a deferred import is still
an edge a layer must allow.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "templatestudio"


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name, not ``__init__``)."""
    found = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known_modules: dict[str, Path]) -> tuple[set[str], set[str]]:
    """(package modules, top-level outside names) that a module imports, anywhere in it.

    ``from templatestudio.formats import hermes`` is an edge to the submodule
    when one exists, else to the package. A submodule's implicit import of
    its parent package is not an edge: every package would be a cycle.
    """

    def known(dotted: str) -> str:
        while dotted not in known_modules:
            dotted = dotted.rpartition(".")[0]
        return dotted

    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    inside, outside = set(), set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            targets = [(source, alias.name) for alias in node.names]
        else:
            continue
        for source, member in targets:
            if source.split(".")[0] != "templatestudio":
                outside.add(source.split(".")[0])
            elif member is not None and f"{source}.{member}" in known_modules:
                inside.add(f"{source}.{member}")
            else:
                inside.add(known(source))
    inside.discard(name)
    return inside, outside


def graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module's imports of other package modules."""
    found = modules(package)
    return {name: imports(name, path, found)[0] for name, path in found.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return components
