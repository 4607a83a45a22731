"""The one reading machine: a reply in, events out, whether it comes whole or in chunks.

``Machine`` is what both ``ToolCallStream`` (fed chunk by chunk) and the
whole-text reader (fed once, then closed) run, so the two cannot disagree:
for any text, any chunking gives the same events, or the same exception.

How it reads, left to right:

- At the start of the reply (and again right after a reasoning block),
  leading whitespace is text; then the format's reasoning opener starts a
  reasoning block, and a start-only opener (a bare ``[name(`` reply) may
  open a call.
- Elsewhere it looks for the literal of any opener of any registered
  format. At a literal, each opener's pattern decides whether a call opens
  there or the literal is prose ("Qwen wraps calls in <tool_call> tags").
- An opened call is a region; the opener's extent finds its end and the
  format's strict reader reads it. The reader may return calls, say the
  region is not a call after all (then it is text), or refuse it.
- A call of the machine's own format becomes ``ToolCallEvent``; a call
  in another format is a leak and raises ``UnparsedToolCall`` naming the
  marker and its offset; so does a region the reader refuses, and a reply
  that ends inside an opened call (or inside an opening that could still
  be one).

Work is linear: each character is searched, scanned by an opening
automaton or crossed by an extent a bounded number of times, which
``examined`` counts. Not handled: reasoning that is not at the start of
the reply (a later ``<think>`` is text), and calls inside reasoning (they
are reasoning text, never events).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from templatestudio import canonical_runs
from templatestudio.calls import CallSpan, ParsedToolCall, UnparsedToolCall, filler
from templatestudio.formats import FORMATS
from templatestudio.wire.base import JSON_SPACE, CallSyntaxError, Extent, Format, Opener
from templatestudio.resumable_match import FAILED, MATCHED, Scan


@dataclass(frozen=True)
class TextDelta:
    """Reply text the user may see."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """Text of the model's reasoning block; never read for calls."""

    text: str


@dataclass(frozen=True)
class ToolCallEvent:
    """One whole tool call, read by the machine's format, with its id when the format writes one."""

    call: ParsedToolCall
    id: str | None = None


Event = TextDelta | ReasoningDelta | ToolCallEvent
_NEW_EVENT = filler(ToolCallEvent, ("call", "id"))


@dataclass(frozen=True)
class Marker:
    """Where a call in some format opens: its literal, offset and format names."""

    text: str
    offset: int
    formats: tuple[str, ...]


def merge_deltas(events: list[Event]) -> list[Event]:
    """events with each run of adjacent deltas of one kind joined into one, empty ones dropped."""
    merged: list[Event] = []
    append = merged.append
    kind = None  # the type of merged[-1] when it is a delta
    texts: list[str] | None = None  # the texts of merged[-1]'s run, once it has two (joined once: linear)
    for event in events:
        current = type(event)
        if current is ToolCallEvent:
            if texts is not None:
                merged[-1], texts = kind("".join(texts)), None
            append(event)
            kind = None
            continue
        if not event.text:
            continue
        if current is kind:
            if texts is None:
                texts = [merged[-1].text]
            texts.append(event.text)
            continue
        if texts is not None:
            merged[-1], texts = kind("".join(texts)), None
        append(event)
        kind = current
    if texts is not None:
        merged[-1] = kind("".join(texts))
    return merged


class _Candidate:
    """One opener being tried at a literal: its format and its automaton's scan."""

    def __init__(self, fmt: Format, opener: Opener, anchor: int) -> None:
        self.format = fmt
        self.opener = opener
        self.scan: Scan | None = None  # made only when the regex alone cannot decide
        self.anchor = anchor  # buffer index of the literal's first character
        self.fed = anchor  # buffer index up to which the scan has read
        self.verdict = "more"

    @property
    def cut_short(self) -> bool:
        """Whether the text ended while this opening was still possible, far enough in to count."""
        return self.verdict == "more" and self.fed - self.anchor >= self.opener.cut_length


def _all_openers(own: Format | None) -> list[tuple[Format, Opener]]:
    formats = list(FORMATS.values())
    if own is not None:
        formats = [own, *(fmt for fmt in formats if fmt is not own)]
    return [(fmt, opener) for fmt in formats for opener in fmt.openers]


