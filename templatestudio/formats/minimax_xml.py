"""MiniMax M2: ``<minimax:tool_call>`` holding ``<invoke name="NAME">`` calls with ``<parameter name="k">v</parameter>``.

Read as MiniMax's published M2 template writes it: one
``<minimax:tool_call>…</minimax:tool_call>`` block holding one or more
``<invoke>`` elements, each call's parameters inside it. Whitespace between
the tags is passed over; names, keys and values come back exactly as
written (a value is everything between ``">`` and the first
``</parameter>``). The template writes a string value as it is and any other
value as its JSON, so values are text, typed later against the tool's
schema (``string_arguments``). Any number of blocks in a reply.

Reasoning: ``<think>…</think>`` at the start of the reply; MiniMax's
generation prompt ends with ``<think>`` already open, so read a reply with
the prompt as ``prefix`` (``read_tool_calls``) or ``reasoning_open=True``.

Refused: an empty block or one holding anything but invokes, a parameter
outside an invoke, a parameter given twice, an invoke or block never
closed. Not handled: names or keys holding ``"`` and values holding
``</parameter>`` (the wire cannot carry them; see ``wire_limits``).
"""

from __future__ import annotations

import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import (
    Found, SPACES, WS, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
from templatestudio.resumable_match import literal
from templatestudio.wire.shape import Call, Invoke, Reasoning, Section, WireShape, XmlParameters
from templatestudio.wire.sections import element_spans

# The writer's shape. The opener and reader are the module's own: several
# invokes share one block, each a span of it.
WIRE = WireShape(
    section=Section("<minimax:tool_call>", "</minimax:tool_call>", head="\n", tail="\n"),
    call=Call(),
    name=Invoke('<invoke name="', '">', "</invoke>", head="\n"),
    arguments=XmlParameters('<parameter name="', '">', "</parameter>", values="json"),
    reasoning=Reasoning("<think>", "</think>"),
    stop_tokens=("[e~[",),
)

OPEN, CLOSE = WIRE.section.open, WIRE.section.close
INVOKE, END_INVOKE = WIRE.name.open, WIRE.name.close
PARAMETER, END_PARAMETER = WIRE.arguments.open, WIRE.arguments.close
_SPACE = re.compile(f"{WS}*")

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "]~b]ai\n",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open_pattern": r'<invoke name="(?P<name>[^"]*)">',
            "close": END_INVOKE,
            "repeats": True,
            "content": "xml-inline",
            "content_args": {"tag_pattern": r'<parameter name="(?P<key>[^"]*)">(?P<value>.*?)</parameter>'},
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        # The text around the calls; the block's own tags close it, so they
        # are consumed there instead of reaching the content, and "join"
        # keeps the text on both sides of a block.
        "content": {"close_pattern": r"</?minimax:tool_call>|\[e~\[", "content": "text", "repeats": True, "join": ""},
    },
}


def _quoted(region: str, start: int, end: int, what: str) -> tuple[str, int]:
    """The text of a name="…"> attribute from start (just past the quote) and the offset past '">'."""
    close = region.find('">', start, end)
    if close == -1 or '"' in region[start:close]:
        raise CallSyntaxError(f'the {what} at offset {start} is not closed by ">')
    return region[start:close], close + 2


def _read_invoke(region: str, position: int, end: int) -> tuple[ParsedToolCall, int]:
    name, position = _quoted(region, position + len(INVOKE), end, "invoke name")
    arguments: dict[str, str] = {}
    while True:
        position = _SPACE.match(region, position, end).end()
        if not region.startswith(PARAMETER, position):
            break
        key, position = _quoted(region, position + len(PARAMETER), end, "parameter name")
        value_end = region.find(END_PARAMETER, position, end)
        if value_end == -1:
            raise CallSyntaxError(f"the value of {key!r} has no {END_PARAMETER}")
        if key in arguments:
            raise CallSyntaxError(f"parameter {key!r} is given twice")
        arguments[key] = region[position:value_end]
        position = value_end + len(END_PARAMETER)
    if not region.startswith(END_INVOKE, position):
        raise CallSyntaxError(f"expected {END_INVOKE} or another parameter at offset {position}")
    return ParsedToolCall(name, arguments), position + len(END_INVOKE)


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    # The extent ends every region just past the closer.
    return element_spans(region, len(OPEN), len(region) - len(CLOSE), INVOKE, _read_invoke,
                         none=f"no {INVOKE}…> in the block", expected=f"expected another invoke or {CLOSE}")


OPENER = Opener(OPEN, opener_pattern(OPEN, SPACES, literal(INVOKE)), lambda: TagExtent(len(OPEN), CLOSE))

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_INVOKE = ('<invoke name="get_exchange_rate">\n<parameter name="base">EUR</parameter>\n'
           '<parameter name="quote">JPY</parameter>\n</invoke>\n')
_ONE = f"{OPEN}\n{_INVOKE}{CLOSE}"

FORMAT = Format.declared(
    WIRE,
    name="minimax-xml",
    description='<minimax:tool_call><invoke name="NAME"><parameter name="k">text (MiniMax M2)',
    openers=(OPENER,),
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample("\n" + _ONE, (CALL,), source="MiniMax-M2's template"),
        Sample(f"<think>\nThe user wants a rate.\n</think>\n\n{_ONE}", (CALL,), source="with reasoning"),
        Sample(f'{OPEN}\n{_INVOKE}<invoke name="ping">\n</invoke>\n{CLOSE}', (CALL, ParsedToolCall("ping", {})),
               source="two invokes in one block"),
        Sample(f'Let me check.\n{OPEN}\n<invoke name="write_note">\n<parameter name="text">first line\n second line'
               f'</parameter>\n<parameter name="n">3</parameter>\n</invoke>\n{CLOSE}',
               (ParsedToolCall("write_note", {"text": "first line\n second line", "n": "3"}),),
               source="text before the block, a value kept exactly"),
    ),
    near_misses=(
        NearMiss(f"{OPEN}\n<inv", True, "cut inside the opening"),
        NearMiss(f"{OPEN}\n{_INVOKE}", True, "never closed"),
        NearMiss(f'{OPEN}<invoke name="a"><parameter name="x">1</parameter><parameter name="x">2</parameter>'
                 f"</invoke>{CLOSE}", True, "a parameter given twice"),
        NearMiss(f'{OPEN}<invoke name="a"><parameter name="x">1</parameter>{CLOSE}', True, "an invoke never closed"),
        NearMiss(f'{OPEN}<invoke name="a"></invoke>done{CLOSE}', True, "text inside the block"),
        NearMiss(f"MiniMax wraps its calls in {OPEN} tags.", False, "prose naming the tag"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {END_PARAMETER}, which ends the value",
                  lambda arguments: any_string(arguments, lambda s: END_PARAMETER in s)),
        WireLimit(f"a string holding {CLOSE}, which ends the block",
                  lambda arguments: any_string(arguments, lambda s: CLOSE in s)),
        WireLimit('a key holding ", which ends the name attribute',
                  lambda arguments: any('"' in key for key in arguments)),
        WireLimit("a value that is not a string: the wire writes its JSON as text, typed against the schema afterwards",
                  lambda arguments: any(not isinstance(value, str) for value in arguments.values())),
        WireLimit(f"a string holding {END_INVOKE}: the response template ends the call there",
                  lambda arguments: any_string(arguments, lambda s: END_INVOKE in s),
                  where="response template"),
    ),
    corpus_labels=("other:minimax-xml",),
    string_arguments=True,
    vllm_parser=("minimax_m2",),
)
