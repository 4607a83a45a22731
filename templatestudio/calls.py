"""The types every layer shares: a parsed call, where it sits, and the two refusals.

This is the bottom of the package: it imports nothing from it. The course
module ``tools`` re-exports ``ParsedToolCall`` and ``UnparsedToolCall`` under
the names the tutorial gives them; they are defined here so that the format
readers, which sit above ``tools``, never have to import the course module.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ParsedToolCall:
    name: str
    arguments: dict


class UnparsedToolCall(ValueError):
    """Raised when output looks like a tool call but the parser found none."""


class NoToolCallFormat(ValueError):
    """A chat template that writes no tool call in any format this package reads."""


@dataclass(frozen=True)
class CallSpan:
    """One call found in a text, where it sits, and its id when the format writes one.

    start is the offset of the call's opening marker, end the offset just
    past its closing text. Several calls opened by one marker (a JSON list
    after Mistral's ``[TOOL_CALLS]``) share one span.
    """

    call: ParsedToolCall
    start: int
    end: int
    id: str | None = None


def filler(cls: type, fields: tuple[str, ...]):
    """How to make an instance of the dataclass cls without its ``__init__``: ``object.__new__``.

    The caller then writes each of fields into the new instance's
    ``__dict__``, which is all a dataclass's ``__init__`` amounts to; a
    frozen one writes each field with ``object.__setattr__``, and a reader
    that makes thousands of events or spans spends half its time there.
    Refused (TypeError) unless cls is a dataclass with exactly these fields,
    no slots and no ``__post_init__``; ``tests/test_canonical_runs.py``
    checks the result equals the constructor's.
    """
    declared = getattr(cls, "__dataclass_fields__", None)
    if (declared is None or tuple(declared) != fields or hasattr(cls, "__slots__")
            or hasattr(cls, "__post_init__")):
        raise TypeError(f"{cls.__name__} cannot be made by filling its fields")
    return object.__new__


_NEW_SPAN = filler(CallSpan, ("call", "start", "end", "id"))


def region_spans(calls, length: int) -> list[CallSpan]:
    """One span (0, length, no id) per call: the calls of one region, a list one marker opened.

    The same spans ``CallSpan(call, 0, length)`` makes, made by filling
    their fields (see ``filler``).
    """
    spans = []
    append = spans.append
    new = _NEW_SPAN
    for call in calls:
        span = new(CallSpan)
        fields = span.__dict__
        fields["call"] = call
        fields["start"] = 0
        fields["end"] = length
        fields["id"] = None
        append(span)
    return spans
