"""Granite 20B function calling: ``<function_call> {"name": …, "arguments": {…}}``, one object per call.

Model: IBM's granite-20b-functioncalling. Source: vLLM's
``tool_chat_template_granite_20b_fc`` (its history writes each call as
``<function_call> `` then the call object, the calls back to back, then
``<|endoftext|>``) and the system prompt it renders, which asks for
``<function_call> {"name": "no_function", "arguments": {}}`` when no
function fits (that is a call like any other: its name comes back as
written).

Read: after each ``<function_call>`` (whitespace allowed), one JSON object
with exactly ``name`` and ``arguments``. No closer: the object's own brace
ends the call, and what follows it (the next ``<function_call>``, a newline,
text) is not part of it. Any number of calls anywhere in the reply.
Accepted variant: arguments written as a JSON string holding an object (the
template's history writes them so, from the API's string arguments, and a
model imitates its history).

Refused (``UnparsedToolCall``): a JSON list after the marker (one object
per call), a missing ``arguments`` or ``name``, any other key, arguments
that are neither an object nor a string holding one, an object cut off.
Prose that names ``<function_call>`` with no ``{`` after it stays prose.
No reasoning block.
"""

from __future__ import annotations

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.base import Format, NearMiss, Sample, WireLimit, any_string
from templatestudio.wire.shape import Call, JsonArguments, NameKey, WireShape

# Everything is derived from this declaration: a JSON call object after an
# opening literal, ended by its own brace (no closing literal).
WIRE = WireShape(
    call=Call("<function_call>", head=" ",
              refused=(("[", "a JSON list after <function_call>: Granite 20B FC writes one object per call"),)),
    name=NameKey("name"),
    arguments=JsonArguments("arguments", string_ok=True),
    separator="",
    stop_tokens=("<|endoftext|>",),
)

MARKER = WIRE.call.open
END_OF_TEXT = "<|endoftext|>"

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "ASSISTANT:",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<function_call>\s*(?=\{)",
            "close_pattern": r"\s*(?:<\|endoftext\|>|\Z|(?=<function_call>))",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close": END_OF_TEXT, "content": "text"},
    },
}

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_JSON = '{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}'

FORMAT = Format.declared(
    WIRE,
    name="granite-20b-fc",
    description='<function_call> then a JSON {"name", "arguments"} object per call (Granite 20B function calling)',
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(f"{MARKER} {_JSON}", (CALL,), source="vLLM's tool_chat_template_granite_20b_fc"),
        Sample(f'{MARKER} {_JSON}{MARKER} {{"name": "ping", "arguments": {{}}}}{END_OF_TEXT}',
               (CALL, ParsedToolCall("ping", {})), source="the template's history: calls back to back"),
        Sample(f'Let me check the weather for you.\n{MARKER} {{"name": "get_weather", "arguments": {{"city": "Tokyo"}}}}\n'
               f'{MARKER} {{"name": "get_time", "arguments": {{"timezone": "Asia/Tokyo"}}}}',
               (ParsedToolCall("get_weather", {"city": "Tokyo"}), ParsedToolCall("get_time", {"timezone": "Asia/Tokyo"})),
               source="text first, one call per line"),
        Sample(f'{MARKER} {{\n  "name": "f",\n  "arguments": "{{\\"x\\": [1, 2.5, null, true]}}"\n}}',
               (ParsedToolCall("f", {"x": [1, 2.5, None, True]}),), source="string arguments, as the history writes them"),
        Sample(f'{MARKER} {{"name": "no_function", "arguments": {{}}}}', (ParsedToolCall("no_function", {}),),
               source="the system prompt's answer when no function fits"),
    ),
    near_misses=(
        NearMiss(f'{MARKER} {{"name": "f", "arguments": {{', True, "cut inside the JSON"),
        NearMiss(f'{MARKER} [{{"name": "f", "arguments": {{}}}}]', True, "a JSON list, not one object"),
        NearMiss(f'{MARKER} {{"name": 123}}', True, "a name that is not a string, no arguments"),
        NearMiss(f'{MARKER} {{"name": "f", "parameters": {{}}}}', True, "parameters instead of arguments"),
        NearMiss(f"{MARKER} ", True, "cut right after the marker"),
        NearMiss(f"Each call starts with {MARKER} and a JSON object.", False, "prose naming the marker"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {MARKER} or {END_OF_TEXT}: the response template ends the call there",
                  lambda arguments: any_string(arguments, lambda s: MARKER in s or END_OF_TEXT in s),
                  where="response template"),
    ),
    corpus_labels=(),
    variants=("string arguments (the template's history)", "calls back to back or one per line"),
    vllm_parser=("granite-20b-fc",),
)
