"""DeepSeek V3.1: ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>`` in a calls section.

The calls of one turn sit between ``<｜tool▁calls▁begin｜>`` and
``<｜tool▁calls▁end｜>``; each is the name, ``<｜tool▁sep｜>`` and the
arguments as a bare JSON object. Sources: the corpus templates
``deepseek-ai-DeepSeek-V3.1`` (DeepSeek's own) and
``tool_chat_template_deepseekv31`` (vLLM's, which writes stray indentation
between the tokens).

Each call is read as a region of its own, as in V3. Read: several calls
in one section, whitespace between the tokens and around the JSON, text
before the section. Accepted variants, as for V3: a section whose closer
is missing because the reply ends right after a whole call (a stop
string), a call without its section token. Refused: an empty name or one holding whitespace or
``<``, arguments that are not a JSON object (a JSON string holding one
included: the templates double-encode string arguments that way, and the
model never writes it), text after the last call.

The section and call tokens are DeepSeek V3's (``deepseek_v3``): this
format opens on every call that is not V3's ``function<｜tool▁sep｜>NAME``
head, so a tool named ``function`` is still read here when JSON follows
its separator. Reasoning: ``<think>…</think>`` at the start of the reply
(the thinking mode's generation prompt opens it).
"""

from __future__ import annotations

import re

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.base import Found, CallSyntaxError, Format, NearMiss, Sample, WireLimit, any_string
from templatestudio.formats import deepseek_v3
from templatestudio.formats.deepseek_v3 import CALL, CALL_END, SEP, other_head, response_template
from templatestudio.wire.per_call_regions import per_call_regions
from templatestudio.wire.sections import expect, json_object_at
from templatestudio.wire.shape import Call, JsonObject, NameBetween, Reasoning, WireShape

# Everything the writer writes, declared (V3's section and call tokens, the
# name before the separator, a bare JSON object): write_call, markers,
# closers and reasoning come from it. Openers and reader are the shared
# per-call regions; this format opens on every head that is not V3's.
WIRE = WireShape(
    section=deepseek_v3.WIRE.section,
    call=Call(CALL, CALL_END),
    name=NameBetween("", SEP),
    arguments=JsonObject(),
    separator="",
    reasoning=Reasoning("<think>", "</think>"),
    stop_tokens=("<｜end▁of▁sentence｜>",),
)

SECTION, SECTION_END = WIRE.section.open, WIRE.section.close
_NAME = re.compile(r"[^ \t\n\r<]+")

RESPONSE_TEMPLATE = response_template(
    r"(?:<｜tool▁calls▁begin｜>\s*)?<｜tool▁call▁begin｜>(?P<name>[^\s<]+)<｜tool▁sep｜>",
    r"<｜tool▁call▁end｜>(?:\s*<｜tool▁calls▁end｜>)?",
)


def _read_call(region: str, index: int, found: Found | None) -> tuple[ParsedToolCall, None, int]:
    name = _NAME.match(region, index)
    if name is None or not region.startswith(SEP, name.end()):
        raise CallSyntaxError(f"expected NAME{SEP} after {CALL}, at offset {index}")
    arguments, position = json_object_at(region, name.end() + len(SEP), name.group(), found)
    position = expect(region, position, CALL_END, "after the arguments")
    return ParsedToolCall(name.group(), arguments), None, position


OPENERS, read_region = per_call_regions(WIRE, other_head(), _read_call)

_ARGS = '{"base": "EUR", "quote": "JPY"}'
_ONE = f"{CALL}get_exchange_rate{SEP}{_ARGS}{CALL_END}"
CALL_SAMPLE = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})

FORMAT = Format.declared(
    WIRE,
    name="deepseek-v3.1",
    description="<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...} in a calls section (DeepSeek V3.1)",
    openers=OPENERS,
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(f"{SECTION}{_ONE}{SECTION_END}", (CALL_SAMPLE,), source="DeepSeek-V3.1's template"),
        Sample(f"<think>The user wants a rate.</think>{SECTION}{_ONE}{SECTION_END}", (CALL_SAMPLE,),
               source="thinking mode"),
        Sample(f"{SECTION}{_ONE}{CALL}ping{SEP}{{}}{CALL_END}{SECTION_END}",
               (CALL_SAMPLE, ParsedToolCall("ping", {})), source="two calls chained, as the template asks"),
        Sample(f"          {SECTION}{_ONE}    {SECTION_END}", (CALL_SAMPLE,),
               source="vLLM's tool_chat_template_deepseekv31: indentation between the tokens"),
        Sample(f"{SECTION}{CALL}function{SEP}{{\"x\": 1}}{CALL_END}", (ParsedToolCall("function", {"x": 1}),),
               source="a tool named function; the section closer cut by a stop string"),
    ),
    near_misses=(
        NearMiss(f"Let me look. {SECTION}{CALL}get_exch", True, "cut inside the name"),
        NearMiss(f'{SECTION}{CALL}get_exchange_rate{SEP}{{"base": "EUR"', True, "cut inside the JSON"),
        NearMiss(f"{SECTION}{CALL}get_exchange_rate{_ARGS}{CALL_END}{SECTION_END}", True, "no separator"),
        NearMiss(f'{SECTION}{CALL}get exchange{SEP}{{}}{CALL_END}{SECTION_END}', True, "a name with a space"),
        NearMiss(f'{SECTION}{CALL}get_exchange_rate{SEP}"{{}}"{CALL_END}{SECTION_END}', True,
                 "arguments written as a JSON string"),
        NearMiss(f"The section starts with {SECTION}, then each call.", False, "prose naming the token"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {CALL_END}: the response template closes the call at the first one",
                  lambda arguments: any_string(arguments, lambda s: CALL_END in s), where="response template"),
    ),
    corpus_labels=("other:deepseek#v3.1",),
    variants=("whitespace between the tokens (vLLM's template)", "section closer missing after a whole call",
              "a call without its section token"),
    vllm_parser=("deepseek_v31",),
)
