"""Reading a wire shape off the differences between a template's renders (``derive_renders.Renders``).

Three questions, each answered from renders that differ in one thing:

1. Where is the name? It must be written once, and another name must
   change nothing else (``_name_at``).
2. How are the arguments written? Tried in turn on the one-call render: a
   JSON object around the name holding the arguments under a key (the
   call object, perhaps alone in a JSON list), the arguments' JSON object
   after the name, the keyed-values grammar after the name, XML-style
   parameters after the name (the second argument's render gives what
   stands between two). Each gives the call's core: the text from the name
   (or the call object) to the end of its arguments.
3. What surrounds one call, and what stands between two? The two-call
   render is the one-call render's prefix, the core, a middle, the other
   core and the one-call render's suffix. The per-call opening is what the
   prefix and the middle end alike; the per-call closing is what the
   suffix and the middle start alike; the rest of the middle is the
   separator. What is left of the prefix and suffix would be a section.

Literals are cut at markup boundaries (``_at_boundary``): two renders may
share characters across a boundary by chance (``…calls_begin|>`` and
``…call_end|>`` end alike in ``|>``), and a literal never starts inside a
word. Every refusal raises ``NoToolCallFormat`` naming what the renders
showed. What is not derived is listed in ``templatestudio.derive``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass

from templatestudio.calls import NoToolCallFormat
from templatestudio.derive_renders import ANSWER_MARK, NAME, ONE, OTHER_NAME, REASONING_MARK, Renders
from templatestudio.wire import keyed_values
from templatestudio.wire.base import JSON_SPACE, MARKUP
from templatestudio.wire.shape import (
    Call, CallId, Invoke, JsonArguments, JsonList, JsonObject, KeyValuePairs, NameBetween, NameKey, OwnValues,
    Reasoning, Section,
    ShapeError, WireShape, XmlParameters,
)

__all__ = ["derive_shape", "reasoning_of", "without_reasoning"]

_SPACE = JSON_SPACE  # the whitespace a template writes as layout
_OPENING, _CLOSING = "<[{(", ">]})"
# A literal's pieces: whitespace, a tag (closed or still open: "<function="), a bracketed token, a word.
_PIECES = re.compile(r"\s+|<[^<>\n]*>?|\[[^\[\]\s]*\]?|[^\s<\[]+")
_DECODER = json.JSONDecoder()
ID_MARK = "\x00id\x00"  # where a call's id stood, in literals compared across renders
_INDEX = re.compile(r"[:#_.\-]0(?=[^0-9])")


def _refuse(why: str) -> NoToolCallFormat:
    return NoToolCallFormat(why)


def _at_boundary(text: str, at: int) -> bool:
    """Whether a literal may start or end at text[at]: a text end, or markup or whitespace on one side."""
    return at <= 0 or at >= len(text) or text[at - 1] in _CLOSING + _SPACE or text[at] in _OPENING + _SPACE


def _common_suffix(left: str, right: str) -> int:
    size = 0
    while size < min(len(left), len(right)) and left[-1 - size] == right[-1 - size]:
        size += 1
    while size and not (_at_boundary(left, len(left) - size) and _at_boundary(right, len(right) - size)):
        size -= 1
    return size


def _common_prefix(left: str, right: str) -> int:
    size = 0
    while size < min(len(left), len(right)) and left[size] == right[size]:
        size += 1
    while size and not (_at_boundary(left, size) and _at_boundary(right, size)):
        size -= 1
    return size


def _split_space(text: str) -> tuple[str, str, str]:
    """(leading whitespace, the rest stripped, trailing whitespace)."""
    stripped = text.strip(_SPACE)
    if not stripped:
        return text, "", ""
    start = text.index(stripped)
    return text[:start], stripped, text[start + len(stripped) :]


# --- 1. the name ---------------------------------------------------------------------------------


def _name_at(renders: Renders) -> int:
    count = renders.one.count(NAME)
    if count != 1:
        raise _refuse(f"the name is written {count} times in one call's turn, so it is not one slot")
    if renders.other_name != renders.one.replace(NAME, OTHER_NAME):
        raise _refuse("a call of another name changes more of the turn than the name")
    return renders.one.index(NAME)


# --- 2. the arguments -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Core:
    """One call's core in the one-call render, and how its name and arguments are written."""

    kind: str  # "json call", "named json", "own values", "invoke parameters", "named pairs"
    start: int
    end: int
    name: NameKey | NameBetween | Invoke | None  # None: an Invoke, built once its opening literal is known
    arguments: JsonArguments | JsonObject | OwnValues | XmlParameters | KeyValuePairs
    name_close: str = ""  # for named kinds: the literal after the name
    name_head: str = ""  # and the whitespace the writer puts after it
    call_id: CallId | None = None  # an id written after the name
    index: str = ""  # the first call's number after the name, with what precedes it (":0")


