"""Argument deltas (argument_deltas, call_preview, wire.json_prefix): pieces of a call's arguments as they arrive.

The properties: the canonical prefix of any JSON value, fed in any pieces,
is always a prefix of ``json.dumps(json.loads(raw), ensure_ascii=False)``
and ends equal to it; for every format that gets deltas and any calls its
writer writes, in any chunking, the deltas of each call concatenate to
exactly its arguments' JSON, never finish it before the reader has read the
call, and the events without the deltas are the plain stream's (so
``read_events``'s). Then the rule for a call that proves different after
deltas went out, for each way it can: a key written twice, a reply cut
inside the call, a call the reader refuses; a call whose strings (control
characters, quotes, backslashes) the preview cannot decode gets the whole
read's verdict; and the counted work of following a call, whitespace floods
included, is linear in any chunking.
"""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from templatestudio import argument_deltas, call_preview
from templatestudio.argument_deltas import ArgumentStream, ArgumentsDelta, ArgumentsWithdrawn, StreamedCallChanged
from templatestudio.call_preview import CallPreview, preview_refusal
from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.engine import read_events
from templatestudio.events import CutToolCall, ToolCallEvent, merge_deltas
from templatestudio.formats import FORMATS
from templatestudio.wire.arguments import NameKey
from templatestudio.wire.json_prefix import JsonPrefix
from templatestudio.wire.jsonbody import skip_space

DELTA_FORMATS = [name for name, fmt in FORMATS.items() if preview_refusal(fmt.wire) is None]
KEYS = st.text(max_size=8)
SCALARS = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | \
    st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
                      max_leaves=10)
ARGUMENTS = st.dictionaries(KEYS, VALUES, max_size=5)
NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,20}", fullmatch=True)
IDS = st.from_regex(r"[A-Za-z0-9]{1,12}", fullmatch=True)


