"""Values a format writes as text, typed by the request's tool schemas (issue 22).

The formats whose declared wire writes values as bare text (Qwen3-Coder's
XML, GLM's arg_key/arg_value, Seed-OSS, MiniMax) are read back through
``read_tool_calls(..., tools=)`` and ``ToolCallStream(..., tools=)``:

- generated values of every JSON type, written by the format's own
  ``write_call`` as the text a model writes, come back typed exactly (by
  ``tests/oracle.py``: ``1`` is not ``1.0``, ``true`` is not ``1``), under
  generated schemas (``type``, type lists, ``anyOf``, ``oneOf``,
  ``nullable``);
- a ``string`` parameter keeps its text exactly, whatever it spells;
- a text that does not spell its declared type stays the text as written,
  and a text that does is read as exactly what it spells (never invented);
- no tools, an unknown tool or key: the calls as read;
- formats whose values are JSON are never retyped;
- a stream in random chunks gives the whole read's events.
"""

from __future__ import annotations

import json
import random
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transformers.utils.chat_parsing import parse_response

from templatestudio import FORMATS, ToolCallStream, read_tool_calls
from templatestudio.calls import ParsedToolCall
from templatestudio.corpus import corpus_dir
from templatestudio.events import CutToolCall, ReasoningDelta, TextDelta, ToolCallEvent, merge_deltas
from templatestudio.integrations.served import ReplyStream, read_reply
from templatestudio.typed_arguments import ArgumentTypes, argument_types, tool_parameters

from oracle import same_calls, same_json, tagged

TEXT_VALUED = [name for name, fmt in FORMATS.items() if fmt.values_are_text]
JSON_VALUED = [name for name, fmt in FORMATS.items() if not fmt.values_are_text]
JSON_SPACE = " \t\r\n"
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def tool(name: str, properties: dict) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": properties}}}


