"""vLLM's own tool-parser test inputs, harvested from an unpacked vLLM source release (issue 23).

vLLM's tests under ``tests/tool_parsers/`` and ``tests/tool_use/`` feed
model replies to its parsers. ``harvest(root)`` reads those files in place
(nothing of them is committed here) and returns one ``Case`` per distinct
reply text: the text, the vLLM parser names the test file exercises, and
the file. The text is what the file spells as a string: a literal, an
f-string or a ``+`` of literals whose parts are module- or class-level string
constants; a string built any other way (``json.dumps`` inside an f-string,
a loop) is not harvested. The parser names come from what the file imports
out of ``vllm.tool_parsers`` (matched against the release's registry) and
from the names it spells in ``get_tool_parser("...")`` or
``parser_name="..."``.

Which replies are worth comparing is the caller's choice: the peer suite
(``tests/vllm/test_vllm_cases.py``) keeps the texts holding a marker of the
format that answers for the parser. Not handled: replies a test generates
at run time, token-id inputs, and tests of request handling.
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path

FOLDERS = ("tests/tool_parsers", "tests/tool_use")


@dataclass(frozen=True)
class Case:
    """One reply text from vLLM's tests, with the parser names its file exercises."""

    file: str
    parsers: tuple[str, ...]
    text: str
    docstring: bool = False  # the string documents a module, class or function: prose, never a reply

    @property
    def key(self) -> str:
        """A name for the case that does not copy it: the file and a hash of the text."""
        return f"{self.file}:{hashlib.sha1(self.text.encode()).hexdigest()[:12]}"


def registry(root: Path) -> dict[str, tuple[str, str]]:
    """The release's tool-parser names -> (module, class), read from vllm/tool_parsers/__init__.py."""
    source = (root / "vllm" / "tool_parsers" / "__init__.py").read_text()
    for node in ast.parse(source).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and getattr(node.targets[0], "id", None) == "_TOOL_PARSERS_TO_REGISTER"):
            return ast.literal_eval(node.value)
    raise ValueError(f"{root}: vllm/tool_parsers/__init__.py has no _TOOL_PARSERS_TO_REGISTER dict")


class _Strings:
    """Folds the string expressions of one file whose parts are all known; None for the rest."""

    def __init__(self, tree: ast.Module) -> None:
        self.names: dict[str, str] = {}
        # Module- and class-level constants, in order, so later ones may use earlier ones.
        bodies = [tree.body] + [node.body for node in tree.body if isinstance(node, ast.ClassDef)]
        for body in bodies:
            for node in body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    value = self.fold(node.value)
                    if value is not None:
                        self.names[node.targets[0].id] = value

    def fold(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.fold(node.left), self.fold(node.right)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.FormattedValue):
                    if value.conversion != -1 or value.format_spec is not None:
                        return None
                    value = value.value
                part = self.fold(value)
                if part is None:
                    return None
                parts.append(part)
            return "".join(parts)
        return None


def _parsers_of(tree: ast.Module, modules: dict[str, list[str]], classes: dict[str, list[str]],
                known: set[str]) -> tuple[str, ...]:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("vllm.tool_parsers."):
            found += modules.get(node.module.rsplit(".", 1)[1], [])
            for alias in node.names:
                found += classes.get(alias.name, [])
        elif isinstance(node, ast.Call):
            spelled = [arg for arg in node.args if isinstance(arg, ast.Constant)]
            spelled += [kw.value for kw in node.keywords if kw.arg in ("parser_name", "name")
                        and isinstance(kw.value, ast.Constant)]
            callee = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if callee in ("get_tool_parser", "ToolParserTestConfig") or any(kw.arg == "parser_name"
                                                                          for kw in node.keywords):
                found += [arg.value for arg in spelled if arg.value in known]
    return tuple(dict.fromkeys(found))


def harvest(root: Path) -> list[Case]:
    """Every distinct string reply of vLLM's tool-parser tests under root (see the module docstring)."""
    names = registry(root)
    modules: dict[str, list[str]] = {}
    classes: dict[str, list[str]] = {}
    for name, (module, cls) in names.items():
        modules.setdefault(module, []).append(name)
        classes.setdefault(cls, []).append(name)
    cases: dict[tuple[str, str], Case] = {}
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("test_*.py")):
            tree = ast.parse(path.read_text())
            parsers = _parsers_of(tree, modules, classes, set(names))
            if not parsers:
                continue
            strings = _Strings(tree)
            file = str(path.relative_to(root))
            docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                          if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                          and node.body and isinstance(node.body[0], ast.Expr)
                          and isinstance(node.body[0].value, ast.Constant)}
            for node in ast.walk(tree):
                if isinstance(node, (ast.Constant, ast.JoinedStr, ast.BinOp)):
                    text = strings.fold(node)
                    if text and (file, text) not in cases:
                        cases[(file, text)] = Case(file, parsers, text, id(node) in docstrings)
    return list(cases.values())
