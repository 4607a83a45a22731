"""The reasoning blocks of one reply, as ``engine.Machine`` reads them: where one opens and where it ends.

The machine owns the reply's buffer and its events; this module decides,
over the text it is handed, the steps that concern a reasoning block:

- at the start of the reply (and right after a block) one of the format's
  reasoning openers opens a block (``ReasoningBlocks.open``), which that
  opener's own closer ends; a start of an opener waits for more text
  (``ReasoningBlocks.may_open``);
- a block the prompt already opened may be skipped: one of the format's
  ``Reasoning.skipped_by`` literals as its first characters says the model
  answered straight away, and the reply is read on from there;
- a block of a format whose reasoning ends at a call
  (``Reasoning.ends_at_call``) that the reply never closes ends where a
  whole call opening of the format stands at a line start inside it; the
  rest is read as the reply. A stream cannot know that before the closer
  or the end, so the block's text is held from the first such opening
  until the block's closer or the reply's end: the reasoning after a call
  rehearsed at a line start arrives that late (the cost of the rule).

Each step reads a bounded amount of new text per character (the machine's
``examined`` count), but for a call opening held at a line start inside a
block that may end at a call while its whitespace is still arriving: it is
read again at each step until it is decided. Not handled: calls inside a
closed block (they are reasoning text, never events).
"""

from __future__ import annotations

from templatestudio.wire.base import Format


class ReasoningBlocks:
    """The blocks of one reply: the open block's closer, how far it was read, and each block's span.

    reasoning_open: as ``engine.Machine``'s (True: the format's written
    pair; a pair of ``fmt.reasoning_pairs``: that one), the block the
    prompt opened; ``opened`` says whether the reply starts inside it.
    spans: the reply offsets of each block, its tags included.
    """

    __slots__ = ("pairs", "opened", "spans", "_start", "_closer", "_skips", "_scan")

    def __init__(self, fmt: Format | None, reasoning_open: bool | tuple[str, str]) -> None:
        self.pairs = fmt.reasoning_pairs if fmt is not None else ()
        opened = _opened_pair(fmt, self.pairs, reasoning_open)
        self.opened = opened is not None
        self.spans: list[tuple[int, int]] = []
        self._start = 0  # reply offset of the open block's opener
        self._closer = opened[1] if opened else ""  # the open block's closer
        # What may say, at the reply's first characters, that the model skipped the block its prompt opened.
        self._skips = fmt.reasoning_skipped_by if opened and fmt is not None else ()
        ending = fmt.calls_ending_reasoning if fmt is not None else None
        self._scan = None if ending is None else _BlockScan(*ending)

    def open(self, head: str, offset: int) -> int:
        """Open the block whose opener head starts with, at reply offset offset: the opener's length; 0 if none."""
        pair = opener_at(self.pairs, head, 0)
        if pair is None:
            return 0
        self._start = offset
        self._closer = pair[1]
        if self._scan is not None:
            self._scan.restart(offset + len(pair[0]))
        return len(pair[0])

    def may_open(self, head: str) -> bool:
        """Whether more text could still make head start with an opener."""
        return any(opener.startswith(head) for opener, _ in self.pairs)

    def read(self, buffer: str, at: int, base: int, final: bool) -> tuple[int, int | None, int]:
        """One step inside the open block, which runs from buffer[at] (base: the reply offset of buffer[0]).

        Returns (end, after, work): the block's text runs to end (buffer
        index; the machine settles it as reasoning); after is where the
        reply goes on once the block is over (past its closer, at the call
        that ends it, at once when skipped), None while it is not; work is
        what the step examined. final: the reply ends with buffer.
        """
        if self._skips:  # only at the first characters of a block the prompt opened
            skipped = self._skipped(buffer, at, final)
            if skipped is not None:
                return skipped
        if self._scan is not None:
            return self._read_to_call(buffer, at, base, final)
        closer = self._closer
        end = buffer.find(closer, at)
        if end != -1:
            self.spans.append((self._start, base + end + len(closer)))
            return end, end + len(closer), end + len(closer) - at
        keep = 0 if final else _partial_suffix(buffer, closer)
        if final:  # never closed: all the rest was reasoning
            self.spans.append((self._start, base + len(buffer)))
        return len(buffer) - keep, None, len(buffer) - keep - at

    def _skipped(self, buffer: str, at: int, final: bool) -> tuple[int, int | None, int] | None:
        """At the block's first characters: skipped (read on at once), waiting for more, or None (a block)."""
        head = buffer[at:]
        for literal in self._skips:
            if head.startswith(literal):
                self._skips = ()
                return at, at, 0
        if not final and any(literal.startswith(head) for literal in self._skips):
            return at, None, 0
        self._skips = ()
        return None

    def _read_to_call(self, buffer: str, at: int, base: int, final: bool) -> tuple[int, int | None, int]:
        """read for a block that, never closed, ends at a call opening at a line start.

        Until the closer or the end, the text from the first opening that
        is (or may still grow into) a whole call opening at a line start is
        held: the closer makes it reasoning, the end of the reply a call.
        """
        closer, scan = self._closer, self._scan
        searched = max(at, scan.searched - base)
        end = buffer.find(closer, searched)
        if end != -1:  # closed: everything up to the closer is reasoning, any call in it included
            self.spans.append((self._start, base + end + len(closer)))
            return end, end + len(closer), end + len(closer) - searched
        after_newline, anywhere = scan.after_newline, scan.anywhere
        if final:
            found = anywhere.match(buffer, at) if base + at == scan.start else None
            if found is None:
                found = after_newline.search(buffer, at)
                call = None if found is None else found.start() + 1  # the newline is the block's (layout)
            else:
                call = at
            end = len(buffer) if call is None else call
            self.spans.append((self._start, base + end))
            # With a call, the rest is read as a reply (a call opens at once).
            return end, call, len(buffer) - searched
        if scan.call_at is None or not scan.whole:
            start = at if scan.call_at is None else scan.call_at - base
            found = anywhere.match(buffer, start, partial=True) if base + start == scan.start else None
            if found is None:
                found = after_newline.search(buffer, start, partial=True)
            scan.call_at = None if found is None else base + found.start()
            scan.whole = found is not None and not found.partial
        keep = len(buffer) - _partial_suffix(buffer, closer)
        scan.searched = base + keep
        return (keep if scan.call_at is None else min(keep, scan.call_at - base)), None, keep - searched


