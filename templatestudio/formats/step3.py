"""Step 3: ``<｜tool_calls_begin｜>`` holding ``<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke …>`` calls.

Model: StepFun's Step3. Each call of a turn::

    <｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="NAME">
    <steptml:parameter name="KEY">VALUE</steptml:parameter>…</steptml:invoke><｜tool_call_end｜>

and all of them inside one ``<｜tool_calls_begin｜>…<｜tool_calls_end｜>``
block. Whitespace between the tags is passed over. Names, keys and values
come back exactly as written: a value is everything between ``">`` and the
first ``</steptml:parameter>``. A string is written as it is and any other
value as its JSON, so values are text, typed later against the tool's
schema (``string_arguments``). Text around the block is content.
Reasoning: ``<think>…</think>``.

Refused (``UnparsedToolCall``): an empty block or one holding anything but
calls, a call whose type is not ``function<｜tool_sep｜>``, a call holding
anything but one invoke, a parameter given twice, a tag never closed.
Not handled: a value holding ``</steptml:parameter>``, a name or key
holding ``"`` (see ``wire_limits``).
"""

from __future__ import annotations

import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import WS, CallSyntaxError, Found, Format, NearMiss, Opener, Sample, WireLimit, any_string
from templatestudio.wire.extents import TagExtent
from templatestudio.resumable_match import literal
from templatestudio.wire.shape import Call, Invoke, Reasoning, Section, WireShape, XmlParameters
from templatestudio.wire.sections import element_spans

# The writer's shape. The opener and reader are the module's own: several
# calls share one block, each a span of it.
WIRE = WireShape(
    section=Section("<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"),
    call=Call("<｜tool_call_begin｜>", "<｜tool_call_end｜>", head="function<｜tool_sep｜>"),
    name=Invoke('<steptml:invoke name="', '">', "</steptml:invoke>"),
    arguments=XmlParameters('<steptml:parameter name="', '">', "</steptml:parameter>", after="", values="json"),
    reasoning=Reasoning("<think>", "</think>"),
)

OPEN, CLOSE = WIRE.section.open, WIRE.section.close
CALL_OPEN, CALL_CLOSE, CALL_HEAD = WIRE.call.open, WIRE.call.close, WIRE.call.head
INVOKE, END_INVOKE = WIRE.name.open, WIRE.name.close
PARAMETER, END_PARAMETER = WIRE.arguments.open, WIRE.arguments.close
_SPACE = re.compile(f"{WS}*")


def _space(region: str, position: int, end: int) -> int:
    return _SPACE.match(region, position, end).end()


def _quoted(region: str, start: int, end: int, what: str) -> tuple[str, int]:
    """The text of a name="…"> attribute from start (just past the quote) and the offset past '">'."""
    close = region.find('">', start, end)
    if close == -1 or '"' in region[start:close]:
        raise CallSyntaxError(f'the {what} at offset {start} is not closed by ">')
    return region[start:close], close + 2


def _expect(region: str, position: int, end: int, item: str) -> int:
    position = _space(region, position, end)
    if not region.startswith(item, position):
        raise CallSyntaxError(f"expected {item} at offset {position}")
    return position + len(item)


def _read_call(region: str, position: int, end: int) -> tuple[ParsedToolCall, int]:
    """One call from its <｜tool_call_begin｜> at position; the offset past its <｜tool_call_end｜>."""
    position = _expect(region, position + len(CALL_OPEN), end, CALL_HEAD)
    position = _expect(region, position, end, INVOKE)
    name, position = _quoted(region, position, end, "invoke name")
    arguments: dict[str, str] = {}
    while True:
        position = _space(region, position, end)
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
    return ParsedToolCall(name, arguments), _expect(region, position + len(END_INVOKE), end, CALL_CLOSE)


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    # The extent ends every region just past the closer.
    return element_spans(region, len(OPEN), len(region) - len(CLOSE), CALL_OPEN, _read_call,
                         none=f"no {CALL_OPEN} in the block", expected=f"expected another {CALL_OPEN} or {CLOSE}")


# The block's opener is a special token: it alone opens a call region.
OPENER = Opener(OPEN, literal(OPEN), lambda: TagExtent(len(OPEN), CLOSE))

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_CALL = (f'{CALL_OPEN}{CALL_HEAD}{INVOKE}get_exchange_rate"><steptml:parameter name="base">EUR</steptml:parameter>'
         f'<steptml:parameter name="quote">JPY</steptml:parameter>{END_INVOKE}{CALL_CLOSE}')
_PING = f'{CALL_OPEN}{CALL_HEAD}{INVOKE}ping">{END_INVOKE}{CALL_CLOSE}'

FORMAT = Format.declared(
    WIRE,
    name="step3",
    description='<｜tool_calls_begin｜> with <steptml:invoke name="NAME"> calls, text parameters (StepFun Step3)',
    openers=(OPENER,),
    read_region=read_region,
    response_template=None,
    no_response_template=(
        "the calls stand inside one block whose tokens the response-template language cannot drop "
        "from the content while reading the invokes inside it"
    ),
    samples=(
        Sample(f"{OPEN}{_CALL}{CLOSE}", (CALL,), source="Step3's call shape (vLLM's step3 parser tests)"),
        Sample(f"<think>A rate, then a ping.</think>\nChecking.\n\n{OPEN}{_CALL}\n{_PING}{CLOSE}\n\nDone.",
               (CALL, ParsedToolCall("ping", {})), source="reasoning, text around, two calls"),
        Sample(f'{OPEN}{CALL_OPEN}{CALL_HEAD}{INVOKE}run_query"><steptml:parameter name="sql">SELECT * FROM t WHERE a < 5'
               f'</steptml:parameter><steptml:parameter name="html"> <b>hi</b>\n</steptml:parameter>'
               f'<steptml:parameter name="n">[1, 2]</steptml:parameter>{END_INVOKE}{CALL_CLOSE}{CLOSE}',
               (ParsedToolCall("run_query", {"sql": "SELECT * FROM t WHERE a < 5", "html": " <b>hi</b>\n", "n": "[1, 2]"}),),
               source="angle brackets in values, a value kept exactly"),
    ),
    near_misses=(
        NearMiss(f"{OPEN}{_CALL}", True, "never closed"),
        NearMiss(f'{OPEN}{CALL_OPEN}{INVOKE}f">{END_INVOKE}{CALL_CLOSE}{CLOSE}', True, "no function<｜tool_sep｜>"),
        NearMiss(f"{OPEN}{CLOSE}", True, "an empty block"),
        NearMiss(f'{OPEN}{CALL_OPEN}{CALL_HEAD}{INVOKE}f"><steptml:parameter name="x">1</steptml:parameter>'
                 f'<steptml:parameter name="x">2</steptml:parameter>{END_INVOKE}{CALL_CLOSE}{CLOSE}', True,
                 "a parameter given twice"),
        NearMiss(f'{OPEN}{CALL_OPEN}{CALL_HEAD}{INVOKE}f">{CALL_CLOSE}{CLOSE}', True, "an invoke never closed"),
        NearMiss(f"{OPEN}{_PING}done{CLOSE}", True, "text inside the block"),
        NearMiss(f"{OPEN}{CALL_OPEN}{CALL_HEAD}", True, "cut inside a call"),
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
    ),
    corpus_labels=(),
    string_arguments=True,
    vllm_parser=("step3",),
)
