"""The format registry: each format reads its own shape, refuses every other,
and agrees with its response template wherever that language can say so.

Samples and near misses come from the registry (``Format.samples``,
``Format.near_misses``); the tests below that name one format test a fact
of that format's grammar or of its response template, not a table of them.
"""

from __future__ import annotations

import json

import pytest
from transformers.utils.chat_parsing import parse_response

from format_relations import covers  # Llama 3 reads Phi-4-mini's objects
from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.engine import Machine, read_events
from templatestudio.events import TextDelta, ToolCallEvent, merge_deltas
from templatestudio.formats import FORMATS, UnknownFormat, get_format
from templatestudio.wire.base import Format
from templatestudio.formats.gemma4 import MAX_NESTING
from templatestudio.formats.mistral import ARGS_RESPONSE_TEMPLATE
from templatestudio.leaks import find_call_markers
from templatestudio.guards import guard_of
from templatestudio.stream import ToolCallStream
from oracle import same_json  # the tests' own comparison, not the package's
from layout_oracle import laid_out  # the tests' own statement of the layout rule

TYPED_ARGUMENTS = {
    "query": 'euro to yen, "spot"',
    "limit": 10,
    "threshold": 0.5,
    "live": True,
    "since": None,
    "pairs": ["EUR/JPY", "USD/GBP"],
    "options": {"source": "ecb", "days": 7},
}
TYPED = ParsedToolCall("search_rates", TYPED_ARGUMENTS)
SAMPLES = [(name, index) for name, fmt in FORMATS.items() for index, sample in enumerate(fmt.samples)]


def calls(text: str, fmt: Format) -> list[ParsedToolCall]:
    return [event.call for event in read_events(text, fmt) if isinstance(event, ToolCallEvent)]


def raw_events(text: str, fmt: Format) -> list:
    """Every character of a reply as text or reasoning: the machine without the layout rule."""
    machine = Machine(fmt, layout=False)
    return merge_deltas(machine.feed(text) + machine.close())


def same_calls(left: list[ParsedToolCall], right: list[ParsedToolCall]) -> bool:
    return len(left) == len(right) and all(
        a.name == b.name and same_json(a.arguments, b.arguments) for a, b in zip(left, right)
    )


# --- the registry --------------------------------------------------------------------------------


def test_registry_holds_the_course_formats_first_in_order():
    assert list(FORMATS)[:7] == ["hermes", "fenced-json", "qwen-xml", "llama3-json", "mistral", "gemma4", "pythonic"]
    for name, fmt in FORMATS.items():
        assert isinstance(fmt, Format) and fmt.name == name
        assert fmt.description and "\n" not in fmt.description
        assert fmt.markers and all(isinstance(marker, str) and marker for marker in fmt.markers)


def test_get_format_and_its_error():
    assert get_format("gemma4") is FORMATS["gemma4"]
    with pytest.raises(UnknownFormat) as caught:
        get_format("no-such-format")
    assert str(caught.value) == f"unknown tool-call format 'no-such-format'; known formats: {', '.join(FORMATS)}"
    assert isinstance(caught.value, ValueError)


def test_formats_compare_and_hash_by_identity():
    assert hash(FORMATS["hermes"]) == hash(FORMATS["hermes"])
    assert FORMATS["hermes"] != FORMATS["qwen-xml"]
    assert len(set(FORMATS.values())) == len(FORMATS)


# --- reading: its own shape, text around it, and nobody else's ----------------------------------


@pytest.mark.parametrize(("name", "index"), SAMPLES, ids=[f"{n}-{i}" for n, i in SAMPLES])
def test_each_reader_reads_its_own_samples_and_every_other_refuses_them(name, index):
    sample = FORMATS[name].samples[index]
    assert same_calls(calls(sample.text, FORMATS[name]), list(sample.calls))
    if not sample.calls:
        return
    for other in FORMATS.values():
        if other is FORMATS[name]:
            continue
        if covers(other, FORMATS[name]):  # a declared superset of the shape reads the same calls
            assert same_calls(calls(sample.text, other), list(sample.calls)), other.name
            continue
        if FORMATS[name] not in guard_of(None, other):
            # other addresses its calls (harmony): a call that opens on plain text is content to it.
            assert other.wire.addressed and merge_deltas(read_events(sample.text, other)) == [TextDelta(sample.text)]
            continue
        with pytest.raises(UnparsedToolCall, match=rf"the {other.name} format left a tool call unread"):
            read_events(sample.text, other)


