"""MiniMax M3: ``]<]minimax[>[``-prefixed tags, ``<invoke name="NAME">`` holding one element per argument, nested.

MiniMax M3 writes every structural tag after the ``]<]minimax[>[`` marker
(``NS`` below), so no tag can be confused with text::

    NS<tool_call>
    NS<invoke name="create_order">NS<user_id>42NS</user_id>
    NS<shipping>NS<city>SingaporeNS</city>NS</shipping>
    NS<items>NS<item>pen-007NS</item>NS<item>book-001NS</item>NS</items>
    NS</invoke>
    NS</tool_call>

Read: one block holding one or more invokes (whitespace between them),
each invoke holding one element per argument, named after its key. An
element holding only text is that text, exactly as written (values are
text, typed later against the tool's schema: ``string_arguments``); an
element holding elements is an object of them, or a list when every child
is named ``item`` (how the template writes a list); whitespace between
child elements is layout. Any number of blocks in a reply, text between
them.

Refused: an empty block or one holding anything but invokes, an element
whose closing tag names another element, text beside child elements, a
key given twice in one object, elements nested deeper than 100, a
``NS`` marker that opens no tag, an invoke or block never closed.
Reasoning: ``<mm:think>…</mm:think>`` at the start of the reply.

Not handled (``wire_limits``): a string holding the ``NS`` marker, a key
that is empty, starts with ``/`` or holds ``>``, or is ``tool_call``; an empty list or object
below the top (the template writes an empty element: read as ``""``), an
object whose only key is ``item`` below the top (read as a list), values
that are not strings (written as text). Nested leaves stay text: typing
by the schema reaches the top-level values only. MiniMax M3's published
chat template in the corpus writes MiniMax M2's ``<minimax:tool_call>``
wire instead (``minimax_xml``); this module reads the namespaced wire the
model's tokenizer and vLLM's ``minimax_m3`` parser define.
"""

from __future__ import annotations

