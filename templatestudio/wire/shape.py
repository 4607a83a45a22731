"""A format's wire shape, declared once as data: the envelope its calls are written in.

A format module starts with ``WIRE = WireShape(...)``: where a section of
calls opens and closes (if the format has one), where one call opens and
closes, how the name is written, how the arguments are written, what the
writer puts between calls, the reasoning block, the stop tokens, and
whether a reply may end without the last closer. From that one value come
``write_call`` (``WireShape.write_call``), the markers a reader watches
(``WireShape.markers``), the ``closers``, the ``reasoning`` pairs (the one
written, the others read) and the stream's holdback literals; for the shapes it knows how to read (a JSON
call object or list after an opening literal, a name between literals then
a JSON object: ``wire.tagged_json``; a name then an object of the
keyed-values grammar: ``wire.keyed_values``) the openers and the region
reader as well (``derived_openers``, ``derived_reader``: ``wire.shape_reader``).

The parts, outermost first::

    section.open  section.head  [call]  (separator [call])*  section.tail  section.close
    call.open     call.head     [id] [name and arguments]     call.tail     call.close

Names: ``NameKey`` (a key of a JSON call object), ``NameBetween`` (between
two literals: Functionary's ``<function=`` … ``>``), ``Invoke`` (an element
named in its opening tag and closed after its arguments: Qwen3-Coder's
``<function=NAME>`` … ``</function>``). Arguments: ``JsonArguments`` (a JSON
object under a key of the call object), ``JsonObject`` (a JSON object right
after the name), ``XmlParameters``, ``KeyValuePairs``, ``OwnValues`` (the
``{key:value}`` grammar of ``wire.keyed_values``). What a declaration cannot
say is ``HandWritten(why)``: the module then passes its own reader (and
writer, when the writing is what cannot be said), and the why is printed
with the declaration. The literal parts (``Call``, ``Section``,
``Reasoning``) are declared in ``wire.envelope``, the name and argument
parts in ``wire.arguments``; this module re-exports both.

Not handled: a format with several unrelated written shapes (the writer
writes one; the readers of the others stay the module's own), and the
response-template dicts, which stay hand-written beside the declaration.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass

from templatestudio.calls import ParsedToolCall
from templatestudio.wire import keyed_values, shape_reader
from templatestudio.wire.base import JSON_SPACE, MARKUP, Opener
from templatestudio.wire.arguments import (  # noqa: F401 - the name and argument parts are part of this language
    CallId, Invoke, JsonArguments, JsonList, JsonObject, KeyValuePairs, NameBetween, NameKey, OwnValues, XmlParameters,
)
from templatestudio.wire.envelope import Call, Reasoning, Section, ShapeError  # noqa: F401 - as the parts above

NEVER = 1 << 30  # cut_after for an opening whose cut is prose: a reply ending inside it is text


@dataclass(frozen=True)
class HandWritten:
    """A part the declaration cannot say: the module's own code does it, for the reason given.

    text_values: for hand-written arguments, the wire writes each value as
    bare text (as ``XmlParameters`` do), so the tool's schema types them
    (``WireShape.values_are_text``). markup: fixed literals the hand-written
    part writes around what varies (MiniMax M3's argument tags open with
    ``]<]minimax[>[<`` whatever their key): inner markup of the call
    (``WireShape.inner_literals``).
    """

    why: str
    text_values: bool = False
    markup: tuple[str, ...] = ()


Name = NameKey | NameBetween | Invoke | HandWritten
Arguments = JsonArguments | JsonObject | XmlParameters | KeyValuePairs | OwnValues | HandWritten


@dataclass(frozen=True)
class WireShape:
    """The envelope one format writes its calls in (see the module docstring for the parts).

    separator: what the writer puts between two calls outside a section
    (inside one: between calls of the section). stop_tokens: tokens a
    server stops on that end a reply in this format. closer_optional: a
    reply that ends where the last call's closer would stand is read
    (servers stop on the closer and cut it). framing: further literals the
    reader watches that open no call (Command R7B's response block,
    harmony's channel headers); they are markers, never written by
    write_call. wrappers: further sections the reader accepts around the
    calls, never written (LFM2's ``<|tool_call_start|>[…]<|tool_call_end|>``
    around a pythonic list). spacing: the whitespace the template writes
    around a reasoning block and around calls (after ``<think>``, before
    ``</think>``, between the content and a call): layout, which the reader
    never returns as content or reasoning (``templatestudio.layout``); an
    empty string keeps every character. addressed: every call is
    addressed by the format's own framing (harmony's ``to=functions.NAME``
    header), so the text of a message body is content: a reader of this
    format does not watch, by default, the formats whose calls open on plain
    text (``templatestudio.guards.guard_of``).
    """

    call: Call
    name: Name
    arguments: Arguments
    section: Section | None = None
    call_id: CallId | None = None
    separator: str = "\n"
    reasoning: Reasoning | None = None
    stop_tokens: tuple[str, ...] = ()
    closer_optional: bool = False
    framing: tuple[str, ...] = ()
    wrappers: tuple[Section, ...] = ()
    spacing: str = JSON_SPACE
    addressed: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.arguments, JsonArguments) != isinstance(self.name, NameKey) and not isinstance(
            self.name, HandWritten
        ) and not isinstance(self.arguments, HandWritten):
            raise ShapeError("a name under a JSON key goes with arguments under a JSON key, and only with them")
        if not self.markers:
            raise ShapeError("the shape declares no literal a call opens with")

    # --- what the declaration says, derived ----------------------------------------------------

    @property
    def hand_written(self) -> tuple[str, ...]:
        """The reasons of every part the declaration leaves to the module's own code."""
        return tuple(part.why for part in (self.name, self.arguments) if isinstance(part, HandWritten))

    @property
    def markers(self) -> tuple[str, ...]:
        """The literals a reader watches: where a section or a call may open, then the framing."""
        found: list[str] = []
        if self.section is not None:
            found.append(self.section.open)
        if self.section is None or self.section.alone:
            found.append(self.call.marker or self.call.open or self.name_open)
        found.extend(self.call.also_opens)
        found.extend(wrapper.open for wrapper in self.wrappers)
        found.extend(self.framing)
        return tuple(dict.fromkeys(item for item in found if item))

    @property
    def turn_ends(self) -> tuple[str, ...]:
        """What ends the turn or the message where it stands: the stop tokens, then the framing."""
        return (*self.stop_tokens, *self.framing)

    @property
    def name_open(self) -> str:
        """What the writer writes right before a call's name (``call:``, ``<invoke name="``); empty for a JSON key."""
        return self.name.open if isinstance(self.name, (NameBetween, Invoke)) else ""

    @property
    def name_close(self) -> str:
        """What the writer writes right after a call's name (``">``, Kimi K3's ``" index="``); empty for a JSON key."""
        name = self.name
        return name.name_close if isinstance(name, Invoke) else name.close if isinstance(name, NameBetween) else ""

    @property
    def closers(self) -> tuple[str, ...]:
        """The literals that end a call: the section's, the call's, the invoked element's; else the JSON's bracket."""
        found = [self.section.close if self.section else "", self.call.close,
                 self.name.close if isinstance(self.name, Invoke) else "",
                 *(wrapper.close for wrapper in self.wrappers)]
        closers = tuple(dict.fromkeys(item for item in found if item))
        if closers:
            return closers
        if isinstance(self.arguments, JsonArguments):
            return ("]",) if self.arguments.listed else ("}",)
        return ("}",)

    @property
    def call_keys(self) -> tuple[str, ...]:
        """The keys of a JSON call object (its name's, its arguments', their extras'); empty for other shapes."""
        keys = [self.name.key] if isinstance(self.name, NameKey) else []
        if isinstance(self.arguments, JsonArguments):
            keys += [*self.arguments.keys, *self.arguments.extras, *(key for key, _ in self.arguments.written_extras)]
        return tuple(dict.fromkeys(keys))

    @functools.cached_property  # (a flood of malformed calls asks it per copy: openings.Opening._committed)
    def inner_literals(self) -> tuple[str, ...]:
        """The markup literals written inside a call, neither a marker nor a closer.

        A marker followed by one of these before the call's closer has
        opened a call even where the call is malformed: the reader then
        raises instead of taking the marker for prose (``openings``).
        Literals without markup (a JSON key, ``call:``) are left out, as
        prose about a format names them too.
        """
        parts = [self.call.open if self.section is not None else ""]
        name, arguments = self.name, self.arguments
        if isinstance(name, NameBetween):
            parts += [name.open, name.close]
        if isinstance(name, Invoke):
            parts += [name.open, name.name_close]
        if isinstance(arguments, XmlParameters):
            parts += [arguments.open, arguments.name_close, arguments.close]
        if isinstance(arguments, KeyValuePairs):
            parts += [arguments.key_open, arguments.key_close, arguments.value_open, arguments.value_close]
        if isinstance(arguments, OwnValues):
            parts.append(arguments.quote)
        parts += [item for part in (name, arguments) if isinstance(part, HandWritten) for item in part.markup]
        if self.call_id is not None:
            parts += [self.call_id.written, self.call_id.close]
        taken = set(self.markers) | set(self.closers)
        return tuple(dict.fromkeys(part for part in parts if part and part not in taken and MARKUP.search(part)))

    @property
    def values_are_text(self) -> bool:
        """Whether each argument value is written as bare text, its JSON type not on the wire.

        So for ``KeyValuePairs`` (GLM) and for ``XmlParameters`` whose tag
        does not say the type (Qwen3-Coder, Seed-OSS, MiniMax): ``7``,
        ``true`` and ``7`` as a string are written alike, and only a tool's
        schema can tell them apart. JSON bodies, the keyed-values grammar
        and typed tags (DSML's ``string=``) carry their types.
        """
        shape = self.arguments
        return (isinstance(shape, KeyValuePairs) or (isinstance(shape, XmlParameters) and shape.typed is None)
                or (isinstance(shape, OwnValues) and shape.text)
                or (isinstance(shape, HandWritten) and shape.text_values))

    @property
    def reasoning_pair(self) -> tuple[str, str] | None:
        """The pair the format writes its reasoning block with (``reasoning_pairs`` has the ones it reads too)."""
        return None if self.reasoning is None else (self.reasoning.open, self.reasoning.close)

    @property
    def reasoning_pairs(self) -> tuple[tuple[str, str], ...]:
        """Every pair a reasoning block may be written with, the written one first; () when none."""
        return () if self.reasoning is None else self.reasoning.pairs

    @property
    def holdback(self) -> tuple[str, ...]:
        """Literals a stream holds a chunk's tail back for, while it could still become one of them."""
        delimiters = (item for pair in self.reasoning_pairs for item in pair)
        return tuple(dict.fromkeys((*self.markers, *delimiters)))

    # --- the writer ------------------------------------------------------------------------------

    @property
    def writes(self) -> bool:
        """Whether write_call can be derived (no hand-written name or arguments)."""
        return not self.hand_written

    def _arguments_text(self, arguments: dict) -> str:
        shape = self.arguments
        if isinstance(shape, JsonObject):
            return json.dumps(arguments, ensure_ascii=shape.ascii)
        if isinstance(shape, (XmlParameters, KeyValuePairs)):
            return shape.write(arguments)
        if isinstance(shape, OwnValues):
            if shape.text:  # every value as text between the quotes (FunctionGemma's)
                return "{" + ",".join(f"{key}:{keyed_values.write_value(_as_text(value), shape.quote)}"
                                      for key, value in arguments.items()) + "}"
            return keyed_values.write_value(arguments, shape.quote, shape.null)
        raise ShapeError(f"the arguments are hand-written: {shape.why}")  # pragma: no cover - guarded by writes

    def _body(self, call: ParsedToolCall, call_id: str | None = None) -> str:
        name, shape = self.name, self.arguments
        if isinstance(shape, JsonArguments):
            item = {**dict(shape.written_extras), name.key: call.name, shape.key: call.arguments}
            if call_id is not None and shape.id_key is not None:
                item[shape.id_key] = call_id  # after the arguments, as Mistral's templates write it
            listed, ascii = shape.listed, shape.ascii
            if listed is None:
                return json.dumps(item, ensure_ascii=ascii)
            if listed.indent is not None:
                return json.dumps([item], ensure_ascii=ascii, indent=listed.indent)
            return f"{listed.open}{json.dumps(item, ensure_ascii=ascii)}{listed.close}"
        arguments = self._arguments_text(call.arguments)
        if isinstance(name, Invoke):
            return f"{name.open}{call.name}{name.name_close}{name.head}{arguments}{name.tail}{name.close}"
        ident = ""
        if self.call_id is not None and self.call_id.after_name:
            ident = (call_id or self.call_id.written) + self.call_id.close
        written_id = name.id_open + call_id if name.id_open and call_id is not None else ""
        return f"{name.open}{call.name}{name.index}{written_id}{name.close}{ident}{name.head}{arguments}"

    def write_call(self, call: ParsedToolCall, call_id: str | None = None) -> str:
        """One call as the format writes it, inside its section when it has one (call_id: see write_calls)."""
        return self.write_calls([call], None if call_id is None else [call_id])

    def write_calls(self, calls: list[ParsedToolCall], ids: list[str] | None = None) -> str:
        """Several calls of one turn: in one section, or one after another with the separator.

        ids: each call's id, written where the declaration puts one (a
        ``CallId``, or ``JsonArguments.id_key`` after the arguments); without
        them a ``CallId`` writes its placeholder and a JSON call no id.
        """
        if not self.writes:
            raise ShapeError("this shape's writing is hand-written: " + "; ".join(self.hand_written))
        written = self.separator.join(map(self._one, calls, ids or [None] * len(calls)))
        return written if self.section is None else self._in_section(written)

    def _one(self, call: ParsedToolCall, call_id: str | None = None) -> str:
        before_name = self.call_id is not None and not self.call_id.after_name
        ident = (call_id or self.call_id.written) + self.call_id.close if before_name else ""
        return f"{self.call.open}{self.call.head}{ident}{self._body(call, call_id)}{self.call.tail}{self.call.close}"

    def _in_section(self, calls: str) -> str:
        section = self.section
        return calls if section is None else f"{section.open}{section.head}{calls}{section.tail}{section.close}"

    def source(self) -> str:
        """The declaration as Python source a format module can start from (fields left at their defaults omitted)."""
        return "WIRE = " + _source(self, 0)

    def describe(self) -> str:
        """The declaration in a few lines, hand-written parts with their reasons (for ``check`` and the course)."""
        lines = [f"markers {list(self.markers)}, closers {list(self.closers)}"]
        if self.reasoning:
            pairs = " or ".join(f"{opener!r} … {closer!r}" for opener, closer in self.reasoning.pairs)
            ends = "; unclosed, it ends at a call opening at a line start" if self.reasoning.ends_at_call else ""
            lines.append(f"reasoning {pairs}{ends}")
        lines.append(f"name: {type(self.name).__name__}; arguments: {type(self.arguments).__name__}")
        lines.extend(f"hand-written: {why}" for why in self.hand_written)
        return "\n".join(lines)

    # --- the reader, for the shapes it can be derived for (``wire.shape_reader``) -------------------

    def derived_openers(self) -> tuple[Opener, ...]:
        """The openers of the declared shape: the call's, then one per framing literal."""
        return shape_reader.openers(self)

    def derived_reader(self):
        """The region reader of the declared shape (framing regions hold no call)."""
        return shape_reader.region_reader(self)


def _as_text(value: object) -> str:
    return value if isinstance(value, str) else str(value)


def _source(value: object, depth: int) -> str:
    """value as source: a dataclass by its non-default fields, one per line at the top level."""
    if not dataclasses.is_dataclass(value):
        return repr(value)
    parts = []
    for item in dataclasses.fields(value):
        current = getattr(value, item.name)
        default = item.default if item.default is not dataclasses.MISSING else (
            item.default_factory() if item.default_factory is not dataclasses.MISSING else dataclasses.MISSING)
        if current != default:
            parts.append(f"{item.name}={_source(current, depth + 1)}")
    if depth == 0:
        inner = "".join(f"\n    {part}," for part in parts)
        return f"{type(value).__name__}({inner}\n)"
    return f"{type(value).__name__}({', '.join(parts)})"