def canonical(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def pieces(text: str, seed: int, largest: int = 16) -> list[str]:
    rng, out, at = random.Random(seed), [], 0
    while at < len(text):
        size = rng.randint(1, largest)
        out.append(text[at : at + size])
        at += size
    return out


def fed(stream, text: str, seed: int) -> list:
    events = []
    for piece in pieces(text, seed):
        events += stream.feed(piece)
    return events + stream.close()


# --- the canonical prefix of one JSON value -----------------------------------------------------


@settings(max_examples=600)
@given(value=ARGUMENTS, ascii_only=st.booleans(), indent=st.sampled_from([None, 0, 1, "\t"]),
       separators=st.sampled_from([None, (",", ":"), (" ,", " : ")]), seed=st.integers(0, 2**16),
       after=st.text(max_size=6))
def test_any_writing_of_a_value_gives_its_canonical_text_and_only_prefixes_of_it(
        value, ascii_only, indent, separators, seed, after):
    raw = json.dumps(value, ensure_ascii=ascii_only, indent=indent, separators=separators)
    want = canonical(json.loads(raw))
    prefix, given_out = JsonPrefix(), ""
    for piece in pieces(raw + after, seed, 6):
        given_out += prefix.feed(piece)
        assert want.startswith(given_out), (raw, given_out)
    assert (given_out, prefix.end, prefix.broken) == (want, len(raw), None)


@settings(max_examples=600)
@given(value=ARGUMENTS, where=st.integers(0, 10**6), edit=st.sampled_from(["drop", "insert"]),
       char=st.sampled_from(list('{}[],:"\\ \n0-.etrufalsn\x01')), seed=st.integers(0, 2**16))
def test_a_damaged_value_never_gives_out_what_the_decoder_would_not(value, where, edit, char, seed):
    """Whatever the text, the output is canonical JSON of what the decoder reads, up to where it stops."""
    raw = json.dumps(value, ensure_ascii=False)
    at = where % (len(raw) + 1)
    raw = raw[:at] + raw[at + 1:] if edit == "drop" else raw[:at] + char + raw[at:]
    prefix = JsonPrefix()
    given_out = "".join(prefix.feed(piece) for piece in pieces(raw, seed, 5))
    if prefix.end is not None:
        decoded = json.loads(raw[: prefix.end])
        assert given_out == canonical(decoded)
    try:
        decoded = json.loads(raw, object_pairs_hook=_no_twice)
    except ValueError:
        return
    if isinstance(decoded, dict) and "Infinity" not in canonical(decoded):
        assert prefix.broken is None and given_out == canonical(decoded)


def _no_twice(pairs):
    keys = [key for key, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("a key twice")
    return dict(pairs)


@pytest.mark.parametrize(("raw", "out", "broken"), [
    ('{"a": 1, "a": 2}', '{"a": 1, ', "the key 'a' a second time at offset 9 (the decoder keeps the last value)"),
    ('{"a": "x\ny"}', '{"a": "x', "a raw control character '\\n' in a string at offset 8"),
    ('{"a": 1e400}', '{"a": ', "'1e400' is not a finite number"),
    ('{"a": 1' + "0" * 5000 + "}", '{"a": ', "'10000000000000000000'… has more digits than the decoder reads"),
    ('{"a": tru}', '{"a": ', "'tru' is not 'true'"),
    ('{"a": 01}', '{"a": ', "'01' is not a JSON number"),
    ('{"a": "\\x"}', '{"a": "', "no JSON escape \\x at offset 8"),
    ('{"a": "\\u12g4"}', '{"a": "', "\\u12g is not a \\uXXXX escape at offset 11"),
    ("{'a': 1}", "{", "a key must be a string, not \"'\" at offset 1"),
    ('{"a" 1}', '{"a"', "':' expected after a key, not '1' at offset 5"),
    ('{"a": 1]', '{"a": 1', "']' does not close '{' at offset 7"),
])
def test_each_way_out_of_json_stops_the_prefix_with_its_reason(raw, out, broken):
    prefix = JsonPrefix()
    assert "".join(prefix.feed(char) for char in raw) == out
    assert prefix.broken == broken and prefix.end is None


def test_surrogate_escapes_pair_up_as_the_decoder_pairs_them():
    for raw in ('{"a": "\\ud83d\\ude00"}', '{"a": "\\ud83d x"}', '{"a": "\\ud800\\ud800"}', '{"a": "\\udc00"}'):
        prefix = JsonPrefix()
        assert "".join(prefix.feed(char) for char in raw) == canonical(json.loads(raw)), raw


# --- which formats get deltas -----------------------------------------------------------------


def test_every_format_gets_deltas_or_says_why_not():
    for name, fmt in FORMATS.items():
        why = preview_refusal(fmt.wire)
        assert why is None or (isinstance(why, str) and why), name
        if why is not None:
            with pytest.raises(ValueError, match="no argument deltas for this shape"):
                CallPreview(fmt.wire)
    assert {"hermes", "mistral", "llama3-json", "functionary-v3.1"} <= set(DELTA_FORMATS)
    assert preview_refusal(FORMATS["qwen-xml"].wire) == \
        "its values are written as text, typed by the request's schema only once the call is whole"
    assert preview_refusal(FORMATS["gemma4"].wire) == "its arguments are written in the {key:value} grammar, not JSON"
    assert preview_refusal(FORMATS["harmony"].wire) == \
        "part of its call is read by the module's own code, not by the declaration"
    assert preview_refusal(FORMATS["deepseek-v3.1"].wire) == "its calls stand in a section, several to a region"
    assert preview_refusal(FORMATS["granite"].wire) == "its calls stand in a JSON list"


def test_a_format_without_deltas_gives_exactly_the_streams_events():
    fmt = FORMATS["qwen-xml"]
    text = "Let me check.\n" + fmt.wire.write_call(ParsedToolCall("get_weather", {"city": "Paris"}))
    assert merge_deltas(fed(ArgumentStream(fmt), text, 1)) == read_events(text, fmt)


# --- the property over every format with deltas -------------------------------------------------


@pytest.mark.parametrize("name", DELTA_FORMATS)
@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data(), seed=st.integers(0, 2**16), prose=st.sampled_from(["", "Let me check. ", "Sure:\n"]))
def test_the_deltas_of_each_call_make_its_arguments_and_the_rest_is_the_stream(name, data, seed, prose):
    fmt = FORMATS[name]
    calls = data.draw(st.lists(st.builds(ParsedToolCall, NAMES, ARGUMENTS), min_size=1, max_size=3))
    assume(not any(fmt.limits_for(call.arguments) for call in calls))
    # Ids, some calls without: written where the declaration puts one (Mistral's NAME[CALL_ID]ID[ARGS]).
    ids = data.draw(st.lists(st.none() | IDS, min_size=len(calls), max_size=len(calls)))
    text = prose + fmt.wire.write_calls(calls, ids)
    events = fed(ArgumentStream(fmt), text, seed)
    plain = [event for event in events if not isinstance(event, ArgumentsDelta)]
    assert merge_deltas(plain) == read_events(text, fmt)
    read = [event for event in plain if isinstance(event, ToolCallEvent)]
    for index, event in enumerate(read):
        call = event.call
        mine = [piece for piece in events if isinstance(piece, ArgumentsDelta) and piece.index == index]
        if not mine:
            continue
        assert {delta.name for delta in mine} == {call.name}
        assert {delta.id for delta in mine} == {event.id}  # the id the reader reads, on every piece
        assert "".join(delta.text for delta in mine) == canonical(call.arguments)
        assert [delta.final for delta in mine] == [False] * (len(mine) - 1) + [True]
        before_final = "".join(delta.text for delta in mine[:-1])
        with pytest.raises(ValueError):
            json.loads(before_final)  # never whole before the reader has read the call
        following = events[next(at for at, event in enumerate(events) if event is mine[-1]) + 1]
        assert isinstance(following, ToolCallEvent) and following.call == call
        if len(canonical(call.arguments)) > 64:  # written over several pieces: it streamed
            assert len(mine) >= 3, (text, mine)
    assert not any(isinstance(event, ArgumentsDelta) and event.index >= len(read) for event in events)


@pytest.mark.parametrize("name", DELTA_FORMATS)
def test_a_long_argument_streams_in_the_pieces_it_arrives_in(name):
    fmt = FORMATS[name]
    body = "line of a file, with \"quotes\" and \\ and ünïcode\n" * 400
    text = fmt.wire.write_call(ParsedToolCall("write_file", {"path": "a.txt", "content": body}))
    stream, given_out = ArgumentStream(fmt), []
    for piece in pieces(text, 7, 32):
        given_out += [event for event in stream.feed(piece) if isinstance(event, ArgumentsDelta)]
    assert len(given_out) > 400  # one delta for almost every piece of the body
    assert canonical({"path": "a.txt", "content": body}).startswith("".join(d.text for d in given_out))


# --- the rule for a call that proves different --------------------------------------------------


def twice(name: str) -> str:
    """A call whose arguments hold the key "a" twice: the reader keeps the last value."""
    fmt = FORMATS[name]
    written = fmt.wire.write_call(ParsedToolCall("get_weather", {"a": "first value, long enough", "zz": 2}))
    return "Sure. " + written.replace('"zz"', '"a"')


@pytest.mark.parametrize("name", DELTA_FORMATS)
def test_a_key_written_twice_after_its_deltas_went_out(name):
    text, fmt = twice(name), FORMATS[name]
    with pytest.raises(StreamedCallChanged, match=rf"the {name} call 0 at offset 6, whose arguments were streamed, "
                                                  r"proved different: its arguments were given out as"):
        fed(ArgumentStream(fmt), text, 3)
    events = fed(ArgumentStream(fmt, strict=False), text, 3)
    withdrawn = [event for event in events if isinstance(event, ArgumentsWithdrawn)]
    assert [event.index for event in withdrawn] == [0]
    (call,) = [event.call for event in events if isinstance(event, ToolCallEvent)]
    assert call.arguments == {"a": 2}  # what the reader read, as a new call after the withdrawn one
    after = events[next(at for at, event in enumerate(events) if event is withdrawn[0]) + 1:]
    assert not any(isinstance(event, ArgumentsDelta) and event.index == 0 for event in after)


@pytest.mark.parametrize("name", DELTA_FORMATS)
@pytest.mark.parametrize("keep", [0.5, 0.9])
def test_a_reply_cut_inside_a_call_after_its_deltas_went_out(name, keep):
    fmt = FORMATS[name]
    call = ParsedToolCall("get_weather", {"city": "Paris", "note": "x" * 80})
    written = fmt.wire.write_call(call)
    text = "Sure. " + written[: int(len(written) * keep)]
    with pytest.raises(UnparsedToolCall):
        fed(ArgumentStream(fmt), text, 5)
    events = fed(ArgumentStream(fmt, strict=False), text, 5)
    deltas = [event for event in events if isinstance(event, ArgumentsDelta)]
    assert deltas and not any(delta.final for delta in deltas)
    last = max(at for at, event in enumerate(events) if isinstance(event, ArgumentsDelta))
    assert [type(event) for event in events[last + 1:]] == [ArgumentsWithdrawn, CutToolCall]


@pytest.mark.parametrize("name", [name for name in DELTA_FORMATS if FORMATS[name].wire.call.close])
def test_a_call_the_reader_refuses_after_its_deltas_went_out(name):
    """Text between the arguments and the closer: the reader refuses the call, strict or not."""
    fmt = FORMATS[name]
    written = fmt.wire.write_call(ParsedToolCall("get_weather", {"city": "Paris, a long way from here"}))
    closer = fmt.wire.call.tail + fmt.wire.call.close
    text = "Sure. " + written[: written.rindex(closer)] + " and more" + written[written.rindex(closer):]
    for strict in (True, False):
        stream = ArgumentStream(fmt, strict=strict)
        with pytest.raises(UnparsedToolCall):
            for piece in pieces(text, 2):
                stream.feed(piece)
            stream.close()
        assert stream.open_slot == 0  # the call whose deltas went out, for the caller's leak policy


# --- what the preview cannot decode: the stream's verdict is the whole read's ----------------------


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("call", [
    '{"na\nme": "f", "arguments": {}}',  # before the name went out
    '{"name": "get_weather", "argu\nments": {"city": "Paris"}}',  # after
    '{"name": "get_weather", "argu\\ments": {"city": "Paris"}}',  # a bad escape
])
def test_a_control_character_in_a_key_of_the_call_object_is_the_readers_to_refuse(call, strict):
    """It once escaped from feed as json.JSONDecodeError; the whole read raises UnparsedToolCall at the close."""
    text = "<tool_call>" + call + "</tool_call>"
    with pytest.raises(UnparsedToolCall) as whole:
        read_events(text, FORMATS["hermes"])
    stream = ArgumentStream("hermes", strict=strict)
    with pytest.raises(UnparsedToolCall) as streamed:
        for char in text:
            stream.feed(char)
        stream.close()
    assert type(streamed.value) is type(whole.value) and str(streamed.value) == str(whole.value)


_SPOILERS = st.text(st.sampled_from(list('\n\t\r\x00\x01\x1f\x7f"\\u0aA/ ')), min_size=1, max_size=4)


@st.composite
def spoiled(draw, word: str) -> str:
    """word, as written between a JSON string's quotes, as is or spoiled: control characters, quotes or
    backslashes put in or in place of a character, or one character written as its \\u escape (still JSON)."""
    how = draw(st.sampled_from(["as is", "put in", "in place", "escaped"]))
    if how == "as is" or not word:
        return word
    at = draw(st.integers(0, len(word) - 1))
    if how == "escaped":
        return word[:at] + f"\\u{ord(word[at]):04x}" + word[at + 1:]
    return word[:at] + draw(_SPOILERS) + word[at + (how == "in place"):]


def _outcome(run):
    try:
        return run()
    except UnparsedToolCall as error:
        return error


@pytest.mark.parametrize("name", DELTA_FORMATS)
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seeds=st.lists(st.integers(0, 2**16), min_size=3, max_size=3),
       prose=st.sampled_from(["", "Sure. "]))
