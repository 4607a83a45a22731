"""Pythonic: ``[name(key=value, …), …]``, Python call syntax with literal values.

Where it stands: a bare list opening the reply (Llama 3.2 and Llama 4
pythonic), LFM2's ``<|tool_call_start|>[…]<|tool_call_end|>`` and Llama 4's
``<|python_start|>[…]<|python_end|>``, either of them anywhere; text around
the list stays content. Read by a small parser of its own, never
evaluated and not through ``ast``: ``ast`` NFKC-normalises identifiers, so
``[𝐝𝐞𝐥𝐞𝐭𝐞_𝐚𝐥𝐥()]`` would come back as a call to ``delete_all``. Names and
keys are returned exactly as written. Values: strings (single or double
quotes, Python escapes), ASCII integers and floats, ``True``/``False``/
``None``, lists and string-keyed dicts. A list whose first item is not
``name(`` + keyword or ``)`` (``[len(row) for row in rows]``,
``[Note(important)]``) is prose; one that starts like a call and then breaks
is refused. An empty wrapped list means "no call". A wrapped list ends at
its first closing token, so a string inside it cannot hold
``<|tool_call_end|>`` or ``<|python_end|>``; the bare list (what the writer
and the templates write) can. Lists of plain calls (scalar values; strings
with no escape or parenthesis) take a fast path (``fast_calls``,
``ListExtent``) that reads the same calls and defers everything else to
``_Parser``, which defines the behaviour. Not handled: positional
arguments, tuples, sets, ``**kwargs``, triple-quoted strings.
"""

from __future__ import annotations

import ast
import re

from templatestudio.calls import CallSpan, ParsedToolCall, region_spans
from templatestudio.wire.base import (
    Found, FoundCalls, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent, ValueExtent
from templatestudio.resumable_match import chars, literal, run

WRAPPERS = {"<|tool_call_start|>": "<|tool_call_end|>", "<|python_start|>": "<|python_end|>"}
MAX_NESTING = 100
_SPACE = re.compile(r"[ \t\r\n]*")
_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)")
# Possessive: a long string is crossed at C speed, never backtracked through.
_STRING = re.compile(r"""'(?:[^'\\\n]++|\\.)*+'|"(?:[^"\\\n]++|\\.)*+\"""", re.S)
# What only Python's own reading of a string literal settles: escapes, and the
# characters its tokenizer refuses inside one (a CR ends the line, NUL the source).
_NEEDS_PYTHON = re.compile(r"[\\\r\x00]")


# --- the lexicon, and the fast path for lists of plain calls -------------------------------------

# Identifier characters as Python has them, plus the connector punctuation
# (U+203F, U+2040, U+2054, U+FE33-4, U+FE4D-F, U+FF3F) that NFKC would turn
# into "_": such a name is read as written, never as the ASCII one.
_CONNECTORS = "\u203f\u2040\u2054\ufe33\ufe34\ufe4d-\ufe4f\uff3f"
_NAME = re.compile(rf"(?:[^\W0-9]|[{_CONNECTORS}])[\w.{_CONNECTORS}]*")
_WORDS = {"True": True, "False": False, "None": None}

# The fast path: a list of calls whose values are all plain scalars (strings
# with no backslash, CR, newline, NUL or parenthesis; numbers; True/False/
# None), the shape nearly every reply has. One re.split over the list (after
# a "," put before it, so every call is one unit ", name(…)" and the space
# after it) reads every unit at C speed; split also hands back the text
# between units, which must be empty: then the units cover the list and the
# list is exactly the grammar below. Anything outside that shape (nested
# values, an escape, a parenthesis inside a string, a stray character) goes
# to _Parser, which defines the behaviour: the fast path reads a subset of
# what _Parser reads, the same way. Why the search stays linear on any text:
# a unit starts at a "," and its arguments hold no parenthesis, so each
# attempt reads from its own "(" to the next parenthesis at most.
_W = "[ \\t\\r\\n]*+"
_KEY = rf"(?:[^\W0-9]|[{_CONNECTORS}])[\w{_CONNECTORS}]*+"  # a keyword: a name without dots
_OUTSIDE_PLAIN = "\\\\\\n\\r\\x00()"  # what a plain string cannot hold, besides its quote
_OTHER = r"-?[0-9]++(?:\.[0-9]*+)?+(?:[eE][+-]?[0-9]++)?+|True|False|None"


