"""Granite 3.x: ``<|tool_call|>`` then a JSON list ``[{"name": …, "arguments": {…}}, …]``.

Read as vLLM's Granite tool-chat template writes it (``tojson(indent=4)``,
any whitespace): after ``<|tool_call|>``, one JSON list of calls, each with
exactly ``name`` and ``arguments`` (an object). Several calls share one
list; the call region ends where the list closes, and text after it is
content (the response template cannot: its JSON region runs to
``<|end_of_text|>``, which is all Granite writes after the list). Granite 3.x
writes no reasoning block this reader knows
(``reasoning`` is None).

Refused: a bare object instead of the list, an empty list, arguments written
as a string, ``parameters`` or any other key, a list never closed. Granite
4.0 and 4.1 write Hermes ``<tool_call>`` blocks instead (the hermes format).
"""

from __future__ import annotations

import json

from templatestudio.calls import CallSpan, ParsedToolCall, region_spans
from templatestudio.wire.base import (
    Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import ValueExtent
from templatestudio.wire.jsonbody import calls_from, decode_whole
from templatestudio.resumable_match import chars

MARKER = "<|tool_call|>"
END_OF_TEXT = "<|end_of_text|>"

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|start_of_role|>assistant<|end_of_role|>",
    "fields": {
        "tool_calls": {
            "open": MARKER,
            "close": END_OF_TEXT,
            "content": "json",
            "transform_each": True,
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
        },
        "content": {"close": END_OF_TEXT, "content": "text"},
    },
}


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    payload = decode_whole(region, len(MARKER), len(region), found)
    if not isinstance(payload, list):
        raise CallSyntaxError(f"{MARKER} must be followed by a JSON list of calls, not a {type(payload).__name__}")
    if not payload:
        raise CallSyntaxError("an empty list of calls")
    return region_spans(calls_from(payload), len(region))


def write_call(call: ParsedToolCall) -> str:
    return MARKER + json.dumps([{"name": call.name, "arguments": call.arguments}], ensure_ascii=False, indent=4)


OPENER = Opener(MARKER, opener_pattern(MARKER, SPACES, chars(r"[\[{]")), lambda: ValueExtent(len(MARKER)))

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})

FORMAT = Format(
    name="granite",
    description='<|tool_call|> then a JSON list of {"name", "arguments"} (IBM Granite 3.x)',
    openers=(OPENER,),
    read_region=read_region,
    write_call=write_call,
    closers=("]",),
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    reasoning=None,
    samples=(
        Sample(write_call(CALL), (CALL,), source="vLLM's Granite template (indent=4)"),
        Sample(f'{MARKER}[{{"name": "get_exchange_rate", "arguments": {{"base": "EUR", "quote": "JPY"}}}}, '
               f'{{"name": "ping", "arguments": {{}}}}]', (CALL, ParsedToolCall("ping", {})), source="two calls"),
        Sample(f'{MARKER} [{{"name": "f", "arguments": {{"x": [1, 2.5, null, true]}}}}]\nDone.',
               (ParsedToolCall("f", {"x": [1, 2.5, None, True]}),), source="a space first, text after the list"),
    ),
    near_misses=(
        NearMiss(f'{MARKER}[{{"name": "a", "arguments": {{"x": 1', True, "cut inside the JSON"),
        NearMiss(f'{MARKER}{{"name": "a", "arguments": {{}}}}', True, "a bare object, not a list"),
        NearMiss(f'{MARKER}[{{"name": "a"}}]', True, "no arguments"),
        NearMiss(f'{MARKER}[{{"name": "a", "parameters": {{}}}}]', True, "parameters instead of arguments"),
        NearMiss(f"{MARKER}[]", True, "an empty list"),
        NearMiss(f"Granite writes {MARKER} before its calls.", False, "prose naming the token"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {END_OF_TEXT}: the response template closes the list at the first one",
                  lambda arguments: any_string(arguments, lambda s: END_OF_TEXT in s), where="response template"),
    ),
    corpus_labels=("other:granite",),
    vllm_parser="granite",
)