def test_a_call_with_spoiled_keys_or_values_is_streamed_as_the_whole_text_reads_it(name, data, seeds, prose):
    """Every string of the call (the call object's keys, the name, the arguments' keys and values) as is
    or spoiled: in any chunking, the stream's events less the deltas are the whole read's, or it raises
    where the whole read raises; deltas go out only for a call the reader reads as they said, or are
    withdrawn (strict=False) or raise StreamedCallChanged (strict=True) for that call."""
    fmt = FORMATS[name]
    written = fmt.wire.write_call(ParsedToolCall("get_weather", {"city": "Paris, a long way", "days": 3}))
    text, end = prose, 0
    for found in re.finditer(r'"((?:[^"\\]|\\.)*)"', written):  # every JSON string of the call
        text += written[end : found.start(1)] + data.draw(spoiled(found.group(1)), label=found.group(1))
        end = found.end(1)
    text += written[end:]
    if not isinstance(fmt.wire.name, NameKey):  # the name, written bare
        at = text.index("get_weather")
        text = text[:at] + data.draw(spoiled("get_weather"), label="name") + text[at + len("get_weather"):]
    _streamed_as_read(fmt, text, seeds)


def _streamed_as_read(fmt, text: str, seeds: list[int]) -> None:
    """In each chunking, strict or not: the stream less its deltas is the whole read, or the same error;
    deltas went out only for a call read as they said, or were withdrawn (strict: StreamedCallChanged)."""
    for strict in (False, True):
        whole = _outcome(lambda: read_events(text, fmt, strict=strict))
        for seed in seeds:
            streamed = _outcome(lambda: fed(ArgumentStream(fmt, strict=strict), text, seed))
            if strict and isinstance(streamed, StreamedCallChanged) and not isinstance(whole, Exception):
                loose = fed(ArgumentStream(fmt, strict=False), text, seed)  # raised where it withdraws
                assert any(isinstance(event, ArgumentsWithdrawn) for event in loose), (text, streamed)
                continue
            if isinstance(whole, Exception):
                if strict and isinstance(streamed, StreamedCallChanged):
                    # Raised where the changed call was read: before the whole read's later error.
                    assert _offset(streamed) < _offset(whole), (text, streamed, whole)
                    continue
                assert type(streamed) is type(whole) and str(streamed) == str(whole), (text, streamed, whole)
                continue
            assert not isinstance(streamed, Exception), (text, streamed)
            plain = [event for event in streamed if not isinstance(event, (ArgumentsDelta, ArgumentsWithdrawn))]
            assert merge_deltas(plain) == whole, text
            _each_streamed_call_is_read_as_it_went_out_or_withdrawn(streamed)


