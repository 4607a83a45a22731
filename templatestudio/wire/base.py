"""What one wire format is made of: the pieces every format module fills in.

A ``Format`` holds everything the package knows about one way of writing a
tool call: the openers (literal text plus the pattern that says a call, not
prose, starts there), how far a call reaches once opened (its extent), the
strict reader of one call region, the reasoning channel of the families that
write it (one pair written, others read: ``reasoning_pairs``), the response
template where one can express the shape, the values the wire cannot carry,
and samples (valid calls and near misses) that the tests and benchmarks
draw on. ``templatestudio.engine`` runs these pieces;
nothing outside a format's module knows a fact about its wire shape.

A format module builds its ``Format`` with ``Format.declared(WIRE, ...)``
from its declared wire shape (``wire.shape.WireShape``): the writer, the
markers, the closers and the reasoning pairs come from the declaration, and
the openers and reader too where the declaration can say them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import regex

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.resumable_match import Automaton, Pattern, chars, literal, run, sequence
from templatestudio.wire.final_matches import HeldRun, whole_pattern

# JSON's own whitespace, and the only whitespace any marker pattern allows:
# one definition, so no two readers disagree on what \s means.
WS = "[ \t\n\r]"
SPACES = run(chars(WS))
JSON_SPACE = " \t\n\r"
# Markup: an angle-bracketed or bar-delimited token, or a bracketed upper-case
# word ([TOOL_CALLS]). A literal with none of it ({, [, ```json, Action:,
# functools[) is text that prose may hold as it is.
MARKUP = regex.compile(r"[<>|\uff5c]|\[[A-Z_]+\]")


class CallSyntaxError(ValueError):
    """Internal: a region that opened as a call is not one the format can read.

    The engine turns it into ``UnparsedToolCall`` with the region's offset.
    """


@dataclass(frozen=True)
class FoundJSON:
    """A JSON value an extent decoded: region[start:end] holds it (offsets from the region's start)."""

    start: int
    value: object
    end: int


@dataclass(frozen=True)
class FoundCalls:
    """The calls an extent read while finding its end; they fill the whole region."""

    spans: list[CallSpan]


Found = FoundJSON | FoundCalls


class Extent:
    """Finds where a call region ends.

    ``advance(buffer, start, final)`` is called with the text so far, the
    region starting at buffer[start] (each call's buffer extends the last
    one), and returns the buffer index just past the region's end, or None
    while it is still open. It keeps its
    place, so every character is examined once whatever the chunking, and
    its answer depends only on the text, never on where chunks were cut.
    """

    examined: int = 0
    # True once the extent ended the region only because the reply ended
    # (a closer that a stop string may have removed): a region its reader
    # then refuses was cut short, and the error says so.
    ended_by_reply: bool = False
    # What the extent already read of its region while finding its end, if
    # anything: the engine hands it to the format's reader as an argument,
    # so a megabyte argument is decoded once, not twice.
    found: Found | None = None

    def advance(self, buffer: str, start: int, final: bool) -> int | None:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True)
class Opener:
    """One way a call of a format opens.

    literal: fixed text every such call starts with; opening: the pattern,
    from the literal's first character, that tells a call from prose naming
    the literal; extent: a factory of the ``Extent`` that finds the call's
    end; start_only: the call can only open a reply (after whitespace);
    cut_after: how many characters of a still-possible opening make a reply
    that ends there a call cut short rather than prose (default: the
    literal's length). cut_at_line: cut_after for an opening that stands
    at a line start (right after a line break; None: as cut_after), for a
    literal prose names mid-line and ends a reply on (functionary's
    ``<function=``: mid-line never a cut, after a line break one).
    cut_from: or a pattern that a still-possible opening
    has matched from its literal on, for a part whose length varies
    (functionary's ``<function=NAME>{``: the name closed and the body begun).
    """

    literal: str
    opening: Pattern
    extent: Callable[[], Extent]
    start_only: bool = False
    cut_after: int | None = None
    cut_from: Pattern | None = None
    cut_at_line: int | None = None
    automaton: Automaton = field(init=False, repr=False, compare=False)
    compiled: regex.Pattern = field(init=False, repr=False, compare=False)
    cut_compiled: re.Pattern | regex.Pattern | None = field(init=False, repr=False, compare=False)
    held: HeldRun | None = field(init=False, repr=False, compare=False)  # the opening's leading run, if it has one
    cut_held: HeldRun | None = field(init=False, repr=False, compare=False)  # cut_from's

    def __post_init__(self) -> None:
        # Two forms of one pattern: the regex decides at C speed when the text
        # at hand settles it; the automaton resumes, chunk by chunk, when it
        # does not (an opening still arriving).
        object.__setattr__(self, "automaton", Automaton(self.opening))
        object.__setattr__(self, "compiled", regex.compile(self.opening.regex))
        object.__setattr__(self, "cut_compiled", None if self.cut_from is None else whole_pattern(self.cut_from.regex))
        object.__setattr__(self, "held", HeldRun.of(self.opening))
        object.__setattr__(self, "cut_held", None if self.cut_from is None else HeldRun.of(self.cut_from))

    @property
    def cut_length(self) -> int:
        return len(self.literal) if self.cut_after is None else self.cut_after

    def cut_length_at(self, line_start: bool) -> int:
        """cut_length, or cut_at_line for an opening that stands at a line start."""
        return self.cut_at_line if line_start and self.cut_at_line is not None else self.cut_length


