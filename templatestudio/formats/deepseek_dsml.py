"""DeepSeek V3.2 DSML: ``<｜DSML｜invoke name="NAME">`` with typed ``<｜DSML｜parameter>`` values.

The shape DeepSeek-V3.2's template (corpus: ``deepseek-ai-DeepSeek-V3.2``)
writes::

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="NAME">
    <｜DSML｜parameter name="KEY" string="true">text</｜DSML｜parameter>
    <｜DSML｜parameter name="KEY" string="false">JSON</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

A ``string="true"`` value is the text between the tags exactly as written
(nothing stripped, nothing unescaped); a ``string="false"`` value is one
JSON value (whitespace around it allowed). The wire says each value's type,
so values come back typed without a schema. A key is the text between
``name="`` and ``" string="`` (a ``"`` inside it is read as written).
Read: several invokes in one block, several blocks in one reply, text
before and between blocks, whitespace between the tags. Refused: a
``string`` attribute other than ``true`` or ``false``, JSON that does not
decode, a parameter given twice, an invoke with an empty name, text
between the tags, a block that never closes.
Reasoning: ``<think>…</think>`` at the start of the reply (the thinking
mode's generation prompt opens it).

Not handled (no escaping exists on this wire): a key holding
``" string="``, a name holding ``">``, and the closers inside values
(declared in ``wire_limits``).
"""

from __future__ import annotations

import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import (
    Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import decode_whole, skip_space
from templatestudio.resumable_match import literal
from templatestudio.wire.shape import Call, Invoke, Reasoning, Section, WireShape, XmlParameters

# The writer's shape. The opener and reader are the module's own: the block
# is read in one region, and each parameter's tag says whether its value is
# text or JSON (string="true" | "false").
WIRE = WireShape(
    section=Section("<｜DSML｜function_calls>", "</｜DSML｜function_calls>", head="\n", tail="\n"),
    call=Call(),
    name=Invoke('<｜DSML｜invoke name="', '">', "</｜DSML｜invoke>", head="\n"),
    arguments=XmlParameters('<｜DSML｜parameter name="', '">', "</｜DSML｜parameter>",
                            typed=('" string="true">', '" string="false">')),
    separator="",
    reasoning=Reasoning("<think>", "</think>"),
    stop_tokens=("<｜end▁of▁sentence｜>",),
)

BLOCK, BLOCK_END = WIRE.section.open, WIRE.section.close
INVOKE, INVOKE_END = WIRE.name.open, WIRE.name.close
PARAMETER, PARAMETER_END = WIRE.arguments.open, WIRE.arguments.close
_TYPE = re.compile(r'" string="(true|false)">')
_NAME_END = '">'
_KEY_END = '" string="'

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<｜Assistant｜>",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open_pattern": r'(?:<｜DSML｜function_calls>\s*)?<｜DSML｜invoke name="(?P<name>[^"]+)">',
            "close_pattern": r"</｜DSML｜invoke>(?:\s*</｜DSML｜function_calls>)?",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": r'<｜DSML｜parameter name="(?P<key>.*?)" string="(?:true|false)">(?P<value>.*?)'
                               r"</｜DSML｜parameter>",
            },
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": "<｜end▁of▁sentence｜>", "content": "text"},
    },
}


def _read_invoke(region: str, index: int) -> tuple[ParsedToolCall, int]:
    """The invoke whose name starts at index (just past INVOKE) and the offset past INVOKE_END."""
    name_end = region.find(_NAME_END, index)
    if name_end == -1 or "\n" in region[index:name_end]:
        raise CallSyntaxError(f'the invoke at offset {index} has no closing ">" on its line')
    name = region[index:name_end]
    if not name:
        raise CallSyntaxError(f"the invoke at offset {index} has an empty name")
    arguments: dict = {}
    position = skip_space(region, name_end + len(_NAME_END))
    while region.startswith(PARAMETER, position):
        key_start = position + len(PARAMETER)
        typed = _TYPE.search(region, key_start)
        if typed is None:
            raise CallSyntaxError(f'the parameter at offset {position} has no string="true" or string="false"')
        key = region[key_start : typed.start()]
        if PARAMETER_END in key or PARAMETER in key:
            raise CallSyntaxError(f"the parameter at offset {position} is not closed before the next one opens")
        value_end = region.find(PARAMETER_END, typed.end())
        if value_end == -1:
            raise CallSyntaxError(f"the value of {key!r} has no {PARAMETER_END}")
        if key in arguments:
            raise CallSyntaxError(f"parameter {key!r} is given twice")
        raw = region[typed.end() : value_end]
        arguments[key] = raw if typed.group(1) == "true" else decode_whole(raw, 0, len(raw))
        position = skip_space(region, value_end + len(PARAMETER_END))
    if not region.startswith(INVOKE_END, position):
        raise CallSyntaxError(f"expected {PARAMETER} or {INVOKE_END} at offset {position}")
    return ParsedToolCall(name, arguments), position + len(INVOKE_END)


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    end = len(region) - len(BLOCK_END)  # the extent ends the region just past BLOCK_END
    position = skip_space(region, len(BLOCK))
    spans = []
    while region.startswith(INVOKE, position) and position < end:
        call, position = _read_invoke(region[:end], position + len(INVOKE))
        spans.append(CallSpan(call, 0, len(region)))
        position = skip_space(region, position)
    if position != end:
        raise CallSyntaxError(f"expected {INVOKE} or {BLOCK_END} at offset {position}")
    return spans


