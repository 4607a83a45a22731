"""Issue 22's three Llama/Kimi failure classes, each generated as a class with its near misses.

- Llama 3 JSON: a call written with ``"arguments"`` instead of Meta's
  ``"parameters"`` is read (vLLM's ``llama3_json`` and SGLang read both),
  bare or after ``<|python_tag|>``, in any key order; exactly one of the two
  keys: both present is refused with the reason, neither is no call. The
  writer still writes ``"parameters"``. Prose and JSON data stay text.
- Kimi K2: a call id ``NAME:IDX`` without ``functions.`` is read, its name
  the text before the last ``:``, its id returned as written; an id with no
  ``:IDX`` (or an empty name) is still refused.
- Pythonic (Llama 4): the list is one expression. A reply cut anywhere
  before the list's ``]`` gives no call at all, even when calls inside it
  closed: the whole list, from ``[`` (or its wrapper), is the
  ``CutToolCall`` (strictly: the reply raises). Cut inside a wrapper's
  closer after ``]``, every call of the list is read. A cut call is never
  returned as a complete call.

Arguments are compared with ``oracle.same_json``; every case is also read
as a stream in random chunks, which must give the whole read.
"""

from __future__ import annotations

import json
import random
import re
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio import CutToolCall, ParsedToolCall, ToolCallStream, UnparsedToolCall, read_tool_calls
from templatestudio.engine import Machine, read_events
from templatestudio.events import TextDelta, ToolCallEvent, merge_deltas
from templatestudio.formats import FORMATS
from layout_oracle import laid_out
from oracle import same_json  # the tests' own comparison, not the package's

LLAMA, PHI4, KIMI, PYTHONIC = (FORMATS[name] for name in ("llama3-json", "phi4-mini", "kimi-k2", "pythonic"))
TAG = "<|python_tag|>"
SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CUT = "the reply ended inside a tool call: "


# --- helpers -------------------------------------------------------------------------------------

def outcome(read):
    try:
        return "events", read()
    except UnparsedToolCall as error:
        return "raises", str(error)


def streamed(fmt, text: str, seed: int, *, strict: bool = True) -> list:
    rng, stream, events, at = random.Random(seed), ToolCallStream(fmt, strict=strict), [], 0
    while at < len(text):
        size = rng.randint(1, 9)
        events += stream.feed(text[at : at + size])
        at += size
    return merge_deltas(events + stream.close())


def assert_streams_like_whole(fmt, text: str, seeds=range(4), *, strict: bool = True) -> None:
    whole = outcome(lambda: read_events(text, fmt, strict=strict))
    for seed in seeds:
        got = outcome(lambda: streamed(fmt, text, seed, strict=strict))
        assert got[0] == whole[0], (seed, text, got, whole)
        if got[0] == "events":
            assert same_events(got[1], whole[1]), (seed, text, got, whole)
    one_by_one = outcome(lambda: streamed(fmt, text, 0, strict=strict) if len(text) < 2 else _chars(fmt, text, strict))
    assert one_by_one[0] == whole[0] and (whole[0] == "raises" or same_events(one_by_one[1], whole[1])), text


def _chars(fmt, text: str, strict: bool) -> list:
    stream = ToolCallStream(fmt, strict=strict)
    return merge_deltas([event for char in text for event in stream.feed(char)] + stream.close())


def same_events(left: list, right: list) -> bool:
    if len(left) != len(right):
        return False
    for a, b in zip(left, right):
        if type(a) is not type(b):
            return False
        if isinstance(a, ToolCallEvent):
            if a.call.name != b.call.name or not same_json(a.call.arguments, b.call.arguments) or a.id != b.id:
                return False
        elif a != b:
            return False
    return True


def calls_in(events: list) -> list[ParsedToolCall]:
    return [event.call for event in events if isinstance(event, ToolCallEvent)]


def assert_calls(calls, expected: list[tuple[str, dict]]) -> None:
    assert [call.name for call in calls] == [name for name, _ in expected]
    for call, (_, arguments) in zip(calls, expected):
        assert same_json(call.arguments, arguments), (call.arguments, arguments)


