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
``name="`` and the first ``" string="true">`` or ``" string="false">`` (a
``"`` inside it, even ``" string="``, is read as written).
Read: several invokes in one block, several blocks in one reply, text
before and between blocks, whitespace between the tags. Refused: a
``string`` attribute other than ``true`` or ``false``, JSON that does not
decode, a parameter given twice, an invoke with an empty name, text
between the tags, a block with no invoke, a block that never closes. The
opener and reader are ``wire.dsml``'s, shared with V4 and V4.1.
Reasoning: ``<think>…</think>`` at the start of the reply (the thinking
mode's generation prompt opens it).

Not handled (no escaping exists on this wire): a key holding
``" string="true">`` or ``" string="false">``, a name holding ``">``, and
the closers inside values (declared in ``wire_limits``).
"""

from __future__ import annotations

from templatestudio.calls import ParsedToolCall
from templatestudio.wire import dsml
from templatestudio.wire.base import Format, NearMiss, Sample
from templatestudio.wire.shape import Call, Invoke, Reasoning, Section, WireShape, XmlParameters

# The writer's shape. The opener and reader are wire.dsml's, shared by the
# DSML shapes: the block is read in one region, and each parameter's tag
# says whether its value is text or JSON (string="true" | "false").
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
TAGS = dsml.Tags.of(WIRE)

BLOCK, BLOCK_END = WIRE.section.open, WIRE.section.close
INVOKE, INVOKE_END = WIRE.name.open, WIRE.name.close
PARAMETER, PARAMETER_END = WIRE.arguments.open, WIRE.arguments.close

RESPONSE_TEMPLATE = dsml.response_template(TAGS, "<｜Assistant｜>", WIRE.reasoning_pair, WIRE.stop_tokens[0])

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
    openers=(dsml.opener(TAGS),),
    read_region=dsml.reader(TAGS),
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
    wire_limits=dsml.wire_limits(TAGS),
    corpus_labels=("other:deepseek#v3.2-dsml",),
    vllm_parser=("deepseek_v32",),
)