def opener_pattern(literal_text: str, *rest: Pattern) -> Pattern:
    return sequence(literal(literal_text), *rest)


@dataclass(frozen=True)
class Sample:
    """A reply and the calls (and ids) a reader must return for it."""

    text: str
    calls: tuple[ParsedToolCall, ...]
    ids: tuple[str | None, ...] = ()
    source: str = ""


@dataclass(frozen=True)
class NearMiss:
    """A reply that is not a readable call: it must raise, or come back as text."""

    text: str
    raises: bool
    why: str


@dataclass(frozen=True)
class WireLimit:
    """Arguments a format cannot carry, with a test on a call's arguments.

    where: "wire" when the wire shape itself cannot carry them (no reader
    could read them back), "response template" when the format's reader
    reads them but its response template cannot. read_as_text: the
    format's reader reads a call with such arguments, written whole, as
    text (Llama 3's schema-shaped arguments are a tool's schema): a run of
    written calls (``canonical_runs``) leaves such a call to the reader.
    """

    description: str
    applies: Callable[[dict], bool]
    where: str = "wire"
    read_as_text: bool = False


def any_string(value: object, predicate: Callable[[str], bool]) -> bool:
    """Whether predicate holds for any string in value, keys included, at any depth."""
    if isinstance(value, str):
        return predicate(value)
    if isinstance(value, dict):
        return any(predicate(key) or any_string(item, predicate) for key, item in value.items())
    if isinstance(value, list):
        return any(any_string(item, predicate) for item in value)
    return False