# A reply may open with a byte-order mark or a zero-width space before a bare
# call; they are text, but they do not hide the call behind them.
_SPACE_RUN = re.compile(f"[{re.escape(JSON_SPACE)}\ufeff\u200b]*")


@dataclass(frozen=True)
class _Tables:
    """What a machine for one format looks up, built once per format (see ``_tables``)."""

    anywhere: dict[str, list[tuple[Format, Opener]]]  # literal -> the openers it may start
    start: list[tuple[Format, Opener]]  # openers that only open a reply
    literals: re.Pattern  # any literal of ``anywhere``, longest first
    longest: int
    first_chars: re.Pattern  # a first character of any literal
    starts: set[str]  # every non-empty start of a literal, whole literals included
    proper_starts: set[str]  # the starts shorter than their literal


@functools.lru_cache(maxsize=None)
def _tables(fmt: Format | None) -> _Tables:
    pairs = _all_openers(fmt)
    anywhere: dict[str, list[tuple[Format, Opener]]] = {}
    for pair in pairs:
        if not pair[1].start_only:
            anywhere.setdefault(pair[1].literal, []).append(pair)
    literals = sorted(anywhere, key=len, reverse=True)
    firsts = re.escape("".join(sorted({item[0] for item in literals})))
    return _Tables(
        anywhere=anywhere,
        start=[pair for pair in pairs if pair[1].start_only],
        # The class in front lets the search skip to a possible first character at C speed.
        literals=re.compile(f"(?=[{firsts}])(?:{'|'.join(re.escape(item) for item in literals)})"),
        longest=max(map(len, literals)),
        # For the end of a chunk: which tails could still grow into a literal
        # (looked up in a set, at the few places a literal's first character stands).
        first_chars=re.compile(f"[{firsts}]"),
        starts={item[:size] for item in literals for size in range(1, len(item) + 1)},
        proper_starts={item[:size] for item in literals for size in range(1, len(item))},
    )


# Held text up to this length is decided by the regex first (see _decide).
_REGEX_FIRST_LOOK = 512
# Held text this short past an opener's literal goes to the automaton at once (see _decide).
_SHORT_HOLD = 4

# Chunks shorter than this may take feed's shortcuts for text (a token's size;
# a longer chunk would be read twice when the shortcut does not apply).
_SHORT_CHUNK = 256


