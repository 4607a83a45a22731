"""The types every layer shares: a parsed call, where it sits, and the two refusals.

This is the bottom of the package: it imports nothing from it. The course
module ``tools`` re-exports ``ParsedToolCall`` and ``UnparsedToolCall`` under
the names the tutorial gives them; they are defined here so that the format
readers, which sit above ``tools``, never have to import the course module.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat


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
    """A function making instances of the dataclass cls in bulk, without their ``__init__``.

    ``make(*columns)`` takes one iterable per field (in fields' order) and
    returns the list of instances, one per row. A frozen dataclass's
    ``__init__`` writes each field with ``object.__setattr__``, and a reader
    that makes thousands of events or spans spent half its time there; a
    function call per instance still costs a twentieth of a run's reading.
    So the instances are made in one loop here, with ``object.__new__``, their
    values written into ``__dict__`` (all ``__init__`` amounts to): this is
    the one place in the package that fills a dataclass that way. Refused
    (TypeError) unless cls is a dataclass with exactly these fields, two or
    four of them (the event and the span), no slots and no
    ``__post_init__``; ``tests/test_canonical_runs.py`` checks the result
    equals the constructor's.
    """
    declared = getattr(cls, "__dataclass_fields__", None)
    if (declared is None or tuple(declared) != fields or hasattr(cls, "__slots__")
            or hasattr(cls, "__post_init__") or len(fields) not in (2, 4)):
        raise TypeError(f"{cls.__name__} cannot be made by filling its fields")
    new = object.__new__
    if len(fields) == 2:
        first, second = fields

        def make_two(firsts, seconds) -> list:
            made = []
            append = made.append
            for one, two in zip(firsts, seconds):
                item = new(cls)
                state = item.__dict__
                state[first] = one
                state[second] = two
                append(item)
            return made

        return make_two
    first, second, third, fourth = fields

    def make_four(firsts, seconds, thirds, fourths) -> list:
        made = []
        append = made.append
        for one, two, three, four in zip(firsts, seconds, thirds, fourths):
            item = new(cls)
            state = item.__dict__
            state[first] = one
            state[second] = two
            state[third] = three
            state[fourth] = four
            append(item)
        return made

    return make_four


_make_spans = filler(CallSpan, ("call", "start", "end", "id"))


def region_spans(calls, length: int) -> list[CallSpan]:
    """One span (0, length, no id) per call: the calls of one region, a list one marker opened.

    The same spans ``CallSpan(call, 0, length)`` makes, made by ``filler``
    (a list of thousands of calls).
    """
    return _make_spans(calls, repeat(0), repeat(length), repeat(None))
