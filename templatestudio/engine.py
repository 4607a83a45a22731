"""The one reading machine: a reply in, events out, whether it comes whole or in chunks.

``Machine`` is what both ``ToolCallStream`` (fed chunk by chunk) and the
whole-text reader (fed once, then closed) run, so the two cannot disagree:
for any text, any chunking gives the same events, or the same exception.

How it reads, left to right:

- At the start of the reply (and again right after a reasoning block),
  leading whitespace is text; then one of the format's reasoning openers
  starts a reasoning block, which that opener's own closer ends
  (``templatestudio.reasoning_blocks``), and a start-only opener (a bare
  ``[name(`` reply) may open a call (``templatestudio.start_steps``).
- A block the reply never closes may end at a call opening at a line
  start (``Reasoning.ends_at_call``; ``reasoning_blocks`` says how, and
  what a stream holds until it knows).
- Elsewhere it looks for the literal of any opener of its own format and
  of every format it guards against (``guard``: by default the registry);
  there the openers' patterns decide whether a call opens or the literal
  is prose ("Qwen wraps calls in <tool_call> tags"): ``watch_tables`` (what
  is watched), ``openings`` (the decision), ``call_steps`` (the steps).
- An opened call is a region; the opener's extent finds its end and the
  format's strict reader reads it (``templatestudio.regions``). The
  reader may return calls, say the region is not a call after all (then
  it is text), or refuse it. A run of calls written exactly as the
  writer writes them may be read in one step (``canonical_runs``),
  unless a call in it is one the format's wire limits say it cannot
  carry (``regions.beyond_wire``): the reader decides those.
- A call of the machine's own format becomes ``ToolCallEvent``; a call
  in another format is a leak and raises ``UnparsedToolCall`` naming the
  marker and its offset; so does a region the reader refuses. A reply
  that ends inside an opened call of its own format (or inside an opening
  that could still be one) raises too when the machine is strict (the
  default); otherwise the calls that closed before the cut are events and
  the cut call is one ``CutToolCall`` (``regions.cut_events``).

What the machine holds between feeds (set up once), and what a caller
reads of it between them (``examined``, ``offset``, ``held_call``,
``past_opening``), is ``templatestudio.machine_state``'s; this module
reads: ``feed``, ``close``, the mode loop and the text step.

Work is linear: each character is searched, scanned or crossed a bounded
number of times, which ``examined`` counts (a call opening held at a line
start in a block that may end at a call is read again per feed until it
is decided). Not handled: reasoning after the reply's start (a later
``<think>`` is text), calls inside a closed reasoning block (reasoning
text, never events), calls in a format outside the guard (text).
"""

from __future__ import annotations

from templatestudio.call_steps import CallSteps, Mode
from templatestudio.events import Event, TextDelta, ToolCallEvent, merge_deltas
from templatestudio.machine_state import MachineState
from templatestudio.openings import Opening
from templatestudio.regions import beyond_wire
from templatestudio.resumable_match import MATCHED, MORE
from templatestudio.start_steps import StartSteps
from templatestudio.wire.base import Format


# Module names for the modes: ``Mode.TEXT`` is a class attribute look-up
# that costs as much as a short step (Python 3.11), and feed compares modes
# once per token.
START, TEXT, DECIDE, REGION = Mode.START, Mode.TEXT, Mode.DECIDE, Mode.REGION

# Chunks shorter than this may take feed's shortcuts for text (a token's size;
# a longer chunk would be read twice when the shortcut does not apply).
_SHORT_CHUNK = 256


