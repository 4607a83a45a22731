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
checked (by JSON's equality), other JSON Schema keywords (``minimum``, ``pattern``,
...) are not; tools are plain functions, not methods, partials or async functions, and
not functions taking ``*args``, ``**kwargs`` or positional-only parameters
(``tool_registry`` refuses them).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from templatestudio.coerce import coerce_arguments, schema_types
from templatestudio.shown_values import as_text, clip, message_of, shown, type_name
from templatestudio.tools import ParsedToolCall, tool_result_message, tool_schema

__all__ = ["Tool", "ToolOutcome", "argument_problems", "coerce_arguments", "dispatch", "tool_registry"]

Tool = Callable[..., object]


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
    (``templatestudio.shown_values``)
    containers, or whose ``str()`` raises) gives an error outcome saying so.
    ``BaseException``s that are not ``Exception`` (KeyboardInterrupt)
    propagate.

    Only a value of no type its schema admits is read as one: ``"007"``
    for a parameter of ``["integer", "string"]`` stays the string the model
    wrote. (Formats that write every value as text are typed by the reader,
    which knows the format: ``read_tool_calls(..., tools=)``.) The function
    gets its own copy of the arguments' lists and dicts, so a tool that
    changes them changes neither the call nor the history.

    Raises ``TypeError`` for what is the caller's mistake, not the model's:
    a call whose name is not a str or whose arguments are not a dict (a
    JSON string goes through ``values.as_arguments`` first), and the
    ``tool_registry`` errors for tools.
    """
    if not isinstance(call.name, str) or not isinstance(call.arguments, dict):
        raise TypeError(f"dispatch takes a ParsedToolCall of a str name and dict arguments, got name "
                        f"{type_name(call.name)} and arguments {type_name(call.arguments)}")
    registry = _registered(tools)
    if call.name not in registry:
        available = ", ".join(sorted(registry)) or "none"
        unknown = f"unknown tool {clip(repr(call.name))}; available: {available}"
        return _error(call.name, call.arguments, unknown)
    function, schema = registry[call.name]
    parameters = schema["function"].get("parameters", {})
    arguments = _typed(call.arguments, parameters)
    problems = argument_problems(arguments, parameters, written=call.arguments)
    if problems:
        return _error(call.name, call.arguments, f"{call.name}: " + "; ".join(problems))
    try:
        result = function(**_copied(arguments))
    except Exception as exc:  # the model reads what went wrong and may retry
        return _error(call.name, arguments, f"{call.name} raised {type_name(exc)}: {message_of(exc)}")
    text, problem = as_text(result)
    if problem is not None:
        return _error(call.name, arguments, f"{call.name} returned {problem}")
    return ToolOutcome(call.name, arguments, text, is_error=False)


def tool_registry(tools: Iterable[Tool]) -> dict[str, Tool]:
    """Each tool's schema name -> the function, checked so that every call the model can write may run.

    Raises ``TypeError`` for a function whose parameters a call cannot fill
    (``*args``, ``**kwargs``, positional-only: a call's arguments are named
    values, and transformers' schema would list ``args`` as a parameter
    that then lands in the wrong place) and ``ValueError`` when two tools
    share a name (the model could not tell them apart; which one ran
    would depend on their order). Schema errors are transformers'
    (``DocstringParsingException``, ``TypeHintParsingException``).
    """
    return {name: fn for name, (fn, _) in _registered(tools).items()}


def _registered(tools: Iterable[Tool]) -> dict[str, tuple[Tool, dict]]:
    """``tool_registry`` keeping each tool's schema beside it, so that dispatch builds it once."""
    registry: dict[str, tuple[Tool, dict]] = {}
    repeated: list[str] = []
    for fn in tools:
        schema = tool_schema(fn)
        name = schema["function"]["name"]
        unfit = [parameter.name for parameter in inspect.signature(fn).parameters.values()
                 if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)]
        if unfit:
            raise TypeError(f"tool {name!r} takes {', '.join(unfit)} as *args, **kwargs or positional-only: "
                            "a call's arguments are named values, so write each as a named parameter")
        if name in registry:
            repeated.append(name)
        registry[name] = (fn, schema)
    if repeated:
        raise ValueError(f"two tools share a name: {', '.join(sorted(set(repeated)))}; "
                         "the model could not tell them apart")
    return registry


