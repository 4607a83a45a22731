"""How a call's arguments are written: the call's core in the one-call render (``derive_renders.Renders``).

Tried in turn on the one-call render (``core_of``): a JSON object around
the name holding the arguments under a key (the call object, perhaps alone
in a JSON list), the arguments' JSON object after the name, the
keyed-values grammar after the name, XML-style parameters after the name
(the second argument's render gives what stands between two), or GLM's
key/value element pairs. Each gives the call's ``Core``: the text from the
name (or the call object) to the end of its arguments, and how the name
and arguments are written.

Not handled here: where the name is, and what surrounds one call or
stands between two (``derive_text``); arguments written in any other way
are refused with ``NoToolCallFormat``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from templatestudio.derive_literals import SPACE, common_suffix, literal_pieces, refuse, split_space
from templatestudio.derive_renders import NAME, ONE, Renders
from templatestudio.wire import keyed_values
from templatestudio.wire.base import MARKUP
from templatestudio.wire.shape import (
    CallId, Invoke, JsonArguments, JsonList, JsonObject, KeyValuePairs, NameBetween, NameKey, OwnValues,
    XmlParameters,
)

__all__ = ["Core", "core_of"]

_DECODER = json.JSONDecoder()
_INDEX = re.compile(r"[:#_.\-]0(?=[^0-9])")


@dataclass(frozen=True)
class Core:
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


def _json_call(renders: Renders, at: int) -> Core | None:
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
            raise refuse(f"the call object holds its arguments as a JSON string under {string_keys[0]!r}")
        if len(name_keys) != 1 or len(argument_keys) != 1:
            raise refuse(f"the call object {text[start:end]!r} holds no single name key and arguments key")
        extra = sorted(set(item) - {*name_keys, *argument_keys})
        id_key = extra[0] if len(extra) == 1 and renders.ids and item[extra[0]] == renders.ids[0] else None
        if extra and id_key is None:
            raise refuse(f"the call object holds keys beyond the name and the arguments: {extra}")
        if id_key is not None and list(item)[-1] != id_key:
            raise refuse(f"the call's id is written under {id_key!r} before its arguments (written after, if at all)")
        arguments = JsonArguments(argument_keys[0], listed=_indented_list(text, start, item), id_key=id_key)
        if arguments.listed is not None:  # the whole indented list is the core: its layout is json.dumps'
            start, end = _list_span(text, start)
        return Core("json call", start, end, NameKey(name_keys[0]), arguments)
    return None


def _list_span(text: str, start: int) -> tuple[int, int]:
    bracket = len(text[:start].rstrip(SPACE)) - 1
    return bracket, _decoded(text, bracket)[1]


def _indented_list(text: str, start: int, item: dict) -> JsonList | None:
    """A JSON list indented as json.dumps indents it, around the call object at start; None if not one."""
    before = text[:start].rstrip(SPACE)
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


def _named_json(renders: Renders, at: int) -> Core | None:
    """A JSON object after the name and a closing literal (and the call's id, then its closing literal)."""
    text = renders.one
    brace, between = _after_name(text, at)
    found = _decoded(text, brace) if brace != -1 and '"' not in between else None
    if found is None or found[0] != ONE:
        return None
    call_id = None
    if renders.ids and renders.ids[0] in between:  # Mistral's NAME[CALL_ID]ID[ARGS]
        between, id_part = between.split(renders.ids[0], 1)
        id_lead, id_close, id_head = split_space(id_part)
        if id_lead or not MARKUP.search(id_close) or any(char in SPACE for char in id_close):
            raise refuse(f"the call's id is followed by {id_part!r}: no literal ends it")
        call_id, between = CallId(renders.ids[0], id_close, after_name=True), between + id_head
    index = _INDEX.match(between)  # the call's number after the name (Kimi K2's functions.NAME:0)
    if index is not None:
        between = between[index.end() :]
    lead, close, head = split_space(between)
    if not close or any(char in SPACE for char in close):
        raise refuse(f"the arguments' object follows the name after {between!r}: no one closing literal")
    return Core("named json", at, found[1], None, JsonObject(), lead + close, head, call_id,
                 index.group() if index else "")


def _own_values(renders: Renders, at: int) -> Core | None:
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
        raise refuse("two arguments are not written in the keyed-values grammar one is written in")
    if any(char in SPACE for char in between):
        raise refuse(f"whitespace between the name and its arguments ({between!r})")
    # A None the template spells the Python way (Gemma 4's): the writer spells it so too.
    null = "None" if any(":None" in render for _, render in renders.round_trip) else "null"
    # Every value quoted as text (FunctionGemma's 42 between the quotes): text values, typed by the schema later.
    return Core("own values", at, brace + len(written), None, OwnValues(quote, null, as_text), between)


def _xml_parameters(renders: Renders, at: int) -> Core | None:
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
        if not MARKUP.search(typed_inside) or typed_inside.rstrip(SPACE) == inside.rstrip(SPACE):
            raise refuse("two arguments are not written with the same tags")
        typed = (inside, typed_inside)
    size = common_suffix(before_key, between)
    opening = before_key[len(before_key) - size :].lstrip(SPACE)
    if not MARKUP.search(opening):
        return None  # not tags: quotes and brackets of some other grammar (a Python dict, a call's keywords)
    name_part = before_key[: len(before_key) - len(opening)]
    _, name_close, head = split_space(name_part)
    if not name_close and not name_part.strip(SPACE):
        return _key_value_pairs(renders, at, opening, name_part, inside, between, value_end)
    if not name_close or name_part[: len(name_part) - len(name_close) - len(head)]:
        raise refuse(f"the name is followed by {name_part!r}: no literal closes it before its arguments")
    newline = inside.endswith("\n") and between.startswith("\n")
    name_close_value = inside[:-1] if newline else inside
    shut = between[len("\n") if newline else 0 : len(between) - len(opening)]
    _, close, after = split_space(shut)
    if not close or shut[: len(shut) - len(close) - len(after)]:
        raise refuse(f"no literal closes an argument before the next ({between!r})")
    spelled = _spelling(renders)
    parameters = XmlParameters(opening, name_close_value, close, after=after, newline_inside=newline, values=spelled,
                               typed=typed)
    end = value_end + (1 if newline else 0) + len(close)
    if not text.startswith(close, end - len(close)):
        raise refuse("the last argument is closed otherwise than the others")
    return Core("invoke parameters", at, end, None, parameters, name_close, head)


def _spelling(renders: Renders) -> str:
    """How a text-valued wire spells a non-string: Python's str() ("True") or JSON ("true"), from the boolean render."""
    return "str" if "True" in renders.typed else "json"


def _key_value_pairs(renders: Renders, at: int, key_open: str, head: str, inside: str, between: str,
                     value_end: int) -> Core:
    """GLM's shape: the name ends where the first key's element opens, and each argument is two elements."""
    tags = literal_pieces(inside)
    if len(tags) != 2 or not all(MARKUP.search(tag) for tag in tags):
        raise refuse(f"the key and its value are separated by {inside!r}: not a closing tag and an opening one")
    key_close, value_open = tags
    spacing = inside[len(key_close) : len(inside) - len(value_open)]
    shut = between[: len(between) - len(key_open)]
    _, value_close, after = split_space(shut)
    if not value_close or shut[: len(shut) - len(value_close) - len(after)] or spacing.strip(SPACE):
        raise refuse(f"no literal closes a value before the next key ({between!r})")
    spelled = _spelling(renders)
    pairs = KeyValuePairs(key_open, key_close, value_open, value_close, between=spacing, after=after, values=spelled)
    return Core("named pairs", at, value_end + len(value_close), None, pairs, "", head)


def core_of(renders: Renders, at: int) -> Core:
    text = renders.one
    found = (_json_call(renders, at) or _named_json(renders, at) or _own_values(renders, at)
             or _xml_parameters(renders, at))
    if found is None:
        raise refuse(f"the arguments are written in no way derived here (a JSON object, the keyed-values grammar, "
                      f"XML-style parameters): {text[at:at + 80]!r}")
    return found
