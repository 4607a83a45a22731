"""TEMPORARY: stands in for ``templatestudio.reader`` until the lead lands it (issue 10).

The vLLM plugin is written against ``read_tool_calls(text, source) -> Reply``
(``.calls``, ``.spans``, ``.content``, ``.reasoning``, ``.events``). Until
that module exists this file gives the same names from ``stream.parse_events``.
Delete this file and the fallback import in ``vllm.py`` once
``templatestudio.reader`` is in.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from templatestudio import calls as _calls
from templatestudio import tools as _tools
from templatestudio.stream import ReasoningDelta, TextDelta, ToolCallEvent, parse_events

# stream.py raises the course module's class today; calls.py holds the new one.
UNPARSED_ERRORS: tuple[type[ValueError], ...] = tuple({_calls.UnparsedToolCall, _tools.UnparsedToolCall})


@dataclass
class Reply:
    calls: list = field(default_factory=list)
    spans: list = field(default_factory=list)
    content: str = ""
    reasoning: str = ""
    events: list = field(default_factory=list)


def read_tool_calls(text: str, source, *, prefix=None, reasoning_open: bool = False) -> Reply:
    try:
        events = parse_events(text, source, reasoning_open=reasoning_open)
    except UNPARSED_ERRORS as error:
        raise _calls.UnparsedToolCall(str(error)) from None
    return Reply(
        calls=[event.call for event in events if isinstance(event, ToolCallEvent)],
        content="".join(event.text for event in events if isinstance(event, TextDelta)),
        reasoning="".join(event.text for event in events if isinstance(event, ReasoningDelta)),
        events=events,
    )
