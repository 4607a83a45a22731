"""The pythonic reader's fast path reads exactly what its exact parser reads.

``pythonic._Parser`` defines the behaviour. The fast path (plain calls read
by one ``re.split`` into units ", name(…)", over the whole list at once
or, in a stream, batch by batch as calls arrive) must give the same
events and the same errors for every input, or defer; and every list of
plain calls (up to five arguments, every scalar kind, empty strings) must
take it. Shown by generated
replies (names with non-ASCII letters and connector punctuation, strings
with quotes, escapes, newlines and brackets, numbers in every form _Parser
reads or refuses, nested values, whitespace variants, broken separators),
each read with the fast path and with it switched off, whole and in
chunks. Work is counted, never timed: a stream of plain calls ends with
no second reading of the list.
"""

from __future__ import annotations

import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio.calls import UnparsedToolCall
from templatestudio.engine import Machine, read_events
from templatestudio.events import merge_deltas
from templatestudio.formats import FORMATS
from templatestudio.formats import pythonic
from templatestudio.formats import pythonic_fast_path as plain  # the fast path, in a module of its own
from templatestudio.stream import ToolCallEvent, ToolCallStream

FMT = FORMATS["pythonic"]
SPACE = st.sampled_from(["", "", "", " ", "  ", "\n", "\t", "\r\n", " \n "])
NAME_START = "abcxyzABC_éßΩ𝐝ｆ‿"
NAME_REST = NAME_START + "0189._⁀"
STRING_CHARS = "ab ,=()[]{}'\"\\\n\r\x00\t]é𝐝:"
NUMBERS = ["0", "7", "007", "-3", "1.", "1.5", "-0.0", "1e5", "1E+3", "2.5e-2", "1.e2", "12345678901234567890"]
BAD_NUMBERS = ["1_0", "1e", "1.2.3", "-", "9" * 5000, ".5", "1x"]  # refused, or past the digit limit
WORDS = ["True", "False", "None"]
BAD_WORDS = ["Truex", "none", "True.x"]


def pick(draw, good: list[str], bad: list[str], broken: bool) -> str:
    """One of good, or (in a reply drawn to be broken) sometimes one of bad."""
    return draw(st.sampled_from(good + bad if broken else good))


def identifier(draw, dots: bool) -> str:
    rest = NAME_REST if dots else NAME_REST.replace(".", "")
    return draw(st.text(NAME_START, min_size=1, max_size=2)) + draw(st.text(rest, max_size=4))


@st.composite
def value(draw, broken: bool, depth: int = 0) -> str:
    kind = draw(st.sampled_from(["plain"] * 4 + ["repr", "number", "word", "nested"] + ["raw"] * broken))
    if kind == "plain":  # the shape the fast path takes
        quote = draw(st.sampled_from("'\""))
        return quote + draw(st.text("ab ,=()é𝐝:" + ("'" if quote == '"' else '"'), max_size=6)) + quote
    if kind == "repr":  # a valid literal, escapes and all
        return repr(draw(st.text(STRING_CHARS, max_size=6)))
    if kind == "raw":  # anything between quotes: some unclosed, some broken by a newline
        quote = draw(st.sampled_from("'\""))
        return quote + draw(st.text(STRING_CHARS, max_size=6)) + draw(st.sampled_from([quote, quote, ""]))
    if kind == "number":
        return pick(draw, NUMBERS, BAD_NUMBERS, broken)
    if kind == "word":
        return pick(draw, WORDS, BAD_WORDS, broken)
    if depth > 1:
        return "1"
    items = draw(st.lists(value(broken, depth + 1), max_size=3))
    if draw(st.booleans()):
        return "[" + ", ".join(items) + draw(st.sampled_from(["", ","])) + "]"
    return "{" + ", ".join(f"{draw(value(broken, depth + 1))}: {item}" for item in items) + "}"


