"""The production reader: one function that reads a model's reply, for every caller.

``read_tool_calls`` is what the loop (``templatestudio.loop``) and the vLLM
plugin's whole-reply path (``integrations.served.read_reply``) use. It
reads:

- through the model's own response template when the tokenizer ships one
  (``tokenizer.parse_response``), and then holds that answer to the same
  leak check as every other path: the format the chat template writes is
  detected, its reader runs over the same text, and any call marker it
  finds unconsumed, or any disagreement between the two readings, raises
  ``UnparsedToolCall``;
- otherwise through the format you name, or the one detected from the
  tokenizer's chat template, with ``templatestudio.engine`` (the machine
  ``ToolCallStream`` runs, so a stream of the reply gives the same events).

Reasoning is split by the format's own rule, in the engine: a block at the
start of the reply, never a ``</think>`` met later inside a call.
``split_reasoning`` gives that split on its own.

A reply that ended inside a call (a generation cut by ``max_tokens``) is
read as far as it goes: the calls that closed before the cut are calls,
the reasoning and content before it are kept, and the cut call is
``Reply.cut``, a ``CutToolCall`` (never content, never dropped). With
``strict=True`` such a reply raises ``UnparsedToolCall`` instead, as the
loop (``templatestudio.loop``) asks. A response template checks such a reply
up to the cut call (it reads whole replies only); one that cannot read a
reply at all raises ``UnparsedToolCall`` naming its error, never the
exception transformers raised. The course module's
``tools.parse_tool_calls`` stays the tutorial's simpler reader; this one
exists because that one trusts whatever parser it is handed.

Given the request's tools (``tools=``), a format whose wire writes values
as text (Qwen3-Coder's XML, GLM's) has its calls typed by each tool's
schema, as vLLM's parsers for those formats do (``typed_arguments``).

This layer is where a source becomes a ``Format``: a format name, a
tokenizer (probed in-process: a tokenizer you loaded is code you chose to
run) or template text (probed in the sandbox). The stream and the engine
below take a ``Format`` and resolve nothing.

Not handled: replies mixing two formats (the second one's call raises).
"""

from __future__ import annotations

from dataclasses import dataclass

from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.detect import resolve_format
from templatestudio.engine import Machine, read_events
from templatestudio.events import CutToolCall, Event, ReasoningDelta, TextDelta, ToolCallEvent
from templatestudio.formats import Format
from templatestudio.typed_arguments import argument_types
from templatestudio.values import as_arguments, same_json_value

__all__ = ["Reply", "read_tool_calls", "split_reasoning"]


@dataclass(frozen=True)
class Reply:
    """A reply read: its calls (with ids where written), the visible content, the reasoning.

    cut: the call the reply ended inside, when it was cut short (then the
    last of the events too); None for a reply that ended outside every call.
    """

    calls: list[ParsedToolCall]
    ids: list[str | None]
    content: str
    reasoning: str
    events: list[Event]
    format: Format  # what read it (with a response template: what checked its answer)
    cut: CutToolCall | None = None


def _is_tokenizer(source: object) -> bool:
    return hasattr(source, "chat_template") and hasattr(source, "special_tokens_map")


def _format_for(source: object) -> Format:
    """The Format that reads replies for source; a tokenizer is probed in-process, template text sandboxed."""
    if isinstance(source, Format):
        return source
    return resolve_format(source, deadline=None) if _is_tokenizer(source) else resolve_format(source)


def _reply(events: list[Event], fmt: Format) -> Reply:
    calls = [event for event in events if isinstance(event, ToolCallEvent)]
    return Reply(
        calls=[event.call for event in calls],
        ids=[event.id for event in calls],
        content="".join(event.text for event in events if isinstance(event, TextDelta)),
        reasoning="".join(event.text for event in events if isinstance(event, ReasoningDelta)),
        events=events,
        format=fmt,
        cut=next((event for event in events if isinstance(event, CutToolCall)), None),
    )


def _same_calls(left: list[ParsedToolCall], right: list[ParsedToolCall]) -> bool:
    return len(left) == len(right) and all(
        a.name == b.name and same_json_value(a.arguments, b.arguments) for a, b in zip(left, right)
    )


