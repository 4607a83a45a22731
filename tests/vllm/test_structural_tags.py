"""Every format's decoding grammar (``wire.structural_tag``) against xgrammar, its writer and its reader.

Three directions, for every format whose shape the grammar expresses:
- xgrammar compiles it, in each mode (required, auto, a named tool);
- writer ⊆ grammar: whatever ``write_calls`` writes for calls valid under
  the tools' schemas, the grammar accepts (hypothesis draws the calls);
- grammar ⊆ reader: whatever the grammar lets a model write (random walks
  with xgrammar's own matcher: ``grammar_walk``) the production reader
  reads, as calls of the request's tools whose arguments validate against
  their schemas (jsonschema), the same whole and streamed in random chunks.
And every format it does not express says why, in the words ``check`` and
the plugin log. Runs in .venv-vllm, where vLLM brings xgrammar.
"""

from __future__ import annotations

import json
import random
import string

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grammar_walk import Walker
from templatestudio.argument_deltas import ArgumentsDelta
from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.formats import FORMATS
from templatestudio.integrations.served import ReplyStream, read_reply
from templatestudio.wire.arguments import KeyValuePairs, XmlParameters
from templatestudio.wire.structural_tag import NoGrammar, refusal, structural_tag

TOOLS = [
    {"type": "function", "function": {"name": "get_exchange_rate", "parameters": {
        "type": "object",
        "properties": {
            "base": {"type": "string"},
            "quote": {"type": "string", "enum": ["JPY", "USD", "GBP"]},
            "amount": {"type": "number"},
            "when": {"type": "object", "properties": {"day": {"type": "integer"}}, "required": ["day"]},
        },
        "required": ["base", "quote"]}}},
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "array", "items": {"type": "integer"}},
            "metric": {"type": "boolean"},
        },
        "required": ["city"]}}},
    {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}},
]
SCHEMAS = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}
EXPRESSED = sorted(name for name, fmt in FORMATS.items() if fmt.wire is not None and refusal(fmt.wire) is None)
REFUSED = sorted(name for name, fmt in FORMATS.items() if fmt.wire is not None and refusal(fmt.wire) is not None)
WALKS = 12
# Arguments written one tag per parameter always follow the schema (wire.structural_tag's docstring).
JSON_BODIES = [name for name in EXPRESSED if not isinstance(FORMATS[name].wire.arguments, (XmlParameters, KeyValuePairs))]
# A call that opens on no literal (a bare JSON value) has no auto grammar: it cannot be told from text.
OPEN_ON_NOTHING = [name for name in EXPRESSED if not (FORMATS[name].wire.call.open or FORMATS[name].wire.name_open)]
TRIGGERED = [name for name in EXPRESSED if name not in OPEN_ON_NOTHING]


def test_most_formats_are_expressed_and_the_rest_say_why():
    assert len(EXPRESSED) >= 30, EXPRESSED
    for name in REFUSED:
        why = refusal(FORMATS[name].wire)
        with pytest.raises(NoGrammar, match="."):
            structural_tag(FORMATS[name].wire, TOOLS)
        assert why and len(why) > 20


@pytest.mark.parametrize("name", OPEN_ON_NOTHING)
def test_a_call_that_opens_on_nothing_has_a_required_grammar_and_no_auto_one(name):
    structural_tag(FORMATS[name].wire, TOOLS, mode="required")
    with pytest.raises(NoGrammar, match="opens with no literal"):
        structural_tag(FORMATS[name].wire, TOOLS, mode="auto")


def _auto_or_none(shape):
    if not (shape.call.open or shape.name_open):
        return None
    return structural_tag(shape, TOOLS, mode="auto", strict=True)


# --- writer ⊆ grammar ---------------------------------------------------------------------------

TEXT = st.text(alphabet=string.ascii_letters + string.digits + " .,:;!?'\"\\/-_(){}é中\n", max_size=30)
NUMBER = st.one_of(st.integers(-10**6, 10**6), st.floats(0.001, 1e6, allow_nan=False).map(lambda x: round(x, 3)))


