"""Runs of calls written exactly as a format's own writer writes them, read with one regex match each.

A model that makes many small calls writes them the way its template (and
our ``write_call``) does: the same markers, the same spacing, the name,
the arguments as ``json.dumps`` writes them. The general machine reads each
such call through its opener, extent and reader: about a hundred Python
steps a call. A *run shape* (derived from ``write_call`` itself by
``templatestudio.run_shapes``) matches one whole call plus the whitespace
after it with one compiled pattern; the arguments are decoded by
``json``'s C decoder, which must end exactly where the pattern says they
end (a JSON object ends at its own closing brace, so that is where the
general reader's decode ends too).

Calls whose arguments hold no brace inside are listed by one ``findall``
of a pattern whose last alternative takes the rest of the text in one step
(so the list ends at the first place no such call starts), and their
arguments are decoded by one ``json.loads`` of the joined list. A stream
meets calls one region at a time: ``read_one`` reads a region that is
exactly one written call the same way. ``RunTries`` is one machine's use
of a shape, with the bookkeeping that keeps failed tries linear.

Nothing here decides what a call is, and nothing is checked at run time:
that the general machine reads runs exactly as a shape predicts is checked
at build time, for every registered format, by
``tests/test_canonical_runs.py``. Anything the pattern does not match, or
whose arguments do not decode, or hold one of the format's own markers, is
left to the general machine, and a run always leaves its last call to it
too, so what follows a run (the end of the reply, a cut, prose) is judged
by the general rules.

Not handled (left to the general machine): names outside
``[A-Za-z_][A-Za-z0-9_]*``, arguments longer than ``ARGUMENTS_LIMIT``
characters or with a raw newline.
"""

from __future__ import annotations

import json
import operator
import re
from dataclasses import dataclass
from itertools import repeat

from templatestudio.calls import ParsedToolCall
from templatestudio.events import Event, TextDelta, ToolCallEvent, call_events

NAME = r"[A-Za-z_][A-Za-z0-9_]{0,63}"
ARGUMENTS_LIMIT = 2048
SEPARATOR_LIMIT = 64
_DECODER = json.JSONDecoder()
_NAME, _ARGUMENTS, _SEPARATOR = operator.itemgetter(0), operator.itemgetter(1), operator.itemgetter(2)


