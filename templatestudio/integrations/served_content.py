"""A served reply's content and calls, built from its events (the two ways ``served`` reads a reply).

- ``ReplyContent``: no reasoning parser ran, so the content is the reply's own
  text less its calls, reasoning blocks and their tags included, every
  character kept.
- ``TakenContent``: a reasoning parser took the reasoning off the front
  (``served_reasoning``), so the text left is read with the format's layout
  taken out.

A call the reply ended inside (a ``CutToolCall``) is in neither: it is
logged (``not_sent``) and not sent.
"""

from __future__ import annotations

from templatestudio.argument_deltas import ArgumentsDelta, ArgumentsWithdrawn
from templatestudio.calls import ParsedToolCall
from templatestudio.events import CutToolCall, ReasoningDelta, ToolCallEvent
from templatestudio.integrations.served_log import logger

__all__ = ["Calls", "ReplyContent", "TakenContent", "not_sent", "withdrawn"]


# Each call with the id the reply wrote, if any; a stream's also holds its ArgumentsDelta pieces, in order.
Calls = list["tuple[ParsedToolCall, str | None] | ArgumentsDelta"]


class ReplyContent:
    """Builds a reply's content from its events, and collects its calls.

    Reasoning blocks only open a reply (before any call or visible text), so
    while the reply is still opening the raw text is walked beside the
    events: that puts each tag back where it stood, even between two blocks
    the events merged into one delta, and around blocks with nothing inside
    (which make no event). pairs: the format's reasoning pairs
    (``Format.reasoning_pairs``); each block gets back the tags it was
    written with, and a block that ended at a call (``Reasoning.ends_at_call``)
    gets no closer it never had.
    """

    def __init__(self, pairs: tuple[tuple[str, str], ...]) -> None:
        self.pairs = pairs
        self.reasoning = pairs[0] if pairs else None  # the pair of the block being walked
        self.empties = tuple("".join(pair) for pair in pairs)  # blocks with nothing inside
        self.opening = bool(pairs)  # no call or visible text yet: reasoning may come
        self.position = 0  # raw-text offset the content has reached, while opening
        self.in_block = False

    def add(self, events, text: str) -> tuple[str, Calls]:
        """(content, calls) for the next events; text is the reply so far."""
        pieces, calls = [], []
        for position, event in enumerate(events):
            if isinstance(event, ReasoningDelta) and self.opening:
                pieces.append(self._reasoning(event.text, text))
                continue
            if self.in_block:
                pieces.append(self._close(text))
            if isinstance(event, CutToolCall):
                if self.opening:
                    pieces.append(self._empty_blocks(text))
                self.opening = False
                not_sent(event, _streamed_before(events, position))
            elif isinstance(event, (ToolCallEvent, ArgumentsDelta)):
                if self.opening:
                    pieces.append(self._empty_blocks(text))
                calls.append((event.call, event.id) if isinstance(event, ToolCallEvent) else event)
                self.opening = False
            elif isinstance(event, ArgumentsWithdrawn):
                withdrawn(events, position)
            elif self.opening:
                pieces.append(self._text(event.text, text))
                self.opening = not event.text.strip()
            else:
                pieces.append(event.text)
        return "".join(pieces), calls

    def _text(self, piece: str, text: str) -> str:
        """piece as it stood in text, with the empty blocks the events merged it across.

        An empty block in the raw text that piece does not also hold at that
        point is one the engine read as reasoning (and gave no event).
        """
        out, index = [], 0
        while index < len(piece):
            empty = next((item for item in self.empties if text.startswith(item, self.position)), None)
            if empty is not None and not piece.startswith(empty, index):
                out.append(empty)
                self.position += len(empty)
                continue
            ahead = min((at for at in (text.find(item, self.position + 1) for item in self.empties) if at != -1),
                        default=-1)
            step = len(piece) - index if ahead == -1 else min(len(piece) - index, ahead - self.position)
            out.append(piece[index : index + step])
            self.position += step
            index += step
        return "".join(out)

    def _reasoning(self, piece: str, text: str) -> str:
        out = []
        while piece:
            if not self.in_block:  # the engine opens a block only where its opener stands: the first one ahead
                found = [(at, pair) for pair in self.pairs if (at := text.find(pair[0], self.position)) != -1]
                self.reasoning = min(found)[1] if found else self.reasoning
                out.append(self.reasoning[0])
                self.position += len(self.reasoning[0])
                self.in_block = True
            closer = self.reasoning[1]
            end = text.find(closer, self.position)
            room = (len(text) if end == -1 else end) - self.position
            taken, piece = piece[:room], piece[room:]
            out.append(taken)
            self.position += len(taken)
            if piece:  # this block closed and the next opened right after it
                out.append(self._close(text))
        return "".join(out)

    def _empty_blocks(self, text: str) -> str:
        """Blocks with nothing inside (``<think></think>``): they make no event at all."""
        out = []
        while (empty := next((item for item in self.empties if text.startswith(item, self.position)), None)):
            out.append(empty)
            self.position += len(empty)
        return "".join(out)

    def _close(self, text: str) -> str:
        self.in_block = False
        closer = self.reasoning[1]
        if closer not in text[self.position :]:
            return ""  # the block ended at a call (Reasoning.ends_at_call): it has no closer
        self.position += len(closer)
        return closer

    def finish(self, text: str) -> str:
        """What no event showed at the end: a closing tag, or empty blocks, the reply ended on."""
        closing = ""
        if self.in_block and text.startswith(self.reasoning[1], self.position):
            closing = self._close(text)
        return closing + (self._empty_blocks(text) if self.opening else "")

    def unsent(self, text: str, settled: int) -> str:
        """After a leak: the text not sent yet, given the offset the stream had settled."""
        return text[self.position :] if self.opening else text[settled:]