class Machine(CallSteps, StartSteps, MachineState):
    """Reads a reply for one format (or for none: then every call found is foreign).

    feed(text) appends text and returns the events it settles; close()
    ends the reply. guard: the formats whose calls are leaks (a tuple of
    ``Format``; by default every registered format, less those
    ``guards.guard_of`` leaves out for an addressed format), watched
    after the machine's own. record=True collects foreign calls in ``markers``
    instead of raising (that is how ``leaks.find_call_markers`` surveys a
    text). reasoning_open says the prompt already opened the reasoning block:
    True for the format's written pair, or the pair it opened (one of
    ``fmt.reasoning_pairs``, as ``Format.opened_reasoning`` gives it).
    runs=False reads every call through its opener, never as part of a run
    of written calls (``canonical_runs``); the events are the same.
    strict=False: a reply that ends inside a call of fmt gives a
    ``CutToolCall`` at close instead of raising ``UnparsedToolCall``.
    layout=True (with a format, not recording) takes the whitespace the
    template writes around the reasoning block and the calls out of the
    events (``templatestudio.layout``, by the format's declared spacing);
    layout=False returns every character as text or reasoning;
    reasoning_layout=False takes out only the whitespace touching a call
    and leaves the reasoning block, and the text beside it, as written.
    """

    # -- public ---------------------------------------------------------------
    def feed(self, text: str) -> list[Event]:
        if self._closed:
            raise RuntimeError("the reply was already closed")
        mode = self._mode
        if mode is not REGION and mode is not DECIDE:
            if mode is TEXT and 0 < len(text) < _SHORT_CHUNK:
                # A stream calls this once per token: two cases _text would settle
                # without emitting a literal are settled here (a longer chunk goes
                # to _text, which reads it once).
                at = self._at
                if at == len(self._buffer):
                    if self._first_chars.search(text) is None:
                        # Prose with nothing held: no literal can start in it, so all of it is text.
                        if at:
                            self._before = self._buffer[at - 1]
                        self._base += at
                        self._buffer, self._at = text, len(text)
                        self._examined += len(text)
                        settled = [TextDelta(text)]
                        return settled if self._layout is None else self._layout.feed(settled)
                else:
                    held = self._buffer[at:] + text
                    if held in self._proper_starts:
                        # The held start of a literal grew and is still only a start
                        # of one (``<tool_c``, ``[TOOL``): it is held on, as _text
                        # would hold it, whatever literal it already contains.
                        if at:
                            self._before = self._buffer[at - 1]
                        self._base += at
                        self._buffer, self._at = held, 0
                        self._examined += len(text)
                        return []
            if self._at:  # nothing is held but a partial literal: drop what is settled
                self._before = self._buffer[self._at - 1]
                self._base += self._at
                self._buffer, self._at = self._buffer[self._at :], 0
        # Appended through a local name that holds the only reference, so
        # CPython can grow the string in place: ``self._buffer += text`` would
        # copy all the held text (a long call still open) each time.
        buffer, self._buffer = self._buffer, ""
        buffer += text
        self._buffer = buffer
        if mode is REGION:
            # Inside a call only its extent can settle anything, and a token
            # mostly ends nothing: the extent is asked here, not through
            # _in_region and _run (that costs a 1-character chunk of a long
            # call 12% more); once it ends the call, _end_region reads it.
            # (The extent counts its own work: the machine adds it when the region ends.)
            end = self._region[2].advance(buffer, self._at, False)
            if end is None:
                return []  # nothing is settled inside an open call, so no event waits
            self._end_region(end)
        elif mode is DECIDE and self._opening.trying is not None:
            # An opening the automaton is still reading: its step is taken here,
            # and only once it is decided does _decide run (its read of the
            # settled automaton then reads nothing). (Without one, the decision
            # waits on a commitment: _decide looks again.)
            trying = self._opening.trying
            # Candidate.read, written out: an opening's automaton reads each token here.
            scan = trying.scan
            before = scan.examined
            trying.verdict, _ = scan.feed(buffer, trying.fed)
            trying.fed = len(buffer)
            self._examined += scan.examined - before
            if trying.verdict == MORE:
                return []
            if trying.verdict == MATCHED:  # as _decide would: the opener being tried opens the call
                self._open_region(trying.format, trying.opener, self._opening.anchor)
        # In text the text step is taken first: a token mostly ends there
        # (nothing more to settle), and then _run's loop is not entered.
        if self._mode is not TEXT or self._text(False):
            self._run(False)
        out = self._out
        if not out.pending and not out.settled and not self._laid:  # a token mostly settles nothing
            return []
        if self._layout is None:
            return out.take()
        laid = self._layout.feed(out.take())
        return self._laid_out(laid) if self._laid else laid

    @property
    def layout_holding(self) -> int:
        """Characters of whitespace fed and settled that the layout holds back (0 without a layout)."""
        return 0 if self._layout is None else self._layout.holding

    def close(self) -> list[Event]:
        if self._closed:
            raise RuntimeError("the reply was already closed")
        self._closed = True
        self._run(True)
        if self._layout is None:
            return self._out.take()
        last = self._laid_out(self._layout.feed(self._out.take())) + self._layout.close()
        return merge_deltas(last) if len(last) > 1 else last

    def settled_before_refusal(self) -> list[Event]:
        """After feed or close raised ``UnparsedToolCall``: the events it settled before the refused call.

        They are what that call would have returned had the reply stopped
        right before the call (whitespace the layout holds stays held), so a
        caller that goes on without the call (``served_reasoning``) loses
        nothing and reads nothing twice. The machine reads no further.
        """
        events = self._out.take()
        return events if self._layout is None else self._laid_out(self._layout.feed(events))

    def _laid_out(self, events: list[Event]) -> list[Event]:
        """events after those a block's opening already passed through the layout."""
        if not self._laid:
            return events
        laid, self._laid = self._laid, []
        return merge_deltas(laid + events)

    # -- settling -----------------------------------------------------------------
    def _emit(self, kind: type, end: int) -> None:
        """Settle the buffer up to end as one delta of kind."""
        if end > self._at:
            self._out.pending.append(kind(self._buffer[self._at : end]))
            self._at = end

    # -- the modes ----------------------------------------------------------------
    def _line_start(self, begin: int) -> bool:
        """Whether buffer[begin] stands at a line start: after a line break, or as the reply's first character."""
        before = self._buffer[begin - 1] if begin else self._before
        return before == "\n" or before == ""

    def _run(self, final: bool) -> None:
        """Step until the current mode's step settles nothing more (it returns False)."""
        while True:
            mode = self._mode
            if mode is TEXT:
                going = self._text(final)
            elif mode is REGION:
                going = self._in_region(final)
            elif mode is DECIDE:
                going = self._decide(final)
            elif mode is START:
                going = self._start_of_reply(final)
            else:
                going = self._reason(final)
            if not going:
                return

    def _text(self, final: bool) -> bool:
        buffer, tables = self._buffer, self._tables
        at = self._at  # the literals before it were prose for certain (Tables.refuses): settled as text with it
        while True:
            # The first possible first character, found by ``re`` (a call's end mostly leaves
            # none): the literals' search, a ``regex`` pattern, costs three times as much a call.
            first = self._first_chars.search(buffer, at)
            if first is None:
                found = None
            else:
                begin = first.start()
                if not final and len(buffer) - begin < self._longest and buffer[begin:] in self._proper_starts:
                    # The rest is only the start of a literal (a stream's ``[TOO``): held, as the
                    # search and the wait for a longer literal below would hold it, without them.
                    self._examined += begin - at
                    self._emit(TextDelta, begin)
                    return False
                found = self._literals.search(buffer, begin)
            if found is None:
                keep = 0 if final else tables.partial_literal(buffer, at)
                self._examined += len(buffer) - keep - at
                self._emit(TextDelta, len(buffer) - keep)
                return False
            begin, end = found.span()
            self._examined += end - at
            if not final and len(buffer) - begin < self._longest:
                pending = tables.pending_literal(buffer, at)
                if pending is not None and pending <= begin:
                    # A longer literal may still be arriving at or before this one, and
                    # the whole text would find that one first: wait for it.
                    self._emit(TextDelta, pending)
                    return False
            literal = found.group()
            if literal not in self._prose:
                break
            past = tables.refused_run(literal, buffer, begin, final, self._line_start(begin))
            if past == begin:
                self._prose.discard(literal)  # an opener may match here: the Opening decides, and says again if prose
                break
            # Prose, as an Opening would decide, and so are the copies right after it (each looked at
            # once more, and crossed): a flood of the literal is one text delta, not one per copy.
            self._examined += (past - begin) // len(literal) + max(past - end, 0)
            at = past
        self._emit(TextDelta, begin)
        pairs = self._anywhere[literal]
        tries = self.run_tries
        # (read_at's first check, written out: a stream meets each call here, mostly blocked.)
        if tries is not None and pairs[0][0] is self.format and self._base + begin >= tries.blocked_until:
            run = tries.read_at(buffer, begin, self._base)
            if run is not None and beyond_wire(self.format, run[0]):
                # A call the wire cannot carry (Llama 3's schema-shaped arguments): the format's reader
                # decides what it is, call by call, as a stream meets it; runs resume past it.
                tries.calls -= sum(type(event) is ToolCallEvent for event in run[0])
                tries.blocked_until, run = self._base + run[1], None
            if run is not None:  # the calls of a run, all but its last (the machine reads that one next)
                events, end = run
                self._examined += end - begin
                self._out.add_merged(events)
                self._at = end
                return True
        token = tables.tokens.get(literal)
        if token is not None:  # an Opening would open it at once, having matched the literal alone
            self._examined += len(literal)
            return self._open_region(*token, begin)
        line_start = self._line_start(begin)
        commit = (tables.line_commits.get(literal) if line_start else None) or tables.commits.get(literal)
        first_look = tables.first_looks.get(literal)
        start, self._start_prose = self._start_prose, None
        after = start[1] if start is not None and start[0] == self._base + begin else None
        self._opening = Opening(pairs, begin, False, commit, first_look, self.format, after, line_start)
        self._mode = DECIDE
        return True


def read_events(text: str, fmt: Format | None, *, reasoning_open: bool | tuple[str, str] = False,
                guard: tuple[Format, ...] | None = None, strict: bool = True, layout: bool = True,
                reasoning_layout: bool = True) -> list[Event]:
    """The events of a whole reply: one feed, then close, of the same machine a stream runs.

    guard: the formats whose calls are leaks (``Machine``), by default the
    registry. reasoning_open: as ``Machine``'s. strict=False: a reply cut inside a call ends with a
    ``CutToolCall`` instead of raising.
    """
    machine = Machine(fmt, reasoning_open=reasoning_open, guard=guard, strict=strict, layout=layout,
                      reasoning_layout=reasoning_layout)
    events, last = machine.feed(text), machine.close()
    if not events or not last:
        return events or last
    # Each part is merged already; only where they meet may two deltas touch.
    return events[:-1] + merge_deltas([events[-1], *last])


__all__ = ["Machine", "Mode", "read_events"]
