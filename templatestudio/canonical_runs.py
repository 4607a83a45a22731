"""Runs of calls written exactly as a format's own writer writes them, read with one regex match each.

A model that makes many small calls writes them the way its template (and
our ``write_call``) does: the same markers, the same spacing, the name,
the arguments as ``json.dumps`` writes them. The general machine reads each
such call through its opener, extent and reader: about a hundred Python
steps a call. A *run shape* is derived from ``write_call`` itself (a call
with a sentinel name and arguments, cut where they stand) and matches one
whole call plus the whitespace after it with one compiled pattern; the
arguments are decoded by ``json``'s C decoder, which must end exactly
where the pattern says they end (a JSON object ends at its own closing
brace, so that is where the general reader's decode ends too).

Calls whose arguments hold no brace inside are listed by one ``findall``
of a pattern whose last alternative takes the rest of the text in one step
(so the list ends at the first place no such call starts), and their
arguments are decoded by one ``json.loads`` of the joined list. A stream
meets calls one region at a time: ``read_one`` reads a region that is
exactly one written call the same way.

Nothing here decides what a call is. The engine derives a shape per
format, checks on probe replies that the general machine reads them into
exactly the events the shape predicts (``probe_replies``), and only then
uses it; anything the pattern does not match, or whose arguments do not
decode, or hold one of the format's own markers, is left to the general
machine, and a run always leaves its last call to it too, so what follows
a run (the end of the reply, a cut, prose) is judged by the general rules.

Not handled (left to the general machine): names outside
``[A-Za-z_][A-Za-z0-9_]*``, arguments longer than ``ARGUMENTS_LIMIT``
characters or with a raw newline, formats whose writer does not write
``json.dumps`` of the arguments, writers that number or id their calls in
a way that depends on more than the name.
"""

from __future__ import annotations

import functools
import json
import operator
import re
from dataclasses import dataclass

from templatestudio.calls import ParsedToolCall, filler
from templatestudio.wire.base import Format

SENTINEL_NAME = "zqNAMEqz"
SENTINEL_ARGUMENTS = {"zqKEYqz": "zqVALUEqz"}
NAME = r"[A-Za-z_][A-Za-z0-9_]{0,63}"
ARGUMENTS_LIMIT = 2048
SEPARATOR_LIMIT = 64
# Between two calls of a run: whitespace, and the "; " Llama 3.1's template
# puts between calls it writes on one line. Only those that no literal of any
# format starts with, and that the probes show the general machine keeps as text.
SEPARATOR_CHOICES = " \t\r\n;"
_DECODER = json.JSONDecoder()
_JSON_PUNCTUATION = "{}[],: \t\r\n"
# Arguments with no brace inside them (flat objects, strings without braces):
# one class run, the fastest thing the regex engine does. Whether they are
# valid JSON, and one value each, is for the decoder to say (_decoded).
# At most ARGUMENTS_LIMIT characters, so one failed try reads a bounded stretch.
_FLAT_OBJECT = r"\{[^{}\n]{0,%d}+\}" % (ARGUMENTS_LIMIT - 2)
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
    forbidden: tuple[str, ...]  # the format's closing markers that a call left to a run may not hold
    reach: int

    def read(self, text: str, start: int, event, delta, batch: bool = True) -> tuple[list, int, int, int, int]:
        """(events, end, failed_at, calls, scanned) of the run of calls from start.

        Every call whose next call follows it at once becomes event(call,
        id), its separator delta(text); end is where the last call (left
        to the general machine) starts; failed_at is where matching stopped;
        calls counts the calls read. With batch, the calls whose arguments
        hold no brace inside are matched first, all at once (_read_batch);
        scanned is how far that match read (start when it did not run). A
        caller that passes batch=False for any start before scanned reads
        each character with the batch pattern once at most, even when a
        decode stopped a batch short of the calls it matched.
        """
        events, start, calls, scanned = self._read_batch(text, start, event, delta) if batch else ([], start, 0, start)
        more, end, failed, more_calls = self._read_each(text, start, event, delta)
        events += more
        return events, end, failed, calls + more_calls, scanned

    def read_one(self, region: str, event):
        """event(call, id) for a region that is exactly one call as written, or None.

        A stream ends a call's region where its extent finds the end; when
        that region is the writer's shape with arguments that hold no brace
        inside, the call is the one a run would read from it, decoded by one
        ``raw_decode`` (the check on probe replies covers both: see the
        module docstring). Anything else returns None and the format reads
        the region.
        """
        match = self.batch.match(region)
        name = match.group("name")
        if name is None or match.end() != len(region):
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
        return event(ParsedToolCall(name, value), call_id(self.id_parts, name))

    def _ident(self):
        id_parts = self.id_parts
        fixed_id = id_parts[0] if id_parts is not None and len(id_parts) == 1 else None
        named_id = id_parts if id_parts is not None and len(id_parts) == 2 else None
        return fixed_id, named_id

    def _read_batch(self, text: str, start: int, event, delta) -> tuple[list, int, int, int]:
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
        events: list = []
        append = events.append
        fixed_id, named_id = self._ident()
        new = _new_event(event)
        deltas: dict[str, object] = {}
        seen, shown = None, None  # the last separator and its delta (they are mostly all the same)
        for (name, _, separator), arguments in zip(found, values):
            made = new(event)  # the instance dict filled as the dataclass's __init__ fills it
            fields = made.__dict__
            fields["call"] = ParsedToolCall(name, arguments)
            fields["id"] = fixed_id if named_id is None else named_id[0] + name + named_id[1]
            append(made)
            if separator:
                if separator != seen:
                    shown = deltas.get(separator)
                    if shown is None:
                        shown = deltas[separator] = delta(separator)
                    seen = separator
                append(shown)
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

    def _read_each(self, text: str, start: int, event, delta) -> tuple[list, int, int, int]:
        """As read, one call at a time: each call's arguments decoded on their own (nested ones too)."""
        head, tail = self.head.match, self.tail.match
        current = head(text, start)
        if current is None:
            return [], start, start, 0
        events: list = []
        append = events.append
        raw_decode = _DECODER.raw_decode
        forbidden = self.forbidden
        fixed_id, named_id = self._ident()
        new = _new_event(event)
        deltas: dict[str, object] = {}  # one frozen delta per separator text
        calls = 0
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
            name = current.group("name")
            made = new(event)  # the instance dict filled as the dataclass's __init__ fills it
            fields = made.__dict__
            fields["call"] = ParsedToolCall(name, arguments)
            fields["id"] = fixed_id if named_id is None else named_id[0] + name + named_id[1]
            append(made)
            separator = after.group("separator")
            if separator:
                shown = deltas.get(separator)
                if shown is None:
                    shown = deltas[separator] = delta(separator)
                append(shown)
            current = following
            calls += 1
        return events, current.start(), failed, calls


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