class Machine:
    """Reads a reply for one format (or for none: then every call found is foreign).

    feed(text) appends text and returns the events it settles; close()
    ends the reply. record=True collects foreign calls in ``markers``
    instead of raising (that is how ``leaks.find_call_markers`` surveys a
    text). reasoning_open says the prompt already opened the reasoning block.
    runs=False reads every call through its opener, never as part of a run
    of written calls (``canonical_runs``); the events are the same.
    """

    def __init__(self, fmt: Format | None, *, reasoning_open: bool = False, record: bool = False,
                 runs: bool = True) -> None:
        self.format = fmt
        self.record = record
        self.markers: list[Marker] = []
        self.reasoning_spans: list[tuple[int, int]] = []  # reply offsets of each block, tags included
        self._reasoning_start = 0
        self.examined = 0
        self._reasoning = fmt.reasoning if fmt is not None else None
        tables = _tables(fmt)
        self._anywhere = tables.anywhere
        self._start = tables.start
        self._literals = tables.literals
        self._longest = tables.longest
        self._first_chars = tables.first_chars
        self._starts = tables.starts
        self._proper_starts = tables.proper_starts
        self._steps = {"reason": self._reason, "start": self._start_of_reply, "text": self._text,
                       "decide": self._decide, "region": self._in_region}
        self._buffer = ""
        self._at = 0  # index in _buffer of the first character not yet settled
        self._base = 0  # reply offset of _buffer[0]
        self._mode = "reason" if (reasoning_open and self._reasoning) else "start"
        # The opening being decided: the openers its literal may start, tried
        # in order from _next; _trying holds the one whose automaton waits for
        # more text, _undecided those still possible when the reply ended.
        self._pairs: list[tuple[Format, Opener]] = []
        self._anchor = 0
        self._next = 0
        self._trying: _Candidate | None = None
        self._undecided: list[_Candidate] = []
        self._from_start = False
        self._region: tuple[Format, Opener, Extent] | None = None
        self._events: list[Event] = []
        # Events already merged, before _events: a run's events go here whole, so
        # _take does not walk thousands of them again (see _add_merged).
        self._settled: list[Event] = []
        self._closed = False
        self._runs = _run_shape(fmt) if runs and fmt is not None and not record else None
        self._runs_from = 0  # no run is tried before this reply offset (after a failed try)
        self._batch_from = 0  # no batch is matched before this reply offset (see _read_run)
        self.run_scanned = 0  # characters the batch pattern read
        self.runs_tried = 0  # how often a run was tried, and how many calls runs settled
        self.run_calls = 0

    # -- public ---------------------------------------------------------------
    def feed(self, text: str) -> list[Event]:
        # A stream calls this once per token, so the common cases are written
        # out here rather than reached through _run, the mode table and _take.
        if self._closed:
            raise RuntimeError("the reply was already closed")
        mode = self._mode
        if mode == "region":
            # Inside a call only its extent can settle anything: it is asked
            # directly, and a chunk that does not end the call costs one call.
            # (Appended through a local name that holds the only reference, so
            # CPython can grow the string in place: ``self._buffer += text``
            # would copy all the held text, a long call still open, each time.)
            buffer, self._buffer = self._buffer, ""
            buffer += text
            self._buffer = buffer
            extent = self._region[2]
            before = extent.examined
            end = extent.advance(buffer, self._at, False)
            del buffer
            self.examined += extent.examined - before
            if end is None:
                return []  # nothing is settled inside an open call, so no event waits
            self._end_region(end)
        elif mode == "decide" and self._trying is not None:
            # An opening the automaton is still reading: fed here first, and only
            # once it is decided does _decide run (its feed of the settled scan
            # then reads nothing).
            buffer, self._buffer = self._buffer, ""
            buffer += text
            self._buffer = buffer
            candidate = self._trying
            scan = candidate.scan
            before = scan.examined
            candidate.verdict, _ = scan.feed(buffer, candidate.fed)
            self.examined += scan.examined - before
            candidate.fed = len(buffer)
            del buffer
            if candidate.verdict == "more":
                return []
            if candidate.verdict == MATCHED:  # as _decide would: the opener being tried opens the call
                self._open_region(candidate.format, candidate.opener)
        else:
            if mode == "text" and 0 < len(text) < _SHORT_CHUNK:
                # Two cases _text would settle without emitting a literal, for a
                # token-sized chunk (a longer one goes to _text, which reads it once).
                at = self._at
                if at == len(self._buffer):
                    if self._first_chars.search(text) is None:
                        # Prose with nothing held: no literal can start in it, so
                        # all of it is text.
                        self._base += at
                        self._buffer, self._at = text, len(text)
                        self.examined += len(text)
                        return [TextDelta(text)]
                else:
                    held = self._buffer[at:] + text
                    if held in self._proper_starts:
                        # The held start of a literal grew and is still only a start
                        # of one (``<tool_c``, ``[TOOL``): it is held on, as _text
                        # would hold it, whatever literal it already contains.
                        self._base += at
                        self._buffer, self._at = held, 0
                        self.examined += len(text)
                        return []
            if self._at and mode in ("start", "text", "reason"):
                # Nothing is held but a partial literal: drop what is settled.
                self._base += self._at
                self._buffer, self._at = self._buffer[self._at :], 0
            buffer, self._buffer = self._buffer, ""
            buffer += text
            self._buffer = buffer
            del buffer
        steps = self._steps
        while steps[self._mode](False):
            pass
        return self._take()

    def close(self) -> list[Event]:
        if self._closed:
            raise RuntimeError("the reply was already closed")
        self._closed = True
        self._run(final=True)
        return self._take()

    def _take(self) -> list[Event]:
        events, settled = self._events, self._settled
        if settled:
            self._settled = []
        elif not events:
            return []
        self._events = []
        # Events are never empty deltas, so a lone one is merged already.
        if len(events) > 1:
            events = merge_deltas(events)
        return settled + events if settled else events

    # -- helpers ------------------------------------------------------------------
    def _emit(self, kind: type, end: int) -> None:
        """Settle the buffer up to end as one delta of kind."""
        if end > self._at:
            self._events.append(kind(self._buffer[self._at : end]))
            self._at = end

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def offset(self) -> int:
        """Reply offset of the first unsettled character."""
        return self._base + self._at

    def _reader_name(self) -> str:
        return f"the {self.format.name} format" if self.format is not None else "the reader"

    # -- the modes ----------------------------------------------------------------
    def _run(self, final: bool) -> None:
        steps = self._steps
        while steps[self._mode](final):
            pass

    def _reason(self, final: bool) -> bool:
        closer = self._reasoning[1]
        end = self._buffer.find(closer, self._at)
        if end != -1:
            self.examined += end + len(closer) - self._at
            self._emit(ReasoningDelta, end)
            self._at = end + len(closer)
            self.reasoning_spans.append((self._reasoning_start, self.offset))
            self._mode = "start"
            return True
        keep = 0 if final else _partial_suffix(self._buffer, closer)
        self.examined += len(self._buffer) - keep - self._at
        self._emit(ReasoningDelta, len(self._buffer) - keep)
        if final:  # never closed: all the rest was reasoning
            self.reasoning_spans.append((self._reasoning_start, self.offset))
        return False

    def _start_of_reply(self, final: bool) -> bool:
        buffer = self._buffer
        first = _SPACE_RUN.match(buffer, self._at).end()
        self.examined += first - self._at
        self._emit(TextDelta, first)
        if first == len(buffer):
            return False
        head = buffer[first : first + self._longest + 32]
        if self._reasoning:
            opener = self._reasoning[0]
            if head.startswith(opener):
                self._reasoning_start = self._base + first
                self._at = first + len(opener)
                self._mode = "reason"
                return True
            if not final and opener.startswith(head):
                return False
        literals = {opener.literal for _, opener in self._start}
        if not final and any(len(head) < len(item) and item.startswith(head) for item in literals):
            return False
        starts = [(fmt, opener) for fmt, opener in self._start if head.startswith(opener.literal)]
        self._mode = "text"
        if starts:
            self._open_decision(starts, first)
            self._from_start = True
            self._mode = "decide"
        return True

    def _text(self, final: bool) -> bool:
        buffer = self._buffer
        found = self._literals.search(buffer, self._at)
        if found is None:
            keep = 0 if final else self._partial_literal(buffer)
            self.examined += len(buffer) - keep - self._at
            self._emit(TextDelta, len(buffer) - keep)
            return False
        self.examined += found.end() - self._at
        if not final and len(buffer) - found.start() < self._longest:
            pending = self._pending_literal(buffer)
            if pending is not None and pending <= found.start():
                # A longer literal may still be arriving at or before this one, and
                # the whole text would find that one first: wait for it.
                self._emit(TextDelta, pending)
                return False
        self._emit(TextDelta, found.start())
        pairs = self._anywhere[found.group()]
        if self._runs is not None and self._base + found.start() >= self._runs_from and pairs[0][0] is self.format:
            if self._read_run(buffer, found.start()):
                return True
        self._open_decision(pairs, found.start())
        self._from_start = False
        self._mode = "decide"
        return True

    def _read_run(self, buffer: str, start: int) -> bool:
        """Settle the calls of a run written as the writer writes them, all but its last; whether any."""
        shape = self._runs
        self.runs_tried += 1
        events, end, failed_at, calls, scanned = shape.read(buffer, start, ToolCallEvent, TextDelta,
                                                            batch=self._base + start >= self._batch_from)
        # What the batch pattern read is not read with it again (a decode may
        # have stopped the batch before calls it matched; those are read one
        # by one), so each character meets it once: linear work.
        self._batch_from = max(self._batch_from, self._base + scanned)
        self.run_scanned += scanned - start
        if not events:
            # Not tried again for as far as a failed try can read, so a flood of
            # failing openings is read once more at most: linear work. (A run
            # that read calls stopped at its last one, which the machine reads
            # next: nothing is tried twice.)
            self._runs_from = self._base + max(failed_at, start) + shape.reach
            return False
        self.examined += end - start
        self.run_calls += calls
        self._add_merged(events)
        self._at = end
        return True

    def _add_merged(self, events: list[Event]) -> None:
        """Add events that are merged among themselves (no empty delta, no two of a kind side by side).

        Only their first may join a delta before it, and only their last one
        after it: the rest are settled as they are, so _take does not walk
        thousands of a run's or a list's events again.
        """
        pending = self._events
        pending.append(events[0])
        if len(events) == 1:
            return
        self._settled += merge_deltas(pending) if len(pending) > 1 else pending
        self._settled += events[1:-1]
        self._events = [events[-1]]

    def _first_tail(self, buffer: str, start: int, tails: set[str]) -> int | None:
        """The first index from start at which the rest of the buffer is in tails, if any."""
        found = self._first_chars.search(buffer, start)
        while found is not None:
            if buffer[found.start() :] in tails:
                return found.start()
            found = self._first_chars.search(buffer, found.start() + 1)
        return None

    def _pending_literal(self, buffer: str) -> int | None:
        """The first index from which the buffer's end is a proper prefix of some literal, if any."""
        return self._first_tail(buffer, max(self._at, len(buffer) - self._longest + 1), self._proper_starts)

    def _partial_literal(self, buffer: str) -> int:
        """Length of the longest end of buffer (past the settled part) that begins some literal."""
        index = self._first_tail(buffer, max(self._at, len(buffer) - self._longest + 1), self._starts)
        return 0 if index is None else len(buffer) - index

    def _open_decision(self, pairs: list[tuple[Format, Opener]], anchor: int) -> None:
        self._pairs, self._anchor, self._next = pairs, anchor, 0
        self._trying, self._undecided = None, []

    def _decide(self, final: bool) -> bool:
        # The first opener that matches wins (own format first: _all_openers
        # put it first), so openers are tried in order and the choice is made
        # as soon as no earlier one is still undecided; at the end of the
        # reply an undecided one no longer blocks a later match.
        buffer, anchor, pairs = self._buffer, self._anchor, self._pairs
        while self._next < len(pairs):
            fmt, opener = pairs[self._next]
            candidate = self._trying
            if candidate is None and not final and len(buffer) - anchor <= len(opener.literal) + _SHORT_HOLD:
                # A stream's chunk has just brought the literal: with so little after
                # it the regex could only say "still possible", and the automaton
                # would read it all again. It starts at once.
                candidate = self._trying = _Candidate(fmt, opener, anchor)
                candidate.scan = opener.automaton.scan()
            if candidate is None:
                # First look: the regex settles most openings at once, reading at
                # most _REGEX_FIRST_LOOK characters (the end of that window counts
                # as the end of the text, so a failure there is final); an opening
                # still possible at the window's end goes to the automaton, which
                # then reads the held text once, however long it grows.
                window = len(buffer) if final else min(len(buffer), anchor + _REGEX_FIRST_LOOK)
                found = opener.compiled.match(buffer, anchor, window, partial=True)
                self.examined += (found.end() if found is not None else anchor + 1) - anchor
                if found is None:
                    self._next += 1
                    continue
                if not found.partial:
                    return self._open_region(fmt, opener)
                candidate = _Candidate(fmt, opener, anchor)
                if final:  # the text ended while the opening was still possible: the regex said all
                    candidate.fed = len(buffer)
                    self._undecided.append(candidate)
                    self._next += 1
                    continue
                self._trying = candidate
                candidate.scan = opener.automaton.scan()
            before = candidate.scan.examined
            candidate.verdict, _ = candidate.scan.feed(buffer, candidate.fed)
            self.examined += candidate.scan.examined - before
            candidate.fed = len(buffer)
            if candidate.verdict == MATCHED:
                return self._open_region(fmt, opener)
            if candidate.verdict == "more":
                if not final:
                    return False
                self._undecided.append(candidate)
            self._trying = None
            self._next += 1
        self._mode = "text"
        cut = [candidate for candidate in self._undecided if candidate.cut_short]
        if cut:
            self._fail_cut(cut[0].format, cut[0].opener)
            # Recorded (a survey): the opening runs to the end of the text, so
            # every later literal is inside it. The rest is text, read once.
            self._mode = "text"
            self._emit(TextDelta, len(buffer))
            return False
        if not self._from_start:
            literal = pairs[0][1].literal
            self.examined += len(literal)
            self._emit(TextDelta, self._at + len(literal))
        return True

    def _open_region(self, fmt: Format, opener: Opener) -> bool:
        self._at = self._anchor
        self._region = (fmt, opener, opener.extent())
        self._mode = "region"
        self._trying, self._undecided = None, []
        return True

    def _in_region(self, final: bool) -> bool:
        fmt, opener, extent = self._region
        before = extent.examined
        end = extent.advance(self._buffer, self._at, final)
        self.examined += extent.examined - before
        if end is None:
            if final:
                self._region, self._mode = None, "text"
                self._fail_cut(fmt, opener)
                self._emit(TextDelta, len(self._buffer))  # recorded: the rest is text
            return False
        return self._end_region(end)

    def _end_region(self, end: int) -> bool:
        """Read the region that ends at buffer index end and settle it (feed's shortcut comes here too)."""
        fmt, opener, extent = self._region
        region = self._buffer[self._at : end]
        self._region, self._mode = None, "text"
        if self._runs is not None and fmt is self.format:
            # A call written exactly as the writer writes it: read as a run
            # reads its calls (a stream's usual case: one region per call).
            made = self._runs.read_one(region, ToolCallEvent)
            if made is not None:
                self._events.append(made)
                self._at = end
                return True
        try:
            spans = fmt.read_region(region, opener, extent.found)
        except CallSyntaxError as error:
            if extent.ended_by_reply:
                self._fail_cut(fmt, opener, str(error))
            else:
                self._refuse(fmt, opener, str(error))
            spans = None  # recorded: the region is kept as text
        if spans is None or fmt is not self.format:
            if spans:
                self._foreign(fmt, opener)
            self._emit(TextDelta, end)
            return True
        if not spans:  # the format's own way of saying "no call" (LFM2's empty block)
            self._at = end
            return True
        cursor = 0
        made_here: list[Event] = []
        append = made_here.append
        new = _NEW_EVENT  # a list of calls makes thousands of events: see calls.filler
        for span in spans:
            if span.start > cursor:
                append(TextDelta(region[cursor : span.start]))
            made = new(ToolCallEvent)
            fields = made.__dict__
            fields["call"] = span.call
            fields["id"] = span.id
            append(made)
            if span.end > cursor:
                cursor = span.end
        if cursor < len(region):
            append(TextDelta(region[cursor:]))
        if len(made_here) > 2:
            self._add_merged(made_here)  # a list's calls: merged already, and many
        else:
            self._events += made_here
        self._at = end
        return True

    # -- refusals ------------------------------------------------------------------
    def _foreign(self, fmt: Format, opener: Opener) -> None:
        if self.record:
            self.markers.append(Marker(opener.literal, self.offset, (fmt.name,)))
            return
        raise UnparsedToolCall(
            f"{self._reader_name()} left a tool call unread: {opener.literal!r} at offset "
            f"{self.offset} opens a call in the {fmt.name} format"
        )

    def _refuse(self, fmt: Format, opener: Opener, reason: str) -> None:
        if fmt is not self.format:
            self._foreign(fmt, opener)
            return
        raise UnparsedToolCall(
            f"{self._reader_name()} cannot read the tool call at offset {self.offset} "
            f"({opener.literal!r}): {reason}"
        )

    def _fail_cut(self, fmt: Format, opener: Opener, reason: str = "") -> None:
        if fmt is not self.format:
            self._foreign(fmt, opener)
            return
        shown = self._buffer[self._at : self._at + 24]
        # reason: what the reader found in the unclosed region (read as if a
        # stop string had removed its closer), kept for whoever debugs it.
        raise UnparsedToolCall(
            f"the reply ended inside a tool call: {shown!r} at offset {self.offset} was never closed"
            + (f" ({reason})" if reason else "")
        )


