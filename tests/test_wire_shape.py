"""Each format's wire shape is declared once (``WIRE``) and its parts come from that declaration.

- For every declared format: ``markers``, ``closers``, ``reasoning`` and the
  stream's holdback are the declaration's, the openers' literals are the
  declared markers, and ``write_call`` is the declaration's writer unless
  the declaration names a hand-written part (then the reason is given).
- ``write_call`` of every sample's calls reads back to the same call through
  the format's own reader (compared with the tests' own oracle).
- The formats whose openers and reader are derived: generated calls written
  by the declaration read back exactly, and a random chunking through
  ``ToolCallStream`` gives what the whole text gives.
- The language refuses what it cannot say: impossible declarations, a
  derivation it does not know, a hand-written writer beside a declared one,
  openers that disagree with the declared markers.
"""

from __future__ import annotations

import ast
import importlib

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from oracle import same_json
from templatestudio.calls import ParsedToolCall
from templatestudio.engine import read_events
from templatestudio.events import ToolCallEvent, merge_deltas
from templatestudio.formats import FORMATS
from templatestudio.stream import ToolCallStream
from templatestudio.wire.base import Format
from templatestudio.wire.shape import (
    Call, HandWritten, Invoke, JsonArguments, JsonList, JsonObject, KeyValuePairs, NameBetween, NameKey, Reasoning,
    Section, ShapeError, WireShape, XmlParameters,
)

# Formats allowed to hold no declaration yet: none. A new format declares its shape.
PENDING: set[str] = set()
DECLARED = [name for name, fmt in FORMATS.items() if fmt.wire is not None]
# Openers and reader derived from the declaration (no hand-written reading at all).
DERIVED = ["hermes", "internlm2", "command-r7b", "functionary-v3.1", "granite", "firefunction-v2", "functiongemma",
           "granite-20b-fc"]


def module_of(fmt: Format):
    return next(module for module in map(importlib.import_module, _module_names()) if module.FORMAT is fmt)


def _module_names() -> list[str]:
    import templatestudio.formats as formats

    return [module.__name__ for module in formats._MODULES]


def test_every_format_declares_its_shape_but_the_pending_ones():
    undeclared = {name for name, fmt in FORMATS.items() if fmt.wire is None}
    assert undeclared <= PENDING, f"formats without a WIRE declaration: {sorted(undeclared - PENDING)}"
    assert set(DERIVED) <= set(DECLARED)


@pytest.mark.parametrize("name", DECLARED)
def test_markers_closers_and_reasoning_are_the_declarations(name):
    fmt = FORMATS[name]
    wire = fmt.wire
    assert fmt.markers == wire.markers
    assert tuple(dict.fromkeys(opener.literal for opener in fmt.openers)) == wire.markers
    assert fmt.closers == wire.closers and fmt.closers
    assert fmt.reasoning == (None if wire.reasoning is None else (wire.reasoning.open, wire.reasoning.close))
    pairs = () if wire.reasoning is None else ((wire.reasoning.open, wire.reasoning.close), *wire.reasoning.also)
    assert fmt.reasoning_pairs == pairs and (not pairs or pairs[0] == fmt.reasoning)
    assert set(fmt.holdback) == set(wire.markers) | {item for pair in pairs for item in pair}


@pytest.mark.parametrize("name", DECLARED)
def test_the_module_shows_its_declaration_first(name):
    """WIRE is the module's first statement after its docstring and imports, and FORMAT carries it."""
    module = module_of(FORMATS[name])
    assert module.FORMAT.wire is module.WIRE
    source = open(module.__file__, encoding="utf-8").read()
    body = [node for node in ast.parse(source).body
            if not isinstance(node, (ast.Import, ast.ImportFrom))
            and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]
    first = body[0]
    assert isinstance(first, ast.Assign) and [target.id for target in first.targets] == ["WIRE"], name


@pytest.mark.parametrize("name", DECLARED)
def test_write_call_is_the_declarations_unless_it_names_a_hand_written_part(name):
    fmt = FORMATS[name]
    call = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
    if fmt.wire.hand_written:
        assert all(why.strip() for why in fmt.wire.hand_written)
        with pytest.raises(ShapeError, match="hand-written"):
            fmt.wire.write_call(call)
    else:
        assert fmt.write_call(call) == fmt.wire.write_call(call)


def _read_calls(text: str, fmt: Format) -> list[ParsedToolCall]:
    return [event.call for event in read_events(text, fmt) if isinstance(event, ToolCallEvent)]


def _as_text(value: object) -> bool:
    return isinstance(value, str)


SAMPLE_CALLS = [(name, index, call) for name in DECLARED
                for index, sample in enumerate(FORMATS[name].samples) for call in sample.calls]


@pytest.mark.parametrize(("name", "index", "call"), SAMPLE_CALLS,
                         ids=[f"{name}-{index}-{call.name}" for name, index, call in SAMPLE_CALLS])