def test_only_llama3_covers_another_formats_calls():
    pairs = [(other.name, fmt.name) for fmt in FORMATS.values() for other in FORMATS.values()
             if other is not fmt and covers(other, fmt)]
    assert pairs == [("llama3-json", "phi4-mini")]


@pytest.mark.parametrize("name", list(FORMATS))
def test_text_around_calls_stays_text(name):
    """Prose before and after a call is content; before a start-only opener it makes the list prose."""
    fmt = FORMATS[name]
    sample = next(s for s in fmt.samples if s.calls and not (fmt.reasoning and fmt.reasoning[0] in s.text))
    before, after = "Let me look that up.\n", "\nDone."
    text = before + sample.text + after
    (marker, *_) = find_call_markers(sample.text)
    opener = next(o for o in fmt.openers if o.literal == marker.text)
    events = read_events(text, fmt)
    if opener.start_only:
        assert events == [TextDelta(text)]
        return
    # Context-free: the sample reads the same with prose around it. Every
    # character comes back from the raw machine; the reader takes out only the
    # layout (the newlines touching the call, where the format declares them
    # layout: kimi-k2 declares none), keeping the prose's own spaces.
    raw = merge_deltas([TextDelta(before), *raw_events(sample.text, fmt), TextDelta(after)])
    assert raw_events(text, fmt) == raw
    assert events == laid_out(raw, fmt.spacing)
    assert events[0] == TextDelta(before.rstrip(fmt.spacing)) and events[-1] == TextDelta(after.lstrip(fmt.spacing))
    assert events[0].text.startswith("Let me look that up.")


def test_lfm2_wrapper_may_be_followed_by_text():
    text = '<|tool_call_start|>[f(a="x")]<|tool_call_end|>Checking that now.'
    assert read_events(text, FORMATS["pythonic"]) == [
        ToolCallEvent(ParsedToolCall("f", {"a": "x"})),
        TextDelta("Checking that now."),
    ]


def test_gemma4_strings_keep_quotes_commas_and_braces():
    text = '<|tool_call>call:f{q:<|"|>a "b", {c}: d<|"|>,keyed:{<|"|>k<|"|>:[]}}<tool_call|>'
    assert calls(text, FORMATS["gemma4"]) == [ParsedToolCall("f", {"q": 'a "b", {c}: d', "keyed": {"k": []}})]


def test_gemma4_numbers_and_words():
    text = "<|tool_call>call:f{a:-3,b:1.5e3,c:false,d:null,e:none,g:0}<tool_call|>"
    (call,) = calls(text, FORMATS["gemma4"])
    assert call.arguments == {"a": -3, "b": 1500.0, "c": False, "d": None, "e": None, "g": 0}
    assert type(call.arguments["b"]) is float and type(call.arguments["a"]) is int


def test_nesting_deeper_than_the_limit_is_refused_not_read():
    shallow = "[" * MAX_NESTING + "]" * MAX_NESTING
    deep = "[" * (MAX_NESTING + 5) + "]" * (MAX_NESTING + 5)
    assert calls(f"<|tool_call>call:f{{a:{shallow}}}<tool_call|>", FORMATS["gemma4"])
    with pytest.raises(UnparsedToolCall, match="nested too deeply"):
        read_events(f"<|tool_call>call:f{{a:{deep}}}<tool_call|>", FORMATS["gemma4"])


# --- reader and response template agree ------------------------------------------------------------


def _response_template_calls(template: dict, text: str, **kwargs) -> list[ParsedToolCall]:
    message = parse_response(text, template, prefix="", **kwargs)
    return [
        ParsedToolCall(call["function"]["name"], call["function"]["arguments"])
        for call in message.get("tool_calls", [])
    ]


WITH_TEMPLATES = [name for name, fmt in FORMATS.items() if fmt.response_template is not None]


@pytest.mark.parametrize("name", WITH_TEMPLATES)
def test_reader_and_response_template_agree_on_what_the_format_writes(name):
    """The first sample is the shape the family's template writes."""
    fmt = FORMATS[name]
    text = fmt.samples[0].text
    assert same_calls(_response_template_calls(fmt.response_template, text), calls(text, fmt)), text


def test_formats_without_a_response_template_say_why():
    for fmt in FORMATS.values():
        assert (fmt.response_template is None) == bool(fmt.no_response_template.strip()), fmt.name


