"""The format registry: each parser reads its own shape and nothing else,
and agrees with its response template wherever that language can say so."""

from __future__ import annotations

import pytest
from transformers.utils.chat_parsing import parse_response

from samples import FORMAT_SAMPLES
from templatestudio.formats import (
    FORMATS,
    MAX_NESTING,
    MISTRAL_ARGS_RESPONSE_TEMPLATE,
    CallSpan,
    Format,
    UnknownFormat,
    get_format,
)
from templatestudio.tools import ParsedToolCall

EUR_JPY = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
USD_GBP = ParsedToolCall("get_exchange_rate", {"base": "USD", "quote": "GBP"})
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
# qwen-xml values are text as written; the schema types them later.
TYPED_AS_TEXT = ParsedToolCall(
    "search_rates",
    {
        "query": 'euro to yen, "spot"',
        "limit": "10",
        "threshold": "0.5",
        "live": "true",
        "since": "null",
        "pairs": '["EUR/JPY", "USD/GBP"]',
        "options": '{"source": "ecb", "days": 7}',
    },
)
TYPED_NO_QUOTES = ParsedToolCall("search_rates", {**TYPED_ARGUMENTS, "query": "euro to yen, spot"})

EXPECTED = {
    "hermes": [[EUR_JPY], [EUR_JPY], [EUR_JPY, USD_GBP], [TYPED], [EUR_JPY]],
    "fenced-json": [[EUR_JPY], [EUR_JPY, USD_GBP], [TYPED]],
    "qwen-xml": [
        [EUR_JPY],
        [EUR_JPY],
        [EUR_JPY, USD_GBP],
        [TYPED_AS_TEXT],
        [ParsedToolCall("write_note", {"text": "first line\nsecond line"})],
    ],
    "llama3-json": [[EUR_JPY], [EUR_JPY], [EUR_JPY], [TYPED], [EUR_JPY, USD_GBP]],
    "mistral": [
        [EUR_JPY],
        [EUR_JPY],
        [EUR_JPY, USD_GBP],
        [TYPED],
        [EUR_JPY],
        [EUR_JPY],
        [EUR_JPY, USD_GBP],
    ],
    "gemma4": [[EUR_JPY], [EUR_JPY, USD_GBP], [TYPED], [EUR_JPY]],
    "pythonic": [[EUR_JPY], [EUR_JPY, USD_GBP], [TYPED_NO_QUOTES], [EUR_JPY], [EUR_JPY]],
}

SAMPLES = [(name, index, text) for name, texts in FORMAT_SAMPLES.items() for index, text in enumerate(texts)]
SAMPLE_IDS = [f"{name}-{index}" for name, index, _ in SAMPLES]


def test_registry_holds_the_seven_formats_in_order():
    assert list(FORMATS) == [
        "hermes", "fenced-json", "qwen-xml", "llama3-json", "mistral", "gemma4", "pythonic",
    ]
    for name, fmt in FORMATS.items():
        assert isinstance(fmt, Format) and fmt.name == name
        assert fmt.description and "\n" not in fmt.description
        assert fmt.markers and all(isinstance(marker, str) and marker for marker in fmt.markers)
    assert {name for name, fmt in FORMATS.items() if fmt.start_only} == {"llama3-json", "pythonic"}


def test_every_format_has_samples_and_expectations():
    assert set(FORMAT_SAMPLES) == set(FORMATS) == set(EXPECTED)
    for name in FORMATS:
        assert len(FORMAT_SAMPLES[name]) == len(EXPECTED[name])


def test_get_format_and_its_error():
    assert get_format("gemma4") is FORMATS["gemma4"]
    with pytest.raises(UnknownFormat) as caught:
        get_format("harmony")
    assert str(caught.value) == (
        "unknown tool-call format 'harmony'; known formats: "
        "hermes, fenced-json, qwen-xml, llama3-json, mistral, gemma4, pythonic"
    )
    assert isinstance(caught.value, ValueError)


def test_formats_compare_and_hash_by_shape_not_parser():
    assert hash(FORMATS["hermes"]) == hash(FORMATS["hermes"])
    assert FORMATS["hermes"] != FORMATS["qwen-xml"]


@pytest.mark.parametrize(("name", "index", "text"), SAMPLES, ids=SAMPLE_IDS)
def test_each_parser_reads_its_own_samples(name, index, text):
    assert FORMATS[name].parser.parse(text) == EXPECTED[name][index]


CROSS = [
    (parser_name, name, index, text)
    for parser_name in FORMATS
    for name, index, text in SAMPLES
    if name != parser_name
]