def _argument(group: str) -> str:
    """One keyword argument and the space after it; group "(" captures key, string text and other value.

    The string's text is one group for both quotes: the look-behind picks
    the class of the quote just read, and that class stops at the same quote.
    """
    text = rf"""(?<=')[^'{_OUTSIDE_PLAIN}]*+|(?<=")[^"{_OUTSIDE_PLAIN}]*+"""
    return rf"""(?>{group}{_KEY}){_W}={_W}(?:['"]{group}{text})['"]|{group}{_OTHER})){_W})"""


_MORE = rf"(?:{_argument('(?:')},{_W})*+{_argument('(?:')}?+"  # a third argument and on, uncaptured
# Captured: name, the first two arguments (key, string text, other value) and the text of the rest.
_UNIT = re.compile(rf",{_W}({_NAME.pattern})\({_W}"
                   rf"(?:{_argument('(')}(?:,{_W}(?:{_argument('(')}(?:,{_W}({_MORE}))?+)?+)?+)?+\){_W}")
_STRIDE = _UNIT.groups + 1  # split gives the text before a unit, then the unit's groups
_MORE_ARGUMENT = re.compile(_argument("("))


def _other(text: str) -> object:
    """A number or word as _Parser.value reads it (ValueError: an integer past the digit limit)."""
    if text in _WORDS:
        return _WORDS[text]
    return float(text) if "." in text or "e" in text or "E" in text else int(text)


def _more_arguments(arguments: dict, text: str) -> bool:
    """Adds the arguments of text (a match of _MORE) to arguments; False when a key is given twice."""
    for key, string, other in _MORE_ARGUMENT.findall(text):  # findall: "" for a group that did not take part
        if key in arguments:
            return False
        arguments[key] = _other(other) if other else string  # a number or word is never empty
    return True


def fast_units(text: str) -> list[ParsedToolCall] | None:
    """The calls of text, a run of units ", name(…)" each with the space after it, or None.

    None when text is anything else: then _Parser (or, in a stream, the
    extent's scan) decides. Every unit is read, however many times the same
    call repeats: a benchmark of identical calls measures the reading, not
    a cache.
    """
    parts = _UNIT.split(text)
    if len(parts) == 1 or any(parts[::_STRIDE]):  # no call, or text outside the units
        return None
    row = iter(parts)
    next(row)
    calls: list[ParsedToolCall] = []
    append = calls.append
    try:
        # Unrolled for the first two arguments: most calls have no more, and
        # then a call costs no function call besides its ParsedToolCall.
        for name, key, string, other, key2, string2, other2, more, _ in zip(*[row] * _STRIDE):
            if key is None:
                arguments = {}
            else:
                arguments = {key: string if other is None else _other(other)}
                if key2 is not None:
                    if key2 == key:
                        return None  # a key given twice: _Parser's error
                    arguments[key2] = string2 if other2 is None else _other(other2)
                    if more and not _more_arguments(arguments, more):
                        return None
            append(ParsedToolCall(name, arguments))
    except ValueError:  # an integer past the interpreter's digit limit: _Parser's error
        return None
    return calls


def fast_calls(text: str, start: int, length: int | None = None) -> tuple[list[CallSpan], int] | None:
    """Spans of the calls in the list opening at text[start] ("[") and the index past its "]", or None.

    Each span covers length characters (the region; None: up to the "]").
    None when the list is not all plain calls or is not closed yet; then
    _Parser (or, in a stream, the extent's scan) decides. Plain calls hold
    no bracket outside strings, so a list of them ends at its first "]"; a
    "]" inside a string cuts it there, and the unclosed string never reads.
    """
    close = text.find("]", start)
    if close == -1:
        return None
    calls = fast_units("," + text[start + 1 : close])
    if calls is None:
        return None
    end = close + 1 - start if length is None else length
    return region_spans(calls, end), close + 1