def test_one_mistral_response_template_cannot_read_both_shapes():
    """Limitation: the list shape needs transform_each; [ARGS] needs a captured name."""
    fmt = FORMATS["mistral"]
    for sample in fmt.samples:
        expected = calls(sample.text, fmt)
        by_list = _response_template_calls(fmt.response_template, sample.text)
        by_args = _response_template_calls(ARGS_RESPONSE_TEMPLATE, sample.text)
        if "[ARGS]" in sample.text:
            assert (by_list, same_calls(by_args, expected)) == ([], True), sample.text
        elif sample.text.partition("[TOOL_CALLS]")[2].lstrip().startswith("["):
            assert (same_calls(by_list, expected), by_args) == (True, []), sample.text


def test_gemma4_response_template_cannot_read_the_null_gemma4_writes():
    """Gemma 4's template renders a Python None as the bare word None; the json
    content parser refuses it, the grammar reader reads it as null."""
    text = "<|tool_call>call:lookup{since:None}<tool_call|>"
    assert calls(text, FORMATS["gemma4"]) == [ParsedToolCall("lookup", {"since": None})]
    with pytest.raises(ValueError, match="could not parse after dialect transforms"):
        _response_template_calls(FORMATS["gemma4"].response_template, text)


def test_gemma4_response_template_reads_only_word_names():
    """Limitation of transformers' template, not inherited: names with - or . are read by the reader."""
    sample = next(s for s in FORMATS["gemma4"].samples if any("-" in c.name for c in s.calls))
    assert [c.name for c in calls(sample.text, FORMATS["gemma4"])] == [c.name for c in sample.calls]
    try:
        by_template = _response_template_calls(FORMATS["gemma4"].response_template, sample.text)
    except ValueError:
        return  # it cannot even parse the rest of the call
    assert by_template != list(sample.calls)


SEARCH_RATES_SCHEMA = {
    "type": "function",
    "function": {
        "name": "search_rates",
        "description": "Search exchange rates.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer"},
                "threshold": {"type": "number"},
                "live": {"type": "boolean"},
                "since": {"type": "string", "nullable": True},
                "pairs": {"type": "array", "items": {"type": "string"}},
                "options": {"type": "object"},
            },
        },
    },
}


def test_qwen_xml_values_are_typed_by_the_schema_not_the_reader():
    import json

    as_text = {key: value if isinstance(value, str) else json.dumps(value) for key, value in TYPED_ARGUMENTS.items()}
    text = FORMATS["qwen-xml"].write_call(ParsedToolCall("search_rates", as_text))
    assert calls(text, FORMATS["qwen-xml"]) == [ParsedToolCall("search_rates", as_text)]
    typed = _response_template_calls(FORMATS["qwen-xml"].response_template, text, tools=[SEARCH_RATES_SCHEMA])
    assert same_calls(typed, [TYPED])


def test_llama3_response_template_needs_parameters_last():
    """Limitation: the parameters object is the region between two patterns, so
    a call whose "parameters" key is not last is read by the reader only."""
    text = '{"parameters": {"base": "EUR", "quote": "JPY"}, "name": "get_exchange_rate"}'
    assert calls(text, FORMATS["llama3-json"]) == [ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})]
    assert _response_template_calls(FORMATS["llama3-json"].response_template, text) == []


def test_response_templates_load_in_transformers():
    from transformers.utils.chat_parsing.response_templates import load_response_template

    for template in [fmt.response_template for fmt in FORMATS.values() if fmt.response_template] + [ARGS_RESPONSE_TEMPLATE]:
        load_response_template(template)


def test_response_templates_use_the_start_anchor_with_a_real_prompt():
    from rates import QUESTION, get_exchange_rate
    from templatestudio.templates import ChatTemplate
    from templatestudio.tools import tool_schema

    qwen3 = ChatTemplate.from_hub("Qwen/Qwen3-0.6B")
    prompt = qwen3.render(QUESTION, tools=[tool_schema(get_exchange_rate)], add_generation_prompt=True)
    assert "<tool_call>" in prompt  # the system prompt shows the model an example call
    message = parse_response(FORMATS["hermes"].samples[0].text, FORMATS["hermes"].response_template, prefix=prompt)
    assert [call["function"]["name"] for call in message["tool_calls"]] == ["get_exchange_rate"]


# --- malformed calls from the old near-miss lists: each opens a call, so every reader refuses it ---------