@pytest.mark.parametrize(
    ("parser_name", "name", "index", "text"),
    CROSS,
    ids=[f"{p}-reads-{n}-{i}" for p, n, i, _ in CROSS],
)
def test_cross_format_matrix_no_parser_reads_another_format(parser_name, name, index, text):
    assert FORMATS[parser_name].parser.parse(text) == []


@pytest.mark.parametrize(("name", "index", "text"), SAMPLES, ids=SAMPLE_IDS)
def test_spans_locate_each_call_at_a_marker(name, index, text):
    fmt = FORMATS[name]
    spans = fmt.parser.scan(text)
    assert [span.call for span in spans] == EXPECTED[name][index]
    previous_end = 0
    for span in spans:
        assert isinstance(span, CallSpan)
        assert 0 <= span.start < span.end <= len(text)
        assert any(text.startswith(marker, span.start) for marker in fmt.markers)
        # Calls come in order and never overlap (a Mistral list shares one span).
        assert span.start >= previous_end or span.end == previous_end
        previous_end = span.end
        assert span.call in fmt.parser.parse(text[span.start : span.end])
    if fmt.start_only:
        assert spans[0].start == len(text) - len(text.lstrip())


def test_text_around_calls_stays_outside_the_spans():
    text = "Let me look that up.\n" + FORMAT_SAMPLES["hermes"][0] + "\nDone."
    (span,) = FORMATS["hermes"].parser.scan(text)
    assert text[: span.start] == "Let me look that up.\n"
    assert text[span.end :] == "\nDone."


# --- parser and response template agree --------------------------------------------------


def _response_template_calls(template: dict, text: str, **kwargs) -> list[ParsedToolCall]:
    message = parse_response(text, template, prefix="", **kwargs)
    return [
        ParsedToolCall(call["function"]["name"], call["function"]["arguments"])
        for call in message.get("tool_calls", [])
    ]


def _template_for(name: str, text: str) -> dict:
    if name == "mistral" and "[ARGS]" in text:
        return MISTRAL_ARGS_RESPONSE_TEMPLATE
    return FORMATS[name].response_template


# The one sample whose values the response-template language returns
# differently (Python's True and None): test_pythonic_literals_need_the_schema.
PYTHON_LITERALS = ("pythonic", 2)
AGREEING = [sample for sample in SAMPLES if sample[:2] != PYTHON_LITERALS]


@pytest.mark.parametrize(
    ("name", "index", "text"), AGREEING, ids=[f"{n}-{i}" for n, i, _ in AGREEING]
)
def test_parser_and_response_template_agree(name, index, text):
    assert _response_template_calls(_template_for(name, text), text) == FORMATS[name].parser.parse(text)


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


def test_pythonic_literals_need_the_schema():
    """Limitation: pythonic values go through the json value parser, so Python's
    True and None stay text; transformers types them once tools= is passed."""
    text = FORMAT_SAMPLES["pythonic"][2]
    template = FORMATS["pythonic"].response_template
    (untyped,) = _response_template_calls(template, text)
    assert untyped.arguments["live"] == "True" and untyped.arguments["since"] == "None"
    typed = _response_template_calls(template, text, tools=[SEARCH_RATES_SCHEMA])
    assert typed == FORMATS["pythonic"].parser.parse(text)


def test_pythonic_string_with_a_parenthesis_defeats_the_response_template():
    """Limitation: a call region closes at the first ")", even inside a string."""
    text = '[note(text="see (below)")]'
    assert FORMATS["pythonic"].parser.parse(text) == [ParsedToolCall("note", {"text": "see (below)"})]
    assert _response_template_calls(FORMATS["pythonic"].response_template, text) != [
        ParsedToolCall("note", {"text": "see (below)"})
    ]


def test_one_mistral_response_template_cannot_read_both_shapes():
    """Limitation: the list shape needs transform_each; [ARGS] needs a captured name."""
    for text in FORMAT_SAMPLES["mistral"]:
        expected = FORMATS["mistral"].parser.parse(text)
        by_list = _response_template_calls(FORMATS["mistral"].response_template, text)
        by_args = _response_template_calls(MISTRAL_ARGS_RESPONSE_TEMPLATE, text)
        if "[ARGS]" in text:
            assert (by_list, by_args) == ([], expected)
        else:
            assert (by_list, by_args) == (expected, [])


def test_gemma4_response_template_cannot_read_the_null_gemma4_writes():
    """Gemma 4's template renders a Python None as the bare word None; the json
    content parser refuses it, the grammar parser reads it as null."""
    text = '<|tool_call>call:lookup{since:None}<tool_call|>'
    assert FORMATS["gemma4"].parser.parse(text) == [ParsedToolCall("lookup", {"since": None})]
    with pytest.raises(ValueError, match="could not parse after dialect transforms"):
        _response_template_calls(FORMATS["gemma4"].response_template, text)


