"""Tool results and argument values as text the model reads, whatever they hold.

``dispatch`` reports on values a model wrote and results a tool returned,
and either may be hostile: nested thousands of levels deep, holding itself,
an integer too long to print, an object whose ``__str__`` or ``__repr__``
raises. Each function here returns text whatever it is given: none raises
an ``Exception``, so an error about a value can always be reported.

Not handled: a ``BaseException`` that is not an ``Exception``
(``KeyboardInterrupt``) raised by a value's own methods propagates.
"""

from __future__ import annotations

import json
from typing import Any

from templatestudio.coerce import MAX_NESTING

__all__ = ["MAX_RESULT_CONTAINERS", "as_text", "clip", "message_of", "shown", "type_name"]

# A result holding more containers than this is not sent (json.dumps of a
# list that holds itself 60 times over, [l, l], would never finish).
MAX_RESULT_CONTAINERS = 100_000


def type_name(value: Any) -> str:
    try:
        return str(type(value).__name__)
    except Exception:  # noqa: BLE001 - a metaclass may make even this raise
        return "object"


def clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def message_of(error: BaseException) -> str:
    """str(error), or a note saying why it cannot be shown."""
    try:
        return str(error)
    except Exception as failure:  # noqa: BLE001 - the error is reported, not its failure
        return f"(its message cannot be shown: str() raised {type_name(failure)})"


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception as failure:  # noqa: BLE001
        return f"<{type_name(value)} whose repr() raised {type_name(failure)}>"


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
            return f"a {type_name(value)} nested more than {MAX_NESTING} levels deep"
        if containers > MAX_RESULT_CONTAINERS:
            return f"a {type_name(value)} holding more than {MAX_RESULT_CONTAINERS:,} lists and dicts"
        stack.append(_children(child))
        path.append(id(child))
        on_path.add(id(child))
    return None


def shown(value: Any) -> str:
    """A value as the model wrote it, in JSON, cut to 60 characters."""
    problem = _shape_problem(value)
    if problem is not None:
        return f"({problem})"
    try:
        text = json.dumps(value, ensure_ascii=False, default=_safe_repr)
    except Exception:  # noqa: BLE001 - an int too long to print, a dict with odd keys
        text = _safe_repr(value)
    return clip(text)


def as_text(result: object) -> tuple[str, str | None]:
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
        why = f"str() raised {type_name(failure)}: {message_of(failure)}"
        return "", f"a {type_name(result)} that cannot be shown as text ({why})"
