"""Reading a wire shape off the differences between a template's renders (``derive_renders.Renders``).

Three questions, each answered from renders that differ in one thing:

1. Where is the name? It must be written once, and another name must
   change nothing else (``_name_at``).
2. How are the arguments written? Tried in turn on the one-call render
   (``derive_arguments``): a JSON object around the name holding the
   arguments under a key (the call object, perhaps alone in a JSON list),
   the arguments' JSON object after the name, the keyed-values grammar
   after the name, XML-style parameters after the name (the second
   argument's render gives what stands between two). Each gives the call's
   core: the text from the name (or the call object) to the end of its
   arguments.
3. What surrounds one call, and what stands between two? The two-call
   render is the one-call render's prefix, the core, a middle, the other
   core and the one-call render's suffix. The per-call opening is what the
   prefix and the middle end alike; the per-call closing is what the
   suffix and the middle start alike; the rest of the middle is the
   separator. What is left of the prefix and suffix would be a section.

Literals are cut at markup boundaries (``derive_literals``): two renders may
share characters across a boundary by chance (``…calls_begin|>`` and
``…call_end|>`` end alike in ``|>``), and a literal never starts inside a
word. A reasoning block is taken off the renders first (``derive_reasoning``).
Every refusal raises ``NoToolCallFormat`` naming what the renders
showed. What is not derived is listed in ``templatestudio.derive``.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from templatestudio.derive_arguments import Core, core_of
from templatestudio.derive_literals import SPACE, common_prefix, common_suffix, literal_pieces, refuse, split_space
from templatestudio.derive_reasoning import reasoning_of, without_reasoning
from templatestudio.derive_renders import NAME, OTHER_NAME, Renders
from templatestudio.wire.base import MARKUP
from templatestudio.wire.shape import (
    Call, CallId, Invoke, JsonArguments, JsonList, JsonObject, NameBetween, Section, ShapeError, WireShape,
)

__all__ = ["derive_shape"]

ID_MARK = "\x00id\x00"  # where a call's id stood, in literals compared across renders


# --- 1. the name ---------------------------------------------------------------------------------


def _name_at(renders: Renders) -> int:
    count = renders.one.count(NAME)
    if count != 1:
        raise refuse(f"the name is written {count} times in one call's turn, so it is not one slot")
    if renders.other_name != renders.one.replace(NAME, OTHER_NAME):
        raise refuse("a call of another name changes more of the turn than the name")
    return renders.one.index(NAME)


# --- 3. the envelope ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Envelope:
    opening: str  # per call, before the core
    closing: str  # per call, after the core
    separator: str
    listed: bool  # the calls stand in one JSON list
    ends_turn: str  # a token written once after the last call: the turn's end ("" when none)
    section: Section | None = None  # literals written once around all the calls
    abuts: bool = False  # the list's bracket follows the opening literal at once (firefunction's functools[)


def _envelope(renders: Renders, core: Core) -> _Envelope:
    one, two = renders.one, renders.two_calls
    if two is None or (isinstance(core.arguments, JsonArguments) and core.arguments.listed is not None):
        # One call a turn (or calls in one indented list, written by json.dumps): no middle to compare.
        return _Envelope(one[: core.start].lstrip(SPACE), one[core.end :].rstrip(SPACE), "\n", False, "")
    first = one[core.start : core.end]
    second = first.replace(NAME, OTHER_NAME)
    if renders.ids:  # the second call's id is the second one
        second = second.replace(renders.ids[0], renders.ids[1])
    if core.index:  # and its number the next one
        second = second.replace(OTHER_NAME + core.index, OTHER_NAME + core.index[:-1] + "1", 1)
    at_first = two.find(first)
    at_second = two.find(second, at_first + len(first)) if at_first != -1 else -1
    if at_second == -1:
        raise refuse("two calls are not written as the one call's text twice")
    prefix, suffix = one[: core.start], one[core.end :]
    if two[:at_first] != prefix or two[at_second + len(second) :] != suffix:
        raise refuse("two calls are written with a different prefix or suffix than one")
    middle = two[at_first + len(first) : at_second]
    if renders.ids:  # an id outside the core (Solar Open's, before the name) is a slot: one mark for both
        prefix, middle = prefix.replace(renders.ids[0], ID_MARK), middle.replace(renders.ids[1], ID_MARK)
    closing = suffix[: common_prefix(suffix, middle)]
    opening_size = min(common_suffix(prefix, middle), len(middle) - len(closing))
    opening = prefix[len(prefix) - opening_size :]
    # Whitespace at the outer edges of one call's literals is layout between calls.
    opening, closing = opening.lstrip(SPACE), closing.rstrip(SPACE)
    separator = middle[len(closing) : len(middle) - len(opening)]
    section_open, section_close = prefix[: len(prefix) - len(opening)], suffix[len(closing) :]
    listed = (core.kind == "json call" and section_open.rstrip(SPACE).endswith("[")
              and section_close.lstrip(SPACE).startswith("]") and separator.strip(SPACE) == ",")
    if listed:
        # The writer writes one list per call; one per line reads back as the template's one list does.
        opening = section_open.rstrip(SPACE)[:-1].lstrip(SPACE)
        closing = section_close.lstrip(SPACE)[1:].rstrip(SPACE)
        return _Envelope(opening, closing, "\n", True, "", abuts=section_open.rstrip(SPACE).endswith(opening + "["))
    ending = literal_pieces(section_close)
    if not section_open.strip(SPACE) and len(ending) == 1 and MARKUP.search(ending[0]):
        # One token after the last call only (Functionary's <|eom_id|>): the turn's end, a stop token.
        return _Envelope(opening, closing, separator, False, ending[0])
    if bool(section_open.strip(SPACE)) != bool(section_close.strip(SPACE)):
        raise refuse(f"the calls are preceded by {section_open.strip(SPACE)!r} and followed by "
                      f"{section_close.strip(SPACE)!r}: a section needs both")
    if section_open.strip(SPACE):
        _, open_literal, head = split_space(section_open)
        tail, close_literal, _ = split_space(section_close)
        if any(char in SPACE for char in open_literal + close_literal):
            raise refuse(f"the section is opened by {open_literal!r} and closed by {close_literal!r}: "
                          "each must be one literal")
        # The template writes every call inside the section: a call alone is not read.
        section = Section(open_literal, close_literal, head=head, tail=tail)
        return _Envelope(opening, closing, separator, False, "", section)
    return _Envelope(opening, closing, separator, False, "")


def _shape(renders: Renders, core: Core, envelope: _Envelope) -> tuple[Call, object, object, CallId | None]:
    """The Call, name, arguments and call id parts of the declaration."""
    _, open_text, head = split_space(envelope.opening)
    tail, close_text, _ = split_space(envelope.closing)
    if core.kind == "json call":
        listed = core.arguments.listed or (JsonList() if envelope.listed else None)
        arguments = JsonArguments(core.arguments.key, listed=listed, id_key=core.arguments.id_key)
        if not open_text and not close_text and envelope.section is None:
            return Call(marker="[" if listed else "{"), core.name, arguments, None  # a bare call object (or list)
    if not open_text and envelope.section is None:
        raise refuse("no literal opens a call (a bare call is told from prose only by a module's own rule)")
    if core.kind == "json call":
        if not open_text:  # bare call objects inside a section: no registered shape writes calls so
            raise refuse(f"the calls inside the section {envelope.section.open!r} are bare JSON objects with no "
                          "literal of their own: not derived")
        first = literal_pieces(open_text)[0]
        rest = envelope.opening[envelope.opening.index(first) + len(first) :]
        # A literal the list's bracket abuts is watched with the bracket: "functools" alone is a word of prose.
        marker = first + "[" if envelope.abuts and not rest and first.isalpha() else None
        return Call(first, close_text, head=rest, tail=tail, marker=marker), core.name, arguments, None
    tokens = literal_pieces(open_text)
    if core.kind == "named pairs":
        after = core.arguments.after
        if not envelope.closing.startswith(after) or len(tokens) != 1 or envelope.section is not None:
            raise refuse(f"a call of key/value pairs written as {envelope.opening!r} … {envelope.closing!r}: "
                          "only one literal before the name and a closer after the last pair are derived")
        pair_tail, pair_close, _ = split_space(envelope.closing[len(after) :])
        name = NameBetween("", "", head=core.name_head, chars=r"[^<>\s]")
        return Call(tokens[0], pair_close, head=head, tail=pair_tail), name, core.arguments, None
    if core.kind == "invoke parameters":
        if len(tokens) < (1 if envelope.section is not None else 2):
            raise refuse(f"a named element with no literal around it ({open_text!r}): not derived")
        name_open = tokens[-1]
        call_part = open_text[: len(open_text) - len(name_open)]
        _, call_open, call_head = split_space(call_part)
        after = core.arguments.after
        if not envelope.closing.startswith(after):
            raise refuse("the last argument is followed otherwise than the others")
        name_tail, element_close, rest = split_space(envelope.closing[len(after) :])
        closers = literal_pieces(element_close + rest)
        if not closers or (len(closers) < 2 and envelope.section is None):
            raise refuse(f"no literal closes the call after its element ({envelope.closing!r})")
        element_close = closers[0]
        call_tail, call_close, _ = split_space(envelope.closing[len(after) + len(name_tail) + len(element_close) :])
        name = Invoke(name_open, core.name_close, element_close, head=core.name_head, tail=name_tail)
        return Call(call_open, call_close, head=call_head, tail=call_tail), name, core.arguments, None
    if not tokens:
        raise refuse("no literal opens a call inside the section")
    call_open, call_id = tokens[0], None
    rest = open_text[len(call_open) :]
    if rest.startswith(ID_MARK):  # the call's id, then the literal that ends it (Solar Open's)
        id_close = literal_pieces(rest[len(ID_MARK) :])
        if not id_close or not MARKUP.search(id_close[0]):
            raise refuse(f"the call's id is followed by {rest[len(ID_MARK):]!r}: no literal ends it")
        call_id = CallId(renders.ids[0], id_close[0])
        rest = rest[len(ID_MARK) + len(id_close[0]) :]
    if ID_MARK in rest or ID_MARK in call_open:
        raise refuse("the call's id is written where no declared part puts it")
    call_head, name_open, _ = split_space(rest)
    if any(char in SPACE for char in name_open):
        raise refuse(f"the call opens with {open_text!r}: more literals than a call and a name opening")
    if head:
        raise refuse(f"whitespace between the name's opening literal and the name ({envelope.opening!r})")
    name = NameBetween(name_open, core.name_close, head=core.name_head, index=core.index,
                       chars=_name_chars(core.index or core.name_close))
    if core.call_id is not None:
        if call_id is not None:
            raise refuse("the call's id is written twice")
        call_id = core.call_id
    return Call(call_open, close_text, head=call_head, tail=tail), name, core.arguments, call_id


def _name_chars(close: str) -> str:
    """The characters a name may hold: not markup, whitespace, or the first of the literal that closes it.

    (The opening pattern runs over name characters without looking back:
    a name allowed to hold ``[`` would run on through ``[ARGS]``. No tool's
    name holds whitespace, so a name that does is refused, not read.)
    """
    if not close or close[0] in "<> \t\r\n":
        return r"[^<>\s]"
    return r"[^<>\s" + re.escape(close[0]) + "]"


def derive_shape(renders: Renders) -> WireShape:
    """The declaration the renders show; NoToolCallFormat saying what they do not pin down."""
    reasoning = reasoning_of(renders)
    renders = dataclasses.replace(
        renders, **{field: without_reasoning(getattr(renders, field), reasoning)
                    for field in ("one", "other_name", "two_arguments", "typed", "two_calls")
                    if getattr(renders, field) is not None})
    at = _name_at(renders)
    core = core_of(renders, at)
    envelope = _envelope(renders, core)
    call, name, arguments, call_id = _shape(renders, core, envelope)
    if ID_MARK in call.open + call.close + envelope.separator + (envelope.section.open if envelope.section else ""):
        raise refuse("the call's id is written where no declared part puts it")
    if isinstance(arguments, (JsonArguments, JsonObject)) and any("\\u00e9" in text for _, text in renders.round_trip):
        arguments = dataclasses.replace(arguments, ascii=True)  # the template's tojson escapes non-ASCII text
    stop = renders.turn_end
    stop_tokens = tuple(item for item in (envelope.ends_turn, stop)
                        if item and not any(char in SPACE for char in item))
    try:
        return WireShape(call=call, name=name, arguments=arguments, section=envelope.section, call_id=call_id,
                         separator=envelope.separator, reasoning=reasoning,
                         stop_tokens=tuple(dict.fromkeys(stop_tokens)))
    except ShapeError as error:
        raise refuse(f"the renders give an impossible declaration: {error}") from None