def _decoded(text: str, at: int) -> tuple[object, int] | None:
    try:
        return _DECODER.raw_decode(text, at)
    except ValueError:
        return None


def _json_call(renders: Renders, at: int) -> _Core | None:
    """The JSON object around the name that holds the arguments under a key; None if there is none.

    One more key is allowed when its value is the call's id (Mistral's ``"id"``): the shape's id key.
    """
    text = renders.one
    for start in (match.start() for match in reversed(list(re.finditer(r"\{", text[:at])))):
        found = _decoded(text, start)
        if found is None or found[1] <= at or not isinstance(found[0], dict):
            continue
        item, end = found
        name_keys = [key for key, value in item.items() if value == NAME]
        argument_keys = [key for key, value in item.items() if value == ONE]
        string_keys = [key for key, value in item.items()
                       if isinstance(value, str) and _decoded(value, 0) == (ONE, len(value))]
        if string_keys and not argument_keys:
            raise _refuse(f"the call object holds its arguments as a JSON string under {string_keys[0]!r}")
        if len(name_keys) != 1 or len(argument_keys) != 1:
            raise _refuse(f"the call object {text[start:end]!r} holds no single name key and arguments key")
        extra = sorted(set(item) - {*name_keys, *argument_keys})
        id_key = extra[0] if len(extra) == 1 and renders.ids and item[extra[0]] == renders.ids[0] else None
        if extra and id_key is None:
            raise _refuse(f"the call object holds keys beyond the name and the arguments: {extra}")
        if id_key is not None and list(item)[-1] != id_key:
            raise _refuse(f"the call's id is written under {id_key!r} before its arguments (written after, if at all)")
        arguments = JsonArguments(argument_keys[0], listed=_indented_list(text, start, item), id_key=id_key)
        if arguments.listed is not None:  # the whole indented list is the core: its layout is json.dumps'
            start, end = _list_span(text, start)
        return _Core("json call", start, end, NameKey(name_keys[0]), arguments)
    return None


def _list_span(text: str, start: int) -> tuple[int, int]:
    bracket = len(text[:start].rstrip(_SPACE)) - 1
    return bracket, _decoded(text, bracket)[1]


def _indented_list(text: str, start: int, item: dict) -> JsonList | None:
    """A JSON list indented as json.dumps indents it, around the call object at start; None if not one."""
    before = text[:start].rstrip(_SPACE)
    if not before.endswith("[") or "\n" not in text[len(before) : start]:
        return None
    found = _decoded(text, len(before) - 1)
    for indent in (2, 4):
        if found is not None and found[0] == [item] and text[len(before) - 1 : found[1]] == json.dumps(
                [item], ensure_ascii=False, indent=indent):
            return JsonList(indent=indent)
    return None


def _after_name(text: str, at: int) -> tuple[int, str]:
    """Where the arguments' first bracket stands after the name, and the text between; (-1, "") if none."""
    after = at + len(NAME)
    brace = text.find("{", after)
    return (brace, text[after:brace]) if brace != -1 else (-1, "")


def _named_json(renders: Renders, at: int) -> _Core | None:
    """A JSON object after the name and a closing literal (and the call's id, then its closing literal)."""
    text = renders.one
    brace, between = _after_name(text, at)
    found = _decoded(text, brace) if brace != -1 and '"' not in between else None
    if found is None or found[0] != ONE:
        return None
    call_id = None
    if renders.ids and renders.ids[0] in between:  # Mistral's NAME[CALL_ID]ID[ARGS]
        between, id_part = between.split(renders.ids[0], 1)
        id_lead, id_close, id_head = _split_space(id_part)
        if id_lead or not MARKUP.search(id_close) or any(char in _SPACE for char in id_close):
            raise _refuse(f"the call's id is followed by {id_part!r}: no literal ends it")
        call_id, between = CallId(renders.ids[0], id_close, after_name=True), between + id_head
    index = _INDEX.match(between)  # the call's number after the name (Kimi K2's functions.NAME:0)
    if index is not None:
        between = between[index.end() :]
    lead, close, head = _split_space(between)
    if not close or any(char in _SPACE for char in close):
        raise _refuse(f"the arguments' object follows the name after {between!r}: no one closing literal")
    return _Core("named json", at, found[1], None, JsonObject(), lead + close, head, call_id,
                 index.group() if index else "")