def _writes_json_values(shape) -> bool:
    """Whether the writer spells a non-string value as JSON (XML formats may spell it with str())."""
    arguments = shape.arguments
    if isinstance(arguments, (XmlParameters, KeyValuePairs)):
        return arguments.values == "json" or getattr(arguments, "typed", None) is not None
    return True


def _arguments(name: str, json_values: bool):
    rich = json_values
    if name == "get_exchange_rate":
        optional = {"amount": NUMBER}
        if rich:
            optional["when"] = st.fixed_dictionaries({"day": st.integers(0, 10**6)})
        return st.fixed_dictionaries({"base": TEXT, "quote": st.sampled_from(["JPY", "USD", "GBP"])},
                                     optional=optional)
    if name == "get_weather":
        optional = {"days": st.lists(st.integers(0, 99), max_size=3), "metric": st.booleans()} if rich else {}
        return st.fixed_dictionaries({"city": TEXT}, optional=optional)
    return st.just({})


def _calls(json_values: bool):
    one = st.sampled_from(list(SCHEMAS)).flatmap(
        lambda name: _arguments(name, json_values).map(lambda arguments: ParsedToolCall(name, arguments)))
    return st.lists(one, min_size=1, max_size=3)


def _in_schema_order(call: ParsedToolCall) -> ParsedToolCall:
    # The grammar writes a tool's parameters in its schema's order, as the model was shown them.
    order = list(SCHEMAS[call.name].get("properties", {}))
    return ParsedToolCall(call.name, {key: call.arguments[key] for key in order if key in call.arguments})


@pytest.mark.parametrize("name", EXPRESSED)
def test_the_grammar_accepts_everything_the_writer_writes(name):
    shape = FORMATS[name].wire
    required = Walker(structural_tag(shape, TOOLS, mode="required", strict=True))
    auto_tag = _auto_or_none(shape)
    auto = Walker(auto_tag) if auto_tag else None

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(calls=_calls(_writes_json_values(shape)))
    def check(calls):
        written = shape.write_calls([_in_schema_order(call) for call in calls])
        assert required.accepts(written), written
        if auto is not None:
            assert auto.accepts("Let me check. " + written), written

    check()


@pytest.mark.parametrize("name", EXPRESSED)
def test_a_named_tool_allows_one_call_of_that_tool_and_no_other(name):
    shape = FORMATS[name].wire
    named = Walker(structural_tag(shape, TOOLS, only="get_weather", strict=True))
    weather = ParsedToolCall("get_weather", {"city": "Paris"})
    assert named.accepts(shape.write_calls([weather]))
    assert not named.accepts(shape.write_calls([ParsedToolCall("now", {})]))
    assert not named.accepts(shape.write_calls([ParsedToolCall("get_weather_x", {"city": "Paris"})]))
    if shape.section is None and not shape.call.open == "" and shape.separator is not None:
        assert not named.accepts(shape.write_calls([weather, weather]))  # one call only
    with pytest.raises(NoGrammar, match="not among the request's tools"):
        structural_tag(shape, TOOLS, only="get_time")


@pytest.mark.parametrize("name", JSON_BODIES)
def test_a_tool_that_is_not_strict_takes_any_json_object_as_arguments(name):
    shape = FORMATS[name].wire
    loose = Walker(structural_tag(shape, TOOLS, mode="required", strict=None))
    strict = Walker(structural_tag(shape, TOOLS, mode="required", strict=True))
    off_schema = shape.write_calls([ParsedToolCall("get_weather", {"town": 3})])
    assert loose.accepts(off_schema) and not strict.accepts(off_schema)


# --- grammar ⊆ reader ---------------------------------------------------------------------------

