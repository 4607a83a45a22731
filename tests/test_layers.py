"""The README's layer diagram is the package's real import graph.

The diagram is the ``mermaid`` block of the README's "Architecture"
section. Each node's label lists modules of ``templatestudio`` (``wire/``
is a subpackage and every module in it; a remark in parentheses is not a
name); each ``-->`` is an edge, and edges may chain. The checks:

- every module of the package is drawn in exactly one node, and every name
  drawn is a module that exists;
- every drawn edge is a real import (some module of the upper node imports
  some module of the lower one);
- every real import between two nodes runs along the drawn edges, downward
  (the lower node is reachable from the upper one), and the drawn edges
  have no cycle.

Imports are read from the source with ``ast`` (``tests/import_graph.py``),
imports inside functions included.
"""

from __future__ import annotations

import re

import pytest

from import_graph import ROOT, cycles, graph

README = ROOT / "README.md"
_NODE = re.compile(r'^\s*(\w+)\["([^"]*)"\]\s*$')
_EDGE = re.compile(r"^\s*\w+(?:\s*-->\s*\w+)+\s*$")


def architecture_diagram(readme: str) -> str:
    """The first mermaid block after the "## Architecture" heading."""
    section = readme.split("\n## Architecture\n", 1)[1]
    match = re.search(r"```mermaid\n(.*?)```", section.split("\n## ", 1)[0], re.S)
    assert match, "the Architecture section has no mermaid diagram"
    return match.group(1)


def parse(diagram: str) -> tuple[dict[str, list[str]], set[tuple[str, str]]]:
    """(node id -> module names drawn in it, edges); any other line is an error, not skipped."""
    nodes: dict[str, list[str]] = {}
    edges: set[tuple[str, str]] = set()
    for line in diagram.splitlines():
        if not line.strip() or line.strip().startswith(("flowchart", "%%")):
            continue
        if node := _NODE.match(line):
            label = re.sub(r"\s*\([^)]*\)", "", node.group(2))
            nodes[node.group(1)] = [name.strip() for name in label.split(",") if name.strip()]
        elif _EDGE.match(line):
            chain = [part.strip() for part in line.split("-->")]
            edges.update(zip(chain, chain[1:]))
        else:
            raise AssertionError(f"a diagram line that is neither a node nor an edge: {line!r}")
    undefined = {end for edge in edges for end in edge} - nodes.keys()
    assert not undefined, f"edges between nodes the diagram does not define: {sorted(undefined)}"
    return nodes, edges


def drawn_in(name: str, module: str) -> bool:
    """Whether the drawn name covers the module (``templatestudio.X``, or the package itself)."""
    short = "templatestudio" if module == "templatestudio" else module.removeprefix("templatestudio.")
    if name.endswith("/"):
        return short == name[:-1] or short.startswith(name[:-1] + ".")
    return short == name


def placement(nodes: dict[str, list[str]], modules: set[str]) -> tuple[dict[str, str], list[str]]:
    """(module -> its node, problems): modules drawn in no node or in two, names that are no module."""
    where: dict[str, str] = {}
    problems = []
    for module in sorted(modules):
        hits = [node for node, names in nodes.items() if any(drawn_in(name, module) for name in names)]
        if len(hits) != 1:
            problems.append(f"{module} is drawn in {len(hits)} nodes {hits}, not one")
        else:
            where[module] = hits[0]
    for node, names in nodes.items():
        for name in names:
            if not any(drawn_in(name, module) for module in modules):
                problems.append(f"node {node} draws {name!r}, which is no module of the package")
    return where, problems


def reachable(edges: set[tuple[str, str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        for upper, lower in edges:
            if upper == node and lower not in seen:
                seen.add(lower)
                todo.append(lower)
    return seen


def edge_problems(imports: dict[str, set[str]], where: dict[str, str], edges: set[tuple[str, str]]) -> list[str]:
    """Drawn edges no import makes, and imports that do not run down the drawn edges.

    Modules drawn in no node are left out here: ``placement`` reports them.
    """
    placed = [(module, target) for module, targets in sorted(imports.items()) for target in sorted(targets)
              if module in where and target in where]
    real = {(where[module], where[target]) for module, target in placed}
    problems = [f"drawn edge {upper} --> {lower} is no real import" for upper, lower in sorted(edges - real)]
    for module, target in placed:
        upper, lower = where[module], where[target]
        if upper != lower and lower not in reachable(edges, upper):
            problems.append(f"{module} imports {target}, but {upper} does not reach {lower} in the diagram")
    return problems


@pytest.fixture(scope="module")
def drawn():
    return parse(architecture_diagram(README.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def real():
    return graph()


def test_every_module_is_drawn_once_and_every_drawn_name_exists(drawn, real):
    nodes, _ = drawn
    _, problems = placement(nodes, set(real))
    assert problems == []


def test_every_drawn_edge_is_a_real_import_and_every_import_runs_down_the_edges(drawn, real):
    nodes, edges = drawn
    where, _ = placement(nodes, set(real))
    assert edge_problems(real, where, edges) == []


def test_the_drawn_layers_have_no_cycle(drawn):
    nodes, edges = drawn
    assert cycles({node: {lower for upper, lower in edges if upper == node} for node in nodes}) == []


def test_the_reader_and_the_stream_stay_below_what_they_must_not_know(real):
    # The reader has its own argument normaliser (templatestudio.values), not the course's;
    # the stream takes a Format and resolves nothing, so it imports no detection.
    assert "templatestudio.tools" not in real["templatestudio.reader"]
    assert real["templatestudio.stream"].isdisjoint({"templatestudio.detect", "templatestudio.probe"})
    assert "templatestudio.probe" not in real["templatestudio.reader"]


# --- the checks themselves fail where they should ---------------------------------------------

TOY = """
flowchart TB
    top["a, sub/ (a remark, b)"]
    mid["b"]
    low["c"]
    top --> mid --> low
"""


def test_the_checks_catch_a_missing_module_a_stale_name_a_false_edge_and_an_upward_import():
    nodes, edges = parse(TOY)
    assert nodes == {"top": ["a", "sub/"], "mid": ["b"], "low": ["c"]}
    assert edges == {("top", "mid"), ("mid", "low")}
    modules = {"templatestudio.a", "templatestudio.sub", "templatestudio.sub.x", "templatestudio.b",
               "templatestudio.c", "templatestudio.d"}
    where, problems = placement(nodes, modules)
    assert problems == ["templatestudio.d is drawn in 0 nodes [], not one"]
    _, stale = placement({**nodes, "low": ["c", "gone"]}, modules - {"templatestudio.d"})
    assert stale == ["node low draws 'gone', which is no module of the package"]
    imports = {"templatestudio.a": {"templatestudio.b", "templatestudio.c"}, "templatestudio.b": set(), "templatestudio.c": set(),
               "templatestudio.sub": set(), "templatestudio.sub.x": {"templatestudio.a"}}
    assert edge_problems(imports, where, edges) == ["drawn edge mid --> low is no real import"]
    imports["templatestudio.b"] = {"templatestudio.c"}
    imports["templatestudio.c"] = {"templatestudio.b"}
    assert edge_problems(imports, where, edges) == [
        "templatestudio.c imports templatestudio.b, but low does not reach mid in the diagram"
    ]


def test_a_line_the_parser_does_not_know_is_an_error_not_skipped():
    with pytest.raises(AssertionError, match="neither a node nor an edge"):
        parse(TOY + "    top -.-> low\n")
    with pytest.raises(AssertionError, match="does not define"):
        parse(TOY + "    top --> nowhere\n")
