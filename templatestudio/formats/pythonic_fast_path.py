"""The pythonic format's fast path: lists of plain calls read by one ``re.split``, whole or as they arrive.

``pythonic._Parser`` defines what the format reads; this module reads a
subset of it (calls whose values are plain scalars, the shape nearly every
reply has) the same way, at C speed, and defers everything else by
returning None. ``ListExtent`` is the bare list's extent: the bracket scan
of ``ValueExtent``, handing the calls it read to the reader as
``FoundCalls``. ``tests/test_pythonic_fast_path.py`` checks, over generated
replies, that switching this module off changes no outcome.

Not read here (deferred to the parser): nested values, strings with an
escape, a CR, a newline, a NUL or a parenthesis, a key given twice, an
integer past the interpreter's digit limit, anything between the calls
but commas and whitespace.
"""

from __future__ import annotations

import re

from templatestudio.calls import CallSpan, ParsedToolCall, region_spans
from templatestudio.wire.base import FoundCalls
from templatestudio.wire.value_extent import ValueExtent, value_plan
from templatestudio.wire.python_literals import CONNECTORS, IDENTIFIER, WORDS

# The fast path: a list of calls whose values are all plain scalars (strings
# with no backslash, CR, newline, NUL or parenthesis; numbers; True/False/
# None), the shape nearly every reply has. One re.split over the list (after
# a "," put before it, so every call is one unit ", name(…)" and the space
# after it) reads every unit at C speed; split also hands back the text
# between units, which must be empty: then the units cover the list and the
# list is exactly pythonic._Parser's grammar. Anything outside that shape (nested
# values, an escape, a parenthesis inside a string, a stray character) goes
# to _Parser, which defines the behaviour: the fast path reads a subset of
# what _Parser reads, the same way. Why the search stays linear on any text:
# a unit starts at a "," and its arguments hold no parenthesis, so each
# attempt reads from its own "(" to the next parenthesis at most.
_W = "[ \\t\\r\\n]*+"
_KEY = rf"(?:[^\W0-9]|[{CONNECTORS}])[\w{CONNECTORS}]*+"  # a keyword: a name without dots
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
_UNIT = re.compile(rf",{_W}({IDENTIFIER.pattern})\({_W}"
                   rf"(?:{_argument('(')}(?:,{_W}(?:{_argument('(')}(?:,{_W}({_MORE}))?+)?+)?+)?+\){_W}")
_STRIDE = _UNIT.groups + 1  # split gives the text before a unit, then the unit's groups
_MORE_ARGUMENT = re.compile(_argument("("))


def _other(text: str) -> object:
    """A number or word as PythonLiterals.value reads it (ValueError: an integer past the digit limit)."""
    if text in WORDS:
        return WORDS[text]
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


_LIST_PLAN = value_plan(quotes="python", brackets="[](){}")


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
        super().__init__(0, _LIST_PLAN)
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