def written(value: object) -> str:
    """A value as the text a text-valued wire carries: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def read_calls(fmt, text: str, tools=None) -> list[ParsedToolCall]:
    return read_tool_calls(text, fmt, tools=tools).calls


# --- which formats ------------------------------------------------------------------------------


def test_the_text_valued_formats_are_derived_from_the_declared_wire():
    # The wires that write every value as bare text (issue 23 added dots, the HY and K2 Horizon
    # XML pairs, MiniCPM5, MiniMax M3, Muse's atem parameters and Step 3's steptml).
    assert sorted(TEXT_VALUED) == ["dots", "glm-xml", "hy-v3", "hy-v4", "k2-horizon", "minicpm5", "minimax-m3",
                                   "minimax-xml", "muse-atem", "qwen-xml", "seed-oss", "step3"]
    for fmt in FORMATS.values():
        # The derived property and the format's own flag say the same: one cannot drift from the other.
        assert fmt.values_are_text == fmt.string_arguments == fmt.wire.values_are_text, fmt.name


# --- generated values read back typed -------------------------------------------------------------

json_leaves = st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20),
                        st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
json_trees = st.recursive(json_leaves, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6)
# A float the way a model writes one: with a point. (A whole number written without one, "1e20",
# reads as an integer: coerce's rule, pinned in test_the_fixture_spellings_read_as_vllm_reads_them.)
pointed_floats = st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: "." in json.dumps(x))

VALUES = {
    "integer": st.integers(-(10**40), 10**40),
    "number": st.one_of(st.integers(-(10**40), 10**40), pointed_floats),
    "boolean": st.booleans(),
    "null": st.none(),
    "array": st.lists(json_trees, max_size=4),
    "object": st.dictionaries(st.text(max_size=6), json_trees, max_size=4),
}


def schemas_for(kind: str):
    """Schemas under which a value of kind, written as JSON text, reads back as exactly that value."""
    plain = [{"type": kind}, {"type": kind, "description": "d"}]
    if kind == "null":
        return st.sampled_from([*plain, {"type": ["null"]}, {"anyOf": [{"type": "null"}]}])
    return st.sampled_from([
        *plain,
        {"type": [kind, "null"]},
        {"type": ["null", kind]},
        {"type": ["string", kind]},  # string never casts, so it never hides the type after it
        {"anyOf": [{"type": kind}, {"type": "null"}]},
        {"oneOf": [{"type": "string"}, {"type": kind}]},
        {"anyOf": [{"anyOf": [{"type": kind}]}, {"type": "null"}]},
        {"type": kind, "nullable": True},
    ])


@st.composite
def typed_parameters(draw):
    """(typed arguments, their schema's properties): each key a kind, a value of it, a schema admitting it."""
    keys = draw(st.lists(st.sampled_from(["a", "b", "city", "n", "x_1", "flag"]), unique=True, min_size=1,
                         max_size=5))
    arguments, properties = {}, {}
    for key in keys:
        kind = draw(st.sampled_from([*VALUES, "string"]))
        if kind == "string":
            arguments[key] = draw(st.text(max_size=12))
            properties[key] = {"type": "string"}
        else:
            arguments[key] = draw(VALUES[kind])
            properties[key] = draw(schemas_for(kind))
    return arguments, properties


@pytest.mark.parametrize("name", TEXT_VALUED)
@SETTINGS
@given(case=typed_parameters())
def test_values_written_as_text_read_back_typed_exactly(name, case):
    fmt = FORMATS[name]
    typed, properties = case
    as_text = {key: written(value) for key, value in typed.items()}
    if fmt.limits_for(as_text):
        return  # a text the wire cannot carry (a closing tag inside a value)
    text = "Let me check.\n" + fmt.write_call(ParsedToolCall("lookup", as_text))
    tools = [tool("lookup", properties)]
    assert same_calls(read_calls(fmt, text), [ParsedToolCall("lookup", as_text)]), text  # as read: text
    reply = read_tool_calls(text, fmt, tools=tools)
    assert same_calls(reply.calls, [ParsedToolCall("lookup", typed)]), (text, reply.calls)
    (event,) = [event for event in reply.events if isinstance(event, ToolCallEvent)]
    assert same_json(event.call.arguments, typed)  # the events carry the typed call too


# --- a string keeps its text; a mismatch stays as written; nothing invented -------------------------

LOOKALIKES = ["007", "true", "false", "True", "null", "None", "1", "0", "1.0", "1e3", "-0", "[1, 2]", "{}",
              '{"a": 1}', " 7 ", "  ", "", "\t", "NaN", "3.0000000000000001", "١٢٣"]


@pytest.mark.parametrize("name", TEXT_VALUED)
@pytest.mark.parametrize("value", LOOKALIKES)
def test_a_string_parameter_keeps_the_text_exactly(name, value):
    fmt = FORMATS[name]
    arguments = {"label": value}
    if fmt.limits_for(arguments):
        pytest.skip(f"{name} cannot carry {value!r}")
    text = fmt.write_call(ParsedToolCall("tag", arguments))
    untyped = read_calls(fmt, text)
    typed = read_calls(fmt, text, [tool("tag", {"label": {"type": "string"}})])
    assert same_calls(typed, untyped)
    # And exactly what was written, unless the wire itself trims it (then the untyped read says so too).
    assert typed[0].arguments["label"] == untyped[0].arguments["label"]


MISMATCHES = [
    ("integer", "ten"), ("integer", "1.5"), ("integer", "1_000"), ("integer", "١٢٣"), ("integer", "0x10"),
    ("integer", "3.0000000000000001"), ("integer", ""), ("number", "NaN"), ("number", "Infinity"),
    ("number", "1,5"), ("boolean", "yes"), ("boolean", "TRUE!"), ("boolean", "2"), ("null", "nil"),
    ("null", "NULL"), ("null", ""), ("array", '{"a": 1}'), ("array", "[1, 2"), ("array", "['a']"),
    ("object", "[1]"), ("object", "{'a': 1}"), ("object", "null"),
]


@pytest.mark.parametrize("name", TEXT_VALUED)
@pytest.mark.parametrize(("kind", "value"), MISMATCHES)
def test_a_text_that_is_not_its_type_stays_the_string_as_written(name, kind, value):
    fmt = FORMATS[name]
    text = fmt.write_call(ParsedToolCall("f", {"x": value}))
    (call,) = read_calls(fmt, text, [tool("f", {"x": {"type": kind}})])
    assert tagged(call.arguments["x"]) == ("string", value)


# What vLLM's qwen3_xml / glm parsers give for the spellings the conformance fixtures hold.
FIXTURE_SPELLINGS = [
    ({"type": "integer"}, "3", 3),
    ({"type": "string"}, "3", "3"),
    ({"type": "number"}, "42", 42),
    ({"type": "number"}, "3.14", 3.14),
    ({"type": "number"}, "1e20", 10**20),  # whole and written without a point: an integer (coerce's rule)
    ({"type": "number"}, "1e23", 10**23),  # every digit it spells, not the float's 99999999999999991611392
    ({"type": "number"}, "1E100", 10**100),
    ({"type": "boolean"}, "True", True),
    ({"type": "boolean"}, "False", False),
    ({"type": "null"}, "None", None),
    ({"type": ["string", "null"]}, "null", None),  # string never casts: the null after it does
    ({"type": ["string", "null"]}, "gym", "gym"),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}, "some text", "some text"),
    ({"anyOf": [{"type": "integer"}, {"type": "null"}], "default": 5}, "5", 5),
    ({"anyOf": [{"type": "object"}, {"type": "null"}]}, '{"key": "value"}', {"key": "value"}),
    ({"type": "array"}, '[{"item": "a", "selected": false}]', [{"item": "a", "selected": False}]),
    # Types are tried in the schema's order: the first one the text spells wins.
    ({"anyOf": [{"type": "boolean"}, {"type": "integer"}]}, "1", True),
    ({"anyOf": [{"type": "integer"}, {"type": "boolean"}]}, "1", 1),
    ({"type": ["integer", "number"]}, "1.5", 1.5),
]


