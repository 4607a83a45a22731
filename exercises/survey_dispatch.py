"""Checkers for the exercises of notebooks 15 (the survey), 16 (typed arguments and dispatch) and 24 (conformance).

Each ``check_…`` function builds its cases and calls ``exercises.checking.check``,
which prints the verdict; nothing is returned and nothing raises.
The cases need neither the template corpus nor a model: the survey's rows are
stand-ins with the two attributes the exercise reads, and the conformance
fixtures come from the ``canitoolcall`` wheel.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from exercises.checking import Case, check

__all__ = [
    "check_count_cell",
    "check_what_is_lost",
    "check_type_arguments",
    "check_run_call",
    "check_fixture_verdict",
    "check_families_short",
]


# Notebook 15 ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """A scan row as the exercise sees it: the corpus label and the probe's answer."""

    name: str
    label: str | None
    found: str


_ROWS = (
    Row("a", "hermes", "hermes"),
    Row("b", "hermes", "hermes"),
    Row("c", "other:glm-xml", "glm-xml"),
    Row("d", "other:deepseek#v3.1", "deepseek-v3.1"),
    Row("e", "other:deepseek#v3/r1", "deepseek-v3"),
    Row("f", "pythonic", "none"),
    Row("g", "none", "none"),
    Row("h", None, "hermes"),  # unlabelled: in no cell of the label × found map
    Row("i", "error", "error"),
    Row("j", "pythonic", "pythonic"),
)


class _Rows(list):
    """Scan rows with a short repr (the checker prints its inputs)."""

    def __repr__(self) -> str:
        return f"<{len(self)} scan rows>"


def check_count_cell(count_cell) -> None:
    """count_cell(rows, label, found) -> how many rows have that label (the part before ':') and that answer."""
    rows = _Rows(_ROWS)
    cases = [
        Case("a format label, found as itself", (rows, "hermes", "hermes"), 2),
        Case("'other:…' labels count under 'other'", (rows, "other", "glm-xml"), 1),
        Case("two 'other' rows, different answers", (rows, "other", "deepseek-v3"), 1),
        Case("a label read as no format", (rows, "pythonic", "none"), 1),
        Case("a cell nothing lands in", (rows, "hermes", "none"), 0),
        Case("an unlabelled row is in no cell", (_Rows(_ROWS[7:8]), "hermes", "hermes"), 0),
        Case("no rows at all", (_Rows(), "none", "none"), 0),
        Case("the 'error' cell", (rows, "error", "error"), 1),
    ]
    check("Exercise 15.1 (count a label × found cell)", count_cell, cases)


def _probe(renders_tools: bool, call_survives: bool, error: str | None = None) -> SimpleNamespace:
    return SimpleNamespace(renders_tools=renders_tools, call_survives=call_survives, error=error)


def check_what_is_lost(what_is_lost) -> None:
    """what_is_lost(probe) -> "cannot render", "tools and call", "tools", "call" or "nothing"."""
    cases = [
        Case("keeps both", (_probe(True, True),), "nothing"),
        Case("ignores tools=", (_probe(False, True),), "tools"),
        Case("drops the call from history", (_probe(True, False),), "call"),
        Case("drops both", (_probe(False, False),), "tools and call"),
        Case("the template raised", (_probe(False, False, "UndefinedError: 'tool' is undefined"),), "cannot render"),
        Case("an error wins over the flags", (_probe(True, True, "SecurityError: list.append"),), "cannot render"),
    ]
    check("Exercise 15.2 (what a template loses)", what_is_lost, cases)


# Notebook 16 ------------------------------------------------------------------------------------

_NOTES = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer"},
        "ratio": {"type": "number"},
        "exact": {"type": "boolean"},
    },
    "required": ["query", "limit"],
}


def _tool_error(*words: str):
    """A comparison for an error answer: a str starting 'error:' that names every word."""

    def same(got: Any, expected: Any) -> None:
        return isinstance(got, str) and got.startswith("error:") and all(word in got for word in words)

    return same


def check_type_arguments(type_arguments) -> None:
    """type_arguments(tool_name, arguments, parameters) -> the typed dict, or an 'error: …' string for the model."""
    cases = [
        Case("a quoted integer", ("search_notes", {"query": "alex", "limit": "10"}, _NOTES),
             {"query": "alex", "limit": 10}),
        Case("a string parameter stays a string", ("search_notes", {"query": "10", "limit": 3}, _NOTES),
             {"query": "10", "limit": 3}),
        Case("a number", ("search_notes", {"query": "a", "limit": 1, "ratio": "2.5"}, _NOTES),
             {"query": "a", "limit": 1, "ratio": 2.5}),
        Case("booleans", ("search_notes", {"query": "a", "limit": "1", "exact": "false"}, _NOTES),
             {"query": "a", "limit": 1, "exact": False}),
        Case("true", ("search_notes", {"query": "a", "limit": "1", "exact": "true"}, _NOTES),
             {"query": "a", "limit": 1, "exact": True}),
        Case("values already typed are kept", ("search_notes", {"query": "a", "limit": 4, "exact": True}, _NOTES),
             {"query": "a", "limit": 4, "exact": True}),
        Case("'ten' is no integer: an error naming tool, parameter, type and value",
             ("search_notes", {"query": "alex", "limit": "ten"}, _NOTES),
             "error: search_notes: parameter 'limit' must be integer, got 'ten'",
             same=_tool_error("search_notes", "limit", "integer", "ten")),
        Case("'maybe' is no boolean", ("search_notes", {"query": "a", "limit": 1, "exact": "maybe"}, _NOTES),
             "error: search_notes: parameter 'exact' must be boolean, got 'maybe'",
             same=_tool_error("search_notes", "exact", "boolean", "maybe")),
    ]
    check("Exercise 16.1 (type the arguments, or say why not)", type_arguments, cases)


