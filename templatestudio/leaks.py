"""Finding tool calls that no parser read, whatever format they are written in.

The course's ``looks_like_tool_call`` looks for a quoted ``"name"`` and a
quoted ``"arguments"``. Gemma 4 quotes nothing (``call:NAME{key:<|"|>v<|"|>}``),
Llama 3 writes ``"parameters"``, Qwen3-Coder writes XML, Mistral and Llama
announce calls with special tokens: a call in any of those shapes passes
that check and reaches the user as text. ``find_call_markers`` knows the
opening of a call in every registered format, and
``assert_no_unparsed_markers`` raises when a parser left one of them
unread.

A marker is only the opening of a call, and each is checked a few
characters past its literal so that prose which merely names a tag
("Qwen wraps calls in <tool_call> tags") is not flagged:

- ``<tool_call>`` then ``{`` or ``<function=`` (hermes, qwen-xml)
- ``<function=NAME>`` (qwen-xml without its wrapper)
- ``<|tool_call>call:`` (gemma4)
- ``[TOOL_CALLS]`` then ``[``, ``{`` or ``NAME[ARGS]``/``NAME[CALL_ID]`` (mistral)
- ``<|python_tag|>`` then ``{`` or ``name(`` (llama3-json, Llama built-ins)
- ``<|tool_call_start|>`` then ``[`` (pythonic, LFM2's wrapper)
- a fenced ``json`` block opening ``{"name": "…", "arguments"|"parameters":`` (fenced-json)
- a reply that opens with that same object, bare (llama3-json)
- a reply that opens with ``[name(`` (pythonic)

The special-token openers also count when only whitespace follows them to
the end of the text: that is a call cut off by the length limit.

Each opening is written once, as a ``templatestudio.resumable_match``
pattern: its regex (possessive runs, one whitespace run wherever JSON
allows one, so no two runs compete for the same characters) searches whole
texts in linear time, and its automaton lets ``ToolCallStream`` read an
opening chunk by chunk without going back to its start.

Not detected: a JSON call in a fenced block with the keys in another order
or a ``"type"`` other than ``"function"``; a call written mid-reply without
any marker (bare JSON after prose), which no format writes; a bare JSON or
pythonic reply cut off before its first argument key.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import accumulate

import regex

from templatestudio.resumable_match import (
    Automaton,
    Pattern,
    chars,
    either,
    literal,
    optional,
    run,
    sequence,
)
from templatestudio.tools import UnparsedToolCall

_SPACES = run(chars(r"\s"))
_NAME_START = chars(r"[A-Za-z_]")
_JSON_STRING = sequence(literal('"'), run(chars(r'[^"\\\n]')), literal('"'))


def _json_token(text: str) -> Pattern:
    """text followed by optional whitespace, as JSON allows between tokens."""
    return sequence(literal(text), _SPACES)


_JSON_CALL_OPENING = sequence(
    _json_token("{"),
    optional(sequence(_json_token('"type"'), _json_token(":"), _json_token('"function"'), _json_token(","))),
    _json_token('"name"'),
    _json_token(":"),
    _JSON_STRING,
    _SPACES,
    _json_token(","),
    either(literal('"arguments"'), literal('"parameters"')),
    _SPACES,
    literal(":"),
)


@dataclass(frozen=True)
class MarkerRule:
    """How one kind of call opens.

    literal: the fixed text every such call starts with (what the stream
    watches for); opening: the pattern that decides, from the literal on,
    whether this is a call (``pattern`` is its regex, ``compiled`` that regex
    compiled, ``automaton`` the form a stream feeds chunk by chunk);
    truncated: whether the literal followed only by whitespace up to the end
    of the text is a call cut short; start_only: whether the call can only
    open a reply; formats: the registry names of the formats that write it.
    """

    literal: str
    opening: Pattern
    truncated: bool
    start_only: bool
    formats: tuple[str, ...]

    @property
    def pattern(self) -> str:
        return self.opening.regex

    @property
    def compiled(self) -> regex.Pattern:
        return _COMPILED[self.literal, self.start_only]

    @property
    def automaton(self) -> Automaton:
        return _AUTOMATA[self.literal, self.start_only]

    @property
    def at_end(self) -> regex.Pattern | None:
        return _AT_END.get(self.literal)


def _after(opener: str, *rest: Pattern) -> Pattern:
    return sequence(literal(opener), *rest)


MARKER_RULES: tuple[MarkerRule, ...] = (
    MarkerRule(
        "<tool_call>",
        _after("<tool_call>", _SPACES, either(literal("{"), literal("<function="))),
        True,
        False,
        ("hermes", "qwen-xml"),
    ),
    MarkerRule(
        "<function=",
        _after("<function=", _NAME_START, run(chars(r"[\w.\-]")), literal(">")),
        False,
        False,
        ("qwen-xml",),
    ),
    MarkerRule("<|tool_call>", literal("<|tool_call>call:"), True, False, ("gemma4",)),
    MarkerRule(
        "[TOOL_CALLS]",
        _after(
            "[TOOL_CALLS]",
            _SPACES,
            either(
                chars(r"[\[{]"),
                sequence(
                    run(chars(r"[\w.\-]"), at_least=1),
                    literal("["),
                    either(literal("ARGS"), literal("CALL_ID")),
                    literal("]"),
                ),
            ),
        ),
        True,
        False,
        ("mistral",),
    ),
    MarkerRule(
        "<|python_tag|>",
        _after(
            "<|python_tag|>",
            _SPACES,
            either(literal("{"), sequence(_NAME_START, run(chars(r"[\w.]")), literal("("))),
        ),
        True,
        False,
        ("llama3-json",),
    ),
    MarkerRule(
        "<|tool_call_start|>",
        _after("<|tool_call_start|>", _SPACES, literal("[")),
        True,
        False,
        ("pythonic",),
    ),
    # Whatever whitespace sits between the fence and the object (the fence's
    # own line break included) is one run, so no two runs compete for it.
    MarkerRule("```json", _after("```json", _SPACES, _JSON_CALL_OPENING), False, False, ("fenced-json",)),
    MarkerRule("{", _JSON_CALL_OPENING, False, True, ("llama3-json",)),
    MarkerRule(
        "[", _after("[", _SPACES, _NAME_START, run(chars(r"[\w.]")), literal("(")), False, True, ("pythonic",)
    ),
)

_COMPILED = {(rule.literal, rule.start_only): regex.compile(rule.pattern) for rule in MARKER_RULES}
_AUTOMATA = {(rule.literal, rule.start_only): Automaton(rule.opening) for rule in MARKER_RULES}
_AT_END = {
    rule.literal: regex.compile(regex.escape(rule.literal) + r"\s*+\Z")
    for rule in MARKER_RULES
    if rule.truncated
}
_ANYWHERE = [rule for rule in MARKER_RULES if not rule.start_only]
_LITERALS = regex.compile("|".join(regex.escape(rule.literal) for rule in _ANYWHERE))
START_RULES = tuple(rule for rule in MARKER_RULES if rule.start_only)
REPLY_OPENING = Automaton(either(*(rule.opening for rule in START_RULES)))
"""Whether a reply's first non-whitespace characters open a bare call (any start-only rule)."""