def _offset(error: Exception) -> int:
    """The reply offset an UnparsedToolCall's message names."""
    return int(re.search(r"at offset (\d+)", str(error)).group(1))


def _each_streamed_call_is_read_as_it_went_out_or_withdrawn(events: list) -> None:
    withdrawn = {event.index for event in events if isinstance(event, ArgumentsWithdrawn)}
    for index in {event.index for event in events if isinstance(event, ArgumentsDelta)}:
        mine = [(at, event) for at, event in enumerate(events) if isinstance(event, ArgumentsDelta) and
                event.index == index]
        finals = [event for _, event in mine if event.final]
        assert (index in withdrawn) != bool(finals), (index, events)
        if finals:
            at, last = mine[-1]
            following = events[at + 1]
            assert last.final and isinstance(following, ToolCallEvent) and following.call.name == last.name
            assert "".join(event.text for _, event in mine) == canonical(following.call.arguments)


@pytest.mark.parametrize("name", DELTA_FORMATS)
@pytest.mark.parametrize("where", ["before the arguments", "inside the arguments"])
def test_following_a_call_is_linear_in_its_text_even_through_a_whitespace_flood(name, where):
    """Counted work, not the clock: each character of the held call is looked at a bounded number of times."""
    fmt = FORMATS[name]
    written = fmt.wire.write_call(ParsedToolCall("get_weather", {"city": "Paris"}))
    flood = " \n" * 20_000
    at = written.index("{") if where == "before the arguments" else written.index('"Paris"')
    text = written[:at] + flood + written[at:]
    preview = CallPreview(fmt.wire)
    for end in range(16, len(text) + 16, 16):
        preview.advance(text[:end], 0)
    assert preview.examined <= 2 * len(text) + 16 * _LONGEST + 1000, (preview.examined, len(text))