def _read_and_check(fmt, text: str, rng: random.Random, *, need_call: bool) -> None:
    try:
        content, calls = read_reply(text, fmt, tools=TOOLS, reasoning_taken=True)
    except UnparsedToolCall as error:  # the grammar let the model write what the reader refuses
        raise AssertionError(f"{fmt.name} refused a reply its own grammar allows: {error}\n{text!r}") from None
    if need_call:
        assert calls, f"{fmt.name}: no call in a reply its required grammar forced\n{text!r}"
    for call, _ in calls:
        assert call.name in SCHEMAS, (call.name, text)
        jsonschema.validate(call.arguments, SCHEMAS[call.name])
        json.dumps(call.arguments, allow_nan=False)  # what vLLM sends must be JSON
    stream = ReplyStream(fmt, tools=TOOLS, reasoning_taken=True, deltas=True)
    streamed_content, streamed_calls, position = [], [], 0
    while position < len(text):
        size = rng.randint(1, 12)
        piece_content, piece_calls = stream.feed(text[position:position + size])
        streamed_content.append(piece_content)
        streamed_calls.extend(piece_calls)
        position += size
    piece_content, piece_calls = stream.close()
    streamed_content.append(piece_content)
    streamed_calls.extend(piece_calls)
    whole = [item[0] for item in streamed_calls if isinstance(item, tuple)]
    assert [(call.name, call.arguments) for call in whole] == [(c.name, c.arguments) for c, _ in calls]
    pieces: dict[int, str] = {}
    for item in streamed_calls:  # a call whose arguments streamed: its pieces join to them exactly
        if isinstance(item, ArgumentsDelta):
            pieces[item.index] = pieces.get(item.index, "") + item.text
    for index, joined in pieces.items():
        assert joined == json.dumps(whole[index].arguments, ensure_ascii=False), (fmt.name, text)


def _walk_and_read(name: str, mode: str, *, stop: float) -> None:
    """WALKS random replies of the format's grammar in mode, each read and checked; most must end."""
    fmt = FORMATS[name]
    walker = Walker(structural_tag(fmt.wire, TOOLS, mode=mode, strict=True))
    rng = random.Random(f"{mode} {name}")
    texts = [walker.walk(rng, stop=stop) for _ in range(WALKS)]
    ended = [text for text in texts if text is not None]
    assert len(ended) >= WALKS // 2, f"only {len(ended)} of {WALKS} walks ended"
    for text in ended:
        _read_and_check(fmt, text, rng, need_call=mode == "required")


@pytest.mark.parametrize("name", EXPRESSED)
def test_every_reply_the_required_grammar_allows_is_read_as_valid_calls(name):
    _walk_and_read(name, "required", stop=0.3)


@pytest.mark.parametrize("name", TRIGGERED)
def test_every_reply_the_auto_grammar_allows_is_read_without_a_leak(name):
    _walk_and_read(name, "auto", stop=0.02)


# --- through vLLM's own parser machinery --------------------------------------------------------

def _composed(name: str, strict_level: str):
    """vLLM's composed Parser over the templatestudio-NAME tool parser, as the server builds it."""
    from vllm.parser.parser_manager import ParserManager

    from tests.vllm.parsers import StubTokenizer

    import templatestudio.integrations.vllm  # noqa: F401 - registers the parsers, as the plugin file does

    parser_class = ParserManager.get_parser(tool_parser_name=f"templatestudio-{name}", enable_auto_tools=True,
                                            tool_strict_level=strict_level)
    return parser_class(StubTokenizer(f"{name}-model", None), TOOLS)


def _request(tool_choice, **extra):
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    return ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "Rates?"}], tools=TOOLS,
                                 tool_choice=tool_choice, **extra)


@pytest.mark.parametrize("name", EXPRESSED)
def test_vllm_puts_the_formats_own_grammar_on_a_required_request(name):
    parser = _composed(name, "parameter")
    request = parser.adjust_request(_request("required"))
    from xgrammar import StructuralTag

    sent = json.loads(request.structured_outputs.structural_tag)
    ours = structural_tag(FORMATS[name].wire, TOOLS, mode="required", strict=True)
    assert sent == json.loads(json.dumps(StructuralTag.model_validate(ours).model_dump()))
    named = parser.adjust_request(_request({"type": "function", "function": {"name": "now"}}))
    assert "get_weather" not in named.structured_outputs.structural_tag


@pytest.mark.parametrize("name", REFUSED)
def test_a_format_without_a_grammar_keeps_vllms_json_for_required(name):
    parser = _composed(name, "parameter")
    request = parser.adjust_request(_request("required"))
    assert request.structured_outputs.structural_tag is None and request.structured_outputs.json is not None
