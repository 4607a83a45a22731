"""Streaming a reply to the user without ever showing part of a tool call.

``ToolCallStream`` takes a model's text in whatever pieces it arrives
(tokens, network chunks) and turns it into events: ``TextDelta`` for what
the user may see, ``ReasoningDelta`` for the format's reasoning block,
``ToolCallEvent`` for each whole call, and with ``strict=False`` a
``CutToolCall`` at close for a call the reply ended inside. Text that
could still become a call marker (``<tool_`` at the end of a chunk) is
held until the next chunk settles it, and a call is held whole until it
closes.

The stream is a thin shell around ``templatestudio.engine.Machine``, the
same machine the whole-text read (``read_events``, which the production
reader ``templatestudio.reader`` runs) feeds once and closes: for every
input and every chunking the stream's events, merged, equal
``read_events`` of the whole text, exceptions included. See the engine's
docstring for the rules and what is not handled.

The stream takes a ``Format`` (or a registered format's name); it resolves
no tokenizer. Resolve one once, before the first reply, with
``templatestudio.resolve_format`` (``templatestudio.detect``).
"""

from __future__ import annotations

from templatestudio.engine import Machine, read_events
from templatestudio.events import CutToolCall, Event, ReasoningDelta, TextDelta, ToolCallEvent, merge_deltas
from templatestudio.formats import Format, get_format
from templatestudio.typed_arguments import argument_types


class ToolCallStream(Machine):
    """Feed a reply in pieces; get text, reasoning and whole calls back as events.

    ``feed(chunk)`` returns the events that chunk settles, ``close()`` the
    rest. ``UnparsedToolCall`` is raised where the whole-text reader raises:
    by ``feed`` once the offending call or marker is complete, by ``close``
    when the reply ends inside a call (with ``strict=False``, ``close``
    returns the calls that closed and a ``CutToolCall`` instead, as
    ``read_events(..., strict=False)`` does). ``chars_examined`` counts the
    characters looked at, to show that cost grows linearly with the reply.
    The stream is the machine itself (a subclass, not a wrapper): ``feed``
    runs once per token, and a wrapper's call would cost a tenth of it.

    fmt is a ``Format`` or a registered format's name (``UnknownFormat``
    otherwise); anything else, a tokenizer included, is a ``TypeError``:
    resolve it to a format first. guard: the formats whose calls are leaks
    (a tuple of ``Format``), by default every registered format. tools: the
    request's tools, as ``read_tool_calls`` takes them: the calls of a
    format whose values are text are typed by their schemas
    (``templatestudio.typed_arguments``), by the same step as the whole read.
    reasoning_open: the prompt opened a reasoning block, as ``Machine`` takes it
    (True, or the pair ``Format.opened_reasoning`` gives).
    """

    def __init__(self, fmt: Format | str, *, reasoning_open: bool | tuple[str, str] = False,
                 guard: tuple[Format, ...] | None = None, strict: bool = True,
                 tools: list[dict] | None = None, layout: bool = True, reasoning_layout: bool = True) -> None:
        if isinstance(fmt, str):
            fmt = get_format(fmt)
        elif not isinstance(fmt, Format):
            raise TypeError(
                f"ToolCallStream takes a Format or a format name, got {type(fmt).__name__}; "
                "resolve a tokenizer or template with templatestudio.resolve_format first"
            )
        super().__init__(fmt, reasoning_open=reasoning_open, guard=guard, strict=strict, layout=layout,
                         reasoning_layout=reasoning_layout)
        self.argument_types = argument_types(fmt, tools)
        if self.argument_types is not None:
            # Only a stream with calls to type goes through the typing step: an
            # override on the class would add a call to every token of every stream.
            self.feed, self.close = self._typed_feed, self._typed_close

    def _typed_feed(self, text: str) -> list[Event]:
        return self.argument_types.events(Machine.feed(self, text))

    def _typed_close(self) -> list[Event]:
        return self.argument_types.events(Machine.close(self))

    @property
    def chars_examined(self) -> int:
        return self.examined


__all__ = [
    "CutToolCall",
    "Event",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallEvent",
    "ToolCallStream",
    "merge_deltas",
    "read_events",
]