def read_tool_calls(
    text: str, source: object, *, prefix: str | None = None, reasoning_open: bool | None = None,
    strict: bool = False, tools: list[dict] | None = None, layout: bool = True, reasoning_layout: bool = True,
) -> Reply:
    """Read text, a model's reply, for the calls in it; raise rather than lose one.

    source is a ``Format``, a registered format name, template text or a
    ``ChatTemplate`` (probed in the sandbox), or a tokenizer (whose response
    template is used when it ships one, and whose chat template tells the
    format otherwise; probed in-process). prefix is the prompt the reply continues;
    reasoning_open overrides whether that prompt opened a reasoning block
    (by default it is read off the prefix). A reply cut inside a call gives
    the calls before the cut and ``Reply.cut``; with strict it raises
    ``UnparsedToolCall`` ("the reply ended inside a tool call").

    tools: the request's tools (OpenAI tool dicts or bare function dicts).
    Given them, a format whose wire writes values as text (Qwen3-Coder's
    XML, GLM's) has each call's values typed by its tool's parameter schema
    (``templatestudio.typed_arguments``), in ``Reply.calls`` and in the
    events alike; other formats' calls are as read. ``TypeError`` for an
    entry that is no tool. layout=False keeps the whitespace the template
    writes around reasoning blocks and calls in the content and reasoning
    (``templatestudio.layout``; by default it is taken out); reasoning_layout=False
    takes out only the whitespace touching a call.
    """
    tokenizer = source if _is_tokenizer(source) else None
    fmt = _format_for(source)
    types = argument_types(fmt, tools)
    opened = (fmt.opened_reasoning(prefix) or False) if reasoning_open is None else reasoning_open
    read = read_events(text, fmt, reasoning_open=opened, strict=strict, layout=layout,
                       reasoning_layout=reasoning_layout)
    reply = _reply(read if types is None else types.events(read), fmt)
    if tokenizer is None or getattr(tokenizer, "response_template", None) is None:
        return reply
    # A response template reads whole replies: a reply cut inside a call is
    # checked up to the call it ended inside, whose text is Reply.cut's.
    checked = text if reply.cut is None else text[: reply.cut.offset]
    try:
        message = tokenizer.parse_response(checked, prefix=prefix or "")
    except Exception as error:  # transformers raises ValueError, KeyError, ... for text its schema cannot read
        raise UnparsedToolCall(
            f"{tokenizer.name_or_path}'s response template could not read the reply "
            f"({type(error).__name__}: {error}); the {fmt.name} format reads "
            f"{len(reply.calls)} call(s) {[call.name for call in reply.calls]}"
        ) from error
    shipped = [
        ParsedToolCall(call["function"]["name"], as_arguments(call["function"]["arguments"]))
        for call in message.get("tool_calls", [])
    ]
    # The two readings are compared as read, before any typing: the response
    # template reads the text, not the tools. Its calls are then typed alike.
    untyped = [event.call for event in read if isinstance(event, ToolCallEvent)]
    if not _same_calls(shipped, untyped):
        raise UnparsedToolCall(
            f"{tokenizer.name_or_path}'s response template read {len(shipped)} call(s) "
            f"{[call.name for call in shipped]}, the {fmt.name} format reads {len(untyped)} "
            f"{[call.name for call in untyped]}: the reply is not read the same way twice"
        )
    if types is not None:
        shipped = [types.call(call) for call in shipped]
    return Reply(shipped, reply.ids, reply.content, reply.reasoning, reply.events, fmt, reply.cut)


def split_reasoning(text: str, source: object, *, prefix: str | None = None) -> tuple[str, str]:
    """(reasoning, the reply without its reasoning blocks), split by the format's rule.

    source is what ``read_tool_calls`` takes (a ``Format``, a format name, a
    tokenizer); there is no default, since formats differ in their blocks
    (Qwen3's ``<think>``, Gemma 4's thought channel). This is the one place
    reasoning is split: the engine's rule, which the stream and the reader
    share, so only a block at the start counts and a ``</think>`` inside a
    later call's argument never cuts the reply. The reply is raw text, calls
    included (a call the reply ended inside too), and the split raises
    ``UnparsedToolCall`` where the reader would. Neither part is stripped.
    """
    fmt = _format_for(source)
    machine = Machine(fmt, reasoning_open=fmt.opened_reasoning(prefix) or False, strict=False, layout=False)
    events = machine.feed(text) + machine.close()
    reasoning = "".join(event.text for event in events if isinstance(event, ReasoningDelta))
    rest, cursor = [], 0
    for start, end in machine.reasoning_spans:
        rest.append(text[cursor:start])
        cursor = end
    rest.append(text[cursor:])
    return reasoning, "".join(rest)
