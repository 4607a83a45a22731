"""What the probe asks a chat template to render: the probe tool, its call, the forms of that call.

The probe call has a distinctive name and one argument of every JSON type
(a string with a space, an int, a float, a bool, a null, a list, a nested
object), so a reader that reads it back exactly has read every kind of
value. ``CALL_SHAPES`` lists the forms the assistant message carrying it
can take; ``templatestudio.probe`` tries them in order.

A ``CallShape`` is a value with typed fields, not a label: callers ask
``shape.id_length`` or ``shape.string_arguments``; ``str(shape)`` is the
label the probe prints ("dict arguments, no content, 9-char id").

Not handled: ids of any length but nine (Mistral's rule is the only one
met), and assistant messages that carry the call as anything but
``tool_calls``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from datetime import datetime
from enum import Enum

__all__ = [
    "CALL_SHAPES",
    "PROBE_ARGUMENTS",
    "PROBE_NAME",
    "PROBE_QUESTION",
    "PROBE_TOOL",
    "CallShape",
    "Content",
    "template_variables",
]

PROBE_NAME = "studio_probe_lookup"
PROBE_ARGUMENTS = {
    "note": "two words",
    "count": 42,
    "ratio": 2.5,
    "enabled": True,
    "missing": None,
    "tags": ["alpha", "beta"],
    "nested": {"depth": 2, "mode": "fast"},
}
PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": PROBE_NAME,
        "description": "Look something up for the template probe.",
        "parameters": {
            "type": "object",
            "properties": {
                "note": {"type": "string", "description": "A short note."},
                "count": {"type": "integer", "description": "How many."},
                "ratio": {"type": "number", "description": "A ratio."},
                "enabled": {"type": "boolean", "description": "Whether it is on."},
                "missing": {"type": "string", "nullable": True, "description": "Maybe nothing."},
                "tags": {"type": "array", "items": {"type": "string"}, "description": "Labels."},
                "nested": {
                    "type": "object",
                    "description": "Settings.",
                    "properties": {"depth": {"type": "integer"}, "mode": {"type": "string"}},
                    # Command R+'s template reads additionalProperties off every
                    # object-typed parameter and raises when it is missing.
                    "additionalProperties": False,
                },
            },
            "required": ["note", "count"],
        },
    },
}
PROBE_QUESTION = {"role": "user", "content": "Please run the probe lookup."}
_PROBE_DATE = ("2024-07-26", "26 Jul 2024")
_PROBE_CLOCK = datetime(2024, 7, 26, 12, 0)


def _probe_strftime_now(format: str) -> str:
    """The template clock stopped at the probe's date (Mistral's and Llama's templates call strftime_now)."""
    return _PROBE_CLOCK.strftime(format)


def template_variables(tools: list | None) -> dict:
    """Variables some templates need besides ``tools``, as a caller passes them to apply_chat_template.

    firefunction v2 takes its tools as a ``functions`` JSON string and the
    date as ``datetime`` (it raises without them); Llama 3.x read
    ``date_string`` and fall back to today's date. The dates are fixed so a
    probe renders the same on every day: ``strftime_now``, the clock
    transformers gives every template, is passed as a variable too, which
    shadows that global. Otherwise two renders either side of midnight differ
    (a prompt rendered at 23:59 is no longer a prefix of a turn rendered at
    00:00), and the probe's cut lands in the system prompt.
    """
    functions = _functions_text(json.dumps([tool["function"] for tool in tools])) if tools else ""
    return {"functions": functions, "datetime": _PROBE_DATE[0], "date_string": _PROBE_DATE[1],
            "strftime_now": _probe_strftime_now}


@functools.lru_cache(maxsize=64)
def _functions_text(functions_json: str) -> str:
    # Keyed by the functions' JSON written by the C encoder (no indent): the probe renders a dozen
    # times with the same tools, and indented JSON is written by json's Python encoder, ten times slower.
    return json.dumps(json.loads(functions_json), indent=4)


class Content(Enum):
    """What the assistant message holds under ``content`` beside its call; the value is the label."""

    ABSENT = "no content"  # no content key at all
    EMPTY = "empty content"  # ""
    NONE = "content None"  # None


_CONTENT_VALUE = {Content.EMPTY: "", Content.NONE: None}


@dataclass(frozen=True)
class CallShape:
    """One form of the assistant message that makes a call: how it writes arguments, content and id.

    string_arguments: the arguments are a JSON string, not a dict
    (DeepSeek V3 writes the call only then). content: what the message
    holds beside the call (R1-Distill needs None, some templates raise on a
    missing key). id_length: the call carries an id of that many
    characters (Mistral's templates raise on any but nine); None, no id.
    """

    string_arguments: bool
    content: Content
    id_length: int | None = None

    def message(self) -> dict:
        """The probe call as an assistant message in this form (a new dict each time)."""
        return self.message_for([(PROBE_NAME, PROBE_ARGUMENTS)])

    def call_id(self, number: int) -> str | None:
        """The id this form gives the call at number (from 1): call00001 for Mistral's nine; None without ids."""
        return None if self.id_length is None else f"call{number:0{self.id_length - 4}d}"

    def message_for(self, calls: list[tuple[str, dict]]) -> dict:
        """An assistant message in this form that makes the given (name, arguments) calls, in order."""
        tool_calls = []
        for number, (name, arguments) in enumerate(calls, 1):
            written = json.dumps(arguments) if self.string_arguments else arguments
            call: dict = {"type": "function", "function": {"name": name, "arguments": written}}
            if self.id_length is not None:
                call["id"] = self.call_id(number)
            tool_calls.append(call)
        message: dict = {"role": "assistant", "tool_calls": tool_calls}
        if self.content is not Content.ABSENT:
            message["content"] = _CONTENT_VALUE[self.content]
        return message

    def __str__(self) -> str:
        label = f"{'string' if self.string_arguments else 'dict'} arguments, {self.content.value}"
        return label if self.id_length is None else f"{label}, {self.id_length}-char id"


# The forms an assistant call can take, tried in this order until one is
# read back. Templates differ in what they accept: DeepSeek V3 writes the
# call only when arguments are a JSON string, R1-Distill only when content
# is None, others raise on a missing content key or on ids that are not
# nine characters. The first form read back is what the loop and the vLLM
# plugin must render calls with (TemplateProbe.shape).
CALL_SHAPES: tuple[CallShape, ...] = tuple(
    CallShape(string_arguments, content, id_length)
    for string_arguments in (False, True)
    for content in Content
    for id_length in (None, 9)  # Mistral's templates raise on any id but nine characters
)
