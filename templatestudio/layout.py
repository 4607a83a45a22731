"""The whitespace a template writes around reasoning blocks and calls is layout, not what the model said.

Qwen3's template writes ``<think>\\n`` … ``\\n</think>\\n\\n`` and a newline
between the content and ``<tool_call>``; the message it was given holds
none of that whitespace. So a reader that returns ``"\\n\\nHello"`` as the
content of ``<think>\\n…\\n</think>\\n\\nHello`` returns the template's
layout, not the model's words. ``Layout`` takes it out of a reply's events:

- a reasoning block's text is returned without the whitespace at its two
  ends (the block is one run of reasoning deltas);
- text is returned without the whitespace where it touches a reasoning
  block or a call, on either side; text that is only such whitespace is
  not returned at all.

Everything else keeps every character: whitespace inside prose, and at
the reply's own start and end when no block or call is there (a reply
with no call and no reasoning comes back exactly as written). Which
characters count as layout is the format's declared ``spacing``
(``WireShape.spacing``; JSON's four whitespace characters unless a format
says otherwise, and an empty string keeps all of it).

``Layout(spacing, blocks=False)`` (``reasoning_layout=False`` in the
readers) takes out only the whitespace touching a call and leaves
reasoning, and the text beside it, as written.

It works on events as they settle, so a stream and a whole read agree:
whitespace at the end of a delta is held until what follows it shows
whether it touches a block or a call (or the reply ends). Not handled:
whitespace between a reasoning block's tag and the block when the tag
itself is part of a call region (a format's reader decides that).
"""

from __future__ import annotations

from itertools import filterfalse
from operator import attrgetter

from templatestudio.events import Event, ReasoningDelta, TextDelta, merge_deltas

_TEXT = attrgetter("text")
_IS_TEXT = TextDelta.__instancecheck__  # isinstance(event, TextDelta), callable from C (filter)


