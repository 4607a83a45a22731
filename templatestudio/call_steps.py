"""The reading machine's modes, and its steps at a call: deciding an opening, then the region it opened.

``engine.Machine`` reads a reply in modes (``Mode``), one step method
each. The steps at a call are this module's: at a literal the openers'
patterns decide whether a call opens there (``templatestudio.openings``);
an opened call is a region whose extent finds its end and whose format's
reader reads it (``templatestudio.regions``); a reply that ends inside
either is cut. ``CallSteps`` is a base class of the machine rather than
a collaborator because the steps run on the machine's own state, which
``Machine.feed`` reaches directly on its hot path (a token inside a call
or an opening is settled there without a call to a step).

Not handled here: where a literal stands and the start of the reply
(``engine.Machine``), and reasoning (``templatestudio.reasoning_blocks``).
"""

from __future__ import annotations

from enum import Enum

from templatestudio.events import TextDelta
from templatestudio.openings import Decision
from templatestudio.wire.base import Format, Opener


class Mode(Enum):
    """Where the machine's first unsettled character stands; each mode has one step method (``engine.Machine``'s)."""

    REASON = "inside the reasoning block (_reason)"
    START = "at the start of the reply, or right after reasoning (_start_of_reply)"
    TEXT = "in text, looking for a literal (_text)"
    DECIDE = "at a literal, deciding whether a call opens there (_decide)"
    REGION = "inside an opened call, until its extent ends it (_in_region)"


# Module names for the modes and decisions the steps compare (see engine's).
TEXT, REGION = Mode.TEXT, Mode.REGION
OPENS, WAITS, CUT, MALFORMED, PROSE = Decision.OPENS, Decision.WAITS, Decision.CUT, Decision.MALFORMED, Decision.PROSE


class CallSteps:
    """The machine's steps in DECIDE and REGION mode (a base class of ``engine.Machine``).

    They use, of the machine: _buffer (the held text), _at (its first
    unsettled index), _base (the reply offset of _buffer[0]), offset,
    _emit, _out (the outbox), _mode, _opening (the decision at a literal,
    in DECIDE), _region ((format, opener, extent), in REGION), _regions
    (the region reader), _tables and _prose (the literals an Opening
    decided prose, see ``Machine._text``), _start_prose (the reply start's Opening
    that found its literal prose) and _examined.
    """

    def _decide(self, final: bool) -> bool:
        opening = self._opening
        decision, work = opening.decide(self._buffer, final)
        self._examined += work
        if decision is OPENS:
            return self._open_region(*opening.chosen, opening.anchor)
        if decision is WAITS:
            return False
        self._mode = TEXT
        if decision is CUT:
            # The opening runs to the end of the text, so every later literal
            # is inside it: the rest is the cut call, or text a survey recorded.
            self._cut(*opening.chosen)
            return False
        if decision is MALFORMED:
            # Raises (a survey records it, and the literal is text below).
            fmt, opener = opening.chosen
            self._regions.refuse(fmt, opener, self._base + opening.anchor,
                                 "the turn's end or a message boundary follows it at once: the call holds nothing"
                                 if opening.ended else
                                 "what follows it is not a call this format reads, though its call markup follows")
        if opening.from_start and decision is PROSE:  # at the reply's start: the literal's anywhere openers decide next
            self._start_prose = (self._base + opening.anchor, opening)
        else:  # prose, or a malformed call a survey recorded (once): the literal is text
            literal = opening.pairs[0][1].literal
            if decision is PROSE:  # (a malformed call's is not prose for certain)
                # Its next copies are asked Tables.refuses first (engine.Machine._text); every
                # literal an anywhere Opening decides has its refusal there.
                self._prose.add(literal)
            # Text as far as a literal may start inside it (Tables.inner_starts): the search goes on there.
            size = self._tables.inner_starts[literal]
            self._examined += size
            self._emit(TextDelta, self._at + size)
        return True

    def _open_region(self, fmt: Format, opener: Opener, anchor: int) -> bool:
        self._at = anchor
        self._region = (fmt, opener, opener.extent())
        self._mode, self._opening = REGION, None
        return True

    def _in_region(self, final: bool) -> bool:
        fmt, opener, extent = self._region
        end = extent.advance(self._buffer, self._at, final)
        if end is None:
            if final:
                self._examined += extent.examined  # the region ends here, cut: its extent's work is counted
                self._region, self._mode = None, TEXT
                self._cut(fmt, opener)
            return False
        return self._end_region(end)

    def _end_region(self, end: int) -> bool:
        """Read the region that ends at buffer index end and settle it."""
        fmt, opener, extent = self._region
        self._examined += extent.examined  # the region ends: its extent's work is counted
        self._region, self._mode = None, TEXT
        events = self._regions.read(self._buffer, self._at, end, fmt, opener, extent, self._base + self._at)
        if events is None:  # not a call of this format: text (or a leak a survey recorded)
            self._emit(TextDelta, end)
            return True
        if len(events) > 2:
            self._out.add_merged(events)
        else:  # Outbox.add, written out: a stream settles each call here
            self._out.pending += events
        self._at = end
        return True

    def _cut(self, fmt: Format, opener: Opener) -> None:
        """The reply ended inside an opening or a region of fmt, at the first unsettled character.

        All the rest of the buffer is settled: as the cut call's events, or
        as text when a survey recorded it.
        """
        events = self._regions.cut(fmt, opener, self.offset, self._buffer[self._at :])
        if events is None:
            self._emit(TextDelta, len(self._buffer))
            return
        self._out.add(events)
        self._at = len(self._buffer)