@pytest.mark.parametrize("name", TEXT_VALUED)
@pytest.mark.parametrize(("schema", "value", "expected"), FIXTURE_SPELLINGS)
def test_the_fixture_spellings_read_as_vllm_reads_them(name, schema, value, expected):
    fmt = FORMATS[name]
    text = fmt.write_call(ParsedToolCall("f", {"x": value}))
    (call,) = read_calls(fmt, text, [tool("f", {"x": schema})])
    assert same_json(call.arguments["x"], expected), call.arguments


def _spells(text: str, kind: str, value: object) -> bool:
    """Whether value is what text spells as kind: the tests' own reading, for the never-invented check."""
    word = text.strip(JSON_SPACE)
    if kind == "integer":
        return type(value) is int and Decimal(word) == value
    if kind == "number":
        return (type(value) is int and Decimal(word) == value) or (type(value) is float and float(word) == value)
    if kind == "boolean":
        return type(value) is bool and word.lower() in (("true", "1") if value else ("false", "0"))
    if kind == "null":
        return value is None and word in ("null", "None")
    decoded = json.loads(text)
    return type(value) is (list if kind == "array" else dict) and same_json(value, decoded)


near_texts = st.text(alphabet=st.sampled_from(list("0123456789+-.eE_ xtrufalsnNTF[]{}\",:١\n\t")), max_size=10)


@pytest.mark.parametrize("name", TEXT_VALUED)
@SETTINGS
@given(value=st.one_of(near_texts, st.sampled_from(LOOKALIKES)),
       kind=st.sampled_from(["integer", "number", "boolean", "null", "array", "object"]))
def test_a_typed_value_is_only_ever_what_the_text_spells(name, value, kind):
    fmt = FORMATS[name]
    if fmt.limits_for({"x": value}):
        return
    text = fmt.write_call(ParsedToolCall("f", {"x": value}))
    (untyped,) = read_calls(fmt, text)
    (call,) = read_calls(fmt, text, [tool("f", {"x": {"type": kind}})])
    as_read, got = untyped.arguments["x"], call.arguments["x"]
    if type(got) is str:
        assert got == as_read  # kept, character for character
    else:
        assert _spells(as_read, kind, got), (as_read, kind, got)


# --- what is left alone -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", TEXT_VALUED)
def test_no_tools_an_unknown_tool_or_key_leave_the_call_as_read(name):
    fmt = FORMATS[name]
    call = ParsedToolCall("f", {"n": "7", "flag": "true", "other": "null"})
    text = fmt.write_call(call)
    assert same_calls(read_calls(fmt, text), [call])
    assert same_calls(read_calls(fmt, text, []), [call])
    assert same_calls(read_calls(fmt, text, [tool("g", {"n": {"type": "integer"}})]), [call])
    assert same_calls(read_calls(fmt, text, [tool("f", {"m": {"type": "integer"}})]), [call])
    assert same_calls(read_calls(fmt, text, [{"type": "function", "function": {"name": "f"}}]), [call])
    partly = read_calls(fmt, text, [tool("f", {"n": {"type": "integer"}})])
    assert same_calls(partly, [ParsedToolCall("f", {"n": 7, "flag": "true", "other": "null"})])


