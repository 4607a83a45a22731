"""Mistral: ``[TOOL_CALLS]`` then a JSON list, or ``NAME[ARGS]{…}`` per call.

Shapes read, each after ``[TOOL_CALLS]``:

- a JSON list ``[{"name", "arguments", "id"?}, …]``, also after a space
  (Mistral Small 3.1, vLLM's Mistral templates);
- one bare JSON object (Mistral 7B Instruct v0.3 writes it);
- ``NAME[ARGS]{…}``, optionally ``NAME[CALL_ID]ID[ARGS]{…}`` (Mistral Small
  3.2, Magistral), one marker per call.

Arguments written as a JSON string holding an object are decoded (Mistral
7B v0.3 does this). Ids, where written, must be letters and digits, and
come back on the call's span. Refused: a name with no ``[ARGS]``
(``[TOOL_CALLS]add{…}``), a bare name, junk before the list.

Reasoning: ``[THINK]…[/THINK]`` at the start of the reply (Magistral
2509, Ministral 3 Reasoning, Mistral Small 4: tokenizer v13 and later,
whose templates write it before the content and the calls), and
Magistral 2506's plain-text ``<think>…</think>`` (tokenizer v11), read
and never written. Everything up to the block's own closer is reasoning,
a ``[TOOL_CALLS]`` in it included; a reply cut inside the block is all
reasoning.

Not handled: a ``[THINK]`` or ``<think>`` after text is text (the block
is only read at the start); a block opened with one pair does not end at
the other pair's closer.
"""

from __future__ import annotations

import json
import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import (
    Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.value_extent import value_extent
from templatestudio.wire.jsonbody import call_from, decode_whole, skip_space
from templatestudio.resumable_match import chars, either, sequence
from templatestudio.wire.arguments import ID_CHARS
from templatestudio.wire.shape import Call, JsonObject, NameBetween, Reasoning, WireShape

# The writer's shape: one token per call, NAME[ARGS]{...}, with NAME[CALL_ID]ID[ARGS]
# when the call has an id (Magistral). The opener and region reader are the module's own
# because after the token older models write a JSON list of call objects instead (or one
# bare object), which one declaration of a call cannot also say; the NAME[...] shape they
# read is this declaration's (WIRE.name.pattern()).
WIRE = WireShape(
    call=Call("[TOOL_CALLS]"),
    name=NameBetween("", "[ARGS]", chars=r"[A-Za-z0-9_.\-]", id_open="[CALL_ID]"),
    arguments=JsonObject(string_ok=True),
    separator="",
    # Magistral 2506 (tokenizer v11) writes its block as plain-text <think> tags.
    reasoning=Reasoning("[THINK]", "[/THINK]", also=(("<think>", "</think>"),)),
    stop_tokens=("</s>",),
)

MARKER, ARGS, CALL_ID = WIRE.call.open, WIRE.name.close, WIRE.name.id_open
THINK, END_THINK = WIRE.reasoning_pair
_NAMED = WIRE.name.pattern()
_ID = {"id": lambda value: isinstance(value, str) and value.isascii() and value.isalnum()}

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "[/INST]",
    "fields": {
        "thinking": {"open": THINK, "close": END_THINK, "content": "text"},
        "tool_calls": {
            "open_pattern": re.escape(MARKER) + r"\s*(?=\[)",
            "close": "</s>",
            "content": "json",
            "transform_each": True,
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
        },
        "content": {"content": "text"},
    },
}

