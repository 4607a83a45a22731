"""firefunction v2: `` functools[{"name": NAME, "arguments": {…}}, …]`` (Fireworks firefunction-v2, on Llama 3).

Source: the corpus template ``fireworks-ai-llama-3-firefunction-v2``: the
assistant's text, a space, ``functools`` and one JSON list holding every
call of the turn; no closing marker (the turn ends with ``<|eot_id|>``).
The template takes its tools as a ``functions`` string and the date as
``datetime``, not from ``tools``; the probe passes both.

Read: one list per marker, text before it (the space the template writes
comes back as content), whitespace between calls; each item has exactly
``name`` and ``arguments`` (a JSON object). Refused (``UnparsedToolCall``):
arguments written as a string (the template double-encodes string
arguments; the model writes the object), an empty list, any other key, a
list that never closes. ``functools`` not followed by ``[{`` (Python's
``functools.partial``) is prose.

The list is xLAM's bare list behind a marker: this reader reads it only
after ``functools``, and a bare list (xLAM, Phi-4-mini's object) opens
another format's call here. Phi-4-mini's system prompt asks for this same
``functools[…]`` shape, so a Phi-4-mini reply written that way reads as
firefunction. No reasoning block, no ids.
"""

from __future__ import annotations

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.base import Format, NearMiss, Sample
from templatestudio.wire.shape import Call, JsonArguments, JsonList, NameKey, WireShape

# Openers, reader, writer and closers are derived from this declaration. The
# marker reaches into the list's bracket: "functools" alone is a word of prose.
WIRE = WireShape(
    call=Call("functools", marker="functools["),
    name=NameKey("name"),
    arguments=JsonArguments("arguments", listed=JsonList()),
    stop_tokens=("<|eot_id|>",),
)

MARKER = WIRE.call.marker

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"\s*functools(?=\[)",
            "close_pattern": r"(?<=\])\s*(?:<\|eot_id\|>\s*)?\Z",  # the list ends the turn
            "content": "json",
            "transform_each": True,
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
        },
        "content": {"content": "text"},
    },
}

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ONE = ' functools[{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}]'

FORMAT = Format.declared(
    WIRE,
    name="firefunction-v2",
    description='functools[{"name", "arguments"}, ...] after the text (Fireworks firefunction-v2)',
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(_ONE, (CALL,), source="firefunction-v2's template"),
        Sample('I will check both. functools[{"name": "a", "arguments": {}}, '
               '{"arguments": {"x": [1, "]"]}, "name": "b"}]',
               (ParsedToolCall("a", {}), ParsedToolCall("b", {"x": [1, "]"]})),
               source="text, then two calls; a bracket inside a string"),
        Sample('functools[\n  {"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}\n]', (CALL,),
               source="no text, the list on several lines"),
    ),
    near_misses=(
        NearMiss(' functools[{"name": "a", "arguments": {"x": 1}}', True, "the list never closes"),
        NearMiss(" functools[", True, "cut right after the marker"),
        NearMiss(' functools[{"name": "a"}]', True, "no arguments"),
        NearMiss(' functools[{"name": "a", "arguments": "{}"}]', True, "arguments as a string"),
        NearMiss(' functools[{"name": "a", "parameters": {}}]', True, "parameters, not arguments"),
        NearMiss("Use functools.partial to bind the first argument.", False, "the Python module in prose"),
        NearMiss("functools[0] is not valid Python either.", False, "the marker's text, then no call"),
    ),
    wire_limits=(),
    corpus_labels=("other:firefunction",),
    variants=("text before the marker", "the list on several lines"),
)