REFUSED_EVERYWHERE = [
    '<tool_call>\n{"name": "f", "arguments": {}, "id": "x"}\n</tool_call>',  # an extra key
    '<tool_call>\n{"name": "f"}\n</tool_call>',  # no arguments
    '<tool_call>\n{{"name": "f", "arguments": {}}}\n</tool_call>',  # Qwen2.5's doubled braces
    '<tool_call>\n{"name": "", "arguments": {}}\n</tool_call>',  # an empty name
    '```json\n[{"name": "f", "arguments": {}}]\n```',  # a list in one block
    "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter=a>\n2\n</parameter>\n</function>\n</tool_call>",
    "<tool_call>\n<function=f>\nstray text\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
    "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</tool_call>",  # no </function>
    '[TOOL_CALLS][{"name": "f", "arguments": {}, "id": "call-0001"}]',  # an id that is not alphanumeric
    "[TOOL_CALLS][]",
    '[TOOL_CALLS][{"name": "f", "parameters": {}}]',
    "[TOOL_CALLS]f[ARGS][1, 2]",
    '[TOOL_CALLS]f[CALL_ID]bad-id[ARGS]{"a": 1}',
    "<|tool_call>call:f{a:EUR}<tool_call|>",  # a bare word
    '<|tool_call>call:f{a:<|"|>x<|"|> y}<tool_call|>',  # a second value where , or } must come
    '<|tool_call>call:f {a:1}<tool_call|>',  # whitespace between the name and its "{"
    '<|tool_call>call:f{a:<|"|>x}<tool_call|>',  # a string never closed
    "<|tool_call>call:f{a:1,a:2}<tool_call|>",  # a repeated key
    "<|tool_call>call:f{a:1}</tool_call>",  # the wrong closer
    "<|tool_call>call:f{a:1,}<tool_call|>",
    "[get_exchange_rate(base=EUR, quote=JPY)]",  # vLLM's Llama 3.2 template: unquoted
    '[get_exchange_rate(base="EUR"quote="JPY")]',  # vLLM's Gemma 3 template: no commas
    '[f(a=__import__("os").getcwd())]',  # an expression is refused, never run
    "[f(a={1, 2})]",  # a set is not JSON-like
    "[f(a=(1, 2))]",
    '<|tool_call_start|>[f(a="x")]',  # never closed
]


@pytest.mark.parametrize("text", REFUSED_EVERYWHERE)
def test_a_malformed_call_is_refused_by_every_reader(text):
    assert find_call_markers(text), text
    for fmt in FORMATS.values():
        if not find_call_markers(text, guard=guard_of(None, fmt)):
            # fmt addresses its calls (harmony) and does not watch the formats that open on plain text.
            assert fmt.wire.addressed and merge_deltas(read_events(text, fmt)) == [TextDelta(text)], fmt.name
            continue
        with pytest.raises(UnparsedToolCall):
            read_events(text, fmt)


# Whitespace after Gemma 4's "{ [ : ," and before "} ]" is separator, not
# value: the template itself writes "} }" (Gemma 4's format spec, the
# declaration rendering) and models write "[1, 2]" (see formats/gemma4.py).
# "{a: <|"|>x<|"|>}" was once in REFUSED_EVERYWHERE; gemma4 now reads it,
# and every other reader still refuses it as gemma4's call.
GEMMA4_SEPARATOR_SPACE = [
    ('<|tool_call>call:f{a: <|"|>x<|"|>}<tool_call|>', {"a": "x"}),
    ("<|tool_call>call:f{ a:1 }<tool_call|>", {"a": 1}),
    ("<|tool_call>call:f{a:[ 1,\n 2 ], b:{ c:null }}<tool_call|>", {"a": [1, 2], "b": {"c": None}}),
    ('<|tool_call>call:f{a:\t<|"|> x <|"|>,\r\nb:true}<tool_call|>', {"a": " x ", "b": True}),
]


@pytest.mark.parametrize(("text", "arguments"), GEMMA4_SEPARATOR_SPACE)
def test_separator_whitespace_is_read_by_gemma4_and_refused_by_every_other_reader(text, arguments):
    (call,) = calls(text, FORMATS["gemma4"])
    assert call.name == "f" and same_json(call.arguments, arguments), call
    for fmt in FORMATS.values():
        if fmt.name != "gemma4":
            with pytest.raises(UnparsedToolCall, match="opens a call in the gemma4 format"):
                read_events(text, fmt)


# --- hostile text: documented answers only, in linear time --------------------------------------