def add(a: int, b: int) -> int:
    return a + b


def lookup(city: str) -> str:
    raise LookupError(f"no station near {city}")


def forecast(city: str) -> dict:
    return {"city": city, "sky": "clear"}


def echo(text: str) -> str:
    return text


class _Tools(dict):
    """Tools by name, with a repr free of memory addresses."""

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{name!r}: <function {name}>" for name in self) + "}"


_TOOLS = _Tools(add=add, forecast=forecast, lookup=lookup, echo=echo)


def check_run_call(run_call) -> None:
    """run_call(name, arguments, tools) -> the text the model reads as the tool's result."""
    tools = _TOOLS
    cases = [
        Case("a result that is a number", ("add", {"a": 2, "b": 3}, tools), "5"),
        Case("a dict result, as JSON", ("forecast", {"city": "Oslo"}, tools), '{"city": "Oslo", "sky": "clear"}'),
        Case("a str result, as it is", ("echo", {"text": "hi"}, tools), "hi"),
        Case("an unknown tool, with the tools there are", ("weather", {"city": "Oslo"}, tools),
             "error: unknown tool 'weather'; available: add, echo, forecast, lookup"),
        Case("the tool raises", ("lookup", {"city": "Oslo"}, tools),
             "error: lookup raised LookupError: no station near Oslo"),
        Case("wrong keywords make the call raise", ("add", {"a": 1}, tools),
             "error: add raised TypeError: add() missing 1 required positional argument: 'b'"),
    ]
    check("Exercise 16.2 (run a call, or tell the model why not)", run_call, cases)


# Notebook 24 ------------------------------------------------------------------------------------


class _Fixture:
    """A suite fixture with a short repr (the checker prints its inputs)."""

    def __init__(self, fixture):
        self._fixture = fixture

    def __getattr__(self, name):
        return getattr(self._fixture, name)

    def __repr__(self) -> str:
        return f"<fixture {self._fixture.id}>"


# (fixture id, the format that reads it, the verdict) — checked against the suite's own run.
_VERDICTS = (
    ("llama/l3-single-call", "llama3-json", "pass"),
    ("llama/l3-json-answer-not-a-call", "llama3-json", "pass"),
    ("llama/l3-sglang-text-before-python-tag", "llama3-json", "pass"),
    ("kimi/k2i-vllm-three-tool-calls", "kimi-k2", "pass"),
    ("gemma4/multi-turn-second-call", "gemma4", "pass"),
    ("glm/glm45-ollama-content-after-call", "glm-xml", "pass"),
    ("kimi/k2i-vllm-noise-between-markers", "kimi-k2", "fail"),
    ("llama/l4-meta-pythonic-parallel", "llama3-json", "fail"),
)


def check_fixture_verdict(verdict) -> None:
    """verdict(fixture, format_name) -> "pass" or "fail", judged by calls and content as the exercise states."""
    from canitoolcall.fixtures import load_fixtures

    by_id = {fixture.id: fixture for fixture in load_fixtures()}
    cases = [Case(fixture_id, (_Fixture(by_id[fixture_id]), fmt), expected)
             for fixture_id, fmt, expected in _VERDICTS]
    check("Exercise 24.1 (judge a fixture)", verdict, cases)


def check_families_short(families_short) -> None:
    """families_short(summary) -> [(family, passed, total)] for each family short of its total.

    Ordered by how many fixtures the family does not pass, most first; ties by family name.
    """

    def summary(**families):
        return {"by_family": {name: dict(zip(("pass", "soft_pass", "fail", "error", "unsupported"), counts))
                              for name, counts in families.items()}}

    cases = [
        Case("all pass", (summary(glm=(51, 0, 0, 0, 0)),), []),
        Case("one family short", (summary(glm=(51, 0, 0, 0, 0), kimi=(48, 0, 1, 0, 0)),), [("kimi", 48, 49)]),
        Case("a soft pass is not a pass", (summary(gemma4=(45, 1, 2, 0, 0)),), [("gemma4", 45, 48)]),
        Case("unsupported counts in the total", (summary(gpt=(0, 0, 0, 0, 51), kimi=(48, 0, 1, 0, 0)),),
             [("gpt", 0, 51), ("kimi", 48, 49)]),
        Case("worst first, ties by name", (summary(b=(8, 0, 2, 0, 0), a=(8, 0, 0, 2, 0), c=(9, 0, 1, 0, 0)),),
             [("a", 8, 10), ("b", 8, 10), ("c", 9, 10)]),
    ]
    check("Exercise 24.2 (the families that fall short)", families_short, cases)