def _read_plain(text: str, fmt: Format) -> list[Event]:
    machine = Machine(fmt, runs=False)
    return merge_deltas(machine.feed(text) + machine.close())


def _agrees(fmt: Format, id_parts: tuple[str, ...] | None, separator: str,
            shape: canonical_runs.RunShape | None = None, *, plain: bool = True) -> bool:
    """Whether the general machine (and shape, if given) reads every probe reply joined by separator as a run predicts.

    The shape must read all the calls but the last, and stop where the last starts.
    plain=False skips the general machine's reading (already checked for this separator).
    """
    for calls, joiner in canonical_runs.probe_replies(separator):
        pieces = [canonical_runs.written(fmt, name, arguments) for name, arguments in calls]
        text = joiner.join(pieces)
        expected: list[Event] = []
        for index, (name, arguments) in enumerate(calls):
            if index:
                expected.append(TextDelta(joiner))
            expected.append(ToolCallEvent(ParsedToolCall(name, arguments), canonical_runs.call_id(id_parts, name)))
        try:
            if plain and _read_plain(text, fmt) != merge_deltas(expected):
                return False
        except UnparsedToolCall:
            return False
        if shape is not None:
            events, end, _, _, _ = shape.read(text, 0, ToolCallEvent, TextDelta)
            if merge_deltas(events) != merge_deltas(expected[:-1]) or end != len(text) - len(pieces[-1]):
                return False
    return True