# A stream's calls are read in batches of at least this many characters: a
# look per feed would cost more than the reading itself when chunks are small.
_READ_EVERY = 4096


class ListExtent(ValueExtent):
    """The bare list's extent: the bracket scan of ``ValueExtent``, reading plain calls as it goes.

    At the first advance (a whole-text read sees the whole list) a list of
    plain calls is read at once: it ends at its first "]", exactly where
    the bracket scan would stop. Otherwise (a stream, or a "]" inside a
    string) the scan finds the end, and the calls are read in batches up
    to the last ")" that has arrived, so the list's end costs no second
    reading of the list. Either way the calls go to read_region
    (``Extent.found``); once a batch is not all plain calls, the reading
    stops and read_region reads the region itself.
    """

    def __init__(self) -> None:
        super().__init__(0, quotes="python", brackets="[](){}")
        self._tried = False
        self._calls: list[ParsedToolCall] | None = []  # None: not a list of plain calls
        self._cut = 1  # offset from the region's start just past the last ")" read (at first, the "[")
        self._looked = 1  # offset up to which a ")" was looked for

    def advance(self, buffer: str, start: int, final: bool) -> int | None:
        first = not self._tried
        if first:
            self._tried = True
            fast = fast_calls(buffer, start)
            if fast is not None:
                self.found = FoundCalls(fast[0])
                self.examined += fast[1] - start
                return fast[1]
            # A failed look is not counted, as ValueExtent's JSON look is not: it
            # happens once per region, and a bare list opens only a reply.
        end = _scan(self, buffer, start, final)  # not super(): this runs once per chunk
        # Read at once after a first look that failed (the same work at every
        # size of reply), then in batches, and at the end.
        if end is None and not first and len(buffer) - start - self._looked < _READ_EVERY:
            return None
        if self._calls is not None:
            self._read_calls(buffer, start, len(buffer) if end is None else end)
            if end is not None and self._calls and buffer[end - 1] == "]" \
                    and not buffer[start + self._cut : end - 1].strip(" \t\r\n"):
                self.found = FoundCalls(region_spans(self._calls, end - start))
        return end

    def _read_calls(self, buffer: str, start: int, stop: int) -> None:
        """Reads the calls whose ")" arrived in buffer[:stop] since the last look."""
        # Reader's work, moved here from read_region: not counted in
        # ``examined`` (the extent's own scan is), as read_region's is not.
        last = buffer.rfind(")", start + self._looked, stop)
        self._looked = stop - start
        if last == -1:
            return
        batch = buffer[start + self._cut : last + 1]
        self._cut = last + 1 - start
        # The first batch follows the "[" (a "," makes its first call a unit);
        # a later one follows a ")", and the space after it starts the batch.
        calls = fast_units(batch.lstrip(" \t\r\n") if self._calls else "," + batch)
        if calls is None:
            self._calls = None
        else:
            self._calls += calls


_scan = ValueExtent.advance


# --- the parser: every list the format reads --------------------------------------------------


