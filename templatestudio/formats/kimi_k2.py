"""Kimi K2: ``<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{…}<|tool_call_end|>``.

The calls of one turn sit between ``<|tool_calls_section_begin|>`` and
``<|tool_calls_section_end|>``. Each call's id is ``functions.NAME:IDX``
(IDX counts the calls of the turn from 0): the id comes back on the call's
span as written, and the call's name is NAME, the text between
``functions.`` and the last ``:``. An id written ``NAME:IDX``, without the
prefix, is read too, its name the text before the last ``:`` (vLLM's
Kimi K2 parser reads it; no Kimi template or Moonshot example writes it). Sources: the corpus template ``moonshotai-Kimi-K2`` (Kimi K2
Instruct); ``Kimi-K2-Thinking`` writes the same calls after a
``<think>…</think>`` block (its template needs a mutable Jinja sandbox, so
the probe cannot render it).

Read: several calls in one section, whitespace between the tokens and
around the id and the JSON (Moonshot's own examples put spaces there), an
empty section (no calls), text before the section. Refused: text other
than whitespace between the section's tokens
(``<|tool_calls_section_begin|> noise <|tool_call_begin|>…``: a section
whose reason names the text, never prose that carries its call through as
text), an id without the ``:IDX`` suffix (IDX ASCII digits only: without
it an id is not told from a name), an empty name or one holding whitespace, arguments that are not a JSON
object (the template double-encodes string arguments as a JSON string;
the model never writes that), a section that never closes.
Reasoning: Kimi K2 Thinking's ``<think>…</think>`` at the start of the reply.

Not handled: a lone ``<|tool_call_begin|>`` outside a section (no Kimi
template writes one; it stays text); a reply that ends with the section
token followed by text holding no ``<`` is a section cut short (it raises),
and so is prose that names the section token and then the call token
(``… <|tool_calls_section_begin|> then <|tool_call_begin|> …``): the reader cannot tell it
from a section with stray text.
"""

from __future__ import annotations

import re

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.base import (
    Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import skip_space
from templatestudio.wire.sections import expect, json_object_at, read_section
from templatestudio.resumable_match import chars, either, literal, run, sequence
from templatestudio.wire.shape import Call, JsonObject, NameBetween, Reasoning, Section, WireShape

# The writer's shape. The opener and reader are the module's own
# (``wire.sections``): the call id [functions.]NAME:IDX gives the name, and a
# section's calls are read in one region.
WIRE = WireShape(
    section=Section("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"),
    call=Call("<|tool_call_begin|>", "<|tool_call_end|>"),
    name=NameBetween("functions.", "<|tool_call_argument_begin|>", index=":0"),
    arguments=JsonObject(),
    separator="",
    reasoning=Reasoning("<think>", "</think>"),
    stop_tokens=("<|im_end|>",),
    # The template writes the section and the think tags against the text, with no
    # whitespace of its own: whitespace beside them is the model's, and stays.
    spacing="",
)

SECTION, SECTION_END = WIRE.section.open, WIRE.section.close
CALL, ARGUMENTS, CALL_END = WIRE.call.open, WIRE.name.close, WIRE.call.close
_ID = re.compile(r"[^ \t\n\r<]+")
PREFIX = WIRE.name.open
_PARTS = re.compile(r"(.+):([0-9]+)")  # NAME:IDX, once PREFIX (when written) is taken off
_STRAY = re.compile(r"[^<]*")  # text right after the section token, up to the next token

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_assistant|>assistant<|im_middle|>",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open_pattern": r"(?:<\|tool_calls_section_begin\|>\s*)?<\|tool_call_begin\|>\s*"
                            r"(?P<id>(?:functions\.)?(?P<name>[^\s<]+):[0-9]+)\s*<\|tool_call_argument_begin\|>",
            "close_pattern": r"<\|tool_call_end\|>(?:\s*<\|tool_calls_section_end\|>)?",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "id": "{id}", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
}


def _read_call(region: str, index: int, found: Found | None) -> tuple[ParsedToolCall, str, int]:
    start = skip_space(region, index)
    ident = _ID.match(region, start)
    if ident is None:
        raise CallSyntaxError(f"no call id after {CALL}, at offset {start}")
    parts = _PARTS.fullmatch(ident.group().removeprefix(PREFIX))
    if parts is None:
        raise CallSyntaxError(f"the call id {ident.group()!r} is not {PREFIX}NAME:IDX nor NAME:IDX")
    name = parts.group(1)
    position = expect(region, ident.end(), ARGUMENTS, f"after the call id {ident.group()!r}")
    arguments, position = json_object_at(region, position, name, found)
    position = expect(region, position, CALL_END, "after the arguments")
    return ParsedToolCall(name, arguments), ident.group(), position