@st.composite
def call(draw, broken: bool) -> str:
    arguments = []
    for _ in range(draw(st.integers(0, 3))):
        key = identifier(draw, dots=broken and draw(st.integers(0, 9)) == 0)
        equals = pick(draw, ["="], [""], broken)
        arguments.append(key + draw(SPACE) + equals + draw(SPACE) + draw(value(broken)))
    if len(arguments) == 2 and broken and draw(st.integers(0, 4)) == 0:
        arguments[1] = arguments[0]  # a key given twice
    separator = pick(draw, [",", ", ", ",\n", " , "], [""], broken)
    trailing = draw(st.sampled_from(["", "", ","]))
    name = identifier(draw, dots=draw(st.booleans()))
    between = pick(draw, [""], [" "], broken)  # a space before "(" is not a call
    return name + between + "(" + draw(SPACE) + separator.join(arguments) + trailing + draw(SPACE) + ")"


@st.composite
def reply(draw) -> str:
    broken = draw(st.booleans())  # half the replies are drawn to be read, half to break somewhere
    calls = draw(st.lists(call(broken), min_size=1, max_size=4))
    if draw(st.integers(0, 4)) == 0:
        calls *= 3  # the same call again, word for word: read once, handed out as separate dicts
    joined = ""
    for index, text in enumerate(calls):
        joined += (pick(draw, [",", ", ", " ,\n"], ["", ",,"], broken) if index else "") + draw(SPACE) + text
    body = "[" + draw(SPACE) + joined + draw(SPACE) + pick(draw, ["]"], [",]", ""], broken)
    wrapper = draw(st.sampled_from([None, None, "<|tool_call_start|>", "<|python_start|>"]))
    if wrapper is not None:
        body = wrapper + draw(SPACE) + body + pythonic.WRAPPERS[wrapper]
    return draw(st.sampled_from(["", "", "Sure. "])) + body + draw(st.sampled_from(["", "", " Done.", "\n"]))


@contextlib.contextmanager
def fast_path_off():
    """Only _Parser reads: the fast path's two entry points always defer."""
    saved = plain.fast_calls, plain.fast_units
    plain.fast_calls = lambda *args, **kwargs: None
    plain.fast_units = lambda *args: None
    try:
        yield
    finally:
        plain.fast_calls, plain.fast_units = saved


@contextlib.contextmanager
def read_every(size: int):
    saved = plain._READ_EVERY
    plain._READ_EVERY = size
    try:
        yield
    finally:
        plain._READ_EVERY = saved


def outcome(read) -> str:
    """What a read gives, as repr: True, 1 and 1.0 (equal in Python) must not pass for one another."""
    try:
        return repr(read())
    except UnparsedToolCall as error:
        return repr(("raises", str(error)))


def streamed(text: str, sizes: list[int]) -> list:
    stream, events, position, turn = ToolCallStream(FMT), [], 0, 0
    while position < len(text):
        size = sizes[turn % len(sizes)]
        events += stream.feed(text[position : position + size])
        position, turn = position + size, turn + 1
    return merge_deltas(events + stream.close())


SETTINGS = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(reply())
def test_the_fast_path_reads_what_the_exact_parser_reads(text):
    with fast_path_off():
        exact = outcome(lambda: read_events(text, FMT))
    assert outcome(lambda: read_events(text, FMT)) == exact


@SETTINGS
@given(reply(), st.lists(st.integers(1, 9), min_size=1, max_size=4), st.sampled_from([1, 5, 4096]))
def test_a_stream_reads_what_the_whole_text_gives(text, sizes, batch):
    whole = outcome(lambda: read_events(text, FMT))
    with read_every(batch):  # batches of calls read as they arrive, down to one look per feed
        assert outcome(lambda: streamed(text, sizes)) == whole
    with fast_path_off():
        assert outcome(lambda: streamed(text, sizes)) == whole


