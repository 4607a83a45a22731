"""Streaming a reply to the user without ever showing part of a tool call.

``ToolCallStream`` takes a model's text in whatever pieces it arrives
(tokens, network chunks) and turns it into events: ``TextDelta`` for what
the user may see, ``ReasoningDelta`` for the format's reasoning block,
``ToolCallEvent`` for each whole call. Text that could still become a call
marker (``<tool_`` at the end of a chunk) is held until the next chunk
settles it, and a call is held whole until it closes.

The stream is a thin shell around ``templatestudio.engine.Machine``, the
same machine the whole-text reader (``templatestudio.reader``) runs with
one feed and a close: for every input and every chunking the stream's
events, merged, equal the whole-text read, exceptions included. See the
engine's docstring for the rules and what is not handled.
"""

from __future__ import annotations

from templatestudio.detect import resolve_format
from templatestudio.engine import (
    Event,
    Machine,
    ReasoningDelta,
    TextDelta,
    ToolCallEvent,
    merge_deltas,
    read_events,
)


def parse_events(text: str, fmt: object, *, reasoning_open: bool = False) -> list[Event]:
    """The events of a whole reply read at once: what any stream of it must produce."""
    return read_events(text, resolve_format(fmt), reasoning_open=reasoning_open)


class ToolCallStream(Machine):
    """Feed a reply in pieces; get text, reasoning and whole calls back as events.

    ``feed(chunk)`` returns the events that chunk settles, ``close()`` the
    rest. ``UnparsedToolCall`` is raised where the whole-text reader raises:
    by ``feed`` once the offending call or marker is complete, by ``close``
    when the reply ends inside a call. ``chars_examined`` counts the
    characters looked at, to show that cost grows linearly with the reply.
    The stream is the machine itself (a subclass, not a wrapper): ``feed``
    runs once per token, and a wrapper's call would cost a tenth of it.
    """

    def __init__(self, fmt_or_tokenizer: object, *, reasoning_open: bool = False) -> None:
        super().__init__(resolve_format(fmt_or_tokenizer), reasoning_open=reasoning_open)

    @property
    def chars_examined(self) -> int:
        return self.examined


__all__ = [
    "Event",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallEvent",
    "ToolCallStream",
    "merge_deltas",
    "parse_events",
]
