"""The notebooks show the package's code; this keeps the two from drifting.

A notebook introduces a function with ``show_source(fn)``. Its stored output
must equal the package source today, and every public function or class of
the course modules must be shown by some notebook. nbval re-runs the cells
too; this test says which function drifted without starting a kernel.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import nbformat
import pytest

import templatestudio.messages
import templatestudio.render
import templatestudio.tools

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("[0-9][0-9]_*.ipynb"))
COURSE_MODULES = [templatestudio.messages, templatestudio.render, templatestudio.tools]


def show_source_cells():
    for path in NOTEBOOKS:
        notebook = nbformat.read(path, as_version=4)
        imports = [
            line
            for cell in notebook.cells
            if cell.cell_type == "code"
            for line in cell.source.splitlines()
            if line.startswith(("from templatestudio", "import templatestudio"))
        ]
        for cell in notebook.cells:
            if cell.cell_type == "code" and "show_source(" in cell.source:
                yield path.name, imports, cell


def shown_text(cell) -> str:
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if "text/plain" in data:
            return data["text/plain"]
    raise AssertionError("show_source cell has no stored output; execute the notebook")


def shown_calls(source: str) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "show_source"
    ]


CELLS = list(show_source_cells())


@pytest.mark.parametrize(
    "name,imports,cell", CELLS, ids=[f"{name}:{i}" for i, (name, *_ ) in enumerate(CELLS)]
)
def test_shown_source_matches_package(name, imports, cell):
    namespace: dict = {}
    exec("\n".join(["from templatestudio.show import show_source", *imports]), namespace)
    (call,) = shown_calls(cell.source)
    expected = repr(eval(compile(ast.Expression(call), name, "eval"), namespace))
    assert shown_text(cell) == expected, f"{name}: notebook shows code the package no longer has"


def test_every_course_function_is_shown():
    shown = set()
    for _name, _imports, cell in CELLS:
        for call in shown_calls(cell.source):
            shown.update(arg.id for arg in call.args if isinstance(arg, ast.Name))
    public = {
        name
        for module in COURSE_MODULES
        for name, obj in vars(module).items()
        if not name.startswith("_")
        and (inspect.isfunction(obj) or inspect.isclass(obj))
        and obj.__module__ == module.__name__
    }
    missing = sorted(public - shown)
    assert not missing, f"no notebook shows: {', '.join(missing)}"