def test_qwen_xml_values_are_typed_by_the_schema_not_the_parser():
    text = FORMAT_SAMPLES["qwen-xml"][3]
    assert FORMATS["qwen-xml"].parser.parse(text) == [TYPED_AS_TEXT]
    typed = _response_template_calls(
        FORMATS["qwen-xml"].response_template, text, tools=[SEARCH_RATES_SCHEMA]
    )
    assert typed == [TYPED]


def test_llama3_response_template_needs_parameters_last():
    """Limitation: the parameters object is the region between two patterns, so
    a call whose "parameters" key is not last is read by the parser only."""
    text = '{"parameters": {"base": "EUR", "quote": "JPY"}, "name": "get_exchange_rate"}'
    assert FORMATS["llama3-json"].parser.parse(text) == [EUR_JPY]
    assert _response_template_calls(FORMATS["llama3-json"].response_template, text) == []


def test_response_templates_load_in_transformers():
    from transformers.utils.chat_parsing.response_templates import load_response_template

    for template in [fmt.response_template for fmt in FORMATS.values()] + [MISTRAL_ARGS_RESPONSE_TEMPLATE]:
        load_response_template(template)


def test_response_templates_use_the_start_anchor_with_a_real_prompt():
    from rates import QUESTION, get_exchange_rate
    from templatestudio.detect import ChatTemplate
    from templatestudio.tools import tool_schema

    qwen3 = ChatTemplate.from_hub("Qwen/Qwen3-0.6B")
    prompt = qwen3.render(QUESTION, tools=[tool_schema(get_exchange_rate)], add_generation_prompt=True)
    assert "<tool_call>" in prompt  # the system prompt shows the model an example call
    message = parse_response(FORMAT_SAMPLES["hermes"][0], FORMATS["hermes"].response_template, prefix=prompt)
    assert [call["function"]["name"] for call in message["tool_calls"]] == ["get_exchange_rate"]


# --- strict: near misses are not calls ------------------------------------------------------

NEAR_MISSES = {
    "hermes": [
        '<tool_call>\n{"name": "f", "arguments": "{\\"a\\": 1}"}\n</tool_call>',  # arguments as a string
        '<tool_call>\n{"name": "f", "arguments": {}, "id": "x"}\n</tool_call>',  # extra key
        '<tool_call>\n{"name": "f"}\n</tool_call>',  # no arguments
        '<tool_call>\n{"name": "f", "arguments": {}}\n',  # never closed
        '<tool_call>\n{{"name": "f", "arguments": {}}}\n</tool_call>',  # Qwen2.5's doubled braces
        '<tool_call>\n{"name": "", "arguments": {}}\n</tool_call>',  # empty name
    ],
    "fenced-json": [
        '```python\n{"name": "f", "arguments": {}}\n```',
        '```json\n{"tool": "f", "arguments": {}}\n```',
        '```json\n[{"name": "f", "arguments": {}}]\n```',
    ],
    "qwen-xml": [
        "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n"
        "<parameter=a>\n2\n</parameter>\n</function>\n</tool_call>",  # repeated parameter
        "<tool_call>\n<function=f>\nstray text\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
        "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</tool_call>",  # no </function>
        "<function=f>\n<parameter=a>\n1\n</parameter>\n</function>",  # functionary-style, no wrapper
    ],
    "llama3-json": [
        'Sure: {"name": "f", "parameters": {}}',
        '{"name": "f", "parameters": {}} and then some text',
        '{"name": "f", "arguments": {}}',  # Phi-4-mini's bare-arguments shape
        '{"type": "tool", "name": "f", "parameters": {}}',
        '{"type": "function", "function": {"name": "f", "parameters": {}}}',  # the tool-list shape
        '[{"name": "f", "parameters": {}}]',
        '{"name": "f", "parameters": {}}; plain words',
    ],
    "mistral": [
        '[TOOL_CALLS][{"name": "f", "arguments": {}, "id": "call-0001"}]',  # id not alphanumeric
        "[TOOL_CALLS][]",
        '[TOOL_CALLS][{"name": "f", "parameters": {}}]',
        "[TOOL_CALLS]f[ARGS][1, 2]",
        '[TOOL_CALLS]f[CALL_ID]bad-id[ARGS]{"a": 1}',
        '[{"name": "f", "arguments": {}}]',  # no marker
    ],
    "gemma4": [
        "<|tool_call>call:f{a:EUR}<tool_call|>",  # bare word
        '<|tool_call>call:f{a: <|"|>x<|"|>}<tool_call|>',  # whitespace
        '<|tool_call>call:f{a:<|"|>x}<tool_call|>',  # unterminated string
        "<|tool_call>call:f{a:1,a:2}<tool_call|>",  # repeated key
        "<|tool_call>call:f{a:1}</tool_call>",  # wrong closer
        "<|tool_call>call:f{a:1,}<tool_call|>",
        "<start_function_call>call:f{a:<escape>x<escape>}<end_function_call>",  # FunctionGemma
    ],
    "pythonic": [
        "[get_exchange_rate(base=EUR, quote=JPY)]",  # vLLM Llama 3.2 template: unquoted
        '[get_exchange_rate(base="EUR"quote="JPY")]',  # vLLM Gemma 3 template: no commas
        '[f("EUR")]',  # positional
        "[f(**{'a': 1})]",
        '[f(a=__import__("os").getcwd())]',  # an expression is refused, never run
        "[f(a={1, 2})]",  # a set is not JSON-like
        "[f(a=(1, 2))]",
        '[os.system(a="x")]',
        '[f(a="x")] and more text',
        'Here: [f(a="x")]',
        "[]",
        '<|tool_call_start|>[f(a="x")]',  # never closed
    ],
}