class _NotACall(Exception):
    """Internal: the list is prose, not a call attempt."""


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text

    def space(self, index: int) -> int:
        text = self.text
        if index < len(text) and text[index] not in " \t\r\n":
            return index  # the common case, without a regex call
        return _SPACE.match(text, index).end()

    def calls(self, index: int) -> tuple[list[ParsedToolCall], int]:
        text = self.text
        index = self.space(index + 1)  # past "["
        calls: list[ParsedToolCall] = []
        if text.startswith("]", index):
            return calls, index + 1
        while True:
            calls.append(self.call(index, first=not calls))
            index = self.space(self._after_call)
            if text.startswith(",", index):
                index = self.space(index + 1)
            elif text.startswith("]", index):
                return calls, index + 1
            else:
                raise CallSyntaxError(f"expected , or ] after a call at offset {index}")

    def call(self, index: int, *, first: bool) -> ParsedToolCall:
        text = self.text
        name = _NAME.match(text, index)
        if name is None or not text.startswith("(", name.end()):
            if first:
                raise _NotACall
            raise CallSyntaxError(f"expected name( at offset {index}")
        index = self.space(name.end() + 1)
        arguments: dict[str, object] = {}
        if first and not text.startswith(")", index):
            key = _NAME.match(text, index)
            if key is None or not text.startswith("=", self.space(key.end())) or "." in key.group(0):
                raise _NotACall  # positional arguments or an expression: Python in prose
        while not text.startswith(")", index):
            key = _NAME.match(text, index)
            if key is None or "." in key.group(0):
                raise CallSyntaxError(f"expected a keyword argument at offset {index}")
            index = self.space(key.end())
            if not text.startswith("=", index):
                raise CallSyntaxError(f"expected = after {key.group(0)!r}")
            if key.group(0) in arguments:
                raise CallSyntaxError(f"argument {key.group(0)!r} is given twice")
            arguments[key.group(0)], index = self.value(self.space(index + 1), 0)
            index = self.space(index)
            if text.startswith(",", index):
                index = self.space(index + 1)
            elif not text.startswith(")", index):
                raise CallSyntaxError(f"expected , or ) at offset {index}")
        self._after_call = index + 1
        return ParsedToolCall(name.group(0), arguments)

    def value(self, index: int, depth: int) -> tuple[object, int]:
        text = self.text
        if depth > MAX_NESTING:
            raise CallSyntaxError("values nested too deeply")
        string = _STRING.match(text, index)
        if string is not None:
            literal_text = string.group(0)
            if not _NEEDS_PYTHON.search(literal_text):
                return literal_text[1:-1], string.end()  # no escapes: the text between the quotes
            try:  # one string literal alone: no identifiers, nothing normalised
                return ast.literal_eval(string.group(0)), string.end()
            except (ValueError, SyntaxError) as error:
                raise CallSyntaxError(f"string at offset {index} cannot be read: {error}") from None
        if text.startswith("[", index) or text.startswith("{", index):
            return self.container(index, depth + 1)
        number = _NUMBER.match(text, index)
        if number is not None and not _NAME.match(text, number.end()):
            literal_text = number.group(0)
            try:
                is_float = any(mark in literal_text for mark in ".eE")
                return (float(literal_text) if is_float else int(literal_text)), number.end()
            except ValueError as error:
                raise CallSyntaxError(f"number at offset {index} cannot be read: {error}") from None
        word = _NAME.match(text, index)
        if word is not None and word.group(0) in _WORDS:
            return _WORDS[word.group(0)], word.end()
        raise CallSyntaxError(f"no literal value at offset {index}")

    def container(self, index: int, depth: int) -> tuple[object, int]:
        text = self.text
        is_dict = text[index] == "{"
        close = "}" if is_dict else "]"
        result: dict | list = {} if is_dict else []
        index = self.space(index + 1)
        while not text.startswith(close, index):
            if is_dict:
                key, index = self.value(index, depth)
                if not isinstance(key, str):
                    raise CallSyntaxError("dict keys must be strings")
                index = self.space(index)
                if not text.startswith(":", index):
                    raise CallSyntaxError(f"expected : at offset {index}")
                result[key], index = self.value(self.space(index + 1), depth)
            else:
                item, index = self.value(index, depth)
                result.append(item)
            index = self.space(index)
            if text.startswith(",", index):
                index = self.space(index + 1)
            elif not text.startswith(close, index):
                raise CallSyntaxError(f"expected , or {close} at offset {index}")
        return result, index + 1


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan] | None:
    closer = WRAPPERS.get(opener.literal)
    if not closer and type(found) is FoundCalls:
        return found.spans
    start = _SPACE.match(region, len(opener.literal) if closer else 0).end()
    parser = _Parser(region)
    if not region.startswith("[", start):
        raise CallSyntaxError(f"expected [ after {opener.literal}")
    end = len(region) - len(closer) if closer else len(region)
    fast = fast_calls(region, start, len(region))
    if fast is not None and _SPACE.match(region, fast[1]).end() == end:
        return fast[0]
    try:
        calls, after = parser.calls(start)
    except _NotACall:
        if closer:
            raise CallSyntaxError(f"the list after {opener.literal} is not a list of calls") from None
        return None
    except RecursionError:
        raise CallSyntaxError("values nested too deeply") from None
    if _SPACE.match(region, after).end() != end:
        raise CallSyntaxError(f"unexpected text after the list at offset {after}")
    return region_spans(calls, len(region))


