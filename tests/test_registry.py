"""The format registry is complete, its samples are true, and the layers point down.

Everything here is derived from ``FORMATS``: adding a format adds its cases
to every test below, and a format that lacks a part fails the first test.
The last tests hold the package to the issue-10 architecture: no module
outside ``templatestudio/formats/`` knows a marker literal or keeps a table
keyed by format names, and the import graph has no cycle.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.engine import read_events
from templatestudio.events import ReasoningDelta, TextDelta, ToolCallEvent, merge_deltas
from templatestudio.formats import FORMATS
from templatestudio.wire.base import Extent, Format, NearMiss, Opener, Sample, WireLimit
from templatestudio.leaks import find_call_markers
from templatestudio.resumable_match import FAILED, Pattern
from templatestudio.stream import ToolCallStream
from oracle import same_json  # the tests' own comparison, not the package's
import import_graph

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "templatestudio"
NAMES = list(FORMATS)
SAMPLES = [(name, index) for name, fmt in FORMATS.items() for index in range(len(fmt.samples))]
NEAR_MISSES = [(name, index) for name, fmt in FORMATS.items() for index in range(len(fmt.near_misses))]


def stream_events(fmt: Format, pieces: list[str]) -> list:
    stream = ToolCallStream(fmt)
    events = [event for piece in pieces for event in stream.feed(piece)]
    return merge_deltas(events + stream.close())


def calls_and_ids(events: list) -> tuple[list[ParsedToolCall], list[str | None]]:
    calls = [event for event in events if isinstance(event, ToolCallEvent)]
    return [event.call for event in calls], [event.id for event in calls]


def unconditional(opener: Opener) -> bool:
    """Whether the opener's literal alone opens a call (a special token: prose cannot name it)."""
    return opener.automaton.scan().feed(opener.literal)[0] != "more"


# --- completeness ---------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_every_format_has_every_part(name):
    fmt = FORMATS[name]
    missing = []
    if not (isinstance(fmt, Format) and fmt.name == name):
        missing.append("a Format registered under its own name")
    if not (fmt.description and "\n" not in fmt.description):
        missing.append("a one-line description")
    if not fmt.openers or not all(isinstance(o, Opener) and o.literal and isinstance(o.opening, Pattern) for o in fmt.openers):
        missing.append("openers (literal + opening pattern)")
    for opener in fmt.openers:
        if not isinstance(opener.extent(), Extent):
            missing.append(f"an Extent factory for {opener.literal!r}")
        if opener.automaton.scan().feed(opener.literal)[0] == FAILED:
            missing.append(f"an opening pattern that starts with its literal {opener.literal!r}")
    if not callable(fmt.read_region):
        missing.append("read_region")
    if not callable(fmt.write_call):
        missing.append("write_call")
    if not fmt.closers or not all(isinstance(c, str) and c for c in fmt.closers):
        missing.append("closers")
    if not (isinstance(fmt.response_template, dict) or (fmt.response_template is None and fmt.no_response_template.strip())):
        missing.append("a response_template or a non-empty no_response_template saying why not")
    if fmt.reasoning is not None and not (len(fmt.reasoning) == 2 and all(fmt.reasoning)):
        missing.append("reasoning as (opener, closer)")
    if not any(isinstance(s, Sample) and s.calls for s in fmt.samples):
        missing.append("samples with calls")
    for sample in fmt.samples:
        if sample.ids and len(sample.ids) != len(sample.calls):
            missing.append(f"one id per call in sample {sample.text[:30]!r}")
    if not any(isinstance(n, NearMiss) and n.raises for n in fmt.near_misses):
        missing.append("near misses that raise")
    if not all(n.why for n in fmt.near_misses):
        missing.append("a reason for every near miss")
    # A format whose every literal is a special token cannot be named in
    # prose; any other format must show what prose naming it looks like.
    if not all(unconditional(o) for o in fmt.openers) and not any(not n.raises for n in fmt.near_misses):
        missing.append("near misses that come back as text")
    if not all(isinstance(limit, WireLimit) and limit.description and limit.where in ("wire", "response template")
               for limit in fmt.wire_limits):
        missing.append("wire limits with a description and where in ('wire', 'response template')")
    # A format read from vLLM's documentation of a parser may have no published
    # template in the corpus; it names the vLLM parsers it answers for instead.
    if not all(fmt.corpus_labels) or not (fmt.corpus_labels or fmt.vllm_parser):
        missing.append("corpus_labels (or, for a wire no corpus template writes, its vllm_parser names)")
    assert missing == [], f"{name} lacks: " + "; ".join(missing)