def _own_values(renders: Renders, at: int) -> _Core | None:
    text = renders.one
    brace, between = _after_name(text, at)
    key = next(iter(ONE))
    if brace == -1 or not text.startswith("{" + key + ":", brace):
        return None
    value_at = text.find(ONE[key], brace)
    quote = text[brace + len(key) + 2 : value_at]
    written = keyed_values.write_value(ONE, quote)
    if not quote or not text.startswith(written, brace):
        return None
    second = renders.two_arguments
    both = {**ONE, "count": 42}
    orders = (both, dict(sorted(both.items())))  # Gemma 4's template sorts the keys
    as_text = not any(second.startswith(keyed_values.write_value(order, quote), brace) for order in orders)
    if as_text and not any(second.startswith(keyed_values.write_value({k: str(v) for k, v in order.items()}, quote),
                                             brace) for order in orders):
        raise _refuse("two arguments are not written in the keyed-values grammar one is written in")
    if any(char in _SPACE for char in between):
        raise _refuse(f"whitespace between the name and its arguments ({between!r})")
    # A None the template spells the Python way (Gemma 4's): the writer spells it so too.
    null = "None" if any(":None" in render for _, render in renders.round_trip) else "null"
    # Every value quoted as text (FunctionGemma's 42 between the quotes): text values, typed by the schema later.
    return _Core("own values", at, brace + len(written), None, OwnValues(quote, null, as_text), between)


def _xml_parameters(renders: Renders, at: int) -> _Core | None:
    text, second = renders.one, renders.two_arguments
    key, value = next(iter(ONE.items()))
    after_name = at + len(NAME)
    key_at = text.find(key, after_name)
    value_at = text.find(value, key_at + len(key)) if key_at != -1 else -1
    value_end = value_at + len(value)
    if value_at == -1 or second[:value_end] != text[:value_end]:
        return None
    count_at = second.find("count", value_end)
    number_at = second.find("42", count_at)
    if count_at == -1 or number_at == -1:
        return None
    before_key, inside = text[after_name:key_at], text[key_at + len(key) : value_at]
    between = second[value_end:count_at]
    if not MARKUP.search(before_key):
        return None  # no tag before the key: some other grammar (a Python dict, a call's keywords)
    typed_inside = second[count_at + len("count") : number_at]
    typed = None
    if typed_inside != inside:  # the tag says the type (DeepSeek's DSML: string="true" or "false")
        if not MARKUP.search(typed_inside) or typed_inside.rstrip(_SPACE) == inside.rstrip(_SPACE):
            raise _refuse("two arguments are not written with the same tags")
        typed = (inside, typed_inside)
    size = _common_suffix(before_key, between)
    opening = before_key[len(before_key) - size :].lstrip(_SPACE)
    if not MARKUP.search(opening):
        return None  # not tags: quotes and brackets of some other grammar (a Python dict, a call's keywords)
    name_part = before_key[: len(before_key) - len(opening)]
    _, name_close, head = _split_space(name_part)
    if not name_close and not name_part.strip(_SPACE):
        return _key_value_pairs(renders, at, opening, name_part, inside, between, value_end)
    if not name_close or name_part[: len(name_part) - len(name_close) - len(head)]:
        raise _refuse(f"the name is followed by {name_part!r}: no literal closes it before its arguments")
    newline = inside.endswith("\n") and between.startswith("\n")
    name_close_value = inside[:-1] if newline else inside
    shut = between[len("\n") if newline else 0 : len(between) - len(opening)]
    _, close, after = _split_space(shut)
    if not close or shut[: len(shut) - len(close) - len(after)]:
        raise _refuse(f"no literal closes an argument before the next ({between!r})")
    spelled = _spelling(renders)
    parameters = XmlParameters(opening, name_close_value, close, after=after, newline_inside=newline, values=spelled,
                               typed=typed)
    end = value_end + (1 if newline else 0) + len(close)
    if not text.startswith(close, end - len(close)):
        raise _refuse("the last argument is closed otherwise than the others")
    return _Core("invoke parameters", at, end, None, parameters, name_close, head)


