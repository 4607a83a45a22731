"""Which registered formats read a template's rendered probe call back, exactly and alone.

``templatestudio.probe`` renders the probe call through a template and cuts
out the call turn (the wire); this module judges that wire. A format counts
when its reader reads the wire as exactly the probe call (name, every
argument of the same JSON type) and leaves nothing beside it but
whitespace and the template's own tags after the call.

A value may come back as text rather than typed (Qwen3-Coder's XML writes
every value as text) and still count when the text is the value's JSON or
Python spelling; ``readers_of`` says which keys came back that way. When
several formats read the wire, one that also reads another's own writing
of the probe call, where that other does not read its writing, reads a
wider language and does not count (Llama 3 reads Phi-4-mini's call too).

Not handled: a wire holding the call twice, or beside another call (the
probe renders one call, so anything else is not read back).
"""

from __future__ import annotations

import re

from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.engine import read_events
from templatestudio.events import TextDelta, ToolCallEvent
from templatestudio.formats import FORMATS, Format
from templatestudio.probe_call import PROBE_ARGUMENTS, PROBE_NAME
from templatestudio.values import same_json_value, spellings

__all__ = ["readers_of"]


def _read_back(calls: list[ParsedToolCall]) -> tuple[str, ...] | None:
    """None unless calls is exactly the probe call; else the keys that came back as text."""
    if len(calls) != 1 or calls[0].name != PROBE_NAME:
        return None
    arguments = calls[0].arguments
    if arguments.keys() != PROBE_ARGUMENTS.keys():
        return None
    as_text = []
    for key, expected in PROBE_ARGUMENTS.items():
        value = arguments[key]
        if same_json_value(value, expected):
            continue
        if isinstance(value, str) and value in spellings(expected):
            as_text.append(key)
            continue
        return None
    return tuple(as_text)


# After its last call a turn may end with one of the template's own tags
# (Gemma's "<|tool_response>" opens the result turn); nothing else may be left.
_TRAILING_TAGS = re.compile(r"(?:\s*<\|?[\w:]+\|?>)*\s*")


def readers_of(wire: str, prompt: str) -> list[tuple[Format, tuple[str, ...]]]:
    """Every format whose reader reads wire back as exactly the probe call, with the keys read as text.

    Text left beside the call would be markup the reader does not know
    (another format's wrapper around a JSON object it happens to read), so
    a reading that leaves any does not count, but for whitespace and tags
    after the call. A reasoning block the prompt opened is the format's
    when the turn closes it; a turn that never closes it was written without
    it (DeepSeek R1's prompt opens ``<think>``, its history turns drop the
    block) and is read from its start.
    """
    found = []
    for fmt in FORMATS.values():
        if not any(not opener.literal or opener.literal in wire for opener in fmt.openers):
            continue  # no call of fmt can open in wire: its reading would hold no call (half a probe's time)
        pair = fmt.opened_reasoning(prompt)
        opened = pair if pair is not None and pair[1] in wire else False
        try:
            events = read_events(wire, fmt, reasoning_open=opened)
        except UnparsedToolCall:
            continue
        texts = [(i, e.text) for i, e in enumerate(events) if isinstance(e, TextDelta) and e.text.strip()]
        calls_at = [i for i, e in enumerate(events) if isinstance(e, ToolCallEvent)]
        if any(not calls_at or i < calls_at[-1] or not _TRAILING_TAGS.fullmatch(text) for i, text in texts):
            continue
        calls = [event.call for event in events if isinstance(event, ToolCallEvent)]
        as_text = _read_back(calls)
        if as_text is not None:
            found.append((fmt, as_text))
    return _narrowest(found) if len(found) > 1 else found


def _reads_writing_of(reader: Format, writer: Format) -> bool:
    """Whether reader reads writer's own writing of the probe call back as the probe call."""
    try:
        events = read_events(writer.write_call(ParsedToolCall(PROBE_NAME, PROBE_ARGUMENTS)), reader)
    except UnparsedToolCall:
        return False
    return _read_back([event.call for event in events if isinstance(event, ToolCallEvent)]) is not None


def _narrowest(found: list[tuple[Format, tuple[str, ...]]]) -> list[tuple[Format, tuple[str, ...]]]:
    """found without each reader that also reads another's writing when that other does not read its own.

    Such a reader reads a wider language than the other (Llama 3 reads
    Phi-4-mini's ``{"name", "arguments"}`` besides its own ``parameters``;
    Phi-4-mini refuses ``parameters``): the template writes the narrower
    format. Readers that each read the other's writing stay: ambiguous.
    """
    def wider(fmt: Format) -> bool:
        return any(other is not fmt and _reads_writing_of(fmt, other) and not _reads_writing_of(other, fmt)
                   for other, _ in found)
    return [pair for pair in found if not wider(pair[0])]