def test_markers_are_the_openers_literals_and_formats_compare_by_identity():
    for fmt in FORMATS.values():
        assert fmt.markers == tuple(dict.fromkeys(o.literal for o in fmt.openers))
        assert fmt == fmt and all(fmt != other for other in FORMATS.values() if other is not fmt)
    labels = [label for fmt in FORMATS.values() for label in fmt.corpus_labels]
    assert len(labels) == len(set(labels)), "two formats claim one corpus label"


# --- samples and near misses say what the readers do ------------------------------------


@pytest.mark.parametrize(("name", "index"), SAMPLES, ids=[f"{n}-{i}" for n, i in SAMPLES])
def test_each_sample_reads_back_to_its_calls_and_ids(name, index):
    fmt = FORMATS[name]
    sample = fmt.samples[index]
    events = read_events(sample.text, fmt)
    calls, ids = calls_and_ids(events)
    assert len(calls) == len(sample.calls)
    assert all(a.name == b.name and same_json(a.arguments, b.arguments) for a, b in zip(calls, sample.calls)), calls
    assert ids == list(sample.ids or (None,) * len(sample.calls))
    assert stream_events(fmt, list(sample.text)) == events
    shown = "".join(event.text for event in events if isinstance(event, TextDelta))
    assert find_call_markers(shown) == [], f"a marker reached the user: {shown!r}"


@pytest.mark.parametrize(("name", "index"), NEAR_MISSES, ids=[f"{n}-{i}" for n, i in NEAR_MISSES])
def test_near_misses_raise_or_are_text(name, index):
    fmt = FORMATS[name]
    miss = fmt.near_misses[index]
    if miss.raises:
        with pytest.raises(UnparsedToolCall) as whole:
            read_events(miss.text, fmt)
        with pytest.raises(UnparsedToolCall) as streamed:
            stream_events(fmt, list(miss.text))
        assert str(streamed.value) == str(whole.value)
    else:
        assert read_events(miss.text, fmt) == [TextDelta(miss.text)], miss.why
        assert stream_events(fmt, list(miss.text)) == [TextDelta(miss.text)]
        assert find_call_markers(miss.text) == [], miss.why


# --- write_call reads back -----------------------------------------------------------------

IDENTIFIER = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True)


def json_values(keys):
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-(10**18), 10**18),
        st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20),
    )
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
                        max_leaves=8)


def calls_for(fmt: Format, keys=IDENTIFIER):
    values = st.text(max_size=30) if fmt.string_arguments else json_values(keys)
    return st.builds(ParsedToolCall, IDENTIFIER, st.dictionaries(keys, values, max_size=5))


def round_trip_outcome(fmt: Format, call: ParsedToolCall) -> str:
    """'skipped' (a declared wire limit) or 'checked'; an assertion error when the call is not read back."""
    if fmt.limits_for(call.arguments):
        return "skipped"
    text = fmt.write_call(call)
    events = read_events(text, fmt)
    calls = [event.call for event in events if isinstance(event, ToolCallEvent)]
    assert len(calls) == 1, (text, events)
    (read,) = calls
    assert read.name == call.name
    assert same_json(read.arguments, call.arguments), (text, read.arguments)
    assert [e for e in events if isinstance(e, (TextDelta, ReasoningDelta))] == []
    return "checked"


@pytest.mark.parametrize("name", NAMES)
def test_write_call_reads_back_for_generated_calls(name):
    """Values each wire carries: at least 90% of the generated calls are checked, the rest declared."""
    fmt = FORMATS[name]
    counts: Counter = Counter()

    @settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
    @given(call=calls_for(fmt))
    def round_trip(call):
        counts[round_trip_outcome(fmt, call)] += 1

    round_trip()
    total = counts["checked"] + counts["skipped"]
    print(f"{name}: {counts['checked']} checked, {counts['skipped']} skipped by wire limits of {total}")
    assert counts["checked"] >= 0.9 * total, counts


