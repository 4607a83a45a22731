"""One test or property per class of bug that once survived the tests.

Each class was a small deliberate bug planted at b915f27 that no test
caught. The tests here go through the public entry points, imported from the
package's face (``read_events``, ``ToolCallStream``, ``read_tool_calls``,
``probe_template``), and compare what comes back with the tests' own oracle (``tests/oracle.py``),
never with the package's comparator. Where a class, not one example, is the
point, the test runs over every registered format, every sample, or
generated text.

- the package's comparator says ``True == 1`` (or ``1 == 1.0``);
- the pythonic reader's nesting limit moved or removed;
- Mistral's empty list ``[TOOL_CALLS][]`` read as "no call" instead of refused;
- a byte-order mark (or zero-width space) before a call hides it;
- ``reasoning_open`` dropped on the way to the machine;
- ``chars_examined`` counting less than the machine looked at;
- the probe accepting a reading that leaves text beside the call.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio import (
    FORMATS,
    ParsedToolCall,
    ReasoningDelta,
    TextDelta,
    ToolCallEvent,
    ToolCallStream,
    UnparsedToolCall,
    merge_deltas,
    probe_template,
    read_events,
    read_tool_calls,
)
from templatestudio.engine import Machine
from templatestudio.values import same_json_value
from layout_oracle import laid_out
from oracle import same_calls, same_json
from test_reading_properties import alphabet_text, split_at

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


def calls_in(events: list) -> list[ParsedToolCall]:
    return [event.call for event in events if isinstance(event, ToolCallEvent)]


def streamed(fmt, pieces: list[str], *, reasoning_open: bool = False) -> list:
    stream = ToolCallStream(fmt, reasoning_open=reasoning_open)
    events = [event for piece in pieces for event in stream.feed(piece)]
    return merge_deltas(events + stream.close())


def every_character(fmt, text: str) -> list:
    """The raw machine's events (layout=False): every character of text as text or reasoning."""
    machine = Machine(fmt, layout=False)
    return merge_deltas(machine.feed(text) + machine.close())


def chunked(text: str, size: int) -> list[str]:
    return [text[at : at + size] for at in range(0, len(text), size)] or [""]


# --- the oracle, and the package's comparator against it -------------------------------------------


def test_the_oracle_tells_json_types_apart():
    # What every comparison below relies on, shown able to fail.
    assert not same_json(True, 1) and not same_json(1, True) and not same_json(False, 0)
    assert not same_json(1, 1.0) and not same_json(None, 0) and not same_json("1", 1)
    assert not same_json([1, 2], [2, 1]) and not same_json({"a": 1}, {"a": 1, "b": 2})
    assert not same_json((1,), (1,)) and not same_json(float("nan"), float("nan"))
    assert same_json({"a": [1, 2.5, None, True, "x"], "b": {}}, {"b": {}, "a": [1, 2.5, None, True, "x"]})
    assert not same_calls([ParsedToolCall("f", {"a": True})], [ParsedToolCall("f", {"a": 1})])
    assert same_calls([ParsedToolCall("f", {"a": 1, "b": 2})], [ParsedToolCall("f", {"b": 2, "a": 1})])


JSON_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(-3, 3, allow_nan=False), st.text(max_size=3)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=8,
)
# Spellings of "the same number" that JSON keeps apart: each scalar's near twins.
_TWINS = {bool: lambda v: [int(v), float(v)], int: lambda v: [float(v), bool(v) if v in (0, 1) else v + 1],
          float: lambda v: [int(v)] if v == int(v) else [v + 1], type(None): lambda v: [0, False, ""],
          str: lambda v: [v + "x"] + ([int(v)] if v.isascii() and v.isdigit() else [])}


