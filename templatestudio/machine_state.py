"""The reading machine's state: what ``engine.Machine`` holds between feeds, and what a caller may read of it.

``MachineState.__init__`` sets up everything the machine keeps: the held
text and where it is settled to, the mode and the decision or region it
is in, the watch tables, the reasoning blocks, the region reader, the run
tries and the whitespace layout. Its read-only views are what a caller
(``ToolCallStream``, ``argument_deltas``, the served integrations) asks
between feeds: ``examined``, ``closed``, ``held_call``, ``offset`` and
``past_opening``. Like ``call_steps.CallSteps`` and
``start_steps.StartSteps``, ``MachineState`` is a base class of
``engine.Machine``: the steps and ``Machine.feed`` run on this state
directly.

Not handled here: reading (``feed``, ``close``, the mode loop and the text
step are ``engine.Machine``'s; the steps at a call are ``call_steps``',
at the reply's start ``start_steps``'); what the parameters mean
(``engine.Machine``'s docstring).
"""

from __future__ import annotations

from templatestudio.call_steps import Mode
from templatestudio.canonical_runs import RunTries
from templatestudio.events import Event, Outbox
from templatestudio.guards import guard_of
from templatestudio.layout import Layout
from templatestudio.openings import Opening
from templatestudio.reasoning_blocks import ReasoningBlocks
from templatestudio.regions import Regions
from templatestudio.watch_tables import tables
from templatestudio.wire.base import Extent, Format, Opener

# Module names for the modes (see engine's): a class attribute look-up costs
# as much as a short step, and a stream may ask past_opening once per token.
REASON, START, TEXT, DECIDE, REGION = Mode.REASON, Mode.START, Mode.TEXT, Mode.DECIDE, Mode.REGION


class MachineState:
    """The machine's state, set up once, and its read-only views (a base class of ``engine.Machine``).

    The parameters are ``engine.Machine``'s (its docstring says what each
    does). The instance keeps few enough attributes for CPython's fast
    attribute look-up in ``Machine.feed``: state a new step needs goes
    into an attribute that groups it (as ``_blocks`` holds the reasoning
    blocks), not into a new one.
    """

    def __init__(self, fmt: Format | None, *, reasoning_open: bool | tuple[str, str] = False, record: bool = False,
                 runs: bool = True, guard: tuple[Format, ...] | None = None, strict: bool = True,
                 layout: bool = True, reasoning_layout: bool = True) -> None:
        self.format = fmt
        self.record = record
        self.guard = guard_of(guard, fmt)
        self._examined = 0
        # One attribute for the reasoning blocks (the instance keeps few
        # enough attributes for CPython's fast attribute look-up in feed).
        self._blocks = ReasoningBlocks(fmt, reasoning_open)
        self.reasoning_spans = self._blocks.spans  # reply offsets of each block, tags included
        self._tables = found = tables(fmt, self.guard)
        self._anywhere, self._literals, self._longest = found.anywhere, found.literals, found.longest
        # How far the start of a reply is looked at: the longest literal, or a longer reasoning opener.
        self._head = max([self._longest, *(len(opener) for opener, _ in self._blocks.pairs)]) + 32
        self._first_chars, self._proper_starts = found.first_chars, found.proper_starts
        self._buffer = ""
        self._at = 0  # index in _buffer of the first character not yet settled
        self._base = 0  # reply offset of _buffer[0]
        self._before = ""  # the reply's character before _buffer[0] ("" at its start): a line start?
        self._mode = REASON if self._blocks.opened else START
        self._opening: Opening | None = None  # the decision at a literal, in DECIDE
        # (reply offset, the reply start's Opening that found its literal prose): see Opening's after.
        self._start_prose: tuple[int, Opening] | None = None
        # Literals an Opening called prose: their next copies go to Tables.refused_run first (a flood);
        # any other literal goes straight to an Opening (a call mostly opens there: 1.8 us a call saved).
        self._prose: set[str] = set()
        self._region: tuple[Format, Opener, Extent] | None = None  # (format, opener, extent), in REGION
        self._out = Outbox()  # what the next feed or close returns
        self._closed = False
        spacing = fmt.spacing if fmt is not None and layout and not record else ""
        shape = found.runs if runs and fmt is not None and not record else None
        self.run_tries = None if shape is None else RunTries(shape, spacing)  # the run path's tries and counts
        self._regions = Regions(fmt, record, shape, strict)
        self.markers = self._regions.markers  # the leaks a survey (record) found
        self._layout = Layout(spacing, blocks=reasoning_layout) if spacing else None
        self._laid: list[Event] = []  # events already through the layout, before the outbox's (see _start_of_reply)
        if self._blocks.opened and self._layout is not None and self._layout.blocks:
            self._layout.block_opens()  # the prompt opened a block: the reply starts inside one

    @property
    def examined(self) -> int:
        """Characters examined so far: the machine's own work and every call region's extent's, the open one's too."""
        return self._examined + (self._region[2].examined if self._region is not None else 0)

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def held_call(self) -> tuple[str, int, int] | None:
        """(buffer, index of the call's first character in it, its reply offset) while a call of
        the machine's own format is open; None otherwise. The buffer is the machine's own: read it,
        never keep it past the next feed (``argument_deltas`` follows the call's text with it)."""
        region = self._region
        if region is None or region[0] is not self.format:
            return None
        return self._buffer, self._at, self._base + self._at

    @property
    def offset(self) -> int:
        """Reply offset of the first unsettled character."""
        return self._base + self._at

    @property
    def past_opening(self) -> bool:
        """Whether the reply is past the place a reasoning block may stand (text or a call has started).

        Known as soon as the machine decides it, before the events of that
        text or call settle (a call's event waits for the call to close).
        """
        return self._mode is TEXT or self._mode is DECIDE or self._mode is REGION


__all__ = ["MachineState"]
