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
from templatestudio.events import CutToolCall, ReasoningDelta, TextDelta, ToolCallEvent
from templatestudio.integrations.served_log import logger
from templatestudio.reasoning_blocks import opener_at
from templatestudio.start_steps import space_run_end
from templatestudio.wire.base import Format

__all__ = ["Calls", "ReplyContent", "TakenContent", "content_of", "not_sent", "withdrawn"]


# Each call with the id the reply wrote, if any; a stream's also holds its ArgumentsDelta pieces, in order.
Calls = list["tuple[ParsedToolCall, str | None] | ArgumentsDelta"]


class ReplyContent:
    """Builds a reply's content from its events, and collects its calls.

    Reasoning blocks only open a reply (before any call or visible text), so
    while the reply is still opening the raw text is walked beside the
    events, by the engine's own rule for a reply's start (``start_steps``:
    its leading space run, then a block whose opener stands there, the
    format's pairs in order): that puts each tag back where it stood, even
    between two blocks the events merged into one delta, and around blocks
    with nothing inside (which make no event). pairs: the format's
    reasoning pairs (``Format.reasoning_pairs``); each block gets back the
    tags it was written with, and a block that ended at a call
    (``Reasoning.ends_at_call``) or at the reply's end gets no closer it
    never had. Whatever no event showed once the reply is over (a block
    left open, empty blocks, a lone opener) is given back by ``finish``:
    a reply without calls comes back as exactly its text.
    """

    def __init__(self, pairs: tuple[tuple[str, str], ...]) -> None:
        self.pairs = pairs
        self.opening = True  # no call or visible text yet: reasoning may come
        self.position = 0  # raw-text offset the walk has reached, while opening
        self.closer: str | None = None  # the closer of the block the walk is inside

    def add(self, events, text: str) -> tuple[str, Calls]:
        """(content, calls) for the next events; text is the reply so far."""
        pieces, calls = [], []
        for position, event in enumerate(events):
            kind = type(event)
            if self.opening:
                if kind is ReasoningDelta:
                    pieces.append(self._reasoning(event.text, text))
                    continue
                if kind is TextDelta:
                    pieces.append(self._text(event.text, text))
                    continue
                if kind is not ArgumentsWithdrawn:  # a call: the blocks before it, then no more reasoning
                    pieces.append(self._settle(text))
                    self.opening = False
            if kind is CutToolCall:
                not_sent(event, _streamed_before(events, position))
            elif kind is ToolCallEvent:
                calls.append((event.call, event.id))
            elif kind is ArgumentsDelta:
                calls.append(event)
            elif kind is ArgumentsWithdrawn:
                withdrawn(events, position)
            else:
                pieces.append(event.text)
        return "".join(pieces), calls

    def finish(self, text: str) -> str:
        """What no event showed at the end: a closing tag, empty blocks, an opener the reply ended on."""
        return self._settle(text) if self.opening else ""  # past that, framing the reader dropped

    def unsent(self, text: str, settled: int) -> str:
        """After a leak: the text not sent yet, given the offset the stream had settled."""
        return text[self.position :] if self.opening else text[settled:]

    # -- the walk of the opening ---------------------------------------------------------------

    def _text(self, piece: str, text: str) -> str:
        """A text delta while opening: leading space beside the blocks, then visible text (the opening ends)."""
        out, index = [], 0
        while index < len(piece):
            run = self._space(piece, index, text)
            if run:
                out.append(piece[index : index + run])
                index += run
                continue
            before = self.position
            out.append(self._settle(text))
            if self.position == before:  # visible text starts here: the rest is the reply's text
                out.append(piece[index:])
                self.opening = False
                break
        return "".join(out)

    def _reasoning(self, piece: str, text: str) -> str:
        out, index = [], 0
        while index < len(piece):
            if self.closer is None:
                out.append(self._open(text))
                if self.closer is None:  # no opener left in the raw text (not expected): as the events say
                    out.append(piece[index:])
                    break
            at = text.find(self.closer, self.position)
            taken = self._match(piece, index, len(text) if at == -1 else at, text)
            out.append(piece[index : index + taken])
            index += taken
            if index < len(piece):  # this block closed and the next one opened right after it
                out.append(self._end_block(text))
        return "".join(out)

    def _settle(self, text: str) -> str:
        """Before a delta that is no reasoning: the open block's end, then the blocks with nothing inside."""
        out = [self._end_block(text)] if self.closer is not None else []
        while True:
            self._skip_layout(text)
            pair = opener_at(self.pairs, text, self.position)
            if pair is None:
                break
            out.append(pair[0])
            self.position += len(pair[0])
            self._skip_layout(text)
            if not text.startswith(pair[1], self.position):
                break  # an opener that ended at a call (or the reply's end) with nothing inside: no closer
            out.append(pair[1])
            self.position += len(pair[1])
        return "".join(out)

    def _open(self, text: str) -> str:
        """A reasoning delta outside a block: the empty blocks before it, then the opener of its own."""
        out = []
        while self.closer is None:
            self._skip_layout(text)
            pair = opener_at(self.pairs, text, self.position)
            if pair is None:  # framing the reader dropped stands before it: the first opener ahead
                found = [(at, number) for number, (opener, _) in enumerate(self.pairs)
                         if (at := text.find(opener, self.position)) != -1]
                if not found:
                    break
                at, number = min(found)
                pair, self.position = self.pairs[number], at
            out.append(pair[0])
            self.position += len(pair[0])
            self._skip_layout(text)
            if text.startswith(pair[1], self.position):  # nothing inside: no event
                out.append(pair[1])
                self.position += len(pair[1])
            else:
                self.closer = pair[1]
        return "".join(out)

    def _end_block(self, text: str) -> str:
        closer, self.closer = self.closer, None
        self._skip_layout(text)
        if not text.startswith(closer, self.position):
            return ""  # the block ended at a call (Reasoning.ends_at_call) or the reply's end: no closer
        self.position += len(closer)
        return closer

    def _space(self, piece: str, index: int, text: str) -> int:
        """How many of piece's characters from index are the space run at the walk's position (the engine's)."""
        raw = space_run_end(text, self.position) - self.position
        run = 0
        while run < raw and index + run < len(piece) and piece[index + run] == text[self.position + run]:
            run += 1
        self.position += run
        return run

    def _match(self, piece: str, index: int, end: int, text: str) -> int:
        """How many of piece's characters from index the raw text holds before end; the walk passes them."""
        taken = min(len(piece) - index, end - self.position)
        self.position += taken
        return taken

    def _skip_layout(self, text: str) -> None:
        """Nothing to pass over: every character of the opening is in the events (``TakenContent``'s is not)."""


