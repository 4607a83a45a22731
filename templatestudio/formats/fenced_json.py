"""Fenced JSON: a ```json code block holding one ``{"name", "arguments"}`` object (Qwen2.5-Coder).

The opening is the fence, then an object (or a list) whose first key is
``name`` in either quote: that is what tells a call from a code sample.
Read: a JSON object with ``name`` and ``arguments`` (or ``parameters``).
A block whose ``parameters`` is a JSON schema (``"type": "object"`` with
``properties``) documents a tool and stays text, as does an object with
keys a call does not have (a config, a tool definition with a description): a
call written with ``parameters`` whose value looks like a schema is taken
for documentation too, while one written with ``arguments`` (as the writer
and the templates write calls) is read whatever its values. Refused: single-quoted
pseudo-JSON, a list of calls, comments inside the JSON. Not detected: a
call whose first key is not ``name``.
"""

from __future__ import annotations

import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import Found, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string
from templatestudio.wire.jsonbody import call_from, decode_at, looks_like_schema, skip_space
from templatestudio.wire.shape import Call, JsonArguments, NameKey, WireShape

# The writer's shape and the opener (derived: any fenced JSON object or list
# is a region, so a JSON value inside a code block is never mistaken for a
# bare call). The reader is the module's own: a fenced block is often data
# or documentation, so JSON that is not a call stays text instead of raising.
WIRE = WireShape(
    call=Call("```json", "```", head="\n", tail="\n",
              refused=(("[", "a list of calls in one fenced block is not this format"),)),
    name=NameKey("name"),
    arguments=JsonArguments("arguments", also=("parameters",), string_ok=True),
    stop_tokens=("<|im_end|>",),
)

OPEN, CLOSE = WIRE.call.open, WIRE.call.close

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"```json\s*",
            "close_pattern": r"\s*```",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
}


_STRICT_START = re.compile(
    r"""[ \t\r\n]*\{[ \t\r\n]*(["'])name\1[ \t\r\n]*:[ \t\r\n]*(["'])[^"'\\]*\2[ \t\r\n]*,[ \t\r\n]*(["'])(?:arguments|parameters)\3"""
)


_STRICT_LIST = re.compile(r"[ \t\r\n]*\[[ \t\r\n]*(?=\{)")


def _call_shaped(item: object) -> bool:
    """A dict with a name and non-schema arguments (or parameters), and no other keys."""
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return False
    keys = item.keys() - {"name"}
    if len(keys) != 1 or not keys <= {"arguments", "parameters"}:
        return False
    return not looks_like_schema(item[next(iter(keys))])


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan] | None:
    start = skip_space(region, len(OPEN))
    try:
        payload, after = decode_at(region, start, found)
    except CallSyntaxError:
        if _STRICT_START.match(region, len(OPEN)) or _STRICT_LIST.match(region, len(OPEN)):
            raise  # it began as a call: broken, not prose
        return None
    if isinstance(payload, list):
        if payload and all(_call_shaped(item) for item in payload):
            raise CallSyntaxError("a list of calls in one fenced block is not this format")
        return None  # a list of data, or of tool schemas shown as documentation
    if not isinstance(payload, dict) or not ({"arguments", "parameters"} & payload.keys()):
        return None  # JSON data whose first key happens to be "name"
    if payload.keys() - {"name", "arguments", "parameters"}:
        return None  # more keys than a call has: a config, a tool's definition, data
    if looks_like_schema(payload.get("parameters")):
        return None  # a tool's schema shown as documentation
    call, _ = call_from(payload, argument_keys=("arguments", "parameters"), string_arguments=True)
    after = skip_space(region, after)
    if not region.startswith(CLOSE, after) or after + len(CLOSE) != len(region):
        raise CallSyntaxError(f"expected {CLOSE} after the call's JSON, at offset {after}")
    return [CallSpan(call, 0, len(region))]


CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})

FORMAT = Format.declared(
    WIRE,
    name="fenced-json",
    description='a fenced json code block holding {"name", "arguments"} (Qwen2.5-Coder)',
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample('```json\n{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}\n```', (CALL,),
               source="Qwen2.5-Coder habit"),
        Sample('Sure.\n```json\n{"name": "a", "arguments": {}}\n```\n```json\n{"name": "b", "arguments": {"x": 1}}\n```',
               (ParsedToolCall("a", {}), ParsedToolCall("b", {"x": 1}))),
    ),
    near_misses=(
        NearMiss("```json\n{'name': 'a', 'arguments': {}}\n```", True, "single-quoted pseudo-JSON"),
        NearMiss('```json\n{"name": "a", "arguments": {} // note\n}\n```', True, "a comment inside the JSON"),
        NearMiss('```json\n[{"name": "a", "arguments": {}}]\n```', True, "a list of calls"),
        NearMiss('```json\n{"name": "get_rate", "parameters": {"type": "object", "properties": {}}}\n```', False,
                 "a tool schema shown as documentation"),
        NearMiss('```json\n{"city": "Paris"}\n```', False, "JSON data"),
        NearMiss('```json\n{"name": "Ada", "age": 36}\n```', False, "JSON data whose first key is name"),
    ),
    wire_limits=(
        WireLimit("a string holding ``` : the response template's close pattern ends the block",
                  lambda arguments: any_string(arguments, lambda s: "```" in s), where="response template"),
    ),
    corpus_labels=("fenced-json",),
)
