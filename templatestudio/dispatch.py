"""Running a parsed call: arguments typed by the schema, every failure a result the model reads.

Two things go wrong between a parsed call and a Python function. Values
arrive as text where the schema wants a number or a bool (Qwen3-Coder's XML
format writes every value as text, and small models quote numbers:
``"limit": "10"``), and the model names tools or parameters that do not
exist. ``coerce_arguments`` fixes the first with exactly the casting rules
transformers applies in ``parse_response(..., tools=...)``, so a call typed
by a response template and one typed here come out the same.
``dispatch`` turns the second into a ``ToolOutcome`` whose text goes back
to the model as an ordinary tool result, so the model can correct itself
instead of the loop crashing on a ``KeyError`` or ``TypeError``.

Not handled: arrays and nested objects are checked by top-level type only (their
items and properties are not coerced or validated, as in transformers); ``enum`` is
checked, other JSON Schema keywords (``minimum``, ``pattern``, ...) are not;
tools are plain functions, not methods, partials or async functions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

# transformers keeps its casting helpers private. They are imported rather
# than re-written so that the two typing paths cannot drift apart; the
# pinned transformers version and tests/test_dispatch.py's agreement test
# guard the import.
from transformers.utils.chat_parsing.response_parser import _coerce, _schema_types

from templatestudio.tools import ParsedToolCall, tool_result_message, tool_schema

Tool = Callable[..., object]


def coerce_arguments(arguments: dict, parameters_schema: dict) -> dict:
    """A copy of arguments with text values read by the type their schema declares.

    parameters_schema is the ``parameters`` object of a tool schema. A string
    given for a non-string parameter is read as that type (``"10"`` -> 10 for
    an integer, ``"true"`` -> True, ``"[1, 2]"`` -> [1, 2] for an array);
    a string that does not read as the type, a parameter the schema does not
    declare, and every value that is not a string are left as written, for
    ``dispatch`` to reject or accept. The rules are transformers' own, so
    booleans also accept ``"1"``/``"0"`` and integers accept ``"3.0"``.
    """
    properties = parameters_schema.get("properties")
    typed = dict(arguments)
    if not isinstance(properties, dict):
        return typed
    for key, value in arguments.items():
        types = _schema_types(properties.get(key))
        if not types:
            continue
        if isinstance(value, str):
            typed[key] = _coerce(value, types)
        elif isinstance(value, list) and "array" not in types:
            # A parameter written twice arrives as a list; transformers types each copy.
            typed[key] = [_coerce(item, types) if isinstance(item, str) else item for item in value]
    return typed


@dataclass(frozen=True)
class ToolOutcome:
    """What one dispatched call produced.

    content is the string the model reads as the tool's result; is_error
    says whether it describes a failure; arguments are the typed arguments
    the tool ran with (as written when it never ran), which is what belongs
    in the conversation history.
    """

    name: str
    arguments: dict
    content: str
    is_error: bool

    def message(self) -> dict:
        """The tool turn that carries this outcome back to the model."""
        return tool_result_message(self.name, self.content)


def dispatch(call: ParsedToolCall, tools: Iterable[Tool]) -> ToolOutcome:
    """Run call against the tool it names, or explain to the model why not.

    Checked in order: the tool exists; the arguments, after
    ``coerce_arguments``, name only declared parameters, include every
    required one and have the declared types; then the function runs. Any of
    these failing, or the function raising an ``Exception``, gives an error
    outcome whose content starts with ``error:``. A successful result is sent
    as is when it is a str, as JSON when it serialises, and as ``str()``
    otherwise. ``BaseException``s that are not ``Exception`` (KeyboardInterrupt)
    propagate.
    """
    registry = {tool_schema(fn)["function"]["name"]: fn for fn in tools}
    function = registry.get(call.name)
    if function is None:
        available = ", ".join(sorted(registry)) or "none"
        return _error(call.name, call.arguments, f"unknown tool {call.name!r}; available: {available}")
    parameters = tool_schema(function)["function"].get("parameters", {})
    arguments = coerce_arguments(call.arguments, parameters)
    problems = argument_problems(arguments, parameters)
    if problems:
        return _error(call.name, arguments, f"{call.name}: " + "; ".join(problems))
    try:
        result = function(**arguments)
    except Exception as exc:  # the model reads what went wrong and may retry
        return _error(call.name, arguments, f"{call.name} raised {type(exc).__name__}: {exc}")
    return ToolOutcome(call.name, arguments, _as_text(result), is_error=False)


def argument_problems(arguments: dict, parameters_schema: dict) -> list[str]:
    """Why arguments cannot be passed to a tool with this schema; empty when they can.

    Unknown parameters come first, then missing required ones, then values of
    the wrong type or outside an ``enum``, each naming the parameter.
    """
    properties = parameters_schema.get("properties") or {}
    required = parameters_schema.get("required") or []
    accepted = ", ".join(properties) or "none"
    problems = [
        f"unknown parameter {key!r} (accepts: {accepted})" for key in arguments if key not in properties
    ]
    problems += [
        f"missing required parameter {key!r}" for key in required if key not in arguments
    ]
    for key, value in arguments.items():
        schema = properties.get(key)
        if schema is None:
            continue
        types = _schema_types(schema)
        if types and not any(_has_type(value, name) for name in types):
            problems.append(
                f"parameter {key!r} must be {' or '.join(types)}, got {_json_type(value)} {_shown(value)}"
            )
        elif "enum" in schema and value not in schema["enum"]:
            choices = ", ".join(json.dumps(choice) for choice in schema["enum"])
            problems.append(f"parameter {key!r} must be one of {choices}, got {_shown(value)}")
    return problems


def _has_type(value: Any, name: str) -> bool:
    # bool is an int subclass in Python but never a JSON number.
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    checks = {"string": str, "boolean": bool, "array": list, "object": dict}
    if name in checks:
        return isinstance(value, checks[name])
    if name == "null":
        return value is None
    return True  # a type name this module does not know is not grounds to refuse


def _json_type(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _has_type(value, name):
            return name
    return type(value).__name__


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 60 else text[:57] + "..."


def _as_text(result: object) -> str:
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(result)


def _error(name: str, arguments: dict, description: str) -> ToolOutcome:
    return ToolOutcome(name, arguments, f"error: {description}", is_error=True)
