"""Kimi K3 (XTML): ``<|open|>call tool="NAME" index="N"<|sep|>`` with typed ``<|open|>argument …<|sep|>`` values.

Kimi K3 writes a message as elements of control tokens: ``<|open|>TAG
attributes<|sep|>`` opens an element, ``<|close|>TAG<|sep|>`` closes it. A
reply, after the generation prompt ``<|open|>message role="assistant"<|sep|>``
(and ``<|open|>think<|sep|>`` when thinking is on), is::

    reasoning<|close|>think<|sep|>
    <|open|>response<|sep|>content<|close|>response<|sep|>
    <|open|>tools<|sep|>
    <|open|>call tool="NAME" index="1"<|sep|>
    <|open|>argument key="KEY" type="TYPE"<|sep|>VALUE<|close|>argument<|sep|>
    <|close|>call<|sep|>
    <|close|>tools<|sep|>
    <|close|>message<|sep|>

(one line here per element; the model writes them with nothing between).
With thinking off the prompt also opens the response, so the reply starts
with the content. Sources: Moonshot's ``encoding_k3.py`` (Kimi-K3), as the
``canitoolcall`` conformance fixtures render it; the shared corpus holds no
Kimi K3 template (its Kimi templates are K2's), so this format is chosen by
name (``"kimi-k3"``), never detected from a corpus template. Detection
probes a template by rendering a call and reading it back (``detect``); a
format cannot declare markers to be found in the template text, so a Jinja
template that writes this shape would be detected that way, and K3's own
encoder is Python, not a chat template.

Read: the tools element's calls, each argument typed by its ``type``:
``string`` is the text between the tags exactly as written (nothing
stripped, nothing unescaped); ``number``, ``boolean``, ``null``, ``array``
and ``object`` are one JSON value of that type (whitespace around it
allowed). Attribute values (the tool's name, a key) unescape ``&amp;`` and
``&quot;``. Whitespace between the elements is allowed; an empty tools
element is no call. Reasoning: the think element the prompt opened (the
engine's reasoning pair). Content: the text of the response element; the
tags of the response and message elements are the reply's framing, dropped
(text outside them is content too: the order of the elements is not
checked). Refused: a type other than those six, a value that is not JSON
of its type, an argument given twice, an empty name, an index that is not
ASCII digits, an ``&`` in an attribute that is neither ``&amp;`` nor
``&quot;``, any other text between the elements, a tools element that
never closes (a reply cut inside it raises).

Where a value ends: the encoder writes a value's text as ordinary tokens,
so ``<|close|>argument<|sep|>`` in a value looks, on text, exactly like
the closer (only token ids tell them apart). A closer ends the value only
where the next structure the encoder writes follows it (whitespace
between allowed, as between any elements): the next argument's
``<|open|>argument key="`` or the call's ``<|close|>call<|sep|>``. Any
other ``<|close|>argument<|sep|>`` is the value's text, in every type (a
JSON value is then decoded from it). Refused as ambiguous, with that
reason: a closer followed by ``<|close|>call<|sep|>`` after which text
(not the next call or the tools closer) and a later closer stand, and a
closer followed by ``<|open|>argument key="`` that opens no argument tag:
a value holding the closer and that structure as text reads the same.

Not handled: the index is neither checked against the call's place nor
returned (it is not an id); a value that holds, as written, the closer
followed by the next structure and still reads (as the end of the value
and a further argument, or the end of the call): it is read as the
structure (declared in ``wire_limits``); a value (or a name) holding
``<|close|>tools<|sep|>`` as text: it ends the tools element, value or
not (declared in ``wire_limits``); a think element the prompt
opened that the model skips straight to ``<|open|>response<|sep|>`` (the
engine ends reasoning only at its closer, so all of it is reasoning); the
``<|end_of_msg|>`` stop token (a server removes it; left in, it is text);
the name of a call the reply cut (``CutToolCall.name``) is the name as
written, its ``&amp;`` and ``&quot;`` not undone.
No response template (see ``no_response_template``); vLLM's ``kimi_k3`` parser reads this wire.
"""

from __future__ import annotations