def _spelling(renders: Renders) -> str:
    """How a text-valued wire spells a non-string: Python's str() ("True") or JSON ("true"), from the boolean render."""
    return "str" if "True" in renders.typed else "json"


def _key_value_pairs(renders: Renders, at: int, key_open: str, head: str, inside: str, between: str,
                     value_end: int) -> _Core:
    """GLM's shape: the name ends where the first key's element opens, and each argument is two elements."""
    tags = _tokens(inside)
    if len(tags) != 2 or not all(MARKUP.search(tag) for tag in tags):
        raise _refuse(f"the key and its value are separated by {inside!r}: not a closing tag and an opening one")
    key_close, value_open = tags
    spacing = inside[len(key_close) : len(inside) - len(value_open)]
    shut = between[: len(between) - len(key_open)]
    _, value_close, after = _split_space(shut)
    if not value_close or shut[: len(shut) - len(value_close) - len(after)] or spacing.strip(_SPACE):
        raise _refuse(f"no literal closes a value before the next key ({between!r})")
    spelled = _spelling(renders)
    pairs = KeyValuePairs(key_open, key_close, value_open, value_close, between=spacing, after=after, values=spelled)
    return _Core("named pairs", at, value_end + len(value_close), None, pairs, "", head)


def _core(renders: Renders, at: int) -> _Core:
    text = renders.one
    found = (_json_call(renders, at) or _named_json(renders, at) or _own_values(renders, at)
             or _xml_parameters(renders, at))
    if found is None:
        raise _refuse(f"the arguments are written in no way derived here (a JSON object, the keyed-values grammar, "
                      f"XML-style parameters): {text[at:at + 80]!r}")
    return found


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


def _envelope(renders: Renders, core: _Core) -> _Envelope:
    one, two = renders.one, renders.two_calls
    if two is None or (isinstance(core.arguments, JsonArguments) and core.arguments.listed is not None):
        # One call a turn (or calls in one indented list, written by json.dumps): no middle to compare.
        return _Envelope(one[: core.start].lstrip(_SPACE), one[core.end :].rstrip(_SPACE), "\n", False, "")
    first = one[core.start : core.end]
    second = first.replace(NAME, OTHER_NAME)
    if renders.ids:  # the second call's id is the second one
        second = second.replace(renders.ids[0], renders.ids[1])
    if core.index:  # and its number the next one
        second = second.replace(OTHER_NAME + core.index, OTHER_NAME + core.index[:-1] + "1", 1)
    at_first = two.find(first)
    at_second = two.find(second, at_first + len(first)) if at_first != -1 else -1
    if at_second == -1:
        raise _refuse("two calls are not written as the one call's text twice")
    prefix, suffix = one[: core.start], one[core.end :]
    if two[:at_first] != prefix or two[at_second + len(second) :] != suffix:
        raise _refuse("two calls are written with a different prefix or suffix than one")
    middle = two[at_first + len(first) : at_second]
    if renders.ids:  # an id outside the core (Solar Open's, before the name) is a slot: one mark for both
        prefix, middle = prefix.replace(renders.ids[0], ID_MARK), middle.replace(renders.ids[1], ID_MARK)
    closing = suffix[: _common_prefix(suffix, middle)]
    opening_size = min(_common_suffix(prefix, middle), len(middle) - len(closing))
    opening = prefix[len(prefix) - opening_size :]
    # Whitespace at the outer edges of one call's literals is layout between calls.
    opening, closing = opening.lstrip(_SPACE), closing.rstrip(_SPACE)
    separator = middle[len(closing) : len(middle) - len(opening)]
    section_open, section_close = prefix[: len(prefix) - len(opening)], suffix[len(closing) :]
    listed = (core.kind == "json call" and section_open.rstrip(_SPACE).endswith("[")
              and section_close.lstrip(_SPACE).startswith("]") and separator.strip(_SPACE) == ",")
    if listed:
        # The writer writes one list per call; one per line reads back as the template's one list does.
        opening = section_open.rstrip(_SPACE)[:-1].lstrip(_SPACE)
        closing = section_close.lstrip(_SPACE)[1:].rstrip(_SPACE)
        return _Envelope(opening, closing, "\n", True, "", abuts=section_open.rstrip(_SPACE).endswith(opening + "["))
    ending = _tokens(section_close)
    if not section_open.strip(_SPACE) and len(ending) == 1 and MARKUP.search(ending[0]):
        # One token after the last call only (Functionary's <|eom_id|>): the turn's end, a stop token.
        return _Envelope(opening, closing, separator, False, ending[0])
    if bool(section_open.strip(_SPACE)) != bool(section_close.strip(_SPACE)):
        raise _refuse(f"the calls are preceded by {section_open.strip(_SPACE)!r} and followed by "
                      f"{section_close.strip(_SPACE)!r}: a section needs both")
    if section_open.strip(_SPACE):
        _, open_literal, head = _split_space(section_open)
        tail, close_literal, _ = _split_space(section_close)
        if any(char in _SPACE for char in open_literal + close_literal):
            raise _refuse(f"the section is opened by {open_literal!r} and closed by {close_literal!r}: "
                          "each must be one literal")
        # The template writes every call inside the section: a call alone is not read.
        section = Section(open_literal, close_literal, head=head, tail=tail)
        return _Envelope(opening, closing, separator, False, "", section)
    return _Envelope(opening, closing, separator, False, "")