def test_written_sample_calls_read_back(name, index, call):
    fmt = FORMATS[name]
    if fmt.string_arguments and not all(map(_as_text, call.arguments.values())):
        pytest.skip("a typed value comes back as text from a string-valued wire (typed later against the schema)")
    (read,) = _read_calls(fmt.write_call(call), fmt)
    assert read.name == call.name
    assert same_json(read.arguments, call.arguments), (read.arguments, call.arguments)


# --- derived readers: generated calls --------------------------------------------------------------

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,12}", fullmatch=True)
# Bare-word keys often (the keyed-values grammar carries only those), any text too.
KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,5}", fullmatch=True) | st.text(max_size=6)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**15), 10**15) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=8,
)
CALLS = st.lists(st.builds(ParsedToolCall, NAMES, st.dictionaries(KEYS, VALUES, max_size=4)), min_size=1, max_size=3)


def _chunks(text: str, cuts: list[int]) -> list[str]:
    points = sorted({cut % (len(text) + 1) for cut in cuts} | {0, len(text)})
    return [text[start:end] for start, end in zip(points, points[1:])]


@pytest.mark.parametrize("name", DERIVED)
def test_derived_readers_read_what_the_declaration_writes(name):
    fmt = FORMATS[name]

    carried = []

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(calls=CALLS, cuts=st.lists(st.integers(0, 10**6), max_size=8))
    def round_trip(calls, cuts):
        calls = [call for call in calls if not fmt.limits_for(call.arguments)]
        carried.append(len(calls))
        calls = calls or [ParsedToolCall("a", {})]
        text = fmt.wire.write_calls(calls)
        whole = read_events(text, fmt)
        read = [event.call for event in whole if isinstance(event, ToolCallEvent)]
        assert [call.name for call in read] == [call.name for call in calls], text
        for got, wrote in zip(read, calls):
            assert same_json(got.arguments, wrote.arguments), (text, got.arguments)
        stream = ToolCallStream(fmt)
        streamed = [event for piece in _chunks(text, cuts) for event in stream.feed(piece)] + stream.close()
        assert merge_deltas(streamed) == whole

    round_trip()
    # Most generated calls are ones the wire carries: the property is not checked on the fallback alone.
    assert sum(1 for count in carried if count) >= 0.5 * len(carried), carried


@pytest.mark.parametrize("name", DERIVED)
def test_derived_formats_use_the_derived_openers_and_reader(name):
    fmt = FORMATS[name]
    assert fmt.read_region.__qualname__ == "region_reader.<locals>.read_region"
    derived = fmt.wire.derived_openers()
    assert [(o.literal, o.opening.regex, o.cut_after) for o in fmt.openers] == [
        (o.literal, o.opening.regex, o.cut_after) for o in derived]


# --- the language itself ---------------------------------------------------------------------------

HERMES_LIKE = WireShape(call=Call("<c>", "</c>", head="\n", tail="\n"), name=NameKey(), arguments=JsonArguments())


def test_the_writer_follows_the_declared_pieces_in_order():
    call = ParsedToolCall("f", {"x": 1, "s": "é"})
    assert HERMES_LIKE.write_call(call) == '<c>\n{"name": "f", "arguments": {"x": 1, "s": "é"}}\n</c>'
    assert HERMES_LIKE.write_calls([call, ParsedToolCall("g", {})]).count("<c>") == 2
    sectioned = WireShape(section=Section("<s>", "</s>"), call=Call("<c>", "</c>"),
                          name=NameBetween("", "|"), arguments=JsonObject(), separator=",")
    assert sectioned.write_calls([call, ParsedToolCall("g", {})]) == '<s><c>f|{"x": 1, "s": "é"}</c>,<c>g|{}</c></s>'
    assert sectioned.markers == ("<s>",) and sectioned.closers == ("</s>", "</c>")
    listed = WireShape(call=Call("<l>"), name=NameKey("tool"), arguments=JsonArguments(
        "args", written_extras=(("id", "0"),), listed=JsonList()))
    assert listed.write_call(call) == '<l>[{"id": "0", "tool": "f", "args": {"x": 1, "s": "é"}}]'
    assert listed.closers == ("]",)


def test_xml_parameters_and_key_value_pairs_spell_values_as_declared():
    arguments = {"a": "t", "n": [1, None]}
    qwen_like = XmlParameters("<parameter=", ">", "</parameter>", newline_inside=True, values="str")
    assert qwen_like.write(arguments) == "<parameter=a>\nt\n</parameter>\n<parameter=n>\n[1, None]\n</parameter>\n"
    typed = XmlParameters('<p name="', '">', "</p>", typed=('" s="1">', '" s="0">'))
    assert typed.write(arguments) == '<p name="a" s="1">t</p>\n<p name="n" s="0">[1, null]</p>\n'
    pairs = KeyValuePairs("<k>", "</k>", "<v>", "</v>", between="", after="")
    assert pairs.write(arguments) == "<k>a</k><v>t</v><k>n</k><v>[1, null]</v>"
    invoked = WireShape(section=Section("<b>", "</b>"), call=Call(), name=Invoke('<i n="', '">', "</i>"),
                        arguments=qwen_like, reasoning=Reasoning("<t>", "</t>"))
    assert invoked.markers == ("<b>",) and invoked.closers == ("</b>", "</i>")
    assert invoked.write_call(ParsedToolCall("f", {})) == '<b><i n="f"></i></b>'
    assert invoked.holdback == ("<b>", "<t>", "</t>")