_LONGEST = 256 + 64  # a name or key is looked for again, within this reach, until it ends


CHUNKINGS = (4, 16, 64, 256, 1024, 4096)  # one call's text fed in this many chunks, down to 3 characters each
# The whitespace of a JSON object, each place it may stand: in the call object (the preview's) and in the
# arguments (the JSON prefix's).
_KEY = r'"(?:name|arguments|parameters|args|path|content)"(?=:)'
FLOODED = {
    "before a key": lambda text: [found.start() for found in re.finditer(_KEY, text)],
    "between a key and its colon": lambda text: [found.end() for found in re.finditer(_KEY, text)],
    "after a colon": lambda text: [found.end() + 1 for found in re.finditer(_KEY, text)],
    "before a comma": lambda text: [found.end() for found in re.finditer(r'"(?:write_file|a\.txt)"(?=,)', text)],
    "before a closing brace": lambda text: [found.start() + 1 for found in re.finditer(r'"\}', text)] +
    [found.start() + 2 for found in re.finditer(r'"\}\}', text)],
}


def flooded(text: str, where: str | None, flood: str = " \n\t " * 250) -> str:
    """text with a whitespace flood at each place where names (none when where is None)."""
    for at in sorted(FLOODED[where](text) if where else [], reverse=True):
        text = text[:at] + flood + text[at:]
    return text