def _tokens(text: str) -> list[str]:
    """The literal pieces of text (``_PIECES``), its whitespace left out."""
    return [piece for piece in _PIECES.findall(text) if piece.strip(_SPACE)]


def _shape(renders: Renders, core: _Core, envelope: _Envelope) -> tuple[Call, object, object, CallId | None]:
    """The Call, name, arguments and call id parts of the declaration."""
    _, open_text, head = _split_space(envelope.opening)
    tail, close_text, _ = _split_space(envelope.closing)
    if core.kind == "json call":
        listed = core.arguments.listed or (JsonList() if envelope.listed else None)
        arguments = JsonArguments(core.arguments.key, listed=listed, id_key=core.arguments.id_key)
        if not open_text and not close_text and envelope.section is None:
            return Call(marker="[" if listed else "{"), core.name, arguments, None  # a bare call object (or list)
    if not open_text and envelope.section is None:
        raise _refuse("no literal opens a call (a bare call is told from prose only by a module's own rule)")
    if core.kind == "json call":
        first = _tokens(open_text)[0]
        rest = envelope.opening[envelope.opening.index(first) + len(first) :]
        # A literal the list's bracket abuts is watched with the bracket: "functools" alone is a word of prose.
        marker = first + "[" if envelope.abuts and not rest and first.isalpha() else None
        return Call(first, close_text, head=rest, tail=tail, marker=marker), core.name, arguments, None
    tokens = _tokens(open_text)
    if core.kind == "named pairs":
        after = core.arguments.after
        if not envelope.closing.startswith(after) or len(tokens) != 1 or envelope.section is not None:
            raise _refuse(f"a call of key/value pairs written as {envelope.opening!r} … {envelope.closing!r}: "
                          "only one literal before the name and a closer after the last pair are derived")
        pair_tail, pair_close, _ = _split_space(envelope.closing[len(after) :])
        name = NameBetween("", "", head=core.name_head, chars=r"[^<>\s]")
        return Call(tokens[0], pair_close, head=head, tail=pair_tail), name, core.arguments, None
    if core.kind == "invoke parameters":
        if len(tokens) < (1 if envelope.section is not None else 2):
            raise _refuse(f"a named element with no literal around it ({open_text!r}): not derived")
        name_open = tokens[-1]
        call_part = open_text[: len(open_text) - len(name_open)]
        _, call_open, call_head = _split_space(call_part)
        after = core.arguments.after
        if not envelope.closing.startswith(after):
            raise _refuse("the last argument is followed otherwise than the others")
        name_tail, element_close, rest = _split_space(envelope.closing[len(after) :])
        closers = _tokens(element_close + rest)
        if not closers or (len(closers) < 2 and envelope.section is None):
            raise _refuse(f"no literal closes the call after its element ({envelope.closing!r})")
        element_close = closers[0]
        call_tail, call_close, _ = _split_space(envelope.closing[len(after) + len(name_tail) + len(element_close) :])
        name = Invoke(name_open, core.name_close, element_close, head=core.name_head, tail=name_tail)
        return Call(call_open, call_close, head=call_head, tail=call_tail), name, core.arguments, None
    if not tokens:
        raise _refuse("no literal opens a call inside the section")
    call_open, call_id = tokens[0], None
    rest = open_text[len(call_open) :]
    if rest.startswith(ID_MARK):  # the call's id, then the literal that ends it (Solar Open's)
        id_close = _tokens(rest[len(ID_MARK) :])
        if not id_close or not MARKUP.search(id_close[0]):
            raise _refuse(f"the call's id is followed by {rest[len(ID_MARK):]!r}: no literal ends it")
        call_id = CallId(renders.ids[0], id_close[0])
        rest = rest[len(ID_MARK) + len(id_close[0]) :]
    if ID_MARK in rest or ID_MARK in call_open:
        raise _refuse("the call's id is written where no declared part puts it")
    call_head, name_open, _ = _split_space(rest)
    if any(char in _SPACE for char in name_open):
        raise _refuse(f"the call opens with {open_text!r}: more literals than a call and a name opening")
    if head:
        raise _refuse(f"whitespace between the name's opening literal and the name ({envelope.opening!r})")
    name = NameBetween(name_open, core.name_close, head=core.name_head, index=core.index,
                       chars=_name_chars(core.index or core.name_close))
    if core.call_id is not None:
        if call_id is not None:
            raise _refuse("the call's id is written twice")
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