scalars = st.one_of(
    st.integers(-10**6, 10**6), st.booleans(), st.none(), st.floats(-1e6, 1e6, allow_nan=False),
    st.text(string.ascii_letters + " ,:{}[]()\"'\\é漢=", max_size=10),
)
json_keys = st.text(string.ascii_letters + " _", min_size=1, max_size=8)


def objects(keys):
    values = st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(string.ascii_letters, max_size=5), inner, max_size=3)),
        max_leaves=8)
    return st.dictionaries(keys, values, max_size=4)


prose = st.text(string.ascii_letters + " .,!?", max_size=15)
llama_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,12}", fullmatch=True)


# --- Llama 3: "parameters" or "arguments", exactly one -------------------------------------------

def llama_object(name: str, key: str, arguments: dict, *, typed: bool, name_first: bool) -> str:
    pairs = [("name", name), (key, arguments)]
    if not name_first:
        pairs.reverse()
    if typed:
        pairs.insert(0, ("type", "function"))
    return json.dumps(dict(pairs), ensure_ascii=False)


@SETTINGS
@given(name=llama_names, arguments=objects(json_keys), key=st.sampled_from(["parameters", "arguments"]),
       tag=st.booleans(), typed=st.booleans(), name_first=st.booleans(), before=prose, after=prose)
def test_llama3_reads_either_arguments_key_bare_or_after_the_tag(name, arguments, key, tag, typed, name_first,
                                                                 before, after):
    body = llama_object(name, key, arguments, typed=typed, name_first=name_first)
    text = f"{before}{TAG if tag else ''}{body}"
    if not tag:
        text += after  # after the tag the call runs to the reply's end
    reply = read_tool_calls(text, "llama3-json")
    assert_calls(reply.calls, [(name, arguments)])
    assert reply.cut is None and reply.ids == [None]
    # Every character: the prose around the call is text, the layout rule takes only the whitespace touching it.
    raw = Machine(LLAMA, layout=False)
    raw_events = merge_deltas(raw.feed(text) + raw.close())
    shown = [before, *([] if tag else [after])]
    assert "".join(event.text for event in raw_events if isinstance(event, TextDelta)) == "".join(shown)
    assert same_events(reply.events, laid_out(raw_events, LLAMA.spacing))
    assert_streams_like_whole(LLAMA, text, seeds=[len(text)])


@SETTINGS
@given(name=llama_names, arguments=objects(json_keys), string_form=st.booleans())
def test_llama3_arguments_key_takes_json_string_arguments_as_parameters_does(name, arguments, string_form):
    value = json.dumps(arguments) if string_form else arguments
    for key in ("parameters", "arguments"):
        text = json.dumps({"name": name, key: value})
        assert_calls(read_tool_calls(text, "llama3-json").calls, [(name, arguments)])


@SETTINGS
@given(name=llama_names, parameters=objects(json_keys), arguments=objects(json_keys), tag=st.booleans(),
       order=st.permutations(["name", "parameters", "arguments"]))
def test_llama3_both_keys_are_refused_with_the_reason(name, parameters, arguments, tag, order):
    values = {"name": name, "parameters": parameters, "arguments": arguments}
    text = (TAG if tag else "") + json.dumps({key: values[key] for key in order}, ensure_ascii=False)
    with pytest.raises(UnparsedToolCall, match=re.escape(
            f"the call to {name!r} has 'parameters' and 'arguments': only one of them may hold its arguments")):
        read_tool_calls(text, "llama3-json")
    assert_streams_like_whole(LLAMA, text, seeds=[len(text)])


def test_llama3_neither_key_after_the_tag_is_refused_and_bare_is_data():
    with pytest.raises(UnparsedToolCall, match=re.escape("the call to 'f' needs exactly one of 'parameters' or "
                                                         "'arguments'")):
        read_tool_calls(TAG + '{"name": "f"}', "llama3-json")
    with pytest.raises(UnparsedToolCall, match="unexpected key 'args'"):
        read_tool_calls(TAG + '{"name": "f", "arguments": {}, "args": {}}', "llama3-json")
    for text in ('The user is {"name": "Ada", "age": 36}.', '{"name": "f", "args": {"a": 1}}'):
        reply = read_tool_calls(text, "llama3-json")
        assert reply.calls == [] and reply.content == text
        assert_streams_like_whole(LLAMA, text)