ARGS_RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "[/INST]",
    "fields": {
        "thinking": {"open": THINK, "close": END_THINK, "content": "text"},
        "tool_calls": {
            # The name, the optional id and [ARGS] as WIRE declares them.
            "open_pattern": f"{re.escape(MARKER)}(?P<name>{WIRE.name.chars}+)"
                            f"(?:{re.escape(CALL_ID)}{ID_CHARS}+)?{re.escape(ARGS)}",
            "close_pattern": f"(?={re.escape(MARKER)})|{re.escape(WIRE.stop_tokens[0])}",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"content": "text"},
    },
}
"""The ``NAME[ARGS]`` shape. One response template cannot read both shapes:
the list needs ``transform_each`` over a parsed list, this one a name
captured from the marker. Give this dict to a tokenizer whose template
writes it (Mistral Small 3.2)."""


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    body = skip_space(region, len(MARKER))
    if region.startswith("[", body) or region.startswith("{", body):
        payload = decode_whole(region, body, len(region), found)
        items = payload if isinstance(payload, list) else [payload]
        if not items:
            raise CallSyntaxError("an empty list of calls")
        spans = []
        for item in items:
            call, extras = call_from(item, extras=_ID, string_arguments=True)
            spans.append(CallSpan(call, 0, len(region), extras.get("id")))
        return spans
    named = _NAMED.match(region, len(MARKER))
    if named is None:
        raise CallSyntaxError(f"expected a JSON list or NAME{ARGS} after {MARKER}")
    arguments = decode_whole(region, named.end(), len(region), found)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            raise CallSyntaxError("the arguments are a string that is not JSON") from None
    if not isinstance(arguments, dict):
        raise CallSyntaxError(f"the arguments of {named.group(1)!r} must be a JSON object")
    return [CallSpan(ParsedToolCall(named.group(1), arguments), 0, len(region), named.group(2))]


# Any word character right after the token opens a call (a name the reader
# cannot take, such as "Å" or "get weather", is refused, not shown).
_NAME_CHAR = chars(r"[\w.\-]")
OPENER = Opener(
    MARKER,
    opener_pattern(
        MARKER,
        either(
            sequence(SPACES, chars(r"[\[{]")),
            _NAME_CHAR,  # a name right after the token: a call, readable or not
        ),
    ),
    value_extent(len(MARKER), head_units=(ARGS, CALL_ID), stop_at=(MARKER, "</s>")),
)
CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ARGS = '{"base": "EUR", "quote": "JPY"}'

FORMAT = Format.declared(
    WIRE,
    name="mistral",
    description="[TOOL_CALLS] then a JSON list, or NAME[ARGS]{...} per call (Mistral)",
    openers=(OPENER,),
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(f'{MARKER}[{{"name": "get_exchange_rate", "arguments": {_ARGS}}}]', (CALL,), source="Mistral Small 3.1"),
        Sample(f'{MARKER} [{{"name": "get_exchange_rate", "arguments": {_ARGS}, "id": "call00001"}}]', (CALL,),
               ids=("call00001",)),
        Sample(f"{MARKER}get_exchange_rate{ARGS}{_ARGS}", (CALL,), source="Mistral Small 3.2"),
        Sample(f"{MARKER}get_exchange_rate{CALL_ID}abc123XYZ{ARGS}{_ARGS}{MARKER}get_exchange_rate{ARGS}{_ARGS}",
               (CALL, CALL), ids=("abc123XYZ", None)),
        Sample(f'{MARKER} {{"name": "get_exchange_rate", "arguments": "{{\\"base\\": \\"EUR\\", \\"quote\\": \\"JPY\\"}}"}}',
               (CALL,), source="Mistral 7B v0.3: a bare object, string arguments"),
        Sample(f"{THINK}The user wants a rate.{END_THINK}{MARKER}get_exchange_rate{ARGS}{_ARGS}", (CALL,),
               source="Magistral 2509: reasoning, then the call"),
    ),
    near_misses=(
        NearMiss("Sure! [TOOL_CALLS]sear", True, "cut inside the name"),
        NearMiss('[TOOL_CALLS]add{"a": 1}', True, "a name with no [ARGS]"),
        NearMiss("[TOOL_CALLS]toolname_no_args", True, "a bare name at the end of the reply"),
        NearMiss(f'{MARKER}[{{"name": "a"}}]', True, "no arguments"),
        NearMiss("[TOOL_CALLS]get weather[ARGS]{}", True, "a name with a space"),
        NearMiss("Mistral writes [TOOL_CALLS] before its calls.", False, "prose naming the token"),
    ),
    wire_limits=(
        WireLimit("a string holding </s>: the response template closes at the first one",
                  lambda arguments: any_string(arguments, lambda s: "</s>" in s), where="response template"),
    ),
    corpus_labels=("mistral",),
    vllm_parser=("mistral",),
    variants=("bare object and string arguments (Mistral 7B v0.3)", "NAME[CALL_ID]ID[ARGS] (Magistral)"),
)
