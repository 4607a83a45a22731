"""Values that hold their wire's own markers, on the XML-parameter wires (issue 22).

Qwen3-Coder / Qwen3.5 / Qwen3.8 (``qwen-xml``), Seed-OSS and GLM write a
value as raw text between tags: nothing is escaped, so a value may hold
``</parameter>``, ``</function>``, ``<tool_call>``, ``</arg_value>`` … The
rule (``wire.xml_params``): a closer ends a value only when the structure
the template writes after a value follows it; a left-out closer is
recovered where that structure stands unmistakably; a value that could be
either is refused.

Properties, over generated values made of the three wires' markers, bits of
them, newlines and plain text:

- what ``write_call`` writes reads back exactly when the format's declared
  limits do not apply, and never reads back (a different value, or
  ``UnparsedToolCall``) when they do: the limits are the exact boundary;
- a stream in random chunks gives the whole read's events.

Then the failure classes, each as a case of its own (written here, not
copied from any suite): a marker in a value, a missing closer, a bare
``<function=…>`` with the wrapper's closer after it, and the refusals'
words.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transformers.utils.chat_template_utils import render_jinja_template

from corpus_guard import require_corpus
from oracle import same_json
from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.corpus import corpus_dir
from templatestudio.engine import read_events
from templatestudio.events import ToolCallEvent, merge_deltas
from templatestudio.formats import get_format
from templatestudio.reader import read_tool_calls
from templatestudio.stream import ToolCallStream
from templatestudio.wire.base import any_string

FORMATS = ("qwen-xml", "seed-oss", "glm-xml")
MARKERS = (
    "</parameter>", "<parameter=k>", "<parameter=b>", "</function>", "<function=f>", "<tool_call>", "</tool_call>",
    "</seed:tool_call>", "<seed:tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
    "<arg_key>b</arg_key>", "<|user|>", "<think>", "</think>",
)
PIECES = st.one_of(
    st.sampled_from(MARKERS),
    st.sampled_from(("\n", " ", "\t", "<", ">", "/", "=", "a", "é", "x y", "<param", "</para", "{\"a\": 1}")),
)
VALUES = st.lists(PIECES, max_size=8).map("".join)
KEYS = st.sampled_from(("a", "b", "k", "path", "content"))
ARGUMENTS = st.dictionaries(KEYS, VALUES, min_size=1, max_size=3)


def read(fmt, text: str):
    """The calls of text as (name, arguments) pairs, or ("raises", message)."""
    try:
        return [(event.call.name, event.call.arguments) for event in read_events(text, fmt)
                if isinstance(event, ToolCallEvent)]
    except UnparsedToolCall as error:
        return ("raises", str(error))


def streamed(fmt, text: str, rng: random.Random):
    stream, events, position = ToolCallStream(fmt), [], 0
    try:
        while position < len(text):
            size = rng.randint(1, 12)
            events += stream.feed(text[position : position + size])
            position += size
        return merge_deltas(events + stream.close())
    except UnparsedToolCall as error:
        return ("raises", str(error))


def whole(fmt, text: str):
    try:
        return merge_deltas(read_events(text, fmt))
    except UnparsedToolCall as error:
        return ("raises", str(error))


# --- the limits are the boundary ------------------------------------------------------------------


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(FORMATS), arguments=ARGUMENTS, before=st.sampled_from(("", "Sure.\n", "ok ")))
def test_a_written_value_reads_back_exactly_unless_a_declared_limit_says_it_cannot(name, arguments, before):
    fmt = get_format(name)
    text = before + fmt.write_call(ParsedToolCall("write_file", arguments))
    got = read(fmt, text)
    if not fmt.limits_for(arguments):
        assert len(got) == 1 and got[0][0] == "write_file" and same_json(got[0][1], arguments), (text, got)
    else:
        # The limit holds exactly where the template's boundary stands inside a value.
        assert isinstance(got, tuple) or len(got) != 1 or not same_json(got[0][1], arguments), (text, got)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(FORMATS), calls=st.lists(ARGUMENTS, min_size=1, max_size=2),
       after=st.sampled_from(("", "\nDone.", "</tool_call>")), seed=st.integers(0, 2**16))
def test_any_chunking_gives_the_whole_read(name, calls, after, seed):
    fmt = get_format(name)
    text = "".join(fmt.write_call(ParsedToolCall("f", arguments)) for arguments in calls) + after
    assert streamed(fmt, text, random.Random(seed)) == whole(fmt, text)


def dropped(fmt) -> tuple[str, str]:
    """What a model that drops one closer leaves out: (the closer of a value, that of the last value).

    With values padded by newlines (Qwen's), the last value loses the newline
    the template writes after the closer too, as Qwen3.8 does; elsewhere that
    newline stays and is read as layout. (Which newlines around a missing
    closer are the value's own cannot be known: the reader takes the
    template's layout, so a value ending in a newline and missing its closer
    may lose it; these drops are the ones that keep it.)
    """
    arguments = fmt.wire.arguments
    closer = getattr(arguments, "close", None) or arguments.value_close
    return closer, closer + "\n" if getattr(arguments, "newline_inside", False) else closer


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(FORMATS), arguments=ARGUMENTS, data=st.data())
def test_a_dropped_closer_is_recovered_exactly_or_refused_never_misread(name, arguments, data):
    fmt = get_format(name)
    closer, last_closer = dropped(fmt)
    if fmt.limits_for(arguments) or any_string(arguments, lambda s: closer in s):
        return  # a value holding the closer itself may read as either: the wire's own ambiguity
    text = fmt.write_call(ParsedToolCall("f", arguments))
    starts = [i for i in range(len(text)) if text.startswith(closer, i)]
    which = data.draw(st.integers(0, len(starts) - 1))
    cut = last_closer if which == len(starts) - 1 else closer
    broken = text[: starts[which]] + text[starts[which] + len(cut):]
    got = read(fmt, broken)
    assert got == [("f", arguments)] or got[0] == "raises", (broken, got)
    assert streamed(fmt, broken, random.Random(len(broken))) == whole(fmt, broken)


# --- markers inside values -------------------------------------------------------------------------

QWEN_MARKERS = [
    "Inline tags stay text: </parameter> then <parameter=path> and </function>.",
    "Calls look like <tool_call> … </tool_call> here.",
    "<tool_call>\n<function=x>\nnested",  # line-start tags that open nothing here
    "ends with </parameter>",
    "</function>\n</tool_call> is how a call ends",
    "a</parameter>b</parameter>c",
]


@pytest.mark.parametrize("value", QWEN_MARKERS)
@pytest.mark.parametrize("layout", ["newlines", "compact"])
def test_qwen_values_holding_markers_are_read_whole(value, layout):
    if layout == "newlines":
        text = (f"<tool_call>\n<function=note>\n<parameter=path>\nn.md\n</parameter>\n<parameter=body>\n{value}\n"
                "</parameter>\n</function>\n</tool_call>")
    else:
        text = f"<tool_call><function=note><parameter=path>n.md</parameter><parameter=body>{value}</parameter></function></tool_call>"
    reply = read_tool_calls("Writing it,\n  now.\n" + text, "qwen-xml")
    assert [(c.name, c.arguments) for c in reply.calls] == [("note", {"path": "n.md", "body": value})]
    assert reply.content == "Writing it,\n  now."  # the newline before the call is layout, the prose's are not


@pytest.mark.parametrize("value", [
    "Wrap each call in <tool_call> and </tool_call>; keys in <arg_key>.",
    "</arg_value> is the closer, <arg_value> the opener",
    "a </tool_call>; b",
])
@pytest.mark.parametrize("sep", ["", "\n"])
def test_glm_values_holding_markers_are_read_whole(value, sep):
    text = (f"<tool_call>note{sep}<arg_key>path</arg_key>{sep}<arg_value>n.md</arg_value>{sep}"
            f"<arg_key>body</arg_key>{sep}<arg_value>{value}</arg_value>{sep}</tool_call>")
    reply = read_tool_calls(text, "glm-xml")
    assert [(c.name, c.arguments) for c in reply.calls] == [("note", {"path": "n.md", "body": value})]


def test_seed_values_holding_markers_are_read_whole():
    value = "see </parameter> and </seed:tool_call> and </function> inline"
    text = f"<seed:tool_call>\n<function=note>\n<parameter=body>{value}</parameter>\n</function>\n</seed:tool_call>"
    assert read(get_format("seed-oss"), text) == [("note", {"body": value})]


# --- missing closers ---------------------------------------------------------------------------------


def test_qwen_a_parameter_tag_on_its_own_line_ends_a_value_missing_its_closer():
    text = ("<tool_call>\n<function=weather>\n<parameter=city>\nOslo\n<parameter=country>\nNO\n</parameter>\n"
            "<parameter=unit>\ncelsius\n</parameter>\n</function>\n</tool_call>")
    assert read(get_format("qwen-xml"), text) == [("weather", {"city": "Oslo", "country": "NO", "unit": "celsius"})]


def test_qwen_the_call_s_closing_ends_a_last_value_missing_its_closer():
    text = '<tool_call>\n<function=send>\n<parameter=body>\n{"on": true}\n</function>\n</tool_call>'
    assert read(get_format("qwen-xml"), text) == [("send", {"body": '{"on": true}'})]


def test_glm_the_call_s_closer_at_the_end_ends_a_last_value_missing_its_closer():
    fmt = get_format("glm-xml")
    cut = "<tool_call>weather<arg_key>city</arg_key><arg_value>Oslo</arg_value><arg_key>unit</arg_key><arg_value>celsius</tool_call>"
    assert read(fmt, cut) == [("weather", {"city": "Oslo", "unit": "celsius"})]
    assert read(fmt, cut + "\n" + cut) == [("weather", {"city": "Oslo", "unit": "celsius"})] * 2
    missing_mid = "<tool_call>weather<arg_key>city</arg_key><arg_value>Oslo<arg_key>unit</arg_key><arg_value>c</arg_value></tool_call>"
    assert read(fmt, missing_mid) == [("weather", {"city": "Oslo", "unit": "c"})]


@pytest.mark.parametrize(("name", "text", "message"), [
    ("qwen-xml", "<tool_call>\n<function=f>\n<parameter=a>\nx</parameter> y\n<parameter=b>\n2\n</parameter>\n</function>\n</tool_call>",
     "the value of 'a' holds </parameter> at offset 40 that does not end it, and has no </parameter> of its own"),
    ("qwen-xml", "<tool_call>\n<function=f>\n<parameter=a>\nx</parameter>!\n</function>\n</tool_call>",
     "the value of 'a' holds </parameter> at offset 40 that does not end it"),
    ("glm-xml", "<tool_call>f<arg_key>a</arg_key><arg_value>x</arg_value>!</tool_call>",
     "the value of 'a' holds </arg_value> at offset 44 that does not end it"),
    ("qwen-xml", "<tool_call>\n<function=f>\n<parameter=a>\n1\n<parameter=a>\n2\n</parameter>\n</function>\n</tool_call>",
     "parameter 'a' is given twice"),
    ("qwen-xml", "<tool_call>\n<function=f>\n<parameter=a>\nx</parameter>!\n</function>\nmore</tool_call>",
     "was never closed"),  # </function> then text: not the call's end, so the call never ends
    ("seed-oss", "<seed:tool_call><function=f><parameter=a>x</parameter>!</function></seed:tool_call>",
     "the value of 'a' holds </parameter> at offset 42 that does not end it"),
])
def test_a_value_that_could_be_read_two_ways_is_refused_in_words(name, text, message):
    fmt = get_format(name)
    got = read(fmt, text)
    assert got[0] == "raises" and message in got[1], got
    assert streamed(fmt, text, random.Random(7)) == whole(fmt, text)


def test_glm_a_key_is_passed_over_whole():
    text = "<tool_call>f<arg_key>a</tool_call>b</arg_key><arg_value>v</arg_value></tool_call>"
    assert read(get_format("glm-xml"), text) == [("f", {"a</tool_call>b": "v"})]


def test_qwen35_a_call_started_inside_an_unclosed_think_block():
    text = "Need the directory.\n<tool_call>\n<function=run>\n<parameter=cmd>\npwd\n</parameter>\n</function>\n</tool_call>"
    reply = read_tool_calls(text, "qwen-xml", prefix="<|im_start|>assistant\n<think>\n")
    assert [(c.name, c.arguments) for c in reply.calls] == [("run", {"cmd": "pwd"})]


# --- the bare function tag ---------------------------------------------------------------------------


@pytest.mark.parametrize("gap", ["\n", "", " \n "])
def test_a_bare_function_s_trailing_wrapper_closer_is_the_call_s_not_content(gap):
    call = "<function=glob>\n<parameter=pattern>\n**/*.md\n</parameter>\n</function>"
    reply = read_tool_calls(f"Listing.\n\n{call}{gap}</tool_call>\nDone,  bye.", "qwen-xml")
    assert [(c.name, c.arguments) for c in reply.calls] == [("glob", {"pattern": "**/*.md"})]
    # The whitespace on both sides of the call is layout (the two texts meet); the prose's own is kept.
    assert reply.content == "Listing.Done,  bye."
    bare = read_tool_calls(f"{call}\nDone.", "qwen-xml")
    assert bare.content == "Done." and len(bare.calls) == 1


def test_a_bare_function_then_a_wrapped_one():
    text = ("<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>\n"
            "<tool_call>\n<function=b>\n<parameter=y>\n2\n</parameter>\n</function>\n</tool_call>")
    reply = read_tool_calls(text, "qwen-xml")
    assert [(c.name, c.arguments) for c in reply.calls] == [("a", {"x": "1"}), ("b", {"y": "2"})]
    assert reply.content.strip() == ""


# --- what the limits say ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "value", "limited"), [
    ("qwen-xml", "a </parameter> b", False),
    ("qwen-xml", "a\n</parameter>\n<parameter=z>\nb", True),
    ("qwen-xml", "a\n<parameter=z>\nb", True),
    ("qwen-xml", "a </parameter></function></tool_call>", True),
    ("qwen-xml", "a </function></tool_call>", False),  # a recovery needs the reply to end or a call to follow
    ("qwen-xml", "a\n<parameter=z>", True),
    ("qwen-xml", "a <tool_call></tool_call>", False),
    ("qwen-xml", "</parameter>", False),
    ("glm-xml", "x</arg_value><arg_key>", True),
    ("glm-xml", "x</arg_value> y", False),
    ("glm-xml", "x</tool_call>", False),
    ("glm-xml", "<arg_key>k</arg_key><arg_value>", True),
    ("seed-oss", "x</parameter>\n</function></seed:tool_call>", True),
    ("seed-oss", "x</parameter>", False),
])
def test_the_wire_limit_names_exactly_the_values_that_hold_a_boundary(name, value, limited):
    fmt = get_format(name)
    assert bool(fmt.limits_for({"v": value})) is limited
    got = read(fmt, fmt.write_call(ParsedToolCall("f", {"v": value})))
    assert (got == [("f", {"v": value})]) is not limited


# --- through the real templates ----------------------------------------------------------------------

# (template in the corpus, format, the assistant header the turn follows, what the template ends a turn with)
TEMPLATES = (
    ("Qwen3-Coder", "qwen-xml", "<|im_start|>assistant\n", "<|im_end|>\n"),
    ("Qwen3.8-27B", "qwen-xml", "<|im_start|>assistant\n", "<|im_end|>\n"),
    ("qwen3_5_nothink", "qwen-xml", "<|im_start|>assistant\n", "<|im_end|>\n"),
    ("GLM-4.7-Flash", "glm-xml", "<|assistant|>", ""),
    ("glm4moe", "glm-xml", "<|assistant|>", ""),
    ("ByteDance-Seed-OSS", "seed-oss", "<seed:bos>assistant\n", "<seed:eos>"),
)
TOOL = {"type": "function", "function": {"name": "write_file", "description": "Write a file.",
                                         "parameters": {"type": "object", "properties": {}}}}


def rendered_turn(template: str, arguments: dict, header: str, end: str) -> str:
    conversation = [{"role": "user", "content": "Write it."},
                    {"role": "assistant", "content": "",
                     "tool_calls": [{"type": "function", "function": {"name": "write_file", "arguments": arguments}}]}]
    rendered, _ = render_jinja_template(conversations=[conversation], chat_template=template, tools=[TOOL])
    turn = rendered[0][rendered[0].rindex(header) + len(header):]
    return turn[: len(turn) - len(end)] if end and turn.endswith(end) else turn


@pytest.mark.parametrize(("template_name", "name", "header", "end"), TEMPLATES, ids=[t[0] for t in TEMPLATES])
def test_what_the_corpus_template_writes_reads_back_unless_a_limit_says_it_cannot(template_name, name, header, end):
    require_corpus()
    template = (corpus_dir() / "templates" / f"{template_name}.jinja").read_text(encoding="utf-8")
    fmt = get_format(name)

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(arguments=ARGUMENTS)
    def check(arguments):
        turn = rendered_turn(template, arguments, header, end)
        got = read(fmt, turn)
        if not fmt.limits_for(arguments):
            assert len(got) == 1 and got[0][0] == "write_file" and same_json(got[0][1], arguments), (turn, got)
        else:
            assert isinstance(got, tuple) or len(got) != 1 or not same_json(got[0][1], arguments), (turn, got)

    check()