def test_the_generated_replies_reach_the_fast_path_and_the_fallback():
    """The equalities above mean something only if both paths run often, on calls read and refused."""
    seen = {"fast": 0, "fallback": 0, "calls": 0, "raises": 0}

    @settings(max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(reply())
    def count(text):
        start = text.find("[")
        seen["fast" if plain.fast_calls(text, start) is not None else "fallback"] += 1
        try:
            seen["calls"] += sum(isinstance(event, ToolCallEvent) for event in read_events(text, FMT))
        except UnparsedToolCall:
            seen["raises"] += 1

    count()
    assert min(seen["fast"], seen["fallback"], seen["raises"]) >= 40 and seen["calls"] >= 200, seen


def test_repeated_calls_get_dicts_of_their_own():
    events = read_events("[f(a='x'), f(a='x'), f(a='x')]", FMT)
    arguments = [event.call.arguments for event in events]
    assert arguments == [{"a": "x"}] * 3 and len({id(item) for item in arguments}) == 3


def plain_list(count: int) -> str:
    return "[" + ", ".join([FMT.write_call(pythonic.CALL)[1:-1]] * count) + "]"


def test_a_stream_of_plain_calls_is_not_read_again_at_its_end(monkeypatch):
    """Issue 16's growth row: the list closes once, at its "]", and nothing reads it again then.

    Characters given to the region readers (fast_calls, _Parser) after the
    extent found the end are counted: zero, at every size. The machine's
    own count grows as the text does.
    """
    reread = []
    fast_calls, parser = plain.fast_calls, pythonic._Parser
    ours = "[" + pythonic.CALL.name + "("  # not the probes other modules may run on their own samples

    def counted_fast_calls(text, start, *rest):
        if text.startswith(ours, start):
            reread.append(len(text) - start)
        return fast_calls(text, start, *rest)

    def counted_parser(text):
        if ours in text:
            reread.append(len(text))
        return parser(text)

    monkeypatch.setattr(plain, "fast_calls", counted_fast_calls)
    monkeypatch.setattr(pythonic, "_Parser", counted_parser)
    examined = {}
    for count in (400, 1600, 6400):
        text = plain_list(count)
        stream = ToolCallStream(FMT)
        events = [event for at in range(0, len(text), 4) for event in stream.feed(text[at : at + 4])] + stream.close()
        assert sum(isinstance(event, ToolCallEvent) for event in events) == count
        assert sum(reread[1:]) == 0, reread  # the first look (the opening and a chunk) is the only one
        assert reread[0] <= len(ours) + 4
        reread.clear()
        examined[count] = stream.chars_examined / len(text)
    assert examined[6400] <= 1.05 * examined[400], examined


def test_a_whole_plain_list_is_read_in_one_pass(monkeypatch):
    """The extent reads the calls while it finds the end; nothing reads the list again."""
    text = plain_list(3000)
    constructed = []
    parser = pythonic._Parser
    monkeypatch.setattr(pythonic, "_Parser", lambda region: constructed.append(region) or parser(region))
    events = read_events(text, FMT)
    assert [event.call for event in events] == [pythonic.CALL] * 3000
    assert not [region for region in constructed if region == text]
    machine = Machine(FMT)
    machine.feed(text), machine.close()
    assert machine.examined <= 1.01 * len(text) + 10, (machine.examined, len(text))


# --- plain lists: the fast path must read them all, exactly as _Parser does ---------------------

PLAIN_TEXT = "ab ,=[{}:é𝐝\t'\""  # a string's text minus its own quote: no backslash, CR, LF, NUL, "(", ")" or "]"
REFUSED_TEXT = ["\\n", "\\'", "(", ")", "\r", "\x00", "\n"]  # what sends a string to _Parser (or makes it fail)


@st.composite
def plain_value(draw) -> str:
    kind = draw(st.sampled_from(["string", "string", "number", "word"]))
    if kind == "number":
        return draw(st.sampled_from(NUMBERS))
    if kind == "word":
        return draw(st.sampled_from(WORDS))
    quote = draw(st.sampled_from("'\""))
    return quote + draw(st.text(PLAIN_TEXT.replace(quote, ""), max_size=5)) + quote  # empty strings too


@st.composite
def plain_call(draw) -> list:
    """[name, [key, value], ...]: up to five arguments, past the two the reader unrolls, keys distinct."""
    keys = []
    for _ in range(draw(st.integers(0, 5))):
        key = identifier(draw, dots=False)
        if key not in keys:
            keys.append(key)
    return [identifier(draw, dots=True)] + [[key, draw(plain_value())] for key in keys]


def write_plain(draw, calls: list) -> str:
    written = []
    for name, *arguments in calls:
        parts = [key + draw(SPACE) + "=" + draw(SPACE) + value + draw(SPACE) for key, value in arguments]
        trailing = "," + draw(SPACE) if arguments and draw(st.booleans()) else ""
        written.append(name + "(" + draw(SPACE) + ("," + draw(SPACE)).join(parts) + trailing + ")")
    return "[" + draw(SPACE) + "".join(
        (draw(SPACE) + "," + draw(SPACE) if index else "") + call for index, call in enumerate(written)
    ) + draw(SPACE) + "]"


@st.composite
def plain_lists(draw) -> str:
    return write_plain(draw, draw(st.lists(plain_call(), min_size=1, max_size=5)))


@st.composite
def refused_list(draw) -> str:
    """A plain list with one flaw the fast path must not read: a key given twice, a string it defers, a huge int."""
    calls = draw(st.lists(plain_call(), min_size=1, max_size=4))
    with_arguments = [call for call in calls if len(call) > 1]
    if not with_arguments:
        calls[0].append(["k", "1"])
        with_arguments = [calls[0]]
    call = draw(st.sampled_from(with_arguments))
    flaw = draw(st.sampled_from(["twice", "string", "digits"] if len(call) > 2 else ["string", "digits"]))
    if flaw == "twice":  # any pair of positions: both unrolled, one unrolled and one after, both after
        first, second = sorted(draw(st.lists(st.integers(1, len(call) - 1), min_size=2, max_size=2, unique=True)))
        call[second][0] = call[first][0]
    else:
        argument = draw(st.sampled_from(call[1:]))
        if flaw == "digits":
            argument[1] = "9" * 5000  # past the interpreter's digit limit: _Parser's error
        else:
            quote = draw(st.sampled_from("'\""))
            inner = draw(st.text("ab", max_size=2)) + draw(st.sampled_from(REFUSED_TEXT)) + draw(st.text("ab", max_size=2))
            argument[1] = quote + inner + quote
    return write_plain(draw, calls)


def parsed(text: str) -> str:
    calls, _ = pythonic._Parser(text).calls(0)
    return repr([(call.name, call.arguments) for call in calls])


@SETTINGS
@given(plain_lists())
def test_every_plain_list_takes_the_fast_path_and_reads_as_the_parser_reads(text):
    fast = plain.fast_calls(text, 0)
    assert fast is not None, text
    spans, end = fast
    assert end == len(text) and {(span.start, span.end) for span in spans} == {(0, len(text))}
    assert repr([(span.call.name, span.call.arguments) for span in spans]) == parsed(text)


@SETTINGS
@given(plain_lists(), st.lists(st.integers(1, 9), min_size=1, max_size=4), st.sampled_from([1, 5, 4096]))
def test_a_stream_reads_every_plain_list_as_it_arrives(text, sizes, batch):
    """Batch by batch, whatever the cuts: the extent reads every call, and _Parser never sees the list."""
    constructed = []
    parser = pythonic._Parser
    pythonic._Parser = lambda region: constructed.append(region) or parser(region)
    try:
        with read_every(batch):
            events = streamed(text, sizes)
    finally:
        pythonic._Parser = parser
    assert [region for region in constructed if text in region] == []
    assert repr([(event.call.name, event.call.arguments) for event in events]) == parsed(text)


@SETTINGS
@given(refused_list(), st.lists(st.integers(1, 9), min_size=1, max_size=4))
def test_the_fast_path_defers_every_flawed_list(text, sizes):
    assert plain.fast_calls(text, 0) is None
    assert plain.fast_units("," + text[1:-1]) is None
    with fast_path_off():
        exact = outcome(lambda: read_events(text, FMT))
    assert outcome(lambda: read_events(text, FMT)) == exact
    with read_every(1):
        assert outcome(lambda: streamed(text, sizes)) == exact


def test_units_need_a_comma_between_them_and_nothing_around_them():
    """The split's leftover text is what makes the units a list: each of these has some, and is refused."""
    for text in ["f() g()", ",f()", "f(),", "f())", "f() x", "x f()", "f(a=1)(b=2)", "f(a=1 b=2)", "f (a=1)"]:
        assert plain.fast_calls("[" + text + "]", 0) is None, text
        assert plain.fast_units("," + text) is None, text
    assert plain.fast_calls("[]", 0) is None and plain.fast_calls("[ ]", 0) is None  # no call: _Parser's answer
    assert [span.call for span in plain.fast_calls("[ f( ) ,g(a='',)\n]", 0)[0]] == [
        pythonic.ParsedToolCall("f", {}), pythonic.ParsedToolCall("g", {"a": ""})]
