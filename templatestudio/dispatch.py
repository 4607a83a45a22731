"""Running a parsed call: arguments typed by the schema, every failure a result the model reads.

Two things go wrong between a parsed call and a Python function. Values
arrive as text where the schema wants a number or a bool (Qwen3-Coder's XML
format writes every value as text, and small models quote numbers:
``"limit": "10"``), and the model names tools or parameters that do not
exist. ``coerce_arguments`` (``templatestudio.coerce``) fixes the first
with the casting rules transformers applies in ``parse_response(...,
tools=...)``, so a call typed by a response template and one typed here
come out the same (where they differ, this side keeps the text: see
``templatestudio.coerce``). ``dispatch`` turns the second into a
``ToolOutcome`` whose text goes back to the model as an ordinary tool
result, so the model can correct itself instead of the loop crashing on a
``KeyError`` or ``TypeError``.

Whatever the arguments, the tool's result or its exception hold (values
nested thousands of levels deep, objects whose ``__str__`` or ``__repr__``
raises, integers too long to print), ``dispatch`` returns a ``ToolOutcome``
the model can read; only ``BaseException``s that are not ``Exception``
propagate.

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

from templatestudio.coerce import MAX_NESTING, coerce_arguments, schema_types
from templatestudio.tools import ParsedToolCall, tool_result_message, tool_schema

__all__ = ["Tool", "ToolOutcome", "argument_problems", "coerce_arguments", "dispatch"]

Tool = Callable[..., object]
# A result holding more containers than this is not sent (json.dumps of a
# list that holds itself 60 times over, [l, l], would never finish).
MAX_RESULT_CONTAINERS = 100_000


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
    otherwise; a result that cannot be shown as text (nested more than
    ``MAX_NESTING`` levels, holding more than ``MAX_RESULT_CONTAINERS``
    containers, or whose ``str()`` raises) gives an error outcome saying so.
    ``BaseException``s that are not ``Exception`` (KeyboardInterrupt)
    propagate.
    """
    registry = {tool_schema(fn)["function"]["name"]: fn for fn in tools}
    function = registry.get(call.name)
    if function is None:
        available = ", ".join(sorted(registry)) or "none"
        unknown = f"unknown tool {_clip(repr(call.name))}; available: {available}"
        return _error(call.name, call.arguments, unknown)
    parameters = tool_schema(function)["function"].get("parameters", {})
    arguments = coerce_arguments(call.arguments, parameters)
    problems = argument_problems(arguments, parameters)
    if problems:
        return _error(call.name, arguments, f"{call.name}: " + "; ".join(problems))
    try:
        result = function(**arguments)
    except Exception as exc:  # the model reads what went wrong and may retry
        return _error(call.name, arguments, f"{call.name} raised {_type_name(exc)}: {_message(exc)}")
    text, problem = _as_text(result)
    if problem is not None:
        return _error(call.name, arguments, f"{call.name} returned {problem}")
    return ToolOutcome(call.name, arguments, text, is_error=False)


def argument_problems(arguments: dict, parameters_schema: dict) -> list[str]:
    """Why arguments cannot be passed to a tool with this schema; empty when they can.

    Unknown parameters come first, then missing required ones, then values of
    the wrong type or outside an ``enum``, each naming the parameter.
    """
    properties = parameters_schema.get("properties") or {}
    required = parameters_schema.get("required") or []
    accepted = ", ".join(properties) or "none"
    problems = [
        f"unknown parameter {_clip(repr(key))} (accepts: {accepted})"
        for key in arguments
        if key not in properties
    ]
    problems += [
        f"missing required parameter {key!r}" for key in required if key not in arguments
    ]
    for key, value in arguments.items():
        schema = properties.get(key)
        if schema is None:
            continue
        types = schema_types(schema)
        if types and not any(_has_type(value, name) for name in types):
            expected = " or ".join(types)
            problems.append(f"parameter {key!r} must be {expected}, got {_json_type(value)} {_shown(value)}")
        elif "enum" in schema and not _in_enum(value, schema["enum"]):
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
    return _type_name(value)


def _in_enum(value: Any, choices: Any) -> bool:
    try:
        return value in choices
    except Exception:  # noqa: BLE001 - a value whose __eq__ raises equals no choice
        return False


# --- showing values that may be hostile ------------------------------------------
# Each helper below returns text whatever it is given: it never raises an
# Exception, so an error about a value can always be reported.


def _type_name(value: Any) -> str:
    try:
        return str(type(value).__name__)
    except Exception:  # noqa: BLE001 - a metaclass may make even this raise
        return "object"


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _message(error: BaseException) -> str:
    """str(error), or a note saying why it cannot be shown."""
    try:
        return str(error)
    except Exception as failure:  # noqa: BLE001 - the error is reported, not its failure
        return f"(its message cannot be shown: str() raised {_type_name(failure)})"


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception as failure:  # noqa: BLE001
        return f"<{_type_name(value)} whose repr() raised {_type_name(failure)}>"


_CONTAINERS = (dict, list, tuple)
_END = object()


def _children(container: Any):
    # The base types' own iterators: a subclass's __iter__ is not called.
    if isinstance(container, dict):
        return iter(dict.values(container))
    return list.__iter__(container) if isinstance(container, list) else tuple.__iter__(container)


def _shape_problem(value: Any) -> str | None:
    """Why value is too deep or too large to serialise, or None.

    Walked by hand, so that it never recurses. A container holding itself
    is not walked again: json.dumps refuses it and str() shows it as [...].
    """
    if not isinstance(value, _CONTAINERS):
        return None
    stack, path, containers = [_children(value)], [id(value)], 1
    on_path = set(path)
    while stack:
        child = next(stack[-1], _END)
        if child is _END:
            stack.pop()
            on_path.discard(path.pop())
            continue
        if not isinstance(child, _CONTAINERS) or id(child) in on_path:
            continue
        containers += 1
        if len(stack) >= MAX_NESTING:
            return f"a {_type_name(value)} nested more than {MAX_NESTING} levels deep"
        if containers > MAX_RESULT_CONTAINERS:
            return f"a {_type_name(value)} holding more than {MAX_RESULT_CONTAINERS:,} lists and dicts"
        stack.append(_children(child))
        path.append(id(child))
        on_path.add(id(child))
    return None


def _shown(value: Any) -> str:
    """A value as the model wrote it, in JSON, cut to 60 characters."""
    problem = _shape_problem(value)
    if problem is not None:
        return f"({problem})"
    try:
        text = json.dumps(value, ensure_ascii=False, default=_safe_repr)
    except Exception:  # noqa: BLE001 - an int too long to print, a dict with odd keys
        text = _safe_repr(value)
    return _clip(text)


def _as_text(result: object) -> tuple[str, str | None]:
    """(text the model reads, None), or ("", what the result is) when it cannot be shown."""
    if isinstance(result, str):
        return str.__str__(result), None  # a plain copy: a subclass's __str__ is not called
    problem = _shape_problem(result)
    if problem is not None:
        return "", f"{problem}, which cannot be sent as text"
    try:
        return json.dumps(result, ensure_ascii=False), None
    except Exception:  # noqa: BLE001 - not JSON: fall back to str()
        pass
    try:
        return str(result), None
    except Exception as failure:  # noqa: BLE001
        why = f"str() raised {_type_name(failure)}: {_message(failure)}"
        return "", f"a {_type_name(result)} that cannot be shown as text ({why})"


def _error(name: str, arguments: dict, description: str) -> ToolOutcome:
    return ToolOutcome(name, arguments, f"error: {description}", is_error=True)