def twins(value: object) -> list[object]:
    """value with one scalar replaced by a near twin, for each scalar and twin; and reordered copies."""
    if isinstance(value, dict):
        out = [dict(reversed(list(value.items())))] if len(value) > 1 else []
        for key, item in value.items():
            out += [{**value, key: twin} for twin in twins(item)]
        return out
    if isinstance(value, list):
        out = [list(reversed(value))] if len(set(map(repr, value))) > 1 else []
        for index, item in enumerate(value):
            out += [[*value[:index], twin, *value[index + 1 :]] for twin in twins(item)]
        return out
    return _TWINS[type(value)](value)


@SETTINGS
@given(value=JSON_VALUES)
def test_the_package_comparator_agrees_with_the_oracle(value):
    """True is not 1, 1 is not 1.0, key order is free and list order is not: the probe and the reader depend on it."""
    for other in [value, *twins(value)]:
        assert same_json_value(other, value) == same_json(other, value), (other, value)
        assert same_json_value(value, other) == same_json(value, other), (value, other)


# --- the pythonic reader's nesting limit ------------------------------------------------------------

# The pythonic reader reads a value nested 100 containers deep and refuses one
# more, with its own error rather than Python's RecursionError (a deeper value
# is a hostile reply, and a RecursionError would escape as a crash).
PYTHONIC_DEPTH_READ = 100
PYTHONIC_FORMS = {"bare list": "[f(v={})]", "LFM2": "<|tool_call_start|>[f(v={})]<|tool_call_end|>",
                  "Llama 4": "<|python_start|>[f(v={})]<|python_end|>"}


def nested(depth: int, kind: str) -> tuple[str, object]:
    """(Python literal, value) of 1 inside depth containers: lists, dicts or both taking turns."""
    text, value = "1", 1
    for level in range(depth):
        as_list = kind == "list" or (kind == "mixed" and level % 2)
        text, value = (f"[{text}]", [value]) if as_list else (f"{{'k': {text}}}", {"k": value})
    return text, value


@pytest.mark.parametrize("kind", ["list", "dict", "mixed"])
@pytest.mark.parametrize("form", PYTHONIC_FORMS)
def test_pythonic_reads_values_to_its_nesting_limit_and_refuses_one_deeper(form, kind):
    fmt = FORMATS["pythonic"]
    for depth in (1, PYTHONIC_DEPTH_READ - 1, PYTHONIC_DEPTH_READ):
        literal, value = nested(depth, kind)
        text = PYTHONIC_FORMS[form].format(literal)
        for events in (read_events(text, fmt), streamed(fmt, chunked(text, 7))):
            assert same_calls(calls_in(events), [ParsedToolCall("f", {"v": value})]), (depth, events)
    for depth in (PYTHONIC_DEPTH_READ + 1, PYTHONIC_DEPTH_READ + 2, 2_000, 100_000):
        text = PYTHONIC_FORMS[form].format(nested(depth, kind)[0])
        with pytest.raises(UnparsedToolCall, match="nested too deeply"):
            read_events(text, fmt)
        with pytest.raises(UnparsedToolCall, match="nested too deeply"):
            streamed(fmt, chunked(text, 4096))


# --- Mistral: an empty list after [TOOL_CALLS] is refused -------------------------------------------

MISTRAL_CALL = '{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}'
SPACE = st.sampled_from(["", " ", "\n", " \n\t", "  "])


@SETTINGS
@given(before=st.sampled_from(["", "Sure. ", "[TOOL_CALLS]get_exchange_rate[ARGS]{}"]),
       space=SPACE, inside=SPACE, after=st.sampled_from(["", " Done.", "</s>"]), size=st.integers(1, 9))
def test_an_empty_mistral_list_is_refused_never_read_as_no_call(before, space, inside, after, size):
    """[TOOL_CALLS] says a call follows: an empty list is a broken call, not silence."""
    fmt = FORMATS["mistral"]
    empty = f"{before}[TOOL_CALLS]{space}[{inside}]{after}"
    with pytest.raises(UnparsedToolCall):
        read_events(empty, fmt)
    with pytest.raises(UnparsedToolCall):
        streamed(fmt, chunked(empty, size))
    with pytest.raises(UnparsedToolCall):
        read_tool_calls(empty, fmt)
    # The same envelope with one call in it reads: the refusal is the emptiness.
    full = f"[TOOL_CALLS]{space}[{inside}{MISTRAL_CALL}{inside}]{after}"
    want = [ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})]
    assert same_calls(read_tool_calls(full, fmt).calls, want)
    assert same_calls(calls_in(streamed(fmt, chunked(full, size))), want)