OPENER = Opener(
    BLOCK,
    opener_pattern(BLOCK, SPACES, literal(INVOKE)),
    lambda: TagExtent(len(BLOCK), BLOCK_END),
)

_ONE = (f'{INVOKE}get_exchange_rate">\n{PARAMETER}base" string="true">EUR{PARAMETER_END}\n'
        f'{PARAMETER}quote" string="true">JPY{PARAMETER_END}\n{INVOKE_END}\n')
CALL_SAMPLE = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_TYPED = (f'{INVOKE}book">\n{PARAMETER}seats" string="false">2{PARAMETER_END}\n'
          f'{PARAMETER}window" string="false">true{PARAMETER_END}\n'
          f'{PARAMETER}legs" string="false">["LIS", {{"via": null}}]{PARAMETER_END}\n'
          f'{PARAMETER}note" string="true"> 42 {PARAMETER_END}\n{INVOKE_END}\n')
TYPED_CALL = ParsedToolCall("book", {"seats": 2, "window": True, "legs": ["LIS", {"via": None}], "note": " 42 "})

FORMAT = Format.declared(
    WIRE,
    name="deepseek-dsml",
    description='<｜DSML｜invoke name="NAME"> with typed <｜DSML｜parameter> values (DeepSeek V3.2)',
    openers=(OPENER,),
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(f"\n\n{BLOCK}\n{_ONE}{BLOCK_END}", (CALL_SAMPLE,), source="DeepSeek-V3.2's template"),
        Sample(f"<think>A rate, then a booking.</think>\n\n{BLOCK}\n{_ONE}{_TYPED}{BLOCK_END}",
               (CALL_SAMPLE, TYPED_CALL), source="thinking mode, two invokes, typed values"),
        Sample(f'I will check.\n\n{BLOCK}\n{INVOKE}ping">\n{INVOKE_END}\n{BLOCK_END}', (ParsedToolCall("ping", {}),),
               source="text before the block, no parameters"),
        Sample(f'{BLOCK}\n{INVOKE}write">\n{PARAMETER}text" string="true">line one\nline "two"{PARAMETER_END}\n'
               f'{INVOKE_END}\n{BLOCK_END}', (ParsedToolCall("write", {"text": 'line one\nline "two"'}),),
               source="a string value with a newline and quotes, as written"),
    ),
    near_misses=(
        NearMiss(f'{BLOCK}\n{INVOKE}get_exch', True, "cut inside the name"),
        NearMiss(f'{BLOCK}\n{_ONE}', True, "the block never closes"),
        NearMiss(f'{BLOCK}\n{INVOKE}a">\n{PARAMETER}x" string="maybe">1{PARAMETER_END}\n{INVOKE_END}\n{BLOCK_END}',
                 True, "a string attribute that is neither true nor false"),
        NearMiss(f'{BLOCK}\n{INVOKE}a">\n{PARAMETER}x" string="false">[1,{PARAMETER_END}\n{INVOKE_END}\n{BLOCK_END}',
                 True, "a string=false value that is not JSON"),
        NearMiss(f'{BLOCK}\n{INVOKE}a">\n{PARAMETER}x" string="true">1{PARAMETER_END}\n'
                 f'{PARAMETER}x" string="true">2{PARAMETER_END}\n{INVOKE_END}\n{BLOCK_END}', True, "a parameter given twice"),
        NearMiss(f"V3.2 wraps its calls in {BLOCK} blocks.", False, "prose naming the token"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {PARAMETER_END}, which ends the value",
                  lambda arguments: any_string(arguments, lambda s: PARAMETER_END in s)),
        WireLimit(f"a string holding {BLOCK_END}, which ends the block",
                  lambda arguments: any_string(arguments, lambda s: BLOCK_END in s)),
        WireLimit(f"a string holding {INVOKE_END}: the response template closes the call at the first one",
                  lambda arguments: any_string(arguments, lambda s: INVOKE_END in s), where="response template"),
        WireLimit("a value that is not a string: the response template reads every value as text "
                  "(typed only when tools= gives the schema)",
                  lambda arguments: any(not isinstance(value, str) for value in arguments.values()),
                  where="response template"),
    ),
    corpus_labels=("other:deepseek#v3.2-dsml",),
    vllm_parser="deepseek_v32",
)