def _write_value(value: object) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_write_value(k)}: {_write_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_write_value(item) for item in value) + "]"
    return repr(value)


def write_call(call: ParsedToolCall) -> str:
    arguments = ", ".join(f"{key}={_write_value(value)}" for key, value in call.arguments.items())
    return f"[{call.name}({arguments})]"


_NAME_START = chars(rf"(?:[^\W0-9]|[{_CONNECTORS}])")
OPENERS = (
    Opener("[", opener_pattern("[", SPACES, _NAME_START, run(chars(rf"[\w.{_CONNECTORS}]")), literal("(")),
           ListExtent, start_only=True, cut_after=1 << 30),
    *(Opener(wrapper, opener_pattern(wrapper, SPACES, literal("[")), lambda wrapper=wrapper, close=close: TagExtent(len(wrapper), close))
      for wrapper, close in WRAPPERS.items()),
)
CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})

FORMAT = Format(
    name="pythonic",
    description="[name(key=value, ...)] Python-literal calls (Llama 3.2/4 pythonic, LFM2)",
    openers=OPENERS,
    read_region=read_region,
    write_call=write_call,
    closers=("]", *WRAPPERS.values()),
    response_template=None,
    no_response_template=(
        "transformers' response-template language cannot read Python literals: True/None stay text "
        "and nested brackets defeat its patterns"
    ),
    reasoning=None,
    samples=(
        Sample('[get_exchange_rate(base="EUR", quote="JPY")]', (CALL,), source="Llama 3.2 pythonic"),
        Sample("[get_exchange_rate(base='EUR', quote='JPY'), ping()]", (CALL, ParsedToolCall("ping", {}))),
        Sample('[s(q="a, b", n=10, f=0.5, live=True, since=None, p=["x"], o={"d": 7})]',
               (ParsedToolCall("s", {"q": "a, b", "n": 10, "f": 0.5, "live": True, "since": None, "p": ["x"], "o": {"d": 7}}),)),
        Sample('<|tool_call_start|> [get_exchange_rate(base="EUR", quote="JPY")]<|tool_call_end|>Checking.', (CALL,),
               source="LFM2, a space before the list"),
        Sample("<|python_start|>[get_weather(city='LA', metric='C')]<|python_end|>",
               (ParsedToolCall("get_weather", {"city": "LA", "metric": "C"}),), source="Llama 4"),
        Sample("<|tool_call_start|>[]<|tool_call_end|>No call needed.", (), source="LFM2: an empty block, no call"),
        Sample("[𝐝𝐞𝐥𝐞𝐭𝐞_𝐚𝐥𝐥(confirm=True)]", (ParsedToolCall("𝐝𝐞𝐥𝐞𝐭𝐞_𝐚𝐥𝐥", {"confirm": True}),),
               source="a name as written, never normalised to delete_all"),
    ),
    near_misses=(
        NearMiss("[len(row) for row in rows] gives each row's length.", False, "a list comprehension"),
        NearMiss("[Note(important)] Read this first.", False, "a bracketed note"),
        NearMiss('[get_weather(city=)]', True, "a keyword with no value"),
        NearMiss("<|tool_call_start|>[get_weather(city='LA')", True, "cut inside the wrapper"),
    ),
    wire_limits=(
        WireLimit("a float that is infinite or not a number: repr writes a name, not a literal",
                  lambda arguments: any_string(arguments, lambda s: False) or _bad_float(arguments)),
        WireLimit("a keyword that is not a plain identifier (Python syntax has no way to write it)",
                  lambda arguments: any(not _NAME.fullmatch(key) or "." in key for key in arguments)),
    ),
    corpus_labels=("pythonic",),
    variants=("LFM2 <|tool_call_start|> wrapper", "Llama 4 <|python_start|> wrapper", "text after the list"),
    vllm_parser="pythonic",
)


def _bad_float(value: object) -> bool:
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return any(_bad_float(item) for item in value.values())
    if isinstance(value, list):
        return any(_bad_float(item) for item in value)
    return False