def test_the_derived_reader_reads_and_refuses():
    fmt = Format.declared(HERMES_LIKE, name="test-hermes-like", description="", response_template=None,
                          no_response_template="test only", samples=(), near_misses=(), wire_limits=(),
                          corpus_labels=())
    assert _read_calls('<c>{"name": "f", "arguments": {"x": [1]}}</c>', fmt) == [ParsedToolCall("f", {"x": [1]})]
    for broken in ('<c>{"name": "f"}</c>', '<c>{"name": "f", "arguments": {}} x</c>', '<c>{"name": "f", "arguments": {}}'):
        with pytest.raises(ValueError):
            read_events(broken, fmt)


def test_what_the_language_cannot_say_is_refused():
    with pytest.raises(ShapeError):
        WireShape(call=Call("<c>"), name=NameBetween("", ">"), arguments=JsonArguments())  # a key without an object
    with pytest.raises(ShapeError):
        WireShape(call=Call(), name=NameKey(), arguments=JsonArguments())  # nothing opens a call
    hand = WireShape(call=Call("<c>", "</c>"), name=HandWritten("a header"), arguments=JsonObject())
    with pytest.raises(ShapeError, match="a header"):
        hand.derived_openers()
    with pytest.raises(ShapeError, match="a header"):
        hand.write_call(ParsedToolCall("f", {}))
    sectioned = WireShape(section=Section("<s>", "</s>"), call=Call("<c>", "</c>"), name=NameKey(),
                          arguments=JsonArguments())
    with pytest.raises(ShapeError):
        sectioned.derived_reader()


def test_format_declared_refuses_a_second_writer_and_disagreeing_openers():
    parts = dict(name="t", description="", response_template=None, no_response_template="test only", samples=(),
                 near_misses=(), wire_limits=(), corpus_labels=())
    with pytest.raises(ValueError, match="write_call"):
        Format.declared(HERMES_LIKE, write_call=lambda call: "", **parts)
    other = FORMATS["granite"].openers
    with pytest.raises(ValueError, match="declared markers"):
        Format.declared(HERMES_LIKE, openers=other, **parts)


def test_describe_names_the_hand_written_parts():
    text = FORMATS["harmony"].wire.describe()
    assert "hand-written: the recipient" in text and "<|call|>" in text
    assert FORMATS["hermes"].wire.describe().startswith("markers ['<tool_call>'], closers ['</tool_call>']")


# --- ids: written where the declaration puts one, read back -----------------------------------------

IDS = st.from_regex(r"[A-Za-z0-9]{1,12}", fullmatch=True)


def _id_place(wire) -> str | None:
    """Where the declaration writes a call's id: "always" (a CallId), "optional" (after the name or under a key)."""
    key = getattr(wire.arguments, "id_key", None)
    if wire.call_id is not None or key in dict(getattr(wire.arguments, "written_extras", ())):
        return "always"  # a CallId, or a placeholder id the writer writes when given none (Command R7B's "0")
    if getattr(wire.name, "id_open", "") or getattr(wire.arguments, "id_key", None):
        return "optional"
    return None


WITH_IDS = [name for name in DECLARED if FORMATS[name].wire.writes and _id_place(FORMATS[name].wire)]


@pytest.mark.parametrize("name", WITH_IDS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=CALLS, data=st.data())
def test_ids_written_where_the_declaration_puts_them_are_read_back(name, calls, data):
    fmt = FORMATS[name]
    assume(not any(fmt.limits_for(call.arguments) for call in calls))
    one = IDS if _id_place(fmt.wire) == "always" else st.none() | IDS
    ids = data.draw(st.lists(one, min_size=len(calls), max_size=len(calls)))
    text = fmt.wire.write_calls(calls, ids)
    read = [event for event in read_events(text, fmt) if isinstance(event, ToolCallEvent)]
    assert [(event.call.name, event.id) for event in read] == list(zip([call.name for call in calls], ids)), text


def test_the_optional_id_after_the_name_is_declared_where_a_module_reads_one():
    # Mistral's module reads NAME[CALL_ID]ID[ARGS]; its declaration says so (NameBetween.id_open).
    assert "mistral" in WITH_IDS and FORMATS["mistral"].wire.name.id_open == "[CALL_ID]"
