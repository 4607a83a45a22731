"""Llama 3.1–3.3 JSON: ``{"name": ..., "parameters": {...}}``, maybe after ``<|python_tag|>``.

A bare object opens a call wherever it stands, when its first key is
``parameters``, ``arguments`` or ``type`` (Llama 3.2 echoes the tool list's
``"type": "function"``; key order is not fixed), or ``name`` with one of
those right after it (``wire.bare_json``). Read: ``name``, exactly one of
``parameters`` and ``arguments``, an optional ``"type": "function"``. An
object that is not a call (JSON data for the user, a tool's schema) stays
text, and the prose around a call stays content ("Here is the result: {…}
Would you like more?"); a broken object that began with the call's own
keys (``{"name": "…", "parameters":``) is refused, and so is an object
with both ``parameters`` and ``arguments`` (which one holds the arguments
is not said).

Every Llama 3.1–3.3 template (corpus) asks for and writes ``"parameters"``,
and Meta's reference code (llama-models' tool utilities) writes
``parameters`` and reads a JSON reply as a call only with ``parameters``;
the writer writes ``parameters`` too. The reader also takes
``{"name": …, "arguments": …}``, bare or after ``<|python_tag|>``, as
vLLM's ``llama3_json`` parser and SGLang's Llama detector do: models write
it. That object is also Phi-4-mini's call (``wire.bare_json``): a Llama 3
machine tries its own openers first and reads it; a Phi-4-mini machine
reads it as its own; other machines' guards name Llama 3 (the registry's
order).

Not handled: Llama's built-in tools (``<|python_tag|>brave_search.call(…)``)
are refused, not read; the ``;`` vLLM accepts between calls stays content.
"""

from __future__ import annotations

import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import (
    Found, SPACES, WS, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.bare_json import LLAMA3_OPENING
from templatestudio.wire.value_extent import value_extent
from templatestudio.wire.jsonbody import call_from, decode_whole, looks_like_schema, skip_space
from templatestudio.resumable_match import chars, either, literal, run, sequence
from templatestudio.wire.shape import Call, JsonArguments, NameKey, WireShape

# The writer's shape. The openers and reader are the module's own: a bare
# object opens at "{" only with Llama 3's keys (``wire.bare_json``), and an
# object that turns out not to be a call is prose, not an error.
WIRE = WireShape(
    call=Call("", marker="{", also_opens=("<|python_tag|>",)),
    name=NameKey("name"),
    # Meta writes "parameters"; "arguments" is read too (vLLM, SGLang), exactly one of them.
    arguments=JsonArguments("parameters", also=("arguments",), string_ok=True,
                            extras={"type": lambda value: value == "function"}),
    separator="; ",
    stop_tokens=("<|eom_id|>", "<|eot_id|>"),
    # The Llama 3.x templates write an assistant's calls as the whole message, never
    # beside content: whitespace a model writes around a call is its own, and stays.
    spacing="",
)

(TAG,) = WIRE.call.also_opens
ARGUMENT_KEYS = WIRE.arguments.keys
_STRICT_START = re.compile(
    rf'\{{{WS}*(?:"type"{WS}*:{WS}*"function"{WS}*,{WS}*)?"name"{WS}*:{WS}*"[^"\\]*"{WS}*,{WS}*"(?:parameters|arguments)"{WS}*:'
    # Python-dict quoting of the same keys: opens like a call, is not JSON.
    rf"|\{{{WS}*'name'{WS}*:{WS}*'[^'\\]*'{WS}*,{WS}*'parameters'{WS}*:"
)

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "fields": {
        "tool_calls": {
            "open_pattern": (
                r'(?:\A\s*(?:<\|python_tag\|>)?|(?<=;))\s*\{\s*(?:"type":\s*"function",\s*)?'
                r'"name":\s*"(?P<name>[^"\\]+)",\s*"(?:parameters|arguments)":\s*'
            ),
            "close_pattern": r"\}\s*(?:;|\Z)",
            "content": "json",
            "repeats": True,
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"content": "text"},
    },
}


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan] | None:
    start = len(TAG) if opener.literal == TAG else 0
    body = skip_space(region, start)
    if opener.literal == TAG and not region.startswith("{", body):
        raise CallSyntaxError("built-in tool calls after <|python_tag|> are not read")
    try:
        payload = decode_whole(region, body, len(region), found)
    except CallSyntaxError:
        if opener.literal == TAG or _STRICT_START.match(region, body):
            raise
        return None  # braces in prose that never were a call
    if not isinstance(payload, dict) or "name" not in payload:
        if opener.literal == TAG:
            raise CallSyntaxError("the JSON after <|python_tag|> is not a call")
        return None
    given = [payload[key] for key in ARGUMENT_KEYS if key in payload]
    if len(given) == 1 and looks_like_schema(given[0]):
        return None
    try:
        call, _ = call_from(payload, argument_keys=ARGUMENT_KEYS, extras=WIRE.arguments.extras,
                            string_arguments=WIRE.arguments.string_ok)
    except CallSyntaxError:
        if opener.literal == TAG or _STRICT_START.match(region, body) or len(given) > 1:
            raise
        return None  # an object with a "name" that is data, not a call
    return [CallSpan(call, 0, len(region))]