import json
import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import (
    Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import decode_whole, skip_space
from templatestudio.wire.sections import read_section
from templatestudio.wire.xml_params import Boundary, find_boundary, holds_boundary, value_ends
from templatestudio.resumable_match import either, literal
from templatestudio.wire.shape import NEVER, Call, HandWritten, Invoke, Reasoning, Section, WireShape

# The declared shape. The section, the call element, the reasoning pair and
# the framing are declared; the arguments are hand-written (see the why),
# so the writer, the openers and the section's reader are this module's own.
WIRE = WireShape(
    section=Section("<|open|>tools<|sep|>", "<|close|>tools<|sep|>"),
    call=Call(),
    # head: the index the writer gives its one call, and the tag's end; the
    # reader takes any ASCII-digit index.
    name=Invoke('<|open|>call tool="', '" index="', "<|close|>call<|sep|>", head='1"<|sep|>'),
    arguments=HandWritten(
        "each argument's tag names its value's JSON type (type=\"string\", \"number\", \"boolean\", \"null\", "
        "\"array\" or \"object\") and its key is an attribute with &amp; and &quot; escaped; XmlParameters "
        "says only text or typed-as-string-or-JSON, with keys as written",
        markup=('<|open|>argument key="', "<|close|>argument<|sep|>"),  # every argument's tags
    ),
    separator="",
    # A reply that opens with the response element skipped the think element its prompt opened.
    reasoning=Reasoning("<|open|>think<|sep|>", "<|close|>think<|sep|>", skipped_by=("<|open|>response<|sep|>",)),
    stop_tokens=("<|end_of_msg|>",),
    # The response element's tags and the message's close: framing, dropped by the reader.
    framing=("<|open|>response<|sep|>", "<|close|>response<|sep|>", "<|close|>message<|sep|>"),
    # The encoder writes its elements with nothing between them: whitespace beside a
    # block or a call is the model's, and stays.
    spacing="",
)

SECTION, SECTION_END = WIRE.section.open, WIRE.section.close
CALL, CALL_END = WIRE.name.open, WIRE.name.close
SEP = "<|sep|>"
ARGUMENT, ARGUMENT_END = '<|open|>argument key="', "<|close|>argument<|sep|>"
_INDEX, _TYPE = WIRE.name.name_close[1:], ' type="'
# Where a value ends: at a closer the encoder's next structure follows (whitespace
# between, as the reader allows between elements), the next argument's tag or the
# call's closer. Any other closer in a value is its text (the encoder writes a
# value's text as ordinary tokens, so the text alone cannot tell it from a marker).
_ENDS = value_ends(ARGUMENT_END, f"{re.escape(ARGUMENT)}|{re.escape(CALL_END)}")
_DIGITS = re.compile(r"[0-9]+")
_ENTITY = re.compile(r"&(amp;|quot;)?")
_UNESCAPED = {"amp;": "&", "quot;": '"'}
# What each type attribute says the JSON value is (bool is an int in Python: told apart first).
_TYPES = {
    "number": lambda value: type(value) in (int, float),
    "boolean": lambda value: type(value) is bool,
    "null": lambda value: value is None,
    "array": lambda value: type(value) is list,
    "object": lambda value: type(value) is dict,
}
TYPE_NAMES = ("string", *_TYPES)


def _attribute(region: str, start: int, what: str) -> tuple[str, int]:
    """The attribute value from start (just past its opening quote), unescaped, and the offset past its closing quote."""
    end = region.find('"', start)
    if end == -1:
        raise CallSyntaxError(f"{what} at offset {start} has no closing quote")
    pieces, cursor = [], start
    for entity in _ENTITY.finditer(region, start, end):
        if entity.group(1) is None:
            raise CallSyntaxError(f"{what} at offset {start} holds an & that is neither &amp; nor &quot;")
        pieces.append(region[cursor : entity.start()] + _UNESCAPED[entity.group(1)])
        cursor = entity.end()
    pieces.append(region[cursor:end])
    return "".join(pieces), end + 1


def _value(region: str, start: int, end: int, key: str, kind: str) -> object:
    if kind == "string":
        return region[start:end]
    check = _TYPES.get(kind)
    if check is None:
        raise CallSyntaxError(f"the argument {key!r} has type {kind!r}, not one of {', '.join(TYPE_NAMES)}")
    value = decode_whole(region, start, end)
    if not check(value):
        raise CallSyntaxError(f"the argument {key!r} of type {kind!r} holds {json.dumps(value)[:40]}")
    return value


def _read_call(region: str, index: int, found: Found | None) -> tuple[ParsedToolCall, None, int]:
    """The call whose name starts at index (just past CALL), and the offset past CALL_END."""
    name, position = _attribute(region, index, "the tool name")
    if not name:
        raise CallSyntaxError(f"the call at offset {index} has an empty tool name")
    if not region.startswith(_INDEX, position):
        raise CallSyntaxError(f"expected{_INDEX}N\" after the tool name {name!r}, at offset {position}")
    number = _DIGITS.match(region, position + len(_INDEX))
    if number is None or not region.startswith('"' + SEP, number.end()):
        raise CallSyntaxError(f"the index of {name!r} at offset {position} is not ASCII digits closed by \"{SEP}")
    position = skip_space(region, number.end() + 1 + len(SEP))
    arguments: dict = {}
    while region.startswith(ARGUMENT, position):
        key, after = _attribute(region, position + len(ARGUMENT), "the argument key")
        if not region.startswith(_TYPE, after):
            raise CallSyntaxError(f"the argument {key!r} at offset {position} has no type attribute")
        kind, after = _attribute(region, after + len(_TYPE), "the type")
        if not region.startswith(SEP, after):
            raise CallSyntaxError(f"expected {SEP} after the argument {key!r}'s type, at offset {after}")
        after += len(SEP)
        boundary = find_boundary(region, after, len(region), _ENDS, True)
        if not isinstance(boundary, Boundary):
            raise CallSyntaxError(f"the value of {key!r} has no {ARGUMENT_END} followed by {ARGUMENT} or {CALL_END}")
        if key in arguments:
            raise CallSyntaxError(f"the argument {key!r} is given twice")
        arguments[key] = _value(region, after, boundary.value_end, key, kind)
        last = (key, boundary.value_end)
        position = skip_space(region, boundary.resume)
        if region.startswith(ARGUMENT, position):
            _argument_head(region, position, last)
    if not region.startswith(CALL_END, position):
        raise CallSyntaxError(f"expected {ARGUMENT} or {CALL_END} at offset {position}")
    position += len(CALL_END)
    following = skip_space(region, position)
    if arguments and not region.startswith((CALL, SECTION_END), following) \
            and region.find(ARGUMENT_END, following) != -1:
        _ambiguous(last, CALL_END, f"text follows the call at offset {following}")
    return ParsedToolCall(name, arguments), None, position


def _argument_head(region: str, position: int, last: tuple[str, int]) -> None:
    """Refuses an argument's tag at position that follows a value's closer but is no tag (see _ambiguous)."""
    try:
        key, after = _attribute(region, position + len(ARGUMENT), "the argument key")
        if not region.startswith(_TYPE, after):
            raise CallSyntaxError(f"the argument {key!r} at offset {position} has no type attribute")
        _, after = _attribute(region, after + len(_TYPE), "the type")
        if not region.startswith(SEP, after):
            raise CallSyntaxError(f"expected {SEP} after the argument {key!r}'s type, at offset {after}")
    except CallSyntaxError as error:
        _ambiguous(last, ARGUMENT, str(error))


def _ambiguous(last: tuple[str, int], structure: str, what: str) -> None:
    """A value's closer followed by the next structure, then no such structure: the value may hold both."""
    key, at = last
    raise CallSyntaxError(
        f"the value of {key!r} ends at offset {at}, where {ARGUMENT_END} is followed by {structure}, but {what}: "
        f"a value holding {ARGUMENT_END} then {structure} as text cannot be told from its end"
    )


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    if opener.literal != SECTION:
        return []  # framing: the text around it is the content
    return read_section(region, SECTION, SECTION_END, CALL, _read_call, found=found)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;")


def _type_name(value: object) -> str:
    return next(name for name, check in (("string", lambda v: type(v) is str), *_TYPES.items()) if check(value))


def _written(value: object) -> str:
    """A value as the encoder writes it: a string as it is, any other value as JSON."""
    return value if type(value) is str else json.dumps(value, ensure_ascii=False)


# Hand-written: the declared arguments are (see WIRE), so the call is written here.
def write_call(call: ParsedToolCall) -> str:
    arguments = "".join(
        f'{ARGUMENT}{_escape(key)}"{_TYPE}{_type_name(value)}"{SEP}{_written(value)}{ARGUMENT_END}'
        for key, value in call.arguments.items()
    )
    tag = f"{CALL}{_escape(call.name)}{WIRE.name.name_close}{WIRE.name.head}"
    return f"{SECTION}{tag}{arguments}{CALL_END}{SECTION_END}"


OPENERS = (
    Opener(SECTION, opener_pattern(SECTION, SPACES, either(literal(CALL), literal(SECTION_END))),
           lambda: TagExtent(len(SECTION), SECTION_END)),
    # Framing: each region is the tag alone; a reply cut inside one is text.
    *(Opener(tag, literal(tag), lambda tag=tag: TagExtent(0, tag), cut_after=NEVER) for tag in WIRE.framing),
)

RESPONSE, RESPONSE_END, MESSAGE_END = WIRE.framing
THINK, THINK_END = WIRE.reasoning_pair
CALL_SAMPLE = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ARGS = (f'{ARGUMENT}base"{_TYPE}string"{SEP}EUR{ARGUMENT_END}'
         f'{ARGUMENT}quote"{_TYPE}string"{SEP}JPY{ARGUMENT_END}')
_ONE = f'{CALL}get_exchange_rate" index="1"{SEP}{_ARGS}{CALL_END}'
TYPED_CALL = ParsedToolCall("book", {"seats": 2, "price": 99.5, "window": True, "via": None,
                                     "legs": ["LIS", {"gate": None}], "meta": {"n": [1]}, "note": " 42 "})
_TYPED = (f'{CALL}book" index="2"{SEP}{ARGUMENT}seats"{_TYPE}number"{SEP}2{ARGUMENT_END}'
          f'{ARGUMENT}price"{_TYPE}number"{SEP}99.5{ARGUMENT_END}'
          f'{ARGUMENT}window"{_TYPE}boolean"{SEP}true{ARGUMENT_END}'
          f'{ARGUMENT}via"{_TYPE}null"{SEP}null{ARGUMENT_END}'
          f'{ARGUMENT}legs"{_TYPE}array"{SEP}["LIS", {{"gate": null}}]{ARGUMENT_END}'
          f'{ARGUMENT}meta"{_TYPE}object"{SEP}{{"n": [1]}}{ARGUMENT_END}'
          f'{ARGUMENT}note"{_TYPE}string"{SEP} 42 {ARGUMENT_END}{CALL_END}')


# What the writer puts before and after a value (one tail stands for all: see holds_boundary).
_HEAD, _TAIL = f'{ARGUMENT}k"{_TYPE}string"{SEP}', ARGUMENT_END + CALL_END


def _bad_argument(tag_type: str, body: str) -> str:
    return f'{SECTION}{CALL}a" index="1"{SEP}{ARGUMENT}x"{_TYPE}{tag_type}"{SEP}{body}{ARGUMENT_END}{CALL_END}{SECTION_END}'


FORMAT = Format.declared(
    WIRE,
    name="kimi-k3",
    description='<|open|>call tool="NAME" index="N"<|sep|> with typed <|open|>argument<|sep|> values (Kimi K3 XTML)',
    openers=OPENERS,
    read_region=read_region,
    write_call=write_call,
    response_template=None,
    no_response_template=(
        "the response-template language neither unescapes &amp; and &quot; in a name or key nor types a value "
        "by its tag's type attribute, and a thinking reply's think element is opened by the prompt"
    ),
    samples=(
        Sample(f"{RESPONSE_END}{SECTION}{_ONE}{SECTION_END}{MESSAGE_END}", (CALL_SAMPLE,),
               source="Kimi K3's encoder, thinking off: the prompt opened the response"),
        Sample(f"{THINK}A rate, then a booking.{THINK_END}{RESPONSE}{RESPONSE_END}{SECTION}{_ONE}{_TYPED}"
               f"{SECTION_END}{MESSAGE_END}", (CALL_SAMPLE, TYPED_CALL),
               source="thinking (its opener written out), two calls, every type"),
        Sample(f"{RESPONSE}Let me check.{RESPONSE_END}{SECTION}{CALL}ping\" index=\"1\"{SEP}{CALL_END}{SECTION_END}",
               (ParsedToolCall("ping", {}),), source="content before the tools, no arguments"),
        Sample(f'{SECTION}{CALL}save" index="1"{SEP}{ARGUMENT}q&amp;a"{_TYPE}string"{SEP}fish &amp; "chips"'
               f"{ARGUMENT_END}{CALL_END}{SECTION_END}", (ParsedToolCall("save", {"q&a": 'fish &amp; "chips"'}),),
               source="an escaped key; the value as written"),
        Sample(f"{SECTION}\n{_ONE.replace(SEP + ARGUMENT, SEP + chr(10) + ARGUMENT)}\n{SECTION_END}", (CALL_SAMPLE,),
               source="newlines between the elements (read, never written)"),
        Sample(f'{SECTION}{CALL}write_file" index="1"{SEP}{ARGUMENT}content"{_TYPE}string"{SEP}{ARGUMENT_END} is how '
               f"args end{ARGUMENT_END}{CALL_END}{SECTION_END}",
               (ParsedToolCall("write_file", {"content": f"{ARGUMENT_END} is how args end"}),),
               source="a value holding the argument's closer as text (the encoder writes it as ordinary tokens)"),
    ),
    near_misses=(
        NearMiss(f'{RESPONSE_END}{SECTION}{CALL}get_exch', True, "cut inside the tool name"),
        NearMiss(f"{SECTION}{_ONE}", True, "the tools element never closes"),
        NearMiss(_bad_argument("integer", "1"), True, "a type the encoder never writes"),
        NearMiss(_bad_argument("number", '"15"'), True, "a number that is a JSON string"),
        NearMiss(_bad_argument("boolean", "1"), True, "a boolean that is a number"),
        NearMiss(_bad_argument("object", "{"), True, "an object that is not JSON"),
        NearMiss(f'{SECTION}{CALL}a" index="1"{SEP}{ARGUMENT}x"{_TYPE}string"{SEP}1{ARGUMENT_END}'
                 f'{ARGUMENT}x"{_TYPE}string"{SEP}2{ARGUMENT_END}{CALL_END}{SECTION_END}', True, "an argument given twice"),
        NearMiss(f'{SECTION}{CALL}a&b" index="1"{SEP}{CALL_END}{SECTION_END}', True, "an unescaped & in the name"),
        NearMiss(f'{SECTION}{CALL}a"{SEP}{CALL_END}{SECTION_END}', True, "no index"),
        NearMiss(f'{SECTION}{CALL}" index="1"{SEP}{CALL_END}{SECTION_END}', True, "an empty tool name"),
        NearMiss(f'{SECTION}{CALL}a" index="1"{SEP}{ARGUMENT}x"{_TYPE}string"{SEP}{ARGUMENT_END}{CALL_END} and more'
                 f"{ARGUMENT_END}{CALL_END}{SECTION_END}", True,
                 "a value holding the argument's closer and the call's closer as text"),
        NearMiss(f"Kimi K3 opens its calls with {SECTION} and closes them with {SECTION_END}.", False,
                 "prose naming the tokens"),
    ),
    wire_limits=(
        # Not a top-level key: it is an attribute. A value as written: a string inside JSON
        # has its quotes escaped, so only a string value can hold the argument's tag itself.
        WireLimit(f"a value holding, as written, {ARGUMENT_END} followed (after whitespace or nothing) by "
                  f"{ARGUMENT} or {CALL_END}: the value ends there",
                  lambda arguments: any(holds_boundary(_written(value), _HEAD, _ENDS, _TAIL)
                                        for value in arguments.values())),
        WireLimit(f"a string holding {SECTION_END}, which ends the tools element",
                  lambda arguments: any_string(arguments, lambda s: SECTION_END in s)),
    ),
    corpus_labels=("other:kimi#k3-xtml",),
    vllm_parser=("kimi_k3",),
)