def not_sent(cut: CutToolCall, streamed: int | None = None) -> None:
    """Log a call the reply ended inside: it goes out as neither a call nor content.

    streamed: the index its arguments went out under, in pieces (they stay unfinished).
    """
    named = f" to {cut.name}" if cut.name is not None else ""
    pieces = "" if streamed is None else f"; its arguments, streamed as tool call {streamed}, stay unfinished"
    logger.warning(
        "templatestudio: the reply ended inside a tool call%s at offset %d (%d characters of it written); "
        "the call is not sent%s", named, cut.offset, len(cut.raw), pieces,
    )


def withdrawn(events: list, position: int) -> None:
    """Log a call whose arguments went out in pieces and that then proved different (argument_deltas' rule).

    A cut call says so in its own line (``not_sent``), which follows right after.
    """
    event = events[position]
    if position + 1 < len(events) and isinstance(events[position + 1], CutToolCall):
        return
    logger.warning(
        "templatestudio: tool call %d, whose arguments were streamed, was not read as they said (%s); "
        "its arguments stay unfinished", event.index, event.why,
    )


def _streamed_before(events: list, position: int) -> int | None:
    """The index of the call withdrawn right before events[position], if it was."""
    before = events[position - 1] if position else None
    return before.index if isinstance(before, ArgumentsWithdrawn) else None


class TakenContent:
    """A reply's content and calls from its events, once a reasoning parser took its reasoning.

    The text left is read with the format's layout taken out (the whitespace
    its template writes beside a call is not content). A reasoning block
    still at its start (another reasoning parser left it) is content, in the
    format's written tags.
    """

    def __init__(self, pairs: tuple[tuple[str, str], ...]) -> None:
        self.pair = pairs[0] if pairs else ("", "")

    def add(self, events) -> tuple[str, Calls]:
        pieces, calls = [], []
        for position, event in enumerate(events):
            if isinstance(event, ReasoningDelta):
                pieces.append(f"{self.pair[0]}{event.text}{self.pair[1]}")
            elif isinstance(event, CutToolCall):
                not_sent(event, _streamed_before(events, position))
            elif isinstance(event, ToolCallEvent):
                calls.append((event.call, event.id))
            elif isinstance(event, ArgumentsDelta):
                calls.append(event)
            elif isinstance(event, ArgumentsWithdrawn):
                withdrawn(events, position)
            else:
                pieces.append(event.text)
        return "".join(pieces), calls