@pytest.mark.parametrize(
    ("name", "text"),
    [(name, text) for name, texts in NEAR_MISSES.items() for text in texts],
)
def test_near_misses_are_not_calls(name, text):
    assert FORMATS[name].parser.parse(text) == []


def test_lfm2_wrapper_may_be_followed_by_text():
    text = '<|tool_call_start|>[f(a="x")]<|tool_call_end|>Checking that now.'
    (span,) = FORMATS["pythonic"].parser.scan(text)
    assert span.call == ParsedToolCall("f", {"a": "x"})
    assert text[span.end :] == "Checking that now."


def test_gemma4_strings_keep_quotes_commas_and_braces():
    text = '<|tool_call>call:f{q:<|"|>a "b", {c}: d<|"|>,keyed:{<|"|>k<|"|>:[]}}<tool_call|>'
    assert FORMATS["gemma4"].parser.parse(text) == [
        ParsedToolCall("f", {"q": 'a "b", {c}: d', "keyed": {"k": []}})
    ]


def test_gemma4_numbers_and_words():
    text = "<|tool_call>call:f{a:-3,b:1.5e3,c:false,d:null,e:none,g:0}<tool_call|>"
    (call,) = FORMATS["gemma4"].parser.parse(text)
    assert call.arguments == {"a": -3, "b": 1500.0, "c": False, "d": None, "e": None, "g": 0}
    assert type(call.arguments["b"]) is float and type(call.arguments["a"]) is int


def test_nesting_deeper_than_the_limit_is_not_a_call():
    shallow = "[" * MAX_NESTING + "]" * MAX_NESTING
    deep = "[" * (MAX_NESTING + 5) + "]" * (MAX_NESTING + 5)
    assert FORMATS["gemma4"].parser.parse(f"<|tool_call>call:f{{a:{shallow}}}<tool_call|>")
    assert FORMATS["gemma4"].parser.parse(f"<|tool_call>call:f{{a:{deep}}}<tool_call|>") == []


# --- never raise on arbitrary text -------------------------------------------------------------

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
    "\x00\x01\x02<|\"|>" * 50,
    "<tool_call>" * 2_000,
    "[TOOL_CALLS]" * 2_000,
    "<|tool_call>call:" * 2_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_text_never_raises(text):
    for fmt in FORMATS.values():
        assert fmt.parser.scan(text) == []


def test_every_truncation_of_every_sample_parses_without_raising():
    for texts in FORMAT_SAMPLES.values():
        for text in texts:
            for cut in range(len(text)):
                for fmt in FORMATS.values():
                    fmt.parser.scan(text[:cut])


def test_a_megabyte_of_text_around_a_call_is_scanned():
    padding = "lorem ipsum, " * 80_000  # about 1 MB
    text = padding + FORMAT_SAMPLES["gemma4"][0] + padding
    assert FORMATS["gemma4"].parser.parse(text) == [EUR_JPY]
    assert FORMATS["hermes"].parser.parse(text) == []


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


@pytest.mark.parametrize("text", FLOODS, ids=[flood[:14] for flood in FLOODS])
def test_a_megabyte_of_repeated_markers_scans_in_linear_time(text):
    import time

    started = time.perf_counter()
    for fmt in FORMATS.values():
        assert fmt.parser.scan(text) == []
    assert time.perf_counter() - started < 5  # quadratic takes minutes here
