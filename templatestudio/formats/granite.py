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

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.base import Format, NearMiss, Sample, WireLimit, any_string
from templatestudio.wire.shape import Call, JsonArguments, JsonList, NameKey, WireShape

# Openers, reader, writer and closers are derived from this declaration. No
# closing literal: the list's own bracket ends the calls.
WIRE = WireShape(
    call=Call("<|tool_call|>", refused=(("{", "<|tool_call|> must be followed by a JSON list of calls, not a dict"),)),
    name=NameKey("name"),
    arguments=JsonArguments("arguments", listed=JsonList(indent=4)),
    stop_tokens=("<|end_of_text|>",),
)

MARKER = WIRE.call.open
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

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})

FORMAT = Format.declared(
    WIRE,
    name="granite",
    description='<|tool_call|> then a JSON list of {"name", "arguments"} (IBM Granite 3.x)',
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(WIRE.write_call(CALL), (CALL,), source="vLLM's Granite template (indent=4)"),
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
    vllm_parser=("granite",),
)