class TakenContent(ReplyContent):
    """A reply's content and calls from its events, once a reasoning parser took its reasoning.

    The text left is read with the format's layout taken out (the whitespace
    its template writes beside a call is not content). A reasoning block
    still at its start (another reasoning parser left it) is content, in the
    format's written tags: one opener before the block's text, the closer
    only where the reply wrote one, whatever the chunking. The walk of the
    opening is ``ReplyContent``'s, passing over the whitespace the layout
    took out of the events. spacing: the format's layout whitespace
    (``Format.spacing``), not empty (``content_of`` takes a format without
    layout to ``ReplyContent``, whose walk is the same without it).
    """

    def __init__(self, pairs: tuple[tuple[str, str], ...], spacing: str) -> None:
        if not spacing:
            raise ValueError("TakenContent needs the format's layout whitespace; without any, use ReplyContent")
        super().__init__(pairs)
        self.spacing = spacing

    def _space(self, piece: str, index: int, text: str) -> int:
        at, run = self.position, 0
        while index + run < len(piece) and space_run_end(piece, index + run) > index + run:
            while at < len(text) and text[at] != piece[index + run] and text[at] in self.spacing:
                at += 1  # whitespace the layout took out
            if at == len(text) or text[at] != piece[index + run]:
                break
            at, run = at + 1, run + 1
        if run:
            self.position = at
        return run

    def _match(self, piece: str, index: int, end: int, text: str) -> int:
        at, taken = self.position, index
        while taken < len(piece) and at < end:
            if text[at] == piece[taken]:
                taken += 1
            elif text[at] not in self.spacing:
                self.position = at  # not the raw text the events say (not expected): take the rest as read
                return len(piece) - index
            at += 1
        self.position = at
        return taken - index

    def _skip_layout(self, text: str) -> None:
        while self.position < len(text) and text[self.position] in self.spacing:
            self.position += 1


def content_of(fmt: Format, reasoning_taken: bool) -> ReplyContent:
    """The content builder of a reply in fmt: ``TakenContent`` once a reasoning parser took its reasoning
    and the format has layout whitespace to pass over; ``ReplyContent`` otherwise."""
    if reasoning_taken and fmt.spacing:
        return TakenContent(fmt.reasoning_pairs, fmt.spacing)
    return ReplyContent(fmt.reasoning_pairs)


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