@functools.lru_cache(maxsize=None)
def _run_shape(fmt: Format) -> canonical_runs.RunShape | None:
    """fmt's run shape, when the general machine is shown to read probe runs exactly as it predicts."""
    try:
        sample = _read_plain(canonical_runs.written(fmt), fmt)
    except UnparsedToolCall:
        return None
    calls = [event for event in sample if type(event) is ToolCallEvent]
    expected = ParsedToolCall(canonical_runs.SENTINEL_NAME, canonical_runs.SENTINEL_ARGUMENTS)
    if len(calls) != 1 or calls[0].call != expected:
        return None
    ident = calls[0].id
    if ident is not None and ident.count(canonical_runs.SENTINEL_NAME) > 1:
        return None
    id_parts = None if ident is None else tuple(ident.split(canonical_runs.SENTINEL_NAME))  # one piece: a fixed id
    tables = _tables(fmt)
    head = canonical_runs.written(fmt).split(canonical_runs.SENTINEL_NAME)[0]
    literal = tables.literals.match(head)
    # Every call of a run must open at the same literal, one whose first opener is fmt's own,
    # whatever its name: no literal may reach past the text before the name.
    if literal is None or tables.anywhere[literal.group()][0][0] is not fmt:
        return None
    if any(len(item) > len(head) and item.startswith(head) for item in tables.anywhere):
        return None
    separators = "".join(
        char for char in canonical_runs.SEPARATOR_CHOICES
        if not tables.first_chars.match(char) and _agrees(fmt, id_parts, char) and _agrees(fmt, id_parts, char * 2)
    )
    shape = canonical_runs.derive(fmt, separators, id_parts)
    # The single characters were read by the general machine above; "" and all of them together were not.
    if shape is None or not (all(_agrees(fmt, id_parts, joiner, shape) for joiner in ("", separators))
                             and all(_agrees(fmt, id_parts, char, shape, plain=False) for char in separators)):
        return None
    return shape


def _partial_suffix(text: str, literal: str) -> int:
    """Length of the longest end of text that is a proper prefix of literal."""
    for size in range(min(len(literal) - 1, len(text)), 0, -1):
        if literal.startswith(text[-size:]):
            return size
    return 0


def read_events(text: str, fmt: Format | None, *, reasoning_open: bool = False) -> list[Event]:
    """The events of a whole reply: one feed, then close, of the same machine a stream runs."""
    machine = Machine(fmt, reasoning_open=reasoning_open)
    events, last = machine.feed(text), machine.close()
    if not events or not last:
        return events or last
    # Each part is merged already; only where they meet may two deltas touch.
    return events[:-1] + merge_deltas([events[-1], *last])


def spans_of(events: list[Event]) -> list[ToolCallEvent]:
    return [event for event in events if isinstance(event, ToolCallEvent)]


__all__ = [
    "CallSpan",
    "Event",
    "Machine",
    "Marker",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallEvent",
    "merge_deltas",
    "read_events",
]