import json

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.resumable_match import literal
from templatestudio.wire.base import (
    Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import skip_space
from templatestudio.wire.shape import Call, HandWritten, Invoke, Reasoning, Section, WireShape
from templatestudio.wire.sections import element_spans

# The block and the invoke are literals, each after the namespace marker
# ]<]minimax[>[ (NS); the arguments are nested elements whose tags are their
# keys, which no declaration of fixed literals says.
WIRE = WireShape(
    section=Section("]<]minimax[>[<tool_call>", "]<]minimax[>[</tool_call>", head="\n", tail="\n"),
    call=Call(),
    name=Invoke(']<]minimax[>[<invoke name="', '">', "]<]minimax[>[</invoke>"),
    arguments=HandWritten("each argument is an element named after its key (NS<KEY>…NS</KEY>), nested for "
                          "objects and lists: the tags are the keys, not fixed literals", text_values=True,
                          markup=("]<]minimax[>[<", "]<]minimax[>[</")),  # every argument tag's fixed start
    separator="\n",
    reasoning=Reasoning("<mm:think>", "</mm:think>"),
)

NS = WIRE.section.open[: -len("<tool_call>")]
OPEN, CLOSE = WIRE.section.open, WIRE.section.close
INVOKE, NAME_END, END_INVOKE = WIRE.name.open, WIRE.name.name_close, WIRE.name.close
ELEMENT, END_ELEMENT = f"{NS}<", f"{NS}</"
ITEM = "item"  # the tag the template writes each list item in
MAX_DEPTH = 100


def _element(region: str, position: int, end: int, depth: int) -> tuple[str, object, int]:
    """The element whose tag opens at position: (key, value, offset past its closing tag)."""
    if depth > MAX_DEPTH:
        raise CallSyntaxError(f"elements nested deeper than {MAX_DEPTH} at offset {position}")
    start = position + len(ELEMENT)
    close = region.find(">", start, end)
    key = region[start:close] if close != -1 else ""
    if close == -1 or not key or key.startswith("/") or NS in key:
        raise CallSyntaxError(f"no element tag NS<KEY> at offset {position}")
    position = close + 1
    children: list[tuple[str, object]] = []
    text_start = position
    while True:
        marker = region.find(NS, position, end)
        if marker == -1:
            raise CallSyntaxError(f"the element {key!r} is never closed")
        if region.startswith(END_ELEMENT, marker):
            closing = f"{END_ELEMENT}{key}>"
            if not region.startswith(closing, marker):
                raise CallSyntaxError(f"the element {key!r} is closed by another tag at offset {marker}")
            after = marker + len(closing)
            if not children:
                return key, region[text_start:marker], after
            if region[position:marker].strip(" \t\r\n"):
                raise CallSyntaxError(f"text beside the elements inside {key!r} at offset {position}")
            return key, _container(key, children), after
        if region[position:marker].strip(" \t\r\n"):
            raise CallSyntaxError(f"text beside the elements inside {key!r} at offset {position}")
        if not region.startswith(ELEMENT, marker):
            raise CallSyntaxError(f"a marker that opens no tag at offset {marker}")
        child_key, value, position = _element(region, marker, end, depth + 1)
        children.append((child_key, value))


def _container(key: str, children: list[tuple[str, object]]) -> object:
    """The children of one element: a list when every one is an item, else an object of distinct keys."""
    if all(child == ITEM for child, _ in children):
        return [value for _, value in children]
    return _object(key, children)


def _object(key: str, children: list[tuple[str, object]]) -> dict:
    found: dict[str, object] = {}
    for child, value in children:
        if child in found:
            raise CallSyntaxError(f"{child!r} is given twice in {key!r}")
        found[child] = value
    return found


def _invoke(region: str, position: int, end: int) -> tuple[ParsedToolCall, int]:
    start = position + len(INVOKE)
    close = region.find(NAME_END, start, end)
    if close == -1 or any(char in region[start:close] for char in '"\n') or close == start:
        raise CallSyntaxError(f'the invoke name at offset {start} is not closed by {NAME_END}')
    name, position = region[start:close], close + len(NAME_END)
    children: list[tuple[str, object]] = []
    while True:
        position = skip_space(region, position)
        if region.startswith(END_INVOKE, position):
            return ParsedToolCall(name, _object(name, children)), position + len(END_INVOKE)
        if not region.startswith(ELEMENT, position) or region.startswith(END_ELEMENT, position):
            raise CallSyntaxError(f"expected an argument element or {END_INVOKE} at offset {position}")
        key, value, position = _element(region, position, end, 1)
        children.append((key, value))


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    # The extent ends every region just past the closer.
    return element_spans(region, len(OPEN), len(region) - len(CLOSE), INVOKE, _invoke,
                         none=f"no {INVOKE}…> in the block", expected=f"expected another invoke or {CLOSE}")


def _written(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "".join(f"{ELEMENT}{key}>{_written(item)}{END_ELEMENT}{key}>" for key, item in value.items())
    if isinstance(value, list):
        return "".join(f"{ELEMENT}{ITEM}>{_written(item)}{END_ELEMENT}{ITEM}>" for item in value)
    return json.dumps(value)


def write_call(call: ParsedToolCall) -> str:
    """One call in its block, as the template writes it: each argument an element, objects and lists nested."""
    section = WIRE.section
    invoke = f"{INVOKE}{call.name}{NAME_END}{_written(call.arguments)}{END_INVOKE}"
    return f"{section.open}{section.head}{invoke}{section.tail}{section.close}"


# The block's tag opens a call only with an invoke after it.
OPENER = Opener(OPEN, opener_pattern(OPEN, SPACES, literal(INVOKE)), lambda: TagExtent(len(OPEN), CLOSE))


def _nested(value: object, top: bool = True) -> bool:
    """Whether value holds, below the top, what reads back otherwise: an empty container or an {"item": …}."""
    if isinstance(value, dict):
        if not top and (not value or list(value) == [ITEM]):
            return True
        return any(_nested(item, False) for item in value.values())
    if isinstance(value, list):
        return not value or any(_nested(item, False) for item in value)
    return False


def _scalars(value: object) -> bool:
    if isinstance(value, dict):
        return any(_scalars(item) for item in value.values())
    if isinstance(value, list):
        return any(_scalars(item) for item in value)
    return not isinstance(value, str)


_BLOCK_KEY = OPEN[len(ELEMENT) : -1]  # an element of this key would close the block


def _bad_key(value: object) -> bool:
    if isinstance(value, dict):
        return any(not key or key.startswith("/") or ">" in key or NS in key or key == _BLOCK_KEY or _bad_key(item)
                   for key, item in value.items())
    return isinstance(value, list) and any(_bad_key(item) for item in value)


CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ONE = f'{OPEN}\n{INVOKE}get_exchange_rate">{ELEMENT}base>EUR{END_ELEMENT}base>{ELEMENT}quote>JPY{END_ELEMENT}quote>' \
       f'{END_INVOKE}\n{CLOSE}'
_ORDER = (f'{OPEN}\n{INVOKE}create_order">{ELEMENT}user_id>42{END_ELEMENT}user_id>'
          f'{ELEMENT}shipping>{ELEMENT}city>Singapore{END_ELEMENT}city>{ELEMENT}zip>018956{END_ELEMENT}zip>'
          f'{END_ELEMENT}shipping>\n{ELEMENT}items>\n{ELEMENT}item>{ELEMENT}sku>book-001{END_ELEMENT}sku>'
          f'{END_ELEMENT}item>\n{ELEMENT}item>{ELEMENT}sku>pen-007{END_ELEMENT}sku>{END_ELEMENT}item>\n'
          f'{END_ELEMENT}items>\n{END_INVOKE}\n{CLOSE}')
ORDER = ParsedToolCall("create_order", {"user_id": "42", "shipping": {"city": "Singapore", "zip": "018956"},
                                        "items": [{"sku": "book-001"}, {"sku": "pen-007"}]})

FORMAT = Format.declared(
    WIRE,
    name="minimax-m3",
    description='NS<tool_call>NS<invoke name="NAME">NS<KEY>text or nested elements (MiniMax M3, NS = ]<]minimax[>[)',
    openers=(OPENER,),
    read_region=read_region,
    write_call=write_call,
    response_template=None,
    no_response_template="the nested elements are named after their keys, which no response-template field can read",
    samples=(
        Sample(_ONE, (CALL,), source="the block vLLM's minimax_m3 parser documents"),
        Sample(f"<mm:think>\nThe user wants a rate.\n</mm:think>\nI will check.\n{_ONE}", (CALL,),
               source="with reasoning and text before the block"),
        Sample(_ORDER, (ORDER,), source="nested objects and a list of items, values as written"),
        Sample(f'{OPEN}\n{INVOKE}a">{ELEMENT}x>1{END_ELEMENT}x>{END_INVOKE}\n{INVOKE}ping">{END_INVOKE}\n{CLOSE}',
               (ParsedToolCall("a", {"x": "1"}), ParsedToolCall("ping", {})), source="two invokes in one block"),
        Sample(f'{OPEN}{INVOKE}note">{ELEMENT}text> line one\n<b>two</b></text> {END_ELEMENT}text>{END_INVOKE}{CLOSE}',
               (ParsedToolCall("note", {"text": " line one\n<b>two</b></text> "}),),
               source="a value holding tags without the marker, kept exactly"),
        Sample(f'{OPEN}\n{INVOKE}build">{ELEMENT}nodes>{ELEMENT}item>{ELEMENT}layer>36{END_ELEMENT}layer>'
               f'{ELEMENT}features>{END_ELEMENT}features>{END_ELEMENT}item>{END_ELEMENT}nodes>{END_INVOKE}\n{CLOSE}',
               (ParsedToolCall("build", {"nodes": [{"layer": "36", "features": ""}]}),),
               source="a model's reply: a list of one object, an empty element read as empty text"),
    ),
    near_misses=(
        NearMiss(f"{OPEN}\n{INVOKE}get_exch", True, "cut inside the name"),
        NearMiss(f'{OPEN}\n{INVOKE}a">{ELEMENT}x>1{END_ELEMENT}x>{END_INVOKE}\n', True, "never closed"),
        NearMiss(f'{OPEN}{INVOKE}a">{ELEMENT}x>1{END_ELEMENT}y>{END_INVOKE}{CLOSE}', True, "a closing tag of another name"),
        NearMiss(f'{OPEN}{INVOKE}a">{ELEMENT}x>1{END_ELEMENT}x>{ELEMENT}x>2{END_ELEMENT}x>{END_INVOKE}{CLOSE}', True,
                 "an argument given twice"),
        NearMiss(f'{OPEN}{INVOKE}a">{ELEMENT}x>note{ELEMENT}y>1{END_ELEMENT}y>{END_ELEMENT}x>{END_INVOKE}{CLOSE}',
                 True, "text beside a child element"),
        NearMiss(f'{OPEN}{INVOKE}a">{ELEMENT}x>1{END_ELEMENT}x>{END_INVOKE}done{CLOSE}', True, "text inside the block"),
        NearMiss(f"M3 opens its calls with {OPEN} and a newline.", False, "prose naming the tag"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {NS}, which starts a tag",
                  lambda arguments: any_string(arguments, lambda s: NS in s)),
        WireLimit(f"a key that is empty, starts with / or holds >, or is {_BLOCK_KEY!r} (its closing tag closes the "
                  f"block): the tag cannot hold it", _bad_key),
        WireLimit(f"below the top, an empty list or object (written as an empty element, read as \"\") or an "
                  f"object whose only key is {ITEM!r} (read as a list)", _nested),
        WireLimit("a value that is not a string: the wire writes it as text, typed against the schema afterwards "
                  "(top-level values only)", _scalars),
    ),
    corpus_labels=(),
    string_arguments=True,
    vllm_parser=("minimax_m3",),
)