def _typed(arguments: dict, parameters_schema: dict) -> dict:
    """arguments with each value of no type its schema admits read by ``coerce_arguments``; others as written."""
    properties = parameters_schema.get("properties") if isinstance(parameters_schema, dict) else None
    if not isinstance(properties, dict):
        return dict(arguments)
    untyped = {key: value for key, value in arguments.items()
               if not any(_has_type(value, name) for name in schema_types(properties.get(key)))}
    typed = coerce_arguments(untyped, parameters_schema)
    return {key: typed.get(key, value) if key in untyped else value for key, value in arguments.items()}


def _copied(value: Any) -> Any:
    """A copy of value's dicts and lists all the way down, sharing and cycles kept as in value.

    By hand, with a memo of what was copied: values may nest deeper than
    the stack, share one list 2**64 ways over, or hold themselves.
    """
    if type(value) is not dict and type(value) is not list:
        return value
    memo = {id(value): dict(value) if type(value) is dict else list(value)}
    pending = [memo[id(value)]]
    while pending:
        container = pending.pop()
        keys = list(container) if type(container) is dict else range(len(container))
        for key in keys:
            child = container[key]
            if type(child) is dict or type(child) is list:
                if id(child) not in memo:
                    memo[id(child)] = dict(child) if type(child) is dict else list(child)
                    pending.append(memo[id(child)])
                container[key] = memo[id(child)]
    return memo[id(value)]


def argument_problems(arguments: dict, parameters_schema: dict, *, written: dict | None = None) -> list[str]:
    """Why arguments cannot be passed to a tool with this schema; empty when they can.

    Unknown parameters come first, then missing required ones, then values of
    the wrong type or outside an ``enum``, each naming the parameter. Values
    are shown as in written (the arguments as the model wrote them, before
    typing) when given. A schema that is not a dict, or a parameter's
    schema that is not one (JSON Schema's ``true``), constrains nothing.
    """
    if not isinstance(parameters_schema, dict):
        return []
    properties = parameters_schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = parameters_schema.get("required")
    required = required if isinstance(required, list) else []
    as_given = arguments if written is None else written
    accepted = ", ".join(properties) or "none"
    problems = [
        f"unknown parameter {clip(repr(key))} (accepts: {accepted})"
        for key in arguments
        if key not in properties
    ]
    problems += [
        f"missing required parameter {key!r}" for key in required if key not in arguments
    ]
    for key, value in arguments.items():
        schema = properties.get(key)
        if not isinstance(schema, dict):
            continue
        types = schema_types(schema)
        as_written = as_given.get(key, value)
        if types and not any(_has_type(value, name) for name in types):
            expected = " or ".join(types)
            problems.append(f"parameter {key!r} must be {expected}, got {_json_type(as_written)} {shown(as_written)}")
        elif "enum" in schema and not _in_enum(value, schema["enum"]):
            choices = ", ".join(shown(choice) for choice in schema["enum"]) if isinstance(schema["enum"], list) \
                else shown(schema["enum"])
            problems.append(f"parameter {key!r} must be one of {choices}, got {shown(as_written)}")
    return problems


def _has_type(value: Any, name: str) -> bool:
    # bool is an int subclass in Python but never a JSON number; NaN and the infinities are no JSON number.
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and math.isfinite(value))
    checks = {"string": str, "boolean": bool, "array": list, "object": dict}
    if name in checks:
        return isinstance(value, checks[name])
    if name == "null":
        return value is None
    return True  # a type name this module does not know is not grounds to refuse


def _json_type(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "non-finite number"
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _has_type(value, name):
            return name
    return type_name(value)


def _in_enum(value: Any, choices: Any) -> bool:
    """Whether value is one of choices by JSON's equality: true is not 1, 1 is 1.0, containers by their members."""
    if not isinstance(choices, list):
        return False
    return any(_json_equal(value, choice) for choice in choices)


def _json_equal(value: Any, choice: Any) -> bool:
    # Recursion follows the choice, which comes from the schema (shallow), not the model's value.
    if isinstance(choice, bool) or choice is None or isinstance(choice, str):
        return type(value) is type(choice) and value == choice
    if isinstance(choice, (int, float)):
        return isinstance(value, (int, float)) and not isinstance(value, bool) and value == choice
    if isinstance(choice, list):
        return isinstance(value, list) and len(value) == len(choice) and all(map(_json_equal, value, choice))
    if isinstance(choice, dict):
        return isinstance(value, dict) and value.keys() == choice.keys() and all(
            _json_equal(value[key], choice[key]) for key in choice)
    return False


def _error(name: str, arguments: dict, description: str) -> ToolOutcome:
    return ToolOutcome(name, arguments, f"error: {description}", is_error=True)
