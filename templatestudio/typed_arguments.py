"""Argument values a format writes as text, typed by the request's tool schemas.

Qwen3-Coder's ``<parameter=k>`` values, GLM's ``<arg_value>``, Seed-OSS's
and MiniMax's parameters carry no JSON type: ``7``, ``true`` and ``null``
reach the reader as the text the model wrote, and so does ``7`` meant as a
string. Only the tool's schema tells them apart, which is why vLLM's
qwen3_xml and glm parsers take the request's tools. ``ArgumentTypes`` does
the same for the reader and the stream: each value of a call is read by its
parameter's schema with ``templatestudio.coerce``'s rules. A ``string``
parameter keeps the text exactly; types are tried in the schema's order
(``type`` lists, ``anyOf``, ``oneOf``), ``string`` never casting, so
``"null"`` for ``["string", "null"]`` is null; a text that spells none of
the declared types stays the text as written, never a made-up value.

Which formats: those whose declared wire writes values as text
(``Format.values_are_text``, derived from the ``WireShape``). A format
whose values are JSON, or whose tags say each value's type (DSML, Kimi
K3), is never touched: ``argument_types`` gives None for it.

Both reading paths apply ``ArgumentTypes.events`` to the events they
return: ``read_tool_calls(..., tools=)`` to the whole reply's,
``ToolCallStream(..., tools=)`` to each feed's and close's. Typing looks at
one ``ToolCallEvent`` at a time and nothing else, so the stream and the
whole read stay equal for every chunking.

Tools are OpenAI's tool dicts (``{"type": "function", "function": {"name":
..., "parameters": schema}}``) or bare function dicts (``{"name": ...,
"parameters": schema}``); anything else is a ``TypeError`` naming the
entry. Not handled: a tool named twice (the first one types the calls,
the later ones are ignored); a call to a tool not in tools, and a key its
schema does not declare, are left as read; what
``coerce`` does not handle (``$ref``, ``allOf``, the items of an array and
the properties of an object, a Python-spelled list or dict) stays as read
too; a ``CutToolCall`` is not typed (it holds the raw text, no arguments).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from templatestudio.calls import ParsedToolCall
from templatestudio.coerce import coerce_arguments
from templatestudio.events import Event, ToolCallEvent
from templatestudio.wire.base import Format

__all__ = ["ArgumentTypes", "argument_types", "tool_parameters"]


def tool_parameters(tools: Iterable[Mapping]) -> dict[str, object]:
    """Each tool's name -> its ``parameters`` schema (None where it has none), the first of a name kept."""
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable):
        raise TypeError(f"tools is a list of tool dicts, got {type(tools).__name__}")
    table: dict[str, object] = {}
    for index, tool in enumerate(tools):
        function = tool.get("function", tool) if isinstance(tool, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise TypeError(
                f"tools[{index}] is no tool: expected {{'type': 'function', 'function': {{'name': ..., "
                f"'parameters': ...}}}} or {{'name': ..., 'parameters': ...}}, got {_short(tool)}"
            )
        table.setdefault(function["name"], function.get("parameters"))
    return table


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class ArgumentTypes:
    """The tools' parameter schemas, by name: types the text values of the calls of a text-valued format."""

    def __init__(self, parameters: Mapping[str, object]) -> None:
        self.parameters = dict(parameters)

    def call(self, call: ParsedToolCall) -> ParsedToolCall:
        """call with each text value read by its parameter's schema; call itself for an unknown tool."""
        schema = self.parameters.get(call.name)
        if not isinstance(schema, dict):  # no schema, or none coerce reads (a schema is JSON: dicts)
            return call
        return ParsedToolCall(call.name, coerce_arguments(call.arguments, schema))

    def events(self, events: list[Event]) -> list[Event]:
        """events with each ``ToolCallEvent``'s call typed (its id kept); every other event as it is."""
        if not events:
            return events
        return [
            ToolCallEvent(self.call(event.call), event.id) if type(event) is ToolCallEvent else event
            for event in events
        ]


def argument_types(fmt: Format | None, tools: Iterable[Mapping] | None) -> ArgumentTypes | None:
    """What types fmt's calls by tools; None when nothing would: no tools, or values fmt writes as JSON.

    tools is checked whatever the format (a ``TypeError`` for an entry that
    is no tool), so a wrong list fails alike for every model.
    """
    if tools is None:
        return None
    parameters = tool_parameters(tools)
    if fmt is None or not fmt.values_are_text or not parameters:
        return None
    return ArgumentTypes(parameters)