class _BlockScan:
    """Where a block that may end at a call stands (``ReasoningBlocks._read_to_call``; reply offsets).

    start: the block's first character (a line start); searched: how far
    the closer was looked for; call_at: where the first call opening at a
    line start (or a start of one) was found, held; whole: it is whole.
    """

    __slots__ = ("after_newline", "anywhere", "start", "searched", "call_at", "whole")

    def __init__(self, after_newline, anywhere) -> None:
        self.after_newline, self.anywhere = after_newline, anywhere
        self.restart(0)

    def restart(self, start: int) -> None:
        self.start, self.searched, self.call_at, self.whole = start, 0, None, False


def opener_at(pairs: tuple[tuple[str, str], ...], text: str, at: int) -> tuple[str, str] | None:
    """The reasoning pair whose opener stands at text[at], None if none: the first of pairs, in order.

    The one rule for where a block opens: the machine's (``ReasoningBlocks.open``),
    and the served content's walk of a reply's opening (``served_content``).
    """
    return next((pair for pair in pairs if text.startswith(pair[0], at)), None)


def _opened_pair(fmt: Format | None, pairs: tuple[tuple[str, str], ...],
                 reasoning_open: bool | tuple[str, str]) -> tuple[str, str] | None:
    """The reasoning pair a reply starts inside: reasoning_open True is the format's written one."""
    if not isinstance(reasoning_open, tuple):
        return pairs[0] if reasoning_open and pairs else None
    if reasoning_open not in pairs:
        name = fmt.name if fmt is not None else "no format"
        raise ValueError(f"reasoning_open={reasoning_open!r} is not a reasoning pair of {name}: {list(pairs)}")
    return reasoning_open


def _partial_suffix(text: str, literal: str) -> int:
    """Length of the longest end of text that is a proper prefix of literal."""
    for size in range(min(len(literal) - 1, len(text)), 0, -1):
        if literal.startswith(text[-size:]):
            return size
    return 0


__all__ = ["ReasoningBlocks", "opener_at"]