@pytest.mark.parametrize("name", NAMES)
def test_keys_of_any_text_read_back_or_are_declared_limits(name):
    """A key the wire cannot carry is declared by a wire limit; none is lost or changed silently."""
    fmt = FORMATS[name]

    @settings(max_examples=50, suppress_health_check=[HealthCheck.too_slow])
    @given(call=calls_for(fmt, keys=st.text(max_size=8)))
    def round_trip(call):
        round_trip_outcome(fmt, call)

    round_trip()


@pytest.mark.parametrize("name", NAMES)
def test_arguments_that_look_like_a_schema_read_back_or_are_declared(name):
    # A call whose arguments happen to be {"type": "object", "properties":
    # ...} must not be mistaken for a tool's documentation and dropped.
    fmt = FORMATS[name]
    arguments = {"type": "object", "properties": {"x": 1}} if not fmt.string_arguments else {"type": "object", "properties": "x"}
    if not fmt.limits_for(arguments):
        round_trip_outcome(fmt, ParsedToolCall("define", arguments))


# --- no per-format knowledge outside formats/ -------------------------------------------

# The course module is the tutorial's own code (notebooks 07-11 build it):
# its Hermes and fenced readers are the lesson, and it sits below formats/
# in the layers, so it cannot read them from the registry.
COURSE_MODULE = PACKAGE / "tools.py"


def _docstring_nodes(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def _marker_literals() -> set[str]:
    """Every literal a format owns that names it: openers, closers, reasoning delimiters.

    Bare punctuation (``{``, ``]``, ```` ``` ````) is every language's, so
    only literals with a letter in them count.
    """
    literals = set()
    for fmt in FORMATS.values():
        literals |= {o.literal for o in fmt.openers} | set(fmt.closers) | set(fmt.reasoning or ())
    return {literal for literal in literals if any(char.isalpha() for char in literal)}


def _code_modules() -> list[Path]:
    inside = [path for path in PACKAGE.rglob("*.py") if "formats" not in path.relative_to(PACKAGE).parts]
    return sorted(inside + list((ROOT / "bench").rglob("*.py")))


def test_no_module_outside_formats_names_a_marker_literal():
    literals = _marker_literals()
    assert {"<tool_call>", "[TOOL_CALLS]", "<|tool_call>"} <= literals
    found = {}
    for path in _code_modules():
        if path == COURSE_MODULE:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = _docstring_nodes(tree)
        hits = sorted({
            literal
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            for literal in literals
            if literal in node.value
        })
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert found == {}, f"marker literals outside formats/: {found}"


def _per_format_tables(path: Path) -> list[int]:
    """Lines of dict displays keyed by two or more registered format names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            if len(keys & set(FORMATS)) >= 2:
                lines.append(node.lineno)
    return lines


def test_no_table_keyed_by_format_names_outside_formats():
    candidates = _code_modules() + sorted(ROOT.glob("*.py")) + sorted((ROOT / "tests").glob("*.py"))
    found = {str(path.relative_to(ROOT)): lines for path in candidates if (lines := _per_format_tables(path))}
    assert found == {}, f"per-format tables (file: lines): {found}"


# --- the import graph -------------------------------------------------------------------------


# The graph is read by tests/import_graph.py, shared with test_layers.py (the README's diagram).


def test_the_cycle_finder_finds_a_cycle():
    assert import_graph.cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_graph.cycles({"a": {"b"}, "b": set()}) == []


def test_the_import_graph_sees_imports_inside_functions():
    graph = import_graph.graph()
    assert "templatestudio.wire.base" in graph["templatestudio.engine"]
    assert "templatestudio.formats.hermes" in graph["templatestudio.formats"]


def test_the_package_imports_have_no_cycle():
    assert import_graph.cycles(import_graph.graph()) == []


def test_the_course_module_imports_only_from_below_it():
    modules = import_graph.modules()
    inside, outside = import_graph.imports("templatestudio.tools", modules["templatestudio.tools"], modules)
    assert inside <= {"templatestudio.calls", "templatestudio.messages", "templatestudio.render"}, inside
    assert outside <= set(sys.stdlib_module_names) | {"__future__", "transformers"}, outside