OPENERS = (
    Opener("{", LLAMA3_OPENING, value_extent(0), cut_after=3),
    # After the tag: JSON, or a built-in call such as brave_search.call( — not a word of prose.
    # Llama writes the built-in's name right after the tag; a space there is prose
    # ("writes <|python_tag|> first."), so a reply ending on such a word is no cut call.
    Opener(TAG, opener_pattern(TAG, either(sequence(SPACES, literal("{")),
                                           sequence(chars(r"[A-Za-z_]"), run(chars(r"\w")), literal(".call(")))),
           value_extent(len(TAG), stop_at=("<|eom_id|>", "<|eot_id|>"))),
)
CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ONE = '{"name": "get_exchange_rate", "parameters": {"base": "EUR", "quote": "JPY"}}'

FORMAT = Format.declared(
    WIRE,
    name="llama3-json",
    description='{"name", "parameters"} JSON (or "arguments"), maybe after <|python_tag|>, anywhere in the reply (Llama 3.1-3.3)',
    openers=OPENERS,
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    # The bare {"name", "arguments"} object is read too, but is Phi-4-mini's sample (both read it).
    samples=(
        Sample(_ONE, (CALL,), source="Llama 3.1's template"),
        Sample(TAG + _ONE, (CALL,)),
        Sample('{"type": "function", "name": "get_exchange_rate", "parameters": {"base": "EUR", "quote": "JPY"}}', (CALL,),
               source="Llama 3.2"),
        Sample('{"parameters": {"base": "EUR", "quote": "JPY"}, "name": "get_exchange_rate"}', (CALL,), source="keys reversed"),
        Sample("Here is the result: " + _ONE + " Would you like to know more?", (CALL,), source="a call inside prose"),
        Sample("Let me check. " + TAG + _ONE.replace('"parameters"', '"arguments"'), (CALL,),
               source="the arguments key after the tag (SGLang's test)"),
        Sample('{"type": "function", "arguments": {"base": "EUR", "quote": "JPY"}, "name": "get_exchange_rate"}', (CALL,),
               source="OpenAI-style keys, arguments first"),
    ),
    near_misses=(
        NearMiss('{"name": "get_exchange_rate", "parameters": {"base": "EUR"', True, "cut inside the JSON"),
        NearMiss('The user is {"name": "Ada", "age": 36}.', False, "JSON data about a person"),
        NearMiss('{"name": "get_rate", "parameters": {"type": "object", "properties": {}}}', False, "a tool schema"),
        NearMiss(TAG + 'brave_search.call(query="x")', True, "a built-in tool call"),
        NearMiss('{"name": "get_rate", "parameters": {"base": "EUR"}, "arguments": {"base": "EUR"}}', True,
                 "both arguments keys"),
        NearMiss('{"arguments": {"base": "EUR"}, "name": "get_rate", "parameters": {}}', True,
                 "both arguments keys, name not first"),
        NearMiss(TAG + '{"name": "get_rate"}', True, "no arguments key after the tag"),
        NearMiss('The reply was {"arguments": ["a", "b"]}.', False, "data with an arguments key and no name"),
        NearMiss("{'name': 'f', 'parameters': {}}", True, "Python-dict quoting, not JSON"),
        NearMiss("Send the <|python_tag|> token first.", False, "prose naming the tag"),
    ),
    wire_limits=(
        WireLimit("arguments shaped like a JSON schema (type object with properties): read as a tool's schema, not a call",
                  lambda arguments: looks_like_schema(arguments), read_as_text=True),
        WireLimit("a string holding } then ; : the response template's close pattern",
                  lambda arguments: any_string(arguments, lambda s: re.search(r"\}\s*;", s) is not None),
                  where="response template"),
    ),
    corpus_labels=("llama3-json",),
    variants=('"type": "function" (Llama 3.2)', "keys in any order", '"arguments" for "parameters" (vLLM, SGLang)'),
    vllm_parser=("llama3_json", "llama4_json"),
)