@functools.cache
def _new_event(event: type):
    """How to make an event (fields call, id) without its __init__ (see ``calls.filler``)."""
    return filler(event, ("call", "id"))


def _piece_at(pieces: list[str], offset: int) -> int:
    """The index of the piece that holds offset of ",".join(pieces) (its comma included)."""
    start = 0
    for index, piece in enumerate(pieces):
        start += len(piece) + 1
        if offset < start:
            return index
    return len(pieces)


def written(fmt: Format, name: str = SENTINEL_NAME, arguments: dict | None = None) -> str:
    return fmt.write_call(ParsedToolCall(name, dict(SENTINEL_ARGUMENTS if arguments is None else arguments)))


def derive(fmt: Format, separators: str, id_parts: tuple[str, str] | tuple[str] | None) -> RunShape | None:
    """The run shape of fmt's writer with these separator characters, or None when it has none.

    None when the writer is not deterministic, does not write the
    arguments as ``json.dumps`` does, or writes the name after them.
    """
    text = written(fmt)
    if written(fmt) != text:
        return None
    arguments = json.dumps(SENTINEL_ARGUMENTS, ensure_ascii=False)
    if text.count(arguments) != 1:
        return None
    before, after = text.split(arguments)
    if SENTINEL_NAME not in before or SENTINEL_NAME in after:
        return None
    pieces = before.split(SENTINEL_NAME)
    head = re.escape(pieces[0]) + f"(?P<name>{NAME})" + "(?P=name)".join(map(re.escape, pieces[1:]))
    space = f"[{re.escape(separators)}]{{0,{SEPARATOR_LIMIT}}}" if separators else ""
    # A closing tag inside the arguments may end the general reader's region
    # early (some extents look for it as text): such calls are left to it.
    # Closers that are JSON punctuation ("}", "]") are where the JSON ends.
    markers = sorted({closer for closer in fmt.closers if closer.strip(_JSON_PUNCTUATION)}, key=len, reverse=True)
    return RunShape(
        head=re.compile(head + r"(?=\{)"),
        tail=re.compile(re.escape(after) + f"(?P<separator>{space})"),
        batch=re.compile(f"{head}(?P<arguments>{_FLAT_OBJECT}){re.escape(after)}(?P<separator>{space})|(?s:.+)"),
        fixed_length=len(text) - len(arguments) - len(SENTINEL_NAME) * (len(pieces) - 1),
        name_count=len(pieces) - 1,
        id_parts=id_parts,
        forbidden=tuple(markers),
        reach=len(text) + ARGUMENTS_LIMIT + SEPARATOR_LIMIT + 64 * (len(pieces) - 1),
    )


def call_id(id_parts: tuple[str, str] | tuple[str] | None, name: str) -> str | None:
    """The id a run gives a call to name (see ``RunShape.id_parts``)."""
    if id_parts is None or len(id_parts) == 1:
        return None if id_parts is None else id_parts[0]
    return id_parts[0] + name + id_parts[1]


# The probes: names and arguments of the shapes a run reads, separators between them.
PROBE_NAMES = ("f", "get_exchange_rate", "A9_b")
PROBE_ARGUMENTS = (
    {"a": "b"},
    {},
    {"n": -1, "x": [1.5, True, None, {"k": "v"}], "e": 2e300},
    {"s": "é \" \\ }{ ][ \u2028 ,", "t": {"u": {}}},
)


def probe_replies(separator: str) -> list[tuple[list[tuple[str, dict]], str]]:
    """(calls, separator) of the replies that check a shape: three calls each, every probe used."""
    replies = []
    for shift in range(len(PROBE_ARGUMENTS)):
        calls = [(PROBE_NAMES[(shift + index) % len(PROBE_NAMES)],
                  PROBE_ARGUMENTS[(shift + index) % len(PROBE_ARGUMENTS)]) for index in range(3)]
        replies.append((calls, separator))
    return replies


__all__ = ["ARGUMENTS_LIMIT", "NAME", "RunShape", "call_id", "derive", "probe_replies", "written"]