@pytest.mark.parametrize("where", [None, *FLOODED])
@pytest.mark.parametrize("name", DELTA_FORMATS)
def test_streaming_a_call_in_more_chunks_does_no_more_work(name, where, monkeypatch):
    """Counted work, not the clock: the same call fed in 4 to 4096 chunks costs about 4 times its length.

    Counted: the characters handed to the JSON prefix and given out by it, the
    characters the preview looked at (``examined``), the whitespace it skipped
    (every ``skip_space``, counted apart from ``examined``: a run crossed again
    on every feed while the preview waits, as it once did between a key and its
    colon, counts again) and the characters of the deltas. A preview or prefix
    that went back to the call's start, or to a key, on each feed would count
    about chunks / 2 times the text between.
    """
    counted = {"work": 0}

    class CountingPrefix(JsonPrefix):
        def feed(self, text: str) -> str:
            piece = super().feed(text)
            counted["work"] += len(text) + len(piece)
            return piece

    previews = []

    class CountingPreview(CallPreview):
        def __init__(self, shape) -> None:
            super().__init__(shape)
            previews.append(self)

    def counting_skip_space(text: str, index: int) -> int:
        after = skip_space(text, index)
        counted["work"] += after - index
        return after

    monkeypatch.setattr(call_preview, "JsonPrefix", CountingPrefix)
    monkeypatch.setattr(argument_deltas, "CallPreview", CountingPreview)
    monkeypatch.setattr(call_preview, "skip_space", counting_skip_space)
    fmt, arguments = FORMATS[name], {"path": "a.txt", "content": 'a line with "quotes", \\ and ünïcode\n' * 200}
    plain = fmt.wire.write_call(ParsedToolCall("write_file", arguments))
    text = flooded(plain, where)
    if where is not None:  # in the call object (its members' two places each) and in the arguments
        assert len(FLOODED[where](plain)) >= (2 if isinstance(fmt.wire.name, NameKey) else 1), plain[:80]
    work = {}
    for chunks in CHUNKINGS:
        counted["work"], previews[:] = 0, []
        stream, size, events = ArgumentStream(fmt), -(-len(text) // chunks), []
        for at in range(0, len(text), size):
            events += stream.feed(text[at : at + size])
        events += stream.close()
        deltas = [event.text for event in events if isinstance(event, ArgumentsDelta)]
        assert "".join(deltas) == canonical(arguments) and len(deltas) >= chunks // 3, (chunks, len(deltas))
        work[chunks] = counted["work"] + sum(preview.examined for preview in previews) + len("".join(deltas))
        assert work[chunks] <= 5 * len(text), (chunks, work[chunks], len(text))
    assert max(work.values()) <= 1.5 * min(work.values()), work


def test_a_format_that_declares_an_id_after_the_name_gets_it_on_every_piece():
    # The class: NameBetween.id_open. Mistral's is the one declared today; a call without an id is
    # followed as before, and an id that is no id (a space, a bracket) stops the preview: the call
    # goes out whole, as the reader reads or refuses it.
    declaring = [name for name in DELTA_FORMATS if getattr(FORMATS[name].wire.name, "id_open", "")]
    assert declaring == ["mistral"]
    fmt = FORMATS["mistral"]
    call = ParsedToolCall("get_rate", {"base": "EUR", "quote": "JPY", "note": "x" * 80})
    for written, pieces_id in (("abc123XYZ", "abc123XYZ"), (None, None)):
        events = fed(ArgumentStream(fmt), fmt.wire.write_calls([call], [written]), 7)
        deltas = [event for event in events if isinstance(event, ArgumentsDelta)]
        assert len(deltas) >= 3 and {delta.id for delta in deltas} == {pieces_id}
    for spoiled in ("get_rate[CALL_ID]abc 123[ARGS]", "get_rate[CALL_ID][ARGS]", "get_rate[CALL_ID]a]b[ARGS]"):
        text = "[TOOL_CALLS]" + spoiled + json.dumps(call.arguments)
        stream, given_out = ArgumentStream(fmt, strict=False), []
        with pytest.raises(UnparsedToolCall):  # the stream refuses it as the whole read does
            for piece in pieces(text, 3):
                given_out += stream.feed(piece)
            given_out += stream.close()
        assert not any(isinstance(event, ArgumentsDelta) for event in given_out), spoiled
        with pytest.raises(UnparsedToolCall):
            read_events(text, fmt)


_MEMBER_VALUES = st.sampled_from(['"get_weather"', '"f"', '""', "1", "null", '{"city": "Paris"}', "{}", "[]",
                                  '"{\\"city\\": \\"Rome\\"}"'])


@pytest.mark.parametrize("name", [name for name in DELTA_FORMATS if isinstance(FORMATS[name].wire.name, NameKey)])
@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seeds=st.lists(st.integers(0, 2**16), min_size=2, max_size=2))
def test_a_call_object_with_members_in_any_order_and_number_is_streamed_as_it_reads(name, data, seeds):
    """The call object's members drawn in any order, any number of times (the name written twice raised
    JSONDecodeError from the preview): the stream less its deltas is the whole read, or the same error."""
    fmt = FORMATS[name]
    written = fmt.wire.write_call(ParsedToolCall("get_weather", {"city": "Paris"}))
    whole_object = json.loads(written[written.index("{"): written.rindex("}") + 1])
    if isinstance(whole_object, list):
        whole_object = whole_object[0]
    keys = list(whole_object) + ["id", "type"]
    members = data.draw(st.lists(st.tuples(st.sampled_from(keys), _MEMBER_VALUES), min_size=1, max_size=5), "members")
    body = "{" + ", ".join(f'"{key}": {value}' for key, value in members) + "}"
    original = json.dumps(whole_object, ensure_ascii=False)
    start = written.index(original) if original in written else None
    assume(start is not None)  # a format that writes the object otherwise (indented) is covered above
    text = written[:start] + body + written[start + len(original):]
    _streamed_as_read(fmt, text, seeds)


