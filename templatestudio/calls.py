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