@dataclass(frozen=True)
class RunShape:
    """How one call of a format looks as written, as patterns, and what the machine reads from it.

    head matches the text before the arguments (the name in it), tail the
    text after them and the separator that follows the call.
    id_parts: the id the general machine gives such a call: the text
    before and after its name, or the one id every such call gets (None:
    the format writes no id).
    reach: at most how far one failed try reads, so a caller that stops
    trying for that long after a failure keeps the work linear.
    """

    head: re.Pattern
    tail: re.Pattern
    # (name, arguments with no brace inside, separator) of each call of a
    # run, then the rest of the text as one empty item.
    batch: re.Pattern
    fixed_length: int  # the length of a call's text but its name and arguments
    name_count: int  # how often a call's text holds its name
    id_parts: tuple[str, str] | tuple[str] | None
    separators: str  # the characters that may stand between two calls of a run
    forbidden: tuple[str, ...]  # the format's closing markers that a call left to a run may not hold
    reach: int

    def read(self, text: str, start: int, batch: bool = True, layout: str = "") -> tuple[list, int, int, int, int]:
        """(events, end, failed_at, calls, scanned) of the run of calls from start.

        Every call whose next call follows it at once becomes a
        ``ToolCallEvent``, its separator a ``TextDelta`` (none for a separator
        made only of layout's characters: see ``RunTries``); end is where the last call (left
        to the general machine) starts; failed_at is where matching stopped;
        calls counts the calls read. With batch, the calls whose arguments
        hold no brace inside are matched first, all at once (_read_batch);
        scanned is how far that match read (start when it did not run). A
        caller that passes batch=False for any start before scanned reads
        each character with the batch pattern once at most, even when a
        decode stopped a batch short of the calls it matched.
        """
        events, start, calls, scanned = self._read_batch(text, start, layout) if batch else ([], start, 0, start)
        more, end, failed, more_calls = self._read_each(text, start, layout)
        events += more
        return events, end, failed, calls + more_calls, scanned

    def read_one(self, region: str):
        """The ``ToolCallEvent`` of a region that is exactly one call as written, or None.

        A stream ends a call's region where its extent finds the end; when
        that region is the writer's shape with arguments that hold no brace
        inside, the call is the one a run would read from it, decoded by one
        ``raw_decode`` (the tests' check on probe replies covers both: see
        the module docstring). Anything else returns None and the format reads
        the region.
        """
        match = self.batch.match(region)
        name = match.group("name")
        # Nothing may follow the call, not even a separator: the reader would
        # keep it as text, which this event leaves out.
        if name is None or match.end() != len(region) or match.group("separator"):
            return None
        arguments = match.group("arguments")
        if _first_marker(self.forbidden, arguments, 0, len(arguments)) != -1:
            return None
        try:
            value, stop = _DECODER.raw_decode(arguments)
        except (ValueError, RecursionError):  # not JSON, a number past the digit limit, or too deep
            return None
        if type(value) is not dict or stop != len(arguments):
            return None
        return ToolCallEvent(ParsedToolCall(name, value), call_id(self.id_parts, name))

    def _events(self, names: list[str], arguments: list[dict], separators: list[str], layout: str) -> list[Event]:
        """The events of calls read: each call, then its separator as a ``TextDelta`` (none where only layout)."""
        id_parts = self.id_parts
        if id_parts is None or len(id_parts) == 1:
            ids = repeat(None if id_parts is None else id_parts[0])
        else:
            ids = [id_parts[0] + name + id_parts[1] for name in names]
        made = call_events(map(ParsedToolCall, names, arguments), ids)
        first = separators[0] if separators else ""
        if separators.count(first) == len(separators):  # one separator throughout: a run's usual case
            if not first.strip(layout):  # ("\n".strip("") keeps the newline: no layout keeps every separator)
                return made
            events: list[Event] = [None] * (2 * len(made))
            events[::2] = made
            events[1::2] = [TextDelta(first)] * len(made)  # one frozen delta, shared
            return events
        events = []
        deltas: dict[str, TextDelta] = {}  # one frozen delta per separator text
        for event, separator in zip(made, separators):
            events.append(event)
            if separator.strip(layout):
                shown = deltas.get(separator)
                if shown is None:
                    shown = deltas[separator] = TextDelta(separator)
                events.append(shown)
        return events

    def _read_batch(self, text: str, start: int, layout: str) -> tuple[list, int, int, int]:
        """(events, end, calls, scanned) of the calls from start whose arguments hold no brace inside.

        One ``findall`` of the batch pattern lists the calls that follow
        each other from start (its last alternative takes the rest of the
        text at the first place no call starts, in constant time, and ends
        the list). Each call's arguments hold no brace but their first and
        last, so the joined list "[a1,a2,…]" is decoded at once and taken
        only when it has one value per call (see _decoded). end is where
        the first call not read here starts; scanned is where the matched
        calls end. If anything fails, nothing is read here and the caller
        reads each call on its own.
        """
        found = self.batch.findall(text, start)
        if found and not found[-1][0]:
            del found[-1]  # the rest of the text, from the first place no call starts
        scanned = start + self._length(found)
        if len(found) < 2:
            return [], start, 0, scanned
        del found[-1]  # the last call goes to the general machine
        values = self._decoded(list(map(_ARGUMENTS, found)))
        if not values:
            return [], start, 0, scanned
        del found[len(values) :]  # the calls from the first one that failed are read one by one
        events = self._events(list(map(_NAME, found)), values, list(map(_SEPARATOR, found)), layout)
        return events, start + self._length(found), len(found), scanned

    def _length(self, found: list[tuple[str, str, str]]) -> int:
        """How long the calls of found are in the text, their separators included.

        Worked out from the parts the pattern captured (a call is its fixed
        text, its name as often as the writer writes it, its arguments and
        its separator), so the pattern need not copy out each whole call.
        """
        return (len(found) * self.fixed_length + self.name_count * sum(map(len, map(_NAME, found)))
                + sum(map(len, map(_ARGUMENTS, found))) + sum(map(len, map(_SEPARATOR, found))))

    def _decoded(self, pieces: list[str]) -> list:
        """The arguments of the longest start of pieces that holds none of the format's markers and decodes.

        Each piece holds no brace but its first and last. In the joined
        list "[p1,p2,…]" every value starts at some piece's "{"; a piece
        whose string runs past its "}" swallows the next piece's "{", and
        no piece can start two values, so the list is shorter than the
        pieces. Hence only a list with one value per piece is taken: then
        value k is exactly piece k. A failure leaves the calls before it
        read (the decoder, and the marker search, say where it failed).
        """
        joined = ",".join(pieces)
        marker = _first_marker(self.forbidden, joined, 0, len(joined))
        if marker != -1:
            pieces = pieces[: _piece_at(pieces, marker)]
        try:
            return _one_value_each(pieces)
        except json.JSONDecodeError as error:
            pieces = pieces[: _piece_at(pieces, error.pos - 1)]
        except (ValueError, RecursionError):  # a number past the digit limit (no offset), or too deep
            return []
        try:
            return _one_value_each(pieces)
        except (ValueError, RecursionError):
            return []

    def _read_each(self, text: str, start: int, layout: str) -> tuple[list, int, int, int]:
        """As read, one call at a time: each call's arguments decoded on their own (nested ones too)."""
        head, tail = self.head.match, self.tail.match
        current = head(text, start)
        if current is None:
            return [], start, start, 0
        names: list[str] = []
        values: list[dict] = []
        separators: list[str] = []
        raw_decode = _DECODER.raw_decode
        forbidden = self.forbidden
        while True:
            begin = current.end()
            try:
                # Decoded from a window: a value longer than it fails here and
                # goes to the general reader, so no try reads further.
                arguments, size = raw_decode(text[begin : begin + ARGUMENTS_LIMIT])
            except (ValueError, RecursionError):  # not JSON, a value Python refuses, or too deep
                failed = begin
                break
            stop = begin + size
            if type(arguments) is not dict or _first_marker(forbidden, text, begin, stop) != -1:
                failed = begin
                break
            after = tail(text, stop)
            if after is None:
                failed = stop
                break
            following = head(text, after.end())
            if following is None:
                failed = after.end()
                break
            names.append(current.group("name"))
            values.append(arguments)
            separators.append(after.group("separator"))
            current = following
        return self._events(names, values, separators, layout) if names else [], current.start(), failed, len(names)