@pytest.mark.parametrize("name", DELTA_FORMATS)
@given(later=st.sampled_from(["cut", "refused"]), cut_at=st.floats(0.2, 0.9), seeds=st.lists(st.integers(0, 2**16),
                                                                                              min_size=2, max_size=2))
@settings(max_examples=30, deadline=None, derandomize=True, database=None)
def test_a_changed_call_before_a_later_error_raises_where_it_was_read(name, later, cut_at, seeds):
    """A call read otherwise than its deltas said (a key written twice), then a call cut or refused: a strict
    stream that gave the first call's deltas out raises StreamedCallChanged at the first call's offset, before
    the whole read's error further on; one that gave none out raises the whole read's error."""
    fmt = FORMATS[name]
    first = fmt.wire.write_call(ParsedToolCall("f", {"a": 1}))
    assume('"a": 1' in first)
    changed = first.replace('"a": 1', '"a": 1, "a": 2', 1)
    second = fmt.wire.write_call(ParsedToolCall("g", {"b": "x"}))
    refused = second.replace('"b": "x"', '"b": x', 1)  # not JSON inside the call's markup
    tail = second[: max(1, int(len(second) * cut_at))] if later == "cut" else refused
    text = changed + tail
    _streamed_as_read(fmt, text, seeds)
    # Character by character the first call's deltas go out before its second "a" arrives.
    one_by_one = _outcome(lambda: _fed_by_characters(fmt, text))
    assert isinstance(one_by_one, StreamedCallChanged) and _offset(one_by_one) < len(changed), (text, one_by_one)


def _fed_by_characters(fmt, text: str) -> list:
    stream = ArgumentStream(fmt, strict=True)
    return [event for char in text for event in stream.feed(char)] + stream.close()