def read_region(region: str, opener: Opener, found: Found | None):
    try:
        return read_section(region, SECTION, SECTION_END, CALL, _read_call, found=found)
    except CallSyntaxError as error:
        stray = _STRAY.match(region, skip_space(region, len(SECTION)))
        if stray is None or not stray.group():
            raise
        # The section's own words say what went wrong: text where only tokens stand.
        raise CallSyntaxError(f"text {stray.group()[:40]!r} inside {SECTION}, outside any call "
                              f"(only whitespace may stand between the section's tokens): {error}") from None


# Hand-written: the section token opens a section when whitespace and then
# a call or the section's end follow it, or when any text without a "<"
# and then a call does: text between the section's tokens (vLLM's
# "noise between markers" test) is then a section the reader refuses, never
# prose that would carry the call through as text. Text naming the token
# that runs to the section's end or to another "<" stays prose.
OPENER = Opener(
    SECTION,
    opener_pattern(SECTION, either(sequence(SPACES, either(literal(CALL), literal(SECTION_END))),
                                   sequence(run(chars("[^<]")), literal(CALL)))),
    lambda: TagExtent(len(SECTION), SECTION_END, "json"),
)

_ARGS = '{"base": "EUR", "quote": "JPY"}'
_ONE = f"{CALL}functions.get_exchange_rate:0{ARGUMENTS}{_ARGS}{CALL_END}"
CALL_SAMPLE = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})

FORMAT = Format.declared(
    WIRE,
    name="kimi-k2",
    description="<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...} in a calls section (Kimi K2)",
    openers=(OPENER,),
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(f"{SECTION}{_ONE}{SECTION_END}", (CALL_SAMPLE,), ids=("functions.get_exchange_rate:0",),
               source="moonshotai-Kimi-K2's template"),
        Sample(f"<think>Two lookups.</think>{SECTION}{_ONE}{CALL}functions.ping:1{ARGUMENTS}{{}}{CALL_END}{SECTION_END}",
               (CALL_SAMPLE, ParsedToolCall("ping", {})), ids=("functions.get_exchange_rate:0", "functions.ping:1"),
               source="Kimi K2 Thinking: reasoning, then two calls"),
        Sample(f"Let me check. {SECTION} {CALL} functions.get_exchange_rate:0 {ARGUMENTS} {_ARGS} {CALL_END} "
               f"{SECTION_END}", (CALL_SAMPLE,), ids=("functions.get_exchange_rate:0",),
               source="spaces between the tokens, as Moonshot's examples write them"),
        Sample(f"{SECTION}{CALL}functions.db.query:12{ARGUMENTS}{{\"sql\": \"select 1\"}}{CALL_END}{SECTION_END}",
               (ParsedToolCall("db.query", {"sql": "select 1"}),), ids=("functions.db.query:12",),
               source="a dotted name and a two-digit index"),
        Sample(f"No prefix. {SECTION}{CALL}get_exchange_rate:0 {ARGUMENTS}{_ARGS}{CALL_END}{SECTION_END}", (CALL_SAMPLE,),
               ids=("get_exchange_rate:0",), source="an id without functions. (vLLM's Kimi K2 test)"),
    ),
    near_misses=(
        NearMiss(f"{SECTION}{CALL}functions.get_exch", True, "cut inside the id"),
        NearMiss(f"{SECTION}{_ONE}", True, "the section never closes"),
        NearMiss(f"{SECTION}{CALL}functions.:0{ARGUMENTS}{_ARGS}{CALL_END}{SECTION_END}", True,
                 "an id with an empty name"),
        NearMiss(f"{SECTION}{CALL}functions.get_exchange_rate{ARGUMENTS}{_ARGS}{CALL_END}{SECTION_END}", True,
                 "an id without :IDX"),
        NearMiss(f"{SECTION}{CALL}functions.get_exchange_rate:٠{ARGUMENTS}{_ARGS}{CALL_END}{SECTION_END}", True,
                 "an index in Arabic-Indic digits"),
        NearMiss(f'{SECTION}{CALL}functions.a:0{ARGUMENTS}"{{}}"{CALL_END}{SECTION_END}', True,
                 "arguments written as a JSON string"),
        NearMiss(f"Kimi opens its calls with {SECTION} and closes them with {SECTION_END}.", False,
                 "prose naming the tokens"),
        NearMiss(f"Checking. {SECTION} spurious noise {_ONE}{SECTION_END}", True, "text between the section's tokens"),
        NearMiss(f"{SECTION}{_ONE} noise {SECTION_END}", True, "text after a call, inside the section"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {CALL_END}: the response template closes the call at the first one",
                  lambda arguments: any_string(arguments, lambda s: CALL_END in s), where="response template"),
    ),
    corpus_labels=("other:kimi",),
    vllm_parser=("kimi_k2",),
)