def _first_marker(markers: tuple[str, ...], text: str, start: int, stop: int) -> int:
    """The offset of the first of markers in text[start:stop], or -1.

    One ``str.find`` per marker: each is a C search that skips ahead, where
    one regex alternation of the markers tries every offset in turn (for
    Mistral's three markers, ten times slower on a run of small calls).
    """
    first = -1
    for marker in markers:
        found = text.find(marker, start, stop)
        if found != -1 and (first == -1 or found < first):
            first = found
    return first


def _one_value_each(pieces: list[str]) -> list:
    """The values of pieces decoded as one JSON list, or [] when the list does not have one per piece."""
    values = json.loads("[" + ",".join(pieces) + "]")
    return values if len(values) == len(pieces) else []


def _piece_at(pieces: list[str], offset: int) -> int:
    """The index of the piece that holds offset of ",".join(pieces) (its comma included)."""
    start = 0
    for index, piece in enumerate(pieces):
        start += len(piece) + 1
        if offset < start:
            return index
    return len(pieces)


def call_id(id_parts: tuple[str, str] | tuple[str] | None, name: str) -> str | None:
    """The id a run gives a call to name (see ``RunShape.id_parts``)."""
    if id_parts is None or len(id_parts) == 1:
        return None if id_parts is None else id_parts[0]
    return id_parts[0] + name + id_parts[1]


class RunTries:
    """One machine's use of a run shape: where runs may be tried, and what trying them cost.

    A failed try blocks further tries for as far as one try can read
    (``RunShape.reach``), and what the batch pattern read is never read with
    it again, so a flood of openings a run cannot take is read a bounded
    number of times: linear work. tried, calls and scanned count the tries,
    the calls runs settled and the characters the batch pattern read.

    layout: the characters the machine's ``Layout`` takes out as layout
    ("" when it keeps every character). A separator made only of them
    stands between two calls, where the layout would drop it, so no event is
    made for it (1 MB of small calls: a tenth of the reading was the layout
    walking those deltas).
    """

    def __init__(self, shape: RunShape, layout: str = "") -> None:
        self.shape = shape
        self.layout = layout
        self.blocked_until = 0  # no run is tried before this reply offset (after a failed try)
        self.batch_from = 0  # no batch is matched before this reply offset
        self.tried = 0
        self.calls = 0
        self.scanned = 0

    def read_at(self, buffer: str, start: int, base: int) -> tuple[list[Event], int] | None:
        """(events, end) of the run at buffer[start] (base: the reply offset of buffer[0]), or None.

        None when no run may be tried there or none was read; else the
        events of every call but the run's last, which starts at end.
        """
        if base + start < self.blocked_until:
            return None
        shape = self.shape
        self.tried += 1
        events, end, failed_at, calls, scanned = shape.read(buffer, start, base + start >= self.batch_from, self.layout)
        # What the batch pattern read is not read with it again (a decode may
        # have stopped the batch before calls it matched; those are read one
        # by one), so each character meets it once.
        self.batch_from = max(self.batch_from, base + scanned)
        self.scanned += scanned - start
        if not events:
            # Not tried again for as far as a failed try can read. (A run that
            # read calls stopped at its last one, which the machine reads
            # next: nothing is tried twice.)
            self.blocked_until = base + max(failed_at, start) + shape.reach
            return None
        self.calls += calls
        return events, end


__all__ = ["ARGUMENTS_LIMIT", "NAME", "RunShape", "RunTries", "call_id"]
