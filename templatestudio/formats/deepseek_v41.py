"""DeepSeek V4.1 DSML: V4's grammar with a space after the ``｜DSML｜`` token, in a ``calls`` block.

The shape DeepSeek-V4.1's official encoder writes (the conformance
fixtures' ``deepseek-v41``; no V4.1 chat template is in the corpus)::

    <｜DSML｜ calls>
    <｜DSML｜ invoke name="NAME">
    <｜DSML｜ parameter name="KEY" string="true">text</｜DSML｜ parameter>
    <｜DSML｜ parameter name="KEY" string="false">JSON</｜DSML｜ parameter>
    </｜DSML｜ invoke>
    </｜DSML｜ calls>

Only the spelling differs from V4 (``formats.deepseek_v4``); the reading
is ``wire.dsml``'s, from this declaration: a ``string="true"`` value is
the text between the tags exactly as written, a ``string="false"`` value
one JSON value. Read: several invokes in one block, several blocks, text
before and between blocks, whitespace between the tags. Refused, each with
its message: a ``string`` attribute other than ``true``/``false``, JSON
that does not decode, a parameter given twice, an empty name, text between
the tags, V4's unspaced tags and V4's self-closed invoke (no V4.1 source
shows either), a block with no invoke. A reply that ends inside the block is
cut there (the invokes closed before the cut are calls, the rest is
the cut call; see ``regions.cut_events``).
Reasoning: ``<think>…</think>`` at the start of the reply (the thinking
prompt ends ``<｜Assistant｜><think>``, so the reply holds only the closer).

Not handled (no escaping exists on this wire): a key holding
``" string="true">`` or ``" string="false">``, a name holding ``">``, and
the closers inside values (declared in ``wire_limits``).
"""

from __future__ import annotations

from templatestudio.calls import ParsedToolCall
from templatestudio.wire import dsml
from templatestudio.wire.base import Format, NearMiss, Sample
from templatestudio.wire.shape import Call, Invoke, Reasoning, Section, WireShape, XmlParameters

# The writer's shape; the opener and reader are wire.dsml's, read off it.
WIRE = WireShape(
    section=Section("<｜DSML｜ calls>", "</｜DSML｜ calls>", head="\n", tail="\n"),
    call=Call(),
    name=Invoke('<｜DSML｜ invoke name="', '">', "</｜DSML｜ invoke>", head="\n"),
    arguments=XmlParameters('<｜DSML｜ parameter name="', '">', "</｜DSML｜ parameter>",
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
          f'{PARAMETER}legs" string="false">["LIS", {{"via": null}}]{PARAMETER_END}\n'
          f'{PARAMETER}code" string="true">007{PARAMETER_END}\n{INVOKE_END}\n')
TYPED_CALL = ParsedToolCall("book", {"seats": 2, "legs": ["LIS", {"via": None}], "code": "007"})

FORMAT = Format.declared(
    WIRE,
    name="deepseek-v4.1",
    description='<｜DSML｜ calls> blocks of typed <｜DSML｜ invoke> calls, spaced tags (DeepSeek V4.1)',
    openers=(dsml.opener(TAGS),),
    read_region=dsml.reader(TAGS),
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(f"\n\n{BLOCK}\n{_ONE}{BLOCK_END}", (CALL_SAMPLE,), source="DeepSeek-V4.1's encoder"),
        Sample(f"A rate, then a booking.</think>\n\n{BLOCK}\n{_ONE}{_TYPED}{BLOCK_END}",
               (CALL_SAMPLE, TYPED_CALL), source="thinking mode (the prompt opened <think>), two typed invokes"),
        Sample(f'I will check.\n\n{BLOCK}\n{INVOKE}ping">\n\n{INVOKE_END}\n{BLOCK_END}', (ParsedToolCall("ping", {}),),
               source="text before the block, no parameters (the encoder's empty line)"),
    ),
    near_misses=(
        NearMiss(f'{BLOCK}\n{INVOKE}get_exch', True, "cut inside the name"),
        NearMiss(f'{BLOCK}\n{_ONE}', True, "the block never closes"),
        NearMiss(f'{BLOCK}\n{INVOKE}a">\n{PARAMETER}x" string="maybe">1{PARAMETER_END}\n{INVOKE_END}\n{BLOCK_END}',
                 True, "a string attribute that is neither true nor false"),
        NearMiss(f'{BLOCK}\n{INVOKE}a">\n{PARAMETER}x" string="false">[1,{PARAMETER_END}\n{INVOKE_END}\n{BLOCK_END}',
                 True, "a string=false value that is not JSON"),
        NearMiss(f'{BLOCK}\n{INVOKE}submit"/>\n{BLOCK_END}', True,
                 "V4's self-closed invoke, which V4.1 is not seen writing"),
        NearMiss(f'{BLOCK}\n<｜DSML｜invoke name="a">\n</｜DSML｜invoke>\n{BLOCK_END}', True,
                 "V4's unspaced invoke"),
        NearMiss(f"V4.1 wraps its calls in {BLOCK} blocks.", False, "prose naming the token"),
    ),
    wire_limits=dsml.wire_limits(TAGS),
    corpus_labels=("other:deepseek#v4.1-dsml",),
    vllm_parser=("deepseek_v41",),
)
