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

import json
import re

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.base import Found, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string
from templatestudio.formats.deepseek_v3 import CALL, CALL_END, SECTION, SECTION_END, SEP, openers, other_head
from templatestudio.wire.sections import expect, json_object_at, read_one_call

_NAME = re.compile(r"[^ \t\n\r<]+")

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<｜Assistant｜>",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open_pattern": r"(?:<｜tool▁calls▁begin｜>\s*)?<｜tool▁call▁begin｜>(?P<name>[^\s<]+)<｜tool▁sep｜>",
            "close_pattern": r"<｜tool▁call▁end｜>(?:\s*<｜tool▁calls▁end｜>)?",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": "<｜end▁of▁sentence｜>", "content": "text"},
    },
}


def _read_call(region: str, index: int, found: Found | None) -> tuple[ParsedToolCall, None, int]:
    name = _NAME.match(region, index)
    if name is None or not region.startswith(SEP, name.end()):
        raise CallSyntaxError(f"expected NAME{SEP} after {CALL}, at offset {index}")
    arguments, position = json_object_at(region, name.end() + len(SEP), name.group(), found)
    position = expect(region, position, CALL_END, "after the arguments")
    return ParsedToolCall(name.group(), arguments), None, position


def read_region(region: str, opener: Opener, found: Found | None):
    return read_one_call(region, opener.literal, SECTION, SECTION_END, CALL, _read_call, found)


def write_call(call: ParsedToolCall) -> str:
    body = json.dumps(call.arguments, ensure_ascii=False)
    return f"{SECTION}{CALL}{call.name}{SEP}{body}{CALL_END}{SECTION_END}"


OPENERS = openers(other_head())

_ARGS = '{"base": "EUR", "quote": "JPY"}'
_ONE = f"{CALL}get_exchange_rate{SEP}{_ARGS}{CALL_END}"
CALL_SAMPLE = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})

FORMAT = Format(
    name="deepseek-v3.1",
    description="<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...} in a calls section (DeepSeek V3.1)",
    openers=OPENERS,
    read_region=read_region,
    write_call=write_call,
    closers=(SECTION_END, CALL_END),
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    reasoning=("<think>", "</think>"),
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
    vllm_parser="deepseek_v31",
)