@dataclass(frozen=True)
class Marker:
    """The opening of a tool call found in text: the marker text and where it starts."""

    text: str
    offset: int
    formats: tuple[str, ...]


def find_call_markers(text: str, *, at_reply_start: bool = True) -> list[Marker]:
    """Every place in text where a tool call opens, in order of offset.

    at_reply_start says whether text is the beginning of a reply (leading
    whitespace allowed); only then can a bare JSON or pythonic reply be a
    call. Marker.text is the literal that opens the call (``{`` and ``[`` for
    the bare shapes).
    """
    markers = []
    if at_reply_start:
        start = len(text) - len(text.lstrip())
        for rule in MARKER_RULES:
            if rule.start_only and rule.compiled.match(text, start):
                markers.append(Marker(rule.literal, start, rule.formats))
    for found in _LITERALS.finditer(text, overlapped=True):
        rule = _rule_for(found.group())
        if rule.compiled.match(text, found.start()) or (
            rule.at_end is not None and rule.at_end.match(text, found.start())
        ):
            markers.append(Marker(rule.literal, found.start(), rule.formats))
    return sorted(markers, key=lambda marker: marker.offset)


def _rule_for(literal: str) -> MarkerRule:
    return next(rule for rule in _ANYWHERE if rule.literal == literal)


def unconsumed_markers(
    text: str, spans: Iterable, *, at_reply_start: bool = True
) -> list[Marker]:
    """The markers in text that start outside every consumed span.

    spans are objects with ``start`` and ``end`` (a format's ``CallSpan``)
    or ``(start, end)`` pairs, in text's offsets.
    """
    ranges = sorted(_bounds(span) for span in spans)
    starts = [start for start, _ in ranges]
    # reach[i]: the furthest end among the first i + 1 spans, so one bisect
    # per marker answers whether any span covers it.
    reach = list(accumulate((end for _, end in ranges), max))
    leftover = []
    for marker in find_call_markers(text, at_reply_start=at_reply_start):
        covering = bisect_right(starts, marker.offset) - 1
        if covering < 0 or reach[covering] <= marker.offset:
            leftover.append(marker)
    return leftover


def assert_no_unparsed_markers(
    text: str,
    spans: Iterable,
    reader: object = None,
    *,
    at_reply_start: bool = True,
    offset: int = 0,
) -> None:
    """Raise UnparsedToolCall for the first call marker no span consumed.

    reader names what parsed text (a format, a parser or a string) in the
    message; offset is added to reported offsets when text is a slice of a
    longer reply.
    """
    leftover = unconsumed_markers(text, spans, at_reply_start=at_reply_start)
    if leftover:
        first = leftover[0]
        raise UnparsedToolCall(
            f"{_reader_name(reader)} left a tool call unread: {first.text!r} at offset "
            f"{first.offset + offset} opens a call in the {'/'.join(first.formats)} format"
        )


def _bounds(span: object) -> tuple[int, int]:
    if isinstance(span, tuple):
        return span
    return span.start, span.end


def _reader_name(reader: object) -> str:
    if reader is None:
        return "the parser"
    if isinstance(reader, str):
        return reader
    name = getattr(reader, "name", None)
    if isinstance(name, str):
        return f"the {name} format"
    return type(reader).__name__