# --- a byte-order mark or zero-width space before a call -------------------------------------------

# Invisible characters a reply may open with (an editor's BOM, a tokenizer's
# zero-width space): they are text, kept as written (only the whitespace
# touching a call or a block is layout), and never hide the call behind
# them, the bare pythonic list (which opens only a reply) included.
INVISIBLE_LEADS = ["\ufeff", "\u200b", "\ufeff\n", " \ufeff", "\u200b\ufeff\t", "\n\u200b "]
SAMPLES = [(name, index) for name, fmt in FORMATS.items() for index in range(len(fmt.samples))]


@pytest.mark.parametrize(("name", "index"), SAMPLES, ids=[f"{n}-{i}" for n, i in SAMPLES])
def test_an_invisible_lead_before_a_reply_hides_no_call(name, index):
    fmt = FORMATS[name]
    sample = fmt.samples[index]
    for lead in INVISIBLE_LEADS:
        text = lead + sample.text
        raw = every_character(fmt, text)
        shown = "".join(event.text for event in raw if isinstance(event, TextDelta))
        assert shown.startswith(lead), (lead, shown)  # kept as text, not dropped
        for events in (read_events(text, fmt), streamed(fmt, list(text))):
            assert same_calls(calls_in(events), sample.calls), (lead, events)
            # Only layout whitespace goes: the lead's invisible characters stay text.
            assert events == laid_out(raw, fmt.spacing), (lead, events)
            shown = "".join(event.text for event in events if isinstance(event, TextDelta))
            assert shown.startswith(lead.rstrip(fmt.spacing)), (lead, shown)
        assert same_calls(read_tool_calls(text, fmt).calls, sample.calls)


# --- reasoning_open reaches the machine through every entry point -----------------------------------

REASONING = [name for name, fmt in FORMATS.items() if fmt.reasoning]


@pytest.mark.parametrize("name", REASONING)
def test_a_reasoning_block_the_prompt_opened_is_reasoning_through_every_entry_point(name):
    fmt = FORMATS[name]
    closer = fmt.reasoning[1]
    thought, answer = "The user wants a rate.", "Here it is."
    text = thought + closer + answer
    opened = [ReasoningDelta(thought), TextDelta(answer)]
    assert read_events(text, fmt, reasoning_open=True) == opened
    for size in (1, 5, len(text)):
        assert streamed(fmt, chunked(text, size), reasoning_open=True) == opened
    reply = read_tool_calls(text, fmt, reasoning_open=True)
    assert (reply.reasoning, reply.content) == (thought, answer)
    # Not opened: the same text is all content, closer included (near miss the other way), unless
    # the closer is markup the format shows nothing for wherever it stands (Inkling's <|end_message|>
    # and Muse's <|eom|> end every block and message, not only the reasoning's).
    shown = text if read_events(closer, fmt) else thought + answer
    assert read_events(text, fmt) == [TextDelta(shown)]
    assert streamed(fmt, list(text)) == [TextDelta(shown)]
    assert read_tool_calls(text, fmt, reasoning_open=False).reasoning == ""


@pytest.mark.parametrize("name", REASONING)
def test_a_call_after_an_opened_reasoning_block_is_read_and_the_thought_kept(name):
    fmt = FORMATS[name]
    sample = next(sample for sample in fmt.samples if sample.calls and not sample.text.startswith(fmt.reasoning[0]))
    text = "Thinking." + fmt.reasoning[1] + sample.text
    for events in (read_events(text, fmt, reasoning_open=True), streamed(fmt, list(text), reasoning_open=True)):
        assert events[0] == ReasoningDelta("Thinking."), events
        assert same_calls(calls_in(events), sample.calls)