def reasoning_of(renders: Renders) -> Reasoning | None:
    """The reasoning pair around the reasoning text in a plain reply's render; None when there is none."""
    text = renders.reasoning
    if text is None:
        return None
    before = text[: text.index(REASONING_MARK)].rstrip(_SPACE)
    between = text[text.index(REASONING_MARK) + len(REASONING_MARK) : text.index(ANSWER_MARK)].strip(_SPACE)
    starts = [before.rfind(mark) for mark in "<[" if mark in before]
    closing = _tokens(between)
    if not starts or len(closing) != 1:
        return None
    opening = before[max(starts) :]
    if opening == closing[0]:
        return None
    # A prompt that opens the block, and a call turn written without closing it (Qwen3.5's, MiniMax's):
    # the model starts its calls inside the block, so a call opening at a line start ends it.
    opened = renders.prompt.rstrip(_SPACE).endswith(opening) and closing[0] not in renders.one
    return Reasoning(opening, closing[0], ends_at_call=opened)


def without_reasoning(text: str, reasoning: Reasoning | None) -> str:
    """text without a reasoning block it opens with, or the closer of one its prompt opened.

    Qwen3's template writes an empty ``<think></think>`` before a past call,
    Qwen3.5's a lone ``</think>``: the reasoning split reads that, not the
    call's shape.
    """
    if reasoning is None:
        return text
    stripped = text.lstrip(_SPACE)
    if stripped.startswith(reasoning.open) and reasoning.close in stripped:
        return stripped[stripped.index(reasoning.close) + len(reasoning.close) :]
    if stripped.startswith(reasoning.close):
        return stripped[len(reasoning.close) :]
    return text


def derive_shape(renders: Renders) -> WireShape:
    """The declaration the renders show; NoToolCallFormat saying what they do not pin down."""
    reasoning = reasoning_of(renders)
    renders = dataclasses.replace(
        renders, **{field: without_reasoning(getattr(renders, field), reasoning)
                    for field in ("one", "other_name", "two_arguments", "typed", "two_calls")
                    if getattr(renders, field) is not None})
    at = _name_at(renders)
    core = _core(renders, at)
    envelope = _envelope(renders, core)
    call, name, arguments, call_id = _shape(renders, core, envelope)
    if ID_MARK in call.open + call.close + envelope.separator + (envelope.section.open if envelope.section else ""):
        raise _refuse("the call's id is written where no declared part puts it")
    if isinstance(arguments, (JsonArguments, JsonObject)) and any("\\u00e9" in text for _, text in renders.round_trip):
        arguments = dataclasses.replace(arguments, ascii=True)  # the template's tojson escapes non-ASCII text
    stop = renders.turn_end
    stop_tokens = tuple(item for item in (envelope.ends_turn, stop)
                        if item and not any(char in _SPACE for char in item))
    try:
        return WireShape(call=call, name=name, arguments=arguments, section=envelope.section, call_id=call_id,
                         separator=envelope.separator, reasoning=reasoning,
                         stop_tokens=tuple(dict.fromkeys(stop_tokens)))
    except ShapeError as error:
        raise _refuse(f"the renders give an impossible declaration: {error}") from None
