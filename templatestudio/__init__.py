"""templatestudio: tool calling through a model's own Hugging Face chat template.

The course in ``notebooks/`` builds this package one step at a time:

- ``messages``  the input contract every render checks first;
- ``render``    apply_chat_template with tools, plus the comparison helpers;
- ``tools``     tool schemas, call/result builders, probes and the way out.

What a program needs is importable from here, each idea under one name:

- reading a reply: ``read_tool_calls`` (the production reader) and its
  ``Reply``, whose ``cut`` is the ``CutToolCall`` a reply cut by
  ``max_tokens`` ended inside; ``split_reasoning`` for the reasoning block
  alone;
- streaming: ``ToolCallStream``, and ``read_events`` for the events of a
  whole reply (what every stream of it must give, merged by
  ``merge_deltas``); the events ``TextDelta``, ``ReasoningDelta``,
  ``ToolCallEvent`` (``Event`` is any of them) and the ``ParsedToolCall``
  a call event carries; ``ArgumentStream`` for a stream that also gives an
  open call's arguments as they arrive (``ArgumentsDelta``, and
  ``ArgumentsWithdrawn`` for a call that proved different after its deltas
  went out);
- choosing a format: ``detect_format``, ``resolve_format``,
  ``probe_template`` with its ``TemplateProbe`` and ``CallShape``;
  ``get_format``, ``FORMATS``, ``Format``;
- running a call: ``dispatch``, its ``ToolOutcome`` and the ``Tool`` type;
  ``run_tool_loop`` and ``ToolLoopLimit`` for a whole loop;
  ``tools_in_system_prompt`` for a template without a tools branch (the
  tools go into the system message as text);
- the errors: ``UnparsedToolCall`` (a reply holds a call the reader cannot
  read) and its ``StreamedCallChanged``, ``NoToolCallFormat`` and its ``AmbiguousFormat``,
  ``UnknownFormat``, ``TemplateProbeError``, ``InvalidConversation``.

Importing the package loads transformers (``dispatch`` types arguments with
the course's ``tool_schema``, which uses transformers' schema reader) but
not torch. ``templatestudio.dispatch`` here is the function, not the module
of that name: import from ``templatestudio.dispatch`` with ``from ...
import`` to reach the module's other names.
"""

from templatestudio.argument_deltas import ArgumentsDelta, ArgumentStream, ArgumentsWithdrawn, StreamedCallChanged
from templatestudio.calls import NoToolCallFormat, ParsedToolCall, UnparsedToolCall
from templatestudio.detect import AmbiguousFormat, detect_format, resolve_format
from templatestudio.dispatch import Tool, ToolOutcome, dispatch
from templatestudio.engine import read_events
from templatestudio.events import CutToolCall, Event, ReasoningDelta, TextDelta, ToolCallEvent, merge_deltas
from templatestudio.formats import FORMATS, Format, UnknownFormat, get_format
from templatestudio.loop import ToolLoopLimit, run_tool_loop
from templatestudio.messages import InvalidConversation
from templatestudio.probe import TemplateProbe, TemplateProbeError, probe_template
from templatestudio.probe_call import CallShape
from templatestudio.reader import Reply, read_tool_calls, split_reasoning
from templatestudio.stream import ToolCallStream
from templatestudio.system_tools import tools_in_system_prompt

__version__ = "0.1.0"

__all__ = [
    "FORMATS",
    "AmbiguousFormat",
    "ArgumentStream",
    "ArgumentsDelta",
    "ArgumentsWithdrawn",
    "CallShape",
    "CutToolCall",
    "Event",
    "Format",
    "InvalidConversation",
    "NoToolCallFormat",
    "ParsedToolCall",
    "ReasoningDelta",
    "Reply",
    "StreamedCallChanged",
    "TemplateProbe",
    "TemplateProbeError",
    "TextDelta",
    "Tool",
    "ToolCallEvent",
    "ToolCallStream",
    "ToolLoopLimit",
    "ToolOutcome",
    "UnknownFormat",
    "UnparsedToolCall",
    "__version__",
    "detect_format",
    "dispatch",
    "get_format",
    "merge_deltas",
    "probe_template",
    "read_events",
    "read_tool_calls",
    "resolve_format",
    "run_tool_loop",
    "split_reasoning",
    "tools_in_system_prompt",
]