class Layout:
    """Drops the layout whitespace from events fed in order; ``close`` ends the reply."""

    __slots__ = ("spacing", "blocks", "_held", "_held_reasoning", "_after_structure", "_in_block", "_block_started")

    def __init__(self, spacing: str, *, blocks: bool = True) -> None:
        """blocks=False: only the whitespace touching a call is layout; reasoning and the text beside it pass as they are."""
        self.spacing = spacing
        self.blocks = blocks
        self._held = ""  # whitespace at the end of the text so far, not returned yet
        self._held_reasoning = ""  # the same at the end of the open reasoning block
        self._after_structure = False  # the text since the last block or call is only whitespace so far
        self._in_block = False  # the last delta was reasoning: the block may go on
        self._block_started = False  # the open block has returned some of its text

    def feed(self, events: list[Event]) -> list[Event]:
        """events with the layout taken out (whitespace at their end may be held for the next feed)."""
        if not events:
            return events
        count, event = len(events), events[0]
        kind = type(event)
        if count <= 2 and kind is not TextDelta and kind is not ReasoningDelta and (
                count == 1 or type(events[1]) is TextDelta and not events[1].text.strip(self.spacing)):
            # A stream's call, settled alone or with the whitespace after it (the run case
            # below, for the events a stream mostly settles at a call's end): the whitespace
            # on either side touches it.
            self._end_block()
            self._held = ""
            return events if count == 1 else [event]
        if count == 1 and kind is TextDelta and not self._in_block:
            if self._after_structure:
                # A stream's whitespace after a call: layout (as _text drops it).
                if not event.text.lstrip(self.spacing):
                    return []
            else:
                # A stream's common case, one token of prose that does not end in whitespace:
                # it and whatever whitespace was held before it are text as they stand.
                held = self._held
                if event.text[-1] not in self.spacing:
                    if not held:
                        return events
                    self._held = ""
                    return [TextDelta(held + event.text)]
                # Whitespace is only ever held, so only the new piece is stripped: a long
                # run of it arriving a character at a time costs each piece once (the held
                # run grows in place, its only reference taken out first).
                body = event.text.rstrip(self.spacing)
                if not body:
                    self._held = ""
                    held += event.text
                    self._held = held
                    return []
                self._held = event.text[len(body) :]
                return [TextDelta(held + body)]
        # A run of calls read at once (thousands, with a newline between two): when
        # every text is whitespace and a call stands among them, each text touches a
        # call, so all of it is layout and the calls are what is left. Settled in
        # passes that run in C (a run's events, one at a time in Python, cost a
        # tenth of its reading: 1 MB of small calls).
        kinds = set(map(type, events))
        if ReasoningDelta not in kinds and len(kinds) > (TextDelta in kinds) and (
                TextDelta not in kinds or not "".join(map(_TEXT, filter(_IS_TEXT, events))).strip(self.spacing)):
            self._end_block()
            self._held = ""
            return list(filterfalse(_IS_TEXT, events)) if TextDelta in kinds else events
        out: list[Event] = []
        for event in events:
            kind = type(event)
            if kind is TextDelta:
                self._text(event.text, out)
            elif kind is ReasoningDelta:
                self._reasoning(event.text, out)
            else:  # a call: whitespace held on either side of it is layout
                self._end_block()
                self._held = ""
                out.append(event)
        # Taking out a text that was only layout may leave two deltas of a kind side by side
        # (two reasoning blocks with a newline between them): the events go out merged.
        return merge_deltas(out) if len(out) > 1 else out

    @property
    def holding(self) -> int:
        """Characters of whitespace at the end of what was fed that are held, not returned yet."""
        return len(self._held) + len(self._held_reasoning)

    def block_opens(self) -> None:
        """A reasoning block opens here, after every event fed so far.

        The machine calls this where it finds a block's opener, so a block
        that holds nothing (``<think></think>``, or a reply cut after its
        opener) is a block to the layout as one with reasoning is: the
        whitespace held before it is dropped, and the text after it is text
        after a structure. Only whitespace can be held here (a block opens
        at the reply's start or after a block). A block with reasoning then
        starts as usual with its first delta.
        """
        if self._in_block:
            self._end_block()
        self._held = ""
        self._after_structure = True

    def close(self) -> list[Event]:
        """The end of the reply: trailing prose whitespace is the model's, a block's is not."""
        self._held_reasoning, self._in_block = "", False
        held, self._held = self._held, ""
        return [TextDelta(held)] if held else []

    def _end_block(self) -> None:
        self._held_reasoning = ""
        self._in_block = False
        self._after_structure = True

    def _text(self, text: str, out: list[Event]) -> None:
        if self._in_block:
            self._end_block()
        if self._after_structure:  # nothing is held then: the whitespace so far was layout
            text = text.lstrip(self.spacing)
            if not text:
                return
            self._after_structure = False
        # Only the new piece is stripped (what is held is whitespace), so a long run of
        # whitespace arriving in pieces costs each piece once; the held run grows in place.
        body = text.rstrip(self.spacing)
        held, self._held = self._held, ""
        if not body:
            held += text
            self._held = held
            return
        out.append(TextDelta(held + body))
        self._held = text[len(body) :]

    def _reasoning(self, text: str, out: list[Event]) -> None:
        if not self.blocks:  # a block is no structure here: what was held before it is text
            if self._held:
                out.append(TextDelta(self._held))
                self._held = ""
            self._after_structure = False
            out.append(ReasoningDelta(text))
            return
        if not self._in_block:  # a block starts: the whitespace held before it touches it
            self._held = ""
            self._in_block, self._block_started, self._after_structure = True, False, False
        if not self._block_started:
            text = text.lstrip(self.spacing)
            if not text:
                return
            self._block_started = True
        body = text.rstrip(self.spacing)  # as in _text: only the new piece is stripped
        held, self._held_reasoning = self._held_reasoning, ""
        if not body:
            held += text
            self._held_reasoning = held
            return
        out.append(ReasoningDelta(held + body))
        self._held_reasoning = text[len(body) :]


__all__ = ["Layout"]
