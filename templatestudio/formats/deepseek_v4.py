"""DeepSeek V4 DSML: V3.2's invoke grammar in a ``<｜DSML｜tool_calls>`` block.

The shape DeepSeek-V4's template (corpus: ``deepseek-ai-DeepSeek-V4``,
``deepseek-ai-DeepSeek-V4-rev-2026-07``, ``llamafactory-deepseek_v4_dsml``)
and its official encoder write::

    <｜DSML｜tool_calls>
    <｜DSML｜invoke name="NAME">
    <｜DSML｜parameter name="KEY" string="true">text</｜DSML｜parameter>
    <｜DSML｜parameter name="KEY" string="false">JSON</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜tool_calls>

Only the block's name differs from V3.2 (``formats.deepseek_dsml``); the
reading is ``wire.dsml``'s, from this declaration: a ``string="true"``
value is the text between the tags exactly as written, a ``string="false"``
value one JSON value. Read: several invokes in one block, several blocks,
text before and between blocks, whitespace between the tags, and an invoke
with no parameters closed in its own tag (``<｜DSML｜invoke name="NAME"/>``:
SGLang reports V4 writing it; never written here). Refused, each with its
message: a ``string`` attribute other than ``true``/``false``, JSON that
does not decode, a parameter given twice, an empty name, text between the
tags, a block with no invoke. A reply that ends inside the block is
cut there (the invokes closed before the cut are calls, the rest is
the cut call; see ``regions.cut_events``).
Reasoning: ``<think>…</think>`` at the start of the reply (the thinking
prompt ends ``<｜Assistant｜><think>``, so the reply holds only the closer).

Not handled (no escaping exists on this wire): a key holding
``" string="true">`` or ``" string="false">``, a name holding ``">`` or
``"/>``, and the closers inside values (declared in ``wire_limits``); the
response template does not read the self-closed invoke.
"""

from __future__ import annotations

from templatestudio.calls import ParsedToolCall
from templatestudio.wire import dsml
from templatestudio.wire.base import Format, NearMiss, Sample
from templatestudio.wire.shape import Call, Invoke, Reasoning, Section, WireShape, XmlParameters

# The writer's shape; the opener and reader are wire.dsml's, read off it.
WIRE = WireShape(
    section=Section("<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>", head="\n", tail="\n"),
    call=Call(),
    name=Invoke('<｜DSML｜invoke name="', '">', "</｜DSML｜invoke>", head="\n"),
    arguments=XmlParameters('<｜DSML｜parameter name="', '">', "</｜DSML｜parameter>",
                            typed=('" string="true">', '" string="false">')),
    separator="",
    reasoning=Reasoning("<think>", "</think>"),
    stop_tokens=("<｜end▁of▁sentence｜>",),
)
# Hand-written beyond the declaration (WireShape has no word for it): the
# self-closed empty invoke, read and never written.
TAGS = dsml.Tags.of(WIRE, self_closed='"/>')

BLOCK, BLOCK_END = WIRE.section.open, WIRE.section.close
INVOKE, INVOKE_END = WIRE.name.open, WIRE.name.close
PARAMETER, PARAMETER_END = WIRE.arguments.open, WIRE.arguments.close

RESPONSE_TEMPLATE = dsml.response_template(TAGS, "<｜Assistant｜>", WIRE.reasoning_pair, WIRE.stop_tokens[0])

_ONE = (f'{INVOKE}get_exchange_rate">\n{PARAMETER}base" string="true">EUR{PARAMETER_END}\n'
        f'{PARAMETER}quote" string="true">JPY{PARAMETER_END}\n{INVOKE_END}\n')
CALL_SAMPLE = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_TYPED = (f'{INVOKE}book">\n{PARAMETER}seats" string="false">2{PARAMETER_END}\n'
          f'{PARAMETER}legs" string="false">["LIS", {{"via": null}}]{PARAMETER_END}\n'
          f'{PARAMETER}code" string="true">007{PARAMETER_END}\n{INVOKE_END}\n')
TYPED_CALL = ParsedToolCall("book", {"seats": 2, "legs": ["LIS", {"via": None}], "code": "007"})

FORMAT = Format.declared(
    WIRE,
    name="deepseek-v4",
    description='<｜DSML｜tool_calls> blocks of typed <｜DSML｜invoke> calls (DeepSeek V4)',
    openers=(dsml.opener(TAGS),),
    read_region=dsml.reader(TAGS),
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(f"\n\n{BLOCK}\n{_ONE}{BLOCK_END}", (CALL_SAMPLE,), source="DeepSeek-V4's template"),
        Sample(f"A rate, then a booking.</think>\n\n{BLOCK}\n{_ONE}{_TYPED}{BLOCK_END}",
               (CALL_SAMPLE, TYPED_CALL), source="thinking mode (the prompt opened <think>), two typed invokes"),
        Sample(f'I will check.\n\n{BLOCK}\n{INVOKE}ping">\n\n{INVOKE_END}\n{BLOCK_END}', (ParsedToolCall("ping", {}),),
               source="text before the block, no parameters (the encoder's empty line)"),
        Sample(f'{BLOCK}\n{INVOKE}submit"/>\n{BLOCK_END}', (ParsedToolCall("submit", {}),),
               source="a self-closed invoke with no parameters (SGLang's report of V4)"),
    ),
    near_misses=(
        NearMiss(f'{BLOCK}\n{INVOKE}get_exch', True, "cut inside the name"),
        NearMiss(f'{BLOCK}\n{_ONE}', True, "the block never closes"),
        NearMiss(f'{BLOCK}\n{INVOKE}a">\n{PARAMETER}x" string="maybe">1{PARAMETER_END}\n{INVOKE_END}\n{BLOCK_END}',
                 True, "a string attribute that is neither true nor false"),
        NearMiss(f'{BLOCK}\n{INVOKE}a">\n{PARAMETER}x" string="false">[1,{PARAMETER_END}\n{INVOKE_END}\n{BLOCK_END}',
                 True, "a string=false value that is not JSON"),
        NearMiss(f'{BLOCK}\n{INVOKE}a"/>\n{PARAMETER}x" string="true">1{PARAMETER_END}\n{INVOKE_END}\n{BLOCK_END}',
                 True, "parameters after a self-closed invoke"),
        NearMiss(f"V4 wraps its calls in {BLOCK} blocks.", False, "prose naming the token"),
    ),
    wire_limits=dsml.wire_limits(TAGS),
    corpus_labels=("other:deepseek#v4-dsml",),
    vllm_parser=("deepseek_v4",),
)