@pytest.mark.parametrize("text", [
    'The reply was {"arguments": ["a", "b"]}.',  # an arguments key and no name: data
    'Schema: {"name": "get_rate", "arguments": {"type": "object", "properties": {}}} as given.',  # a tool's schema
    'Send {"arguments": 1} or {"parameters": 2}, then stop.',
    "Use {arguments} and {parameters} as placeholders.",
])
def test_llama3_json_that_is_no_call_stays_text(text):
    reply = read_tool_calls(text, "llama3-json")
    assert reply.calls == [] and reply.content == text and reply.cut is None
    assert_streams_like_whole(LLAMA, text)


@pytest.mark.parametrize("key", ["parameters", "arguments"])
def test_llama3_an_object_cut_after_either_key_is_a_cut_call_never_text_nor_a_call(key):
    text = f'A config: {{"name": "x", "{key}": {{"a": [1, 2]'
    reply = read_tool_calls(text, "llama3-json")
    # Llama 3's templates write no whitespace of their own beside a call (spacing=""): the space stays.
    assert reply.calls == [] and reply.content == "A config: "
    assert reply.cut == CutToolCall("x", text[text.index("{") :], text.index("{"))
    with pytest.raises(UnparsedToolCall, match="^" + re.escape(CUT)):
        read_tool_calls(text, "llama3-json", strict=True)
    assert_streams_like_whole(LLAMA, text, strict=False)


@SETTINGS
@given(name=llama_names, arguments=objects(json_keys))
def test_llama3_writes_parameters_and_reads_its_writing_back(name, arguments):
    written = LLAMA.write_call(ParsedToolCall(name, arguments))
    assert json.loads(written).keys() == {"name", "parameters"}
    assert_calls(read_tool_calls(written, "llama3-json").calls, [(name, arguments)])


def test_the_arguments_object_is_read_by_its_own_machine_and_named_by_guards():
    text = '{"name": "f", "arguments": {"a": 1}}'
    # Llama 3's and Phi-4-mini's machines each try their own openers first and read it.
    for fmt in (LLAMA, PHI4):
        assert_calls(read_tool_calls(text, fmt).calls, [("f", {"a": 1})])
    # Phi-4-mini's machine still refuses Llama 3's own key as another format's call.
    with pytest.raises(UnparsedToolCall, match="opens a call in the llama3-json format"):
        read_tool_calls('{"name": "f", "parameters": {"a": 1}}', "phi4-mini")
    # Another machine's guard names the first format of the registry that reads it.
    with pytest.raises(UnparsedToolCall, match="opens a call in the llama3-json format"):
        read_tool_calls(text, "hermes")
    # A Phi-4-mini call that Phi-4-mini refuses (string arguments) is still Llama 3's to read.
    assert_calls(read_tool_calls('{"name": "f", "arguments": "{\\"a\\": 1}"}', "llama3-json").calls, [("f", {"a": 1})])
    with pytest.raises(UnparsedToolCall, match="must be a JSON object"):
        read_tool_calls('{"name": "f", "arguments": "{\\"a\\": 1}"}', "phi4-mini")


@pytest.mark.parametrize("text", [
    '{"name": "searchTool", "arguments": {"query": "test"}}',
    TAG + '{"name": "get_weather", "arguments": {"city": "Beijing"}}',
    'Let me check. ' + TAG + '{"name": "get_weather", "arguments": {"city": "Tokyo"}}',
])
def test_llama3_the_issue_replies(text):
    reply = read_tool_calls(text, "llama3-json")
    # spacing="": whatever the model wrote before the call is its own, whitespace included.
    assert len(reply.calls) == 1 and reply.content == text[: text.find(TAG) if TAG in text else 0]
    assert_streams_like_whole(LLAMA, text)
    for size in (1, len(text)):  # one delta per character, and the whole reply in a single delta
        assert same_events(merge_deltas(_pieces(text, size)), reply.events)