HOSTILE = [
    "",
    "[" * 10_000,
    "{" * 10_000,
    "<tool_call>" + "[" * 10_000 + "</tool_call>",
    '<tool_call>{"name": "f", "arguments": ' + "[" * 10_000 + "]" * 10_000 + "}</tool_call>",
    "<|tool_call>call:f{a:" + "[" * 10_000 + "]" * 10_000 + "}<tool_call|>",
    "[f(a=" + "[" * 10_000 + "]" * 10_000 + ")]",
    "[TOOL_CALLS]" + "[" * 10_000,
    "<|python_tag|>" + "{" * 10_000,
    '\x00\x01\x02<|"|>' * 50,
    "<tool_call>" * 2_000,
    "[TOOL_CALLS]" * 2_000,
    "<|tool_call>call:" * 2_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_text_gets_a_documented_answer(text):
    for fmt in FORMATS.values():
        try:
            events = read_events(text, fmt)
        except UnparsedToolCall as error:
            assert str(error)
            continue
        assert all(isinstance(event, (TextDelta, ToolCallEvent)) for event in events)


def test_every_truncation_of_every_sample_gets_a_documented_answer():
    # Its own reader and the leak survey (which runs every format's reader
    # over the text and does not stop at a refusal).
    for fmt in FORMATS.values():
        for sample in fmt.samples:
            for cut in range(len(sample.text)):
                find_call_markers(sample.text[:cut])
                try:
                    read_events(sample.text[:cut], fmt)
                except UnparsedToolCall:
                    pass


def test_a_megabyte_of_text_around_a_call_is_read():
    padding = "lorem ipsum, " * 80_000  # about 1 MB
    sample = FORMATS["gemma4"].samples[0]
    text = padding + sample.text + padding
    assert same_calls(calls(text, FORMATS["gemma4"]), list(sample.calls))
    with pytest.raises(UnparsedToolCall, match=rf"at offset {len(padding)} opens a call in the gemma4 format"):
        read_events(text, FORMATS["hermes"])


FLOODS = [
    "<tool_call>" * 100_000 + "</tool_call>",
    '<tool_call>{"' * 100_000,
    '<tool_call>{"a": [' * 100_000,
    "[TOOL_CALLS][" * 100_000,
    "```json\n{" * 100_000,
    '<|tool_call>call:f{a:<|"|>' * 100_000,
    "<|tool_call>call:" * 100_000,
    "<tool_call>\n<function=f>\n<parameter=a>\n" * 50_000 + "</tool_call>",
]


# Work per character of a flood, for each machine and for the JSON decoder: a
# reader that went back over the buffer at every refused region would count
# tens of thousands per character here (100,000 markers), a linear one a few.
# Counted, not timed: the same floods' wall time is tests/wallclock's.
EXAMINED_PER_CHAR = 8
DECODED_PER_CHAR = 4


@pytest.fixture
def decoded_chars(monkeypatch):
    """The characters json's decoder reads: to a value's end, or from the text's start to a failure.

    A failure counts from the start of the text it was handed because that is
    what the error's line count reads: handing the whole buffer to the decoder
    at every refused region is quadratic, however early each decode fails.
    """
    seen: list[int] = []
    real = json.JSONDecoder.raw_decode

    def counting(self, text, idx=0):
        try:
            value, end = real(self, text, idx)
        except json.JSONDecodeError as error:
            seen.append(error.pos)
            raise
        seen.append(end - idx)
        return value, end

    monkeypatch.setattr(json.JSONDecoder, "raw_decode", counting)
    return seen


@pytest.mark.parametrize("text", FLOODS, ids=[flood[:14] for flood in FLOODS])
def test_a_megabyte_of_repeated_markers_is_read_in_linear_work(text, decoded_chars):
    """By the formats whose markers flood it, and by the leak survey, which reads for all of them."""
    owners = {fmt for fmt in FORMATS.values() for o in fmt.openers if text.startswith(o.literal)}
    assert owners, "a flood no format opens at tests nothing"
    for fmt in owners:
        stream = ToolCallStream(fmt)
        try:
            stream.feed(text)
            stream.close()
        except UnparsedToolCall:
            pass  # a refusal is a documented answer; its cost is what is counted
        assert stream.chars_examined <= EXAMINED_PER_CHAR * len(text), (fmt.name, stream.chars_examined)
    survey = Machine(None, record=True)  # find_call_markers' machine, which reads every format's openers
    survey.feed(text)
    survey.close()
    # The survey never stops at a refusal: it reads to the end, so it has looked at every character.
    assert len(text) <= survey.examined <= EXAMINED_PER_CHAR * len(text), survey.examined
    assert survey.markers == find_call_markers(text)
    assert sum(decoded_chars) <= DECODED_PER_CHAR * len(text), (len(decoded_chars), sum(decoded_chars))