@pytest.mark.parametrize("name", TEXT_VALUED)
def test_a_bare_function_dict_types_like_an_openai_tool_and_the_first_of_a_name_wins(name):
    fmt = FORMATS[name]
    text = fmt.write_call(ParsedToolCall("f", {"n": "7"}))
    bare = [{"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}]
    assert same_calls(read_calls(fmt, text, bare), [ParsedToolCall("f", {"n": 7})])
    twice = [tool("f", {"n": {"type": "string"}}), tool("f", {"n": {"type": "integer"}})]
    assert same_calls(read_calls(fmt, text, twice), [ParsedToolCall("f", {"n": "7"})])


# Strings that would be retyped if a JSON-valued format's calls were typed, and a typed value a string
# schema would not change: neither moves.
UNTOUCHED = {"n": "7", "flag": "true", "nothing": "null", "items": "[1]", "s": 7}
UNTOUCHED_TOOL = tool("f", {"n": {"type": "integer"}, "flag": {"type": "boolean"}, "nothing": {"type": "null"},
                            "items": {"type": "array"}, "s": {"type": "string"}})


@pytest.mark.parametrize("name", JSON_VALUED)
def test_formats_whose_values_are_json_are_never_retyped(name):
    fmt = FORMATS[name]
    assert argument_types(fmt, [UNTOUCHED_TOOL]) is None
    assert ToolCallStream(fmt, tools=[UNTOUCHED_TOOL]).argument_types is None
    call = ParsedToolCall("f", dict(UNTOUCHED))
    if fmt.limits_for(call.arguments):
        pytest.skip(f"{name} cannot carry {call.arguments}")
    text = fmt.write_call(call)
    assert same_calls(read_calls(fmt, text), [call]), text
    assert same_calls(read_calls(fmt, text, [UNTOUCHED_TOOL]), [call])


def test_a_cut_call_is_not_typed_and_the_calls_before_it_are():
    fmt = FORMATS["qwen-xml"]
    whole = fmt.write_call(ParsedToolCall("f", {"n": "7"}))
    text = whole + "\n" + whole[: len(whole) // 2 + 10]
    reply = read_tool_calls(text, fmt, tools=[tool("f", {"n": {"type": "integer"}})])
    assert same_calls(reply.calls, [ParsedToolCall("f", {"n": 7})])
    assert isinstance(reply.cut, CutToolCall) and reply.events[-1] is reply.cut


class ShippingTokenizer:
    """A tokenizer as the reader sees one: a chat template, and the response template it ships."""

    def __init__(self, name: str, template: str, response_template: dict) -> None:
        self.name_or_path, self.chat_template, self.response_template = name, template, response_template
        self.special_tokens_map = {"bos_token": "", "eos_token": ""}

    def get_chat_template(self, tools=None) -> str:
        return self.chat_template

    def parse_response(self, text: str, prefix: str = "") -> dict:
        return parse_response(text, self.response_template, prefix=prefix)


@pytest.mark.parametrize(("name", "template"), [("qwen-xml", "Qwen-Qwen3-Coder-30B-A3B-Instruct"),
                                                ("glm-xml", "glm4moe")])
def test_a_shipped_response_templates_calls_are_typed_like_the_formats(name, template):
    fmt = FORMATS[name]
    source = (corpus_dir() / "templates" / f"{template}.jinja").read_text(encoding="utf-8")
    tokenizer = ShippingTokenizer(template, source, fmt.response_template)
    text = fmt.write_call(ParsedToolCall("f", {"n": "7", "s": "7", "on": "false"}))
    tools = [tool("f", {"n": {"type": "integer"}, "s": {"type": "string"}, "on": {"type": "boolean"}})]
    reply = read_tool_calls(text, tokenizer, tools=tools)
    assert reply.format is fmt
    expected = [ParsedToolCall("f", {"n": 7, "s": "7", "on": False})]
    assert same_calls(reply.calls, expected)
    assert same_calls([event.call for event in reply.events if isinstance(event, ToolCallEvent)], expected)
    untyped = read_tool_calls(text, tokenizer).calls
    assert same_calls(untyped, [ParsedToolCall("f", {"n": "7", "s": "7", "on": "false"})])


# --- tools that are not tools ---------------------------------------------------------------------

BAD_TOOLS = [
    ("get_weather", "tools is a list of tool dicts, got str"),
    ({"name": "f"}, "tools is a list of tool dicts, got dict"),
    (7, "tools is a list of tool dicts, got int"),
    ([42], r"tools\[0\] is no tool: expected .* got 42"),
    ([tool("f", {}), {"type": "function"}], r"tools\[1\] is no tool: .* got \{'type': 'function'\}"),
    ([{"function": {"name": 3}}], r"tools\[0\] is no tool"),
    (["f"], r"tools\[0\] is no tool: .* got 'f'"),
]


@pytest.mark.parametrize("name", ["qwen-xml", "hermes"])  # checked whatever the format
@pytest.mark.parametrize(("tools", "message"), BAD_TOOLS)
def test_an_entry_that_is_no_tool_is_a_type_error_naming_it(name, tools, message):
    fmt = FORMATS[name]
    with pytest.raises(TypeError, match=message):
        read_tool_calls("hello", fmt, tools=tools)
    with pytest.raises(TypeError, match=message):
        ToolCallStream(fmt, tools=tools)


def test_a_long_entry_is_shortened_in_the_message():
    with pytest.raises(TypeError, match=r"got \['x+\.\.\.$"):
        tool_parameters([["x" * 200]])


def test_argument_types_types_one_call_and_leaves_other_events():
    types = ArgumentTypes({"f": {"properties": {"n": {"type": "integer"}}}, "g": None})
    text, cut = TextDelta("a"), CutToolCall("f", "<tool_call>", 1)
    events = [text, ToolCallEvent(ParsedToolCall("f", {"n": "1"}), "id-1"), ReasoningDelta("r"), cut,
              ToolCallEvent(ParsedToolCall("g", {"n": "1"}))]
    got = types.events(events)
    assert got[0] is text and got[2] == ReasoningDelta("r") and got[3] is cut
    assert got[1].id == "id-1" and same_json(got[1].call.arguments, {"n": 1})
    assert same_json(got[4].call.arguments, {"n": "1"})
    assert types.events([]) == []


# --- the stream equals the whole read ---------------------------------------------------------------


def _same_events(left, right) -> bool:
    left, right = merge_deltas(left), merge_deltas(right)
    if len(left) != len(right):
        return False
    for a, b in zip(left, right):
        if type(a) is not type(b):
            return False
        if type(a) is ToolCallEvent:
            if a.id != b.id or not same_calls([a.call], [b.call]):
                return False
        elif a != b:
            return False
    return True


@st.composite
def replies(draw, name):
    """(reply text, tools): prose and reasoning around calls with typed values written as text."""
    fmt = FORMATS[name]
    tools, parts = [], []
    if fmt.reasoning and draw(st.booleans()):
        opener, closer = fmt.reasoning
        parts.append(f"{opener}\nthinking about 7\n{closer}\n\n")
    parts.append(draw(st.sampled_from(["", "Sure. ", "Checking 3 things:\n"])))
    for index in range(draw(st.integers(1, 3))):
        typed, properties = draw(typed_parameters())
        as_text = {key: written(value) for key, value in typed.items()}
        if fmt.limits_for(as_text):
            as_text = {key: "plain" for key in typed}
        tools.append(tool(f"t{index}", properties))
        parts.append(fmt.write_call(ParsedToolCall(f"t{index}", as_text)))
        parts.append("\n")
    return "".join(parts), tools


@pytest.mark.parametrize("name", TEXT_VALUED)
@SETTINGS
@given(data=st.data())
def test_a_stream_in_random_chunks_gives_the_whole_reads_events(name, data):
    fmt = FORMATS[name]
    text, tools = data.draw(replies(name))
    whole = read_tool_calls(text, fmt, tools=tools, strict=True).events
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    stream, events, at = ToolCallStream(fmt, tools=tools), [], 0
    while at < len(text):
        step = rng.randint(1, 12)
        events += stream.feed(text[at : at + step])
        at += step
    events += stream.close()
    assert _same_events(events, whole), (text, events, whole)


# --- the vLLM plugin's reading (served.py; vllm.py only hands it the request's tools) ----------------


@pytest.mark.parametrize("name", TEXT_VALUED)
def test_the_served_reply_and_stream_type_calls_by_the_requests_tools(name):
    fmt = FORMATS[name]
    tools = [tool("set_alarm", {"hour": {"type": "integer"}, "repeat": {"type": "boolean"},
                                "label": {"type": ["string", "null"]}})]
    text = "Setting it.\n" + fmt.write_call(ParsedToolCall("set_alarm", {"hour": "7", "repeat": "True",
                                                                         "label": "null"}))
    expected = [ParsedToolCall("set_alarm", {"hour": 7, "repeat": True, "label": None})]
    content, calls = read_reply(text, fmt, tools=tools)
    assert same_calls([call for call, _ in calls], expected)
    served = ReplyStream(fmt, tools=tools)
    streamed, sent = [], ""
    for index in range(0, len(text), 5):
        body, some = served.feed(text[index : index + 5])
        sent += body
        streamed += some
    body, some = served.close()
    assert same_calls([call for call, _ in streamed + some], expected)
    assert sent + body == content
    untyped = read_reply(text, fmt)[1]
    assert same_calls([call for call, _ in untyped], [ParsedToolCall("set_alarm", {"hour": "7", "repeat": "True",
                                                                                   "label": "null"})])