def _pieces(text: str, size: int) -> list:
    stream = ToolCallStream(LLAMA)
    return [event for at in range(0, len(text), size) for event in stream.feed(text[at : at + size])] + stream.close()


# --- Kimi K2: ids with or without functions. ---------------------------------------------------

SECTION, SECTION_END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
CALL_BEGIN, ARGS, CALL_END = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"
# Weird names: dots, colons (the name is the text before the LAST ":"), digits, non-ASCII, symbols.
kimi_names = st.text(string.ascii_letters + string.digits + "._-:/$@é漢", min_size=1, max_size=12)


def kimi_call(ident: str, arguments: dict, space: str = "") -> str:
    return f"{CALL_BEGIN}{space}{ident}{space}{ARGS}{space}{json.dumps(arguments, ensure_ascii=False)}{space}{CALL_END}"


@SETTINGS
@given(calls=st.lists(st.tuples(kimi_names, st.booleans(), st.integers(0, 999), objects(json_keys)),
                      min_size=1, max_size=3),
       space=st.sampled_from(["", " ", "\n"]), before=prose)
def test_kimi_ids_with_or_without_the_prefix_give_the_name_before_the_last_colon(calls, space, before):
    idents = [f"functions.{name}:{index}" if prefixed else f"{name}:{index}" for name, prefixed, index, _ in calls]
    text = f"{before}{SECTION}{''.join(kimi_call(i, a, space) for i, (*_, a) in zip(idents, calls))}{SECTION_END}"
    reply = read_tool_calls(text, "kimi-k2")
    # Written without the prefix, a name that starts with "functions." cannot be told from a prefixed one.
    expected = [name if prefixed or not name.startswith("functions.") else name.removeprefix("functions.")
                for name, prefixed, _, _ in calls]
    assert_calls(reply.calls, [(name, arguments) for name, (*_, arguments) in zip(expected, calls)])
    assert reply.ids == idents  # the id exactly as written
    assert reply.content == before.rstrip(KIMI.spacing)
    assert_streams_like_whole(KIMI, text, seeds=[len(text)])


@SETTINGS
@given(name=kimi_names, index=st.integers(0, 99))
def test_kimi_the_writer_writes_the_prefix(name, index):
    assert KIMI.write_call(ParsedToolCall(name, {})).startswith(SECTION + CALL_BEGIN + f"functions.{name}:")
    text = f"{SECTION}{kimi_call(f'{name}:{index}', {})}{SECTION_END}"
    assert read_tool_calls(text, "kimi-k2").calls == [ParsedToolCall(name, {})]


@pytest.mark.parametrize("ident", [
    "get_weather", "functions.get_weather", "get_weather:", "functions.get_weather:", "get_weather:x",
    "get_weather:٠", "get_weather:0x", ":0", "functions.:0", "get_weather:-1",
])
def test_kimi_an_id_without_an_index_or_a_name_is_refused_with_the_id(ident):
    text = f"Checking. {SECTION}{kimi_call(ident, {'city': 'Tokyo'})}{SECTION_END}"
    with pytest.raises(UnparsedToolCall, match=re.escape(f"the call id {ident!r} is not functions.NAME:IDX nor NAME:IDX")):
        read_tool_calls(text, "kimi-k2")
    assert_streams_like_whole(KIMI, text)


def test_kimi_the_issue_reply():
    text = ('No prefix. <|tool_calls_section_begin|><|tool_call_begin|>get_weather:0 <|tool_call_argument_begin|>'
            '{"city": "Tokyo"}<|tool_call_end|><|tool_calls_section_end|>')
    reply = read_tool_calls(text, "kimi-k2")
    assert_calls(reply.calls, [("get_weather", {"city": "Tokyo"})])
    assert reply.ids == ["get_weather:0"] and reply.content == "No prefix. "  # Kimi declares no layout
    assert_streams_like_whole(KIMI, text)


# --- pythonic: a list cut before its "]" gives no call -------------------------------------------

py_names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True)
py_keys = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)
py_calls = st.lists(st.tuples(py_names, objects(py_keys)), min_size=1, max_size=4)