@dataclass(frozen=True, eq=False)
class Format:
    """One tool-call wire format, complete. Formats compare by identity."""

    name: str
    description: str
    openers: tuple[Opener, ...]
    read_region: Callable[[str, Opener, Found | None], list[CallSpan] | None]
    write_call: Callable[[ParsedToolCall], str]
    closers: tuple[str, ...]
    response_template: dict | None
    no_response_template: str
    reasoning: tuple[str, str] | None
    samples: tuple[Sample, ...]
    near_misses: tuple[NearMiss, ...]
    wire_limits: tuple[WireLimit, ...]
    corpus_labels: tuple[str, ...]
    variants: tuple[str, ...] = ()
    string_arguments: bool = False  # whether values are text to be typed against the schema
    vllm_parser: tuple[str, ...] = ()  # every vLLM tool-parser name that reads this wire (tests/vllm_names.py checks)
    # The declared wire shape (``wire.shape.WireShape``) the parts above come
    # from, when the format was built by ``Format.declared``.
    wire: object = None
    # The template a derived format's shape was read off (``templatestudio.derive``); "" for a registered one.
    derived_from: str = ""

    def __post_init__(self) -> None:
        if self.wire is not None:
            literals = tuple(dict.fromkeys(opener.literal for opener in self.openers))
            if literals != self.wire.markers:
                raise ValueError(f"{self.name}: the openers' literals {literals} are not the declared markers "
                                 f"{self.wire.markers}")

    @classmethod
    def declared(cls, wire, *, openers: tuple[Opener, ...] | None = None, read_region=None, write_call=None,
                 **parts) -> Format:
        """A format whose markers, closers, reasoning and writer come from wire (a ``wire.shape.WireShape``).

        openers and read_region: the module's own, for what the declaration
        cannot say; left out, the shape derives them (it raises
        ``ShapeError`` for a shape it cannot read by itself). write_call:
        the module's own, only where the shape declares the writing
        hand-written. (The shape is handed in, not imported: it sits above
        this module.)
        """
        if write_call is not None and wire.writes:
            raise ValueError(f"{parts.get('name')}: write_call is hand-written but the shape declares the writing")
        return cls(
            openers=tuple(wire.derived_openers() if openers is None else openers),
            read_region=wire.derived_reader() if read_region is None else read_region,
            write_call=write_call or wire.write_call,
            closers=wire.closers,
            reasoning=wire.reasoning_pair,
            wire=wire,
            **parts,
        )

    @property
    def markers(self) -> tuple[str, ...]:
        if self.wire is not None:
            return self.wire.markers
        return tuple(dict.fromkeys(opener.literal for opener in self.openers))

    @property
    def values_are_text(self) -> bool:
        """Whether the declared wire writes argument values as text (``WireShape.values_are_text``).

        A format with no declared wire says nothing of its values, so they
        count as typed: nothing retypes them.
        """
        return self.wire is not None and self.wire.values_are_text

    @property
    def spacing(self) -> str:
        """The whitespace around reasoning blocks and calls that is layout (``WireShape.spacing``)."""
        return self.wire.spacing if self.wire is not None else JSON_SPACE

    @property
    def holdback(self) -> tuple[str, ...]:
        """Literals a stream holds a chunk's tail back for: the markers and the reasoning delimiters."""
        if self.wire is not None:
            return self.wire.holdback
        return tuple(dict.fromkeys((*self.markers, *(self.reasoning or ()))))

    @property
    def reasoning_pairs(self) -> tuple[tuple[str, str], ...]:
        """Every (open, close) pair a reasoning block may be written with, ``reasoning`` (the written one) first."""
        if self.wire is not None:
            return self.wire.reasoning_pairs
        return () if self.reasoning is None else (self.reasoning,)

    @property
    def reasoning_skipped_by(self) -> tuple[str, ...]:
        """Literals that open a reply which skipped the block its prompt opened (``Reasoning.skipped_by``)."""
        reasoning = self.wire.reasoning if self.wire is not None else None
        return reasoning.skipped_by if reasoning is not None else ()

    @functools.cached_property
    def calls_ending_reasoning(self) -> tuple[regex.Pattern, regex.Pattern] | None:
        """Where a reasoning block the reply never closes ends (``Reasoning.ends_at_call``), else None.

        Two patterns of a whole opening of the call (or section) literal the
        format writes, by its opener's own pattern: one right after a
        newline (the match starts at the newline), one anywhere (for the
        block's first character, which starts a line too). Openers the
        format only reads (a second literal, a bare shape: Qwen's
        ``<function=`` is also a line of every call it writes) do not end a
        block.
        """
        declared = getattr(self.wire, "reasoning", None)
        if declared is None or not declared.ends_at_call:
            return None
        section = self.wire.section
        written = {self.wire.call.open, section.open if section is not None else ""} - {""}
        calls = [opener.opening.regex for opener in self.openers if opener.literal in written]
        if not calls:
            raise ValueError(f"{self.name}: its reasoning ends at a call, but no opener opens the call it writes")
        alternatives = "|".join(dict.fromkeys(calls))
        return regex.compile(f"\n(?:{alternatives})"), regex.compile(f"(?:{alternatives})")

    @property
    def start_only(self) -> bool:
        return all(opener.start_only for opener in self.openers)

    def opened_reasoning(self, prompt: str | None) -> tuple[str, str] | None:
        """The reasoning pair a prompt ending this way left open (its opener, then only whitespace), or None."""
        found, last = None, -1
        for opener, closer in self.reasoning_pairs if prompt else ():
            at = prompt.rfind(opener)
            if at > last and closer not in prompt[at:] and not prompt[at + len(opener) :].strip():
                found, last = (opener, closer), at
        return found

    def reasoning_opened_by(self, prompt: str | None) -> bool:
        """Whether a prompt ending this way already opened one of the format's reasoning blocks."""
        return self.opened_reasoning(prompt) is not None

    def limits_for(self, arguments: dict, where: str = "wire") -> list[WireLimit]:
        """The limits of kind where that apply to a call with these arguments."""
        return [limit for limit in self.wire_limits if limit.where == where and limit.applies(arguments)]

    def __repr__(self) -> str:
        return f"Format({self.name!r})"