# --- chars_examined counts at least what the reply holds -------------------------------------------

# An independent bound: a machine that reads a reply to its end has looked at
# every character of it, so its count is at least the reply's length, less
# the reasoning opener it recognises by its start (not scanned character by
# character). A count that is halved, or that skips a path, falls below it.


def examined_reading(fmt, pieces: list[str]) -> int | None:
    """chars_examined after a whole read of pieces, or None when the reply was refused (the read stopped early)."""
    stream = ToolCallStream(fmt)
    try:
        for piece in pieces:
            stream.feed(piece)
        stream.close()
    except UnparsedToolCall:
        return None
    return stream.chars_examined


def unscanned_allowance(fmt) -> int:
    return len(fmt.reasoning[0]) if fmt.reasoning else 0


@pytest.mark.parametrize("name", list(FORMATS))
def test_chars_examined_is_at_least_the_reply_on_long_replies(name):
    fmt = FORMATS[name]
    prose = "The rate moved a little today, nothing more. " * 400
    # The samples that read between prose (some are a reply's start, or end at the reply's end).
    after_prose = [sample.text for sample in fmt.samples if examined_reading(fmt, ["Sure. " + sample.text + "\nOK."])]
    assert after_prose, "no sample reads after prose: the reply below would test prose alone"
    text = prose + "".join(sample + "\n" + prose for sample in after_prose)
    for size in (None, 1_000, 3):
        count = examined_reading(fmt, [text] if size is None else chunked(text, size))
        assert count is not None, "the samples and prose read"
        assert count >= len(text) - unscanned_allowance(fmt), (size, count, len(text))
        assert count <= 64 * len(text)  # and it is a count of this reply, not of something else


@SETTINGS
@given(data=st.data(), name=st.sampled_from(list(FORMATS)), cuts=st.lists(st.integers(0, 10**6), max_size=6))
def test_chars_examined_is_at_least_the_reply_on_hostile_text(data, name, cuts):
    fmt = FORMATS[name]
    text = data.draw(alphabet_text(fmt))
    count = examined_reading(fmt, split_at(text, cuts))
    if count is not None:
        assert count >= len(text) - unscanned_allowance(fmt), (count, len(text))


# --- the probe refuses a reading that leaves text beside the call -----------------------------------

# A Hermes-like template whose call turn is "LEAD<tool_call>{...}</tool_call>TAIL".
PROBE_TEMPLATE = (
    "{%- for message in messages -%}<|{{ message.role }}|>"
    "{%- if message.tool_calls -%}LEAD{%- for call in message.tool_calls -%}"
    '<tool_call>{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}</tool_call>'
    "{%- endfor -%}TAIL{%- else -%}{{ message.content }}{%- endif -%}<|end|>{%- endfor -%}"
    "{%- if add_generation_prompt %}<|assistant|>{% endif -%}"
)
LEFTOVERS = {
    "prose after the call": ("", "Let me check that."),
    "a stray bracket after the call": ("", " ]"),
    "a JSON object after the call": ("", ' {"x": 1}'),
    "a second closer": ("", "</tool_call>"),
    "a word then a tag": ("", " done <|eot|>"),
    "prose before the call": ("I will call it. ", ""),
}


def probe_with(lead: str, tail: str):
    return probe_template(PROBE_TEMPLATE.replace("LEAD", lead).replace("TAIL", tail))


def test_the_probe_reads_the_template_without_leftovers():
    # The control: with nothing beside the call, or only whitespace and a tag after it, it is Hermes.
    for lead, tail in (("", ""), ("", "\n"), ("", "\n<|tool_response|>")):
        found = probe_with(lead, tail)
        assert found.format is not None and found.format.name == "hermes", (tail, found)


@pytest.mark.parametrize("where", LEFTOVERS)
def test_the_probe_names_no_format_when_text_is_left_beside_the_call(where):
    found = probe_with(*LEFTOVERS[where])
    assert found.format is None, (where, found)