def pythonic_list(calls: list[tuple[str, dict]]) -> str:
    """The calls as one list, each written by the format's writer (which writes one-call lists)."""
    return "[" + ", ".join(PYTHONIC.write_call(ParsedToolCall(name, arguments))[1:-1] for name, arguments in calls) + "]"


def check_cut_list(text: str, start: int, list_end: int, calls: list[tuple[str, dict]], seed: int) -> None:
    """text cut at every k: before list_end (just past "]") no call and the list is the cut; after it all calls."""
    rng = random.Random(seed)
    first_paren = text.index("(", start)
    for k in range(len(text) + 1):
        prefix = text[:k]
        reply = read_tool_calls(prefix, "pythonic")
        where = (k, prefix, reply.events)
        if k < list_end:
            # No call, complete or not: the cut call is never returned as one.
            assert reply.calls == [], where
            if k > first_paren:
                assert reply.cut == CutToolCall(None, prefix[start:], start), where
                strict = outcome(lambda: read_events(prefix, PYTHONIC))
                assert strict[0] == "raises" and strict[1].startswith(CUT), where
            elif reply.cut is not None:  # still only an opening: a cut call, or prose
                assert reply.cut.offset == start and reply.cut.raw == prefix[start:], where
        elif k == list_end and reply.cut is not None and reply.cut.offset == start:
            # The list closed and the wrapper's closer never began: the wrapper is the cut, whole.
            assert k < len(text) and reply.calls == [] and reply.cut.raw == prefix[start:], where
        else:
            # The list closed: every call, and at most the start of the wrapper's closer is the cut.
            assert_calls(reply.calls, calls)
            assert reply.cut is None or (reply.cut.name is None and reply.cut.offset >= list_end), where
        # Every character: the raw machine shows the prose, and the cut call's raw holds the rest.
        machine = Machine(PYTHONIC, strict=False, layout=False)
        raw = merge_deltas(machine.feed(prefix) + machine.close())
        assert laid_out(raw, PYTHONIC.spacing) == reply.events, where
        stream = ToolCallStream(PYTHONIC, strict=False)
        events, at = [], 0
        while at < k:
            size = rng.randint(1, 9)
            events += stream.feed(prefix[at : at + size])
            at += size
        assert merge_deltas(events + stream.close()) == reply.events, where


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=py_calls, seed=st.integers(0, 1000))
def test_pythonic_a_bare_list_cut_anywhere_before_its_bracket_gives_no_call(calls, seed):
    text = pythonic_list(calls)
    assert_calls(read_tool_calls(text, "pythonic").calls, calls)
    check_cut_list(text, 0, len(text), calls, seed)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=py_calls, seed=st.integers(0, 1000), wrapper=st.sampled_from(sorted(PYTHONIC.wire.wrappers, key=str)),
       before=st.sampled_from(["", "Sure. ", "Let me check.\n"]))
def test_pythonic_a_wrapped_list_cut_before_its_bracket_gives_no_call_and_after_it_every_call(calls, seed, wrapper,
                                                                                              before):
    listed = pythonic_list(calls)
    text = before + wrapper.open + listed + wrapper.close
    check_cut_list(text, len(before), len(before) + len(wrapper.open) + len(listed), calls, seed)


def test_pythonic_the_issue_reply_is_one_cut_list():
    text = '[get_weather(city="San Francisco"), get_weather(city="Seattle'
    reply = read_tool_calls(text, "pythonic")
    assert reply.calls == [] and reply.content == "" and reply.cut == CutToolCall(None, text, 0)
    with pytest.raises(UnparsedToolCall, match=r"^the reply ended inside a tool call: '\[get_weather\(city=\"San F' "
                                               r"at offset 0 was never closed"):
        read_tool_calls(text, "pythonic", strict=True)
    # The first call closed, and a value's own "]" closed: still inside the list, still no call.
    for cut in ('[a(x=1), b(y=[1, 2]', '[a(x=1), b(y=2)', '[a(x=1),', '[a(x=["]"])'):
        reply = read_tool_calls(cut, "pythonic")
        assert reply.calls == [] and reply.cut == CutToolCall(None, cut, 0), cut
