"""The reading machine's steps where a reply starts: its leading space, a reasoning block, a start-only call.

At the start of the reply, and again right after a reasoning block,
leading whitespace is text; then one of the format's reasoning openers
starts a block (``templatestudio.reasoning_blocks`` says where it opens
and ends), or a start-only opener (a bare ``[name(`` reply) may open a
call, decided as any opening is (``templatestudio.openings``). Like
``call_steps.CallSteps``, ``StartSteps`` is a base class of
``engine.Machine``: its steps run on the machine's own state.

Not handled here: reasoning that is not at the start of the reply (a
later ``<think>`` is text, read by the text step).
"""

from __future__ import annotations

import re

from templatestudio.call_steps import Mode
from templatestudio.events import ReasoningDelta, TextDelta
from templatestudio.openings import Opening
from templatestudio.wire.base import JSON_SPACE

REASON, START, TEXT, DECIDE = Mode.REASON, Mode.START, Mode.TEXT, Mode.DECIDE

# A reply may open with a byte-order mark or a zero-width space before a bare
# call; they are text, but they do not hide the call behind them.
_SPACE_RUN = re.compile(f"[{re.escape(JSON_SPACE)}\ufeff\u200b]*")


def space_run_end(text: str, at: int) -> int:
    """Where the run of space the machine reads as a reply's leading text, from text[at], ends."""
    return _SPACE_RUN.match(text, at).end()


class StartSteps:
    """The machine's steps in REASON and START mode (a base class of ``engine.Machine``).

    They use, of the machine: _buffer, _at, _base, _emit, _examined,
    _mode, _blocks (the reasoning blocks), _head (how far the start of the
    reply is looked at), _layout and _laid (the whitespace layout, told
    when a block opens), _out, _tables, _opening and format.
    """

    def _reason(self, final: bool) -> bool:
        """Inside a reasoning block: its text is reasoning, up to where ``ReasoningBlocks.read`` ends it."""
        end, after, work = self._blocks.read(self._buffer, self._at, self._base, final)
        self._examined += work
        self._emit(ReasoningDelta, end)
        if after is None:
            return False
        self._at, self._mode = after, START
        return True

    def _start_of_reply(self, final: bool) -> bool:
        """Leading space is text; then a reasoning block opens, a start-only opener is decided, or the text begins."""
        buffer = self._buffer
        first = space_run_end(buffer, self._at)
        self._examined += first - self._at
        self._emit(TextDelta, first)
        if first == len(buffer):
            return False
        head = buffer[first : first + self._head]
        opener = self._blocks.open(head, self._base + first)
        if opener:
            layout = self._layout
            if layout is not None and layout.blocks:
                # A block that holds nothing sends no reasoning delta, so the layout
                # is told here that one opened; the events before it go through the
                # layout first, so that it learns this in the reply's order.
                self._laid += layout.feed(self._out.take())
                layout.block_opens()
            self._at, self._mode = first + opener, REASON
            return True
        if not final and self._blocks.may_open(head):
            return False
        starts = self._tables.starts_at_reply(head, final)
        if starts is None:
            return False
        self._mode = TEXT
        if starts:
            opening = Opening(starts, first, True, self._tables.start_commit, own=self.format)
            self._opening, self._mode = opening, DECIDE
        return True
