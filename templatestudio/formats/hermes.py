"""Hermes: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (Qwen2.5, Qwen3, QwQ, Hermes 2/3).

Read: exactly the keys ``name`` and ``arguments``, one call per block,
any number of blocks anywhere in the reply. Accepted variants:

- arguments written as a JSON string holding an object (seen from Qwen2.5
  fine-tunes; the course's ``normalize_arguments`` decodes it too);
- a last call whose ``</tool_call>`` is missing because the reply ended
  right after the JSON (a server that uses ``</tool_call>`` as a stop
  string hands the client exactly this). A call whose JSON is itself cut
  off still raises: its arguments are unknown.

Refused (``UnparsedToolCall``): a JSON list inside one block, a missing
``arguments`` key, any other key, text between the JSON and the closer.
Reasoning: Qwen3's ``<think>…</think>`` at the start of the reply.
"""

from __future__ import annotations

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.base import Format, NearMiss, Sample, WireLimit, any_string
from templatestudio.wire.shape import Call, JsonArguments, NameKey, Reasoning, WireShape

# Everything about the wire, declared: openers, reader, writer, closers and
# reasoning are derived from it (see ``wire.shape``).
WIRE = WireShape(
    call=Call("<tool_call>", "</tool_call>", head="\n", tail="\n",
              refused=(("[", "a JSON list inside <tool_call> is not this format's call"),)),
    name=NameKey("name"),
    arguments=JsonArguments("arguments", string_ok=True),
    separator="\n",
    reasoning=Reasoning("<think>", "</think>"),
    stop_tokens=("<|im_end|>",),
    closer_optional=True,
)

OPEN, CLOSE = WIRE.call.open, WIRE.call.close
_CHATML = "<|im_start|>assistant\n"

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": [_CHATML, "<|start_of_role|>assistant<|end_of_role|>"],
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open": OPEN,
            "close": CLOSE,
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close": ["<|im_end|>", "<|end_of_text|>"], "content": "text"},
    },
}

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})

FORMAT = Format.declared(
    WIRE,
    name="hermes",
    description='JSON {"name", "arguments"} inside <tool_call> tags (Qwen2.5, Qwen3, QwQ, Hermes)',
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(f'{OPEN}\n{{"name": "get_exchange_rate", "arguments": {{"base": "EUR", "quote": "JPY"}}}}\n{CLOSE}', (CALL,),
               source="Qwen3-0.6B's template"),
        Sample(f'<think>\nThe user wants a rate.\n</think>\n\n{OPEN}\n{{"name": "get_exchange_rate", "arguments": '
               f'{{"base": "EUR", "quote": "JPY"}}}}\n{CLOSE}', (CALL,), source="Qwen3 with reasoning"),
        Sample(f'{OPEN}{{"name": "a", "arguments": {{}}}}{CLOSE}\n{OPEN}{{"name": "b", "arguments": {{"x": [1, 2]}}}}{CLOSE}',
               (ParsedToolCall("a", {}), ParsedToolCall("b", {"x": [1, 2]})), source="two calls in one turn"),
        Sample(f'{OPEN}\n{{"name": "get_exchange_rate", "arguments": "{{\\"base\\": \\"EUR\\", \\"quote\\": \\"JPY\\"}}"}}',
               (CALL,), source="string arguments, closer cut by a stop string"),
    ),
    near_misses=(
        NearMiss(f'{OPEN}{{"name": "get_exchange_rate"}}{CLOSE}', True, "no arguments key"),
        NearMiss(f'{OPEN}[{{"name": "a", "arguments": {{}}}}]{CLOSE}', True, "a list inside one block"),
        NearMiss(f'{OPEN}{{"name": "a", "arguments": {{"x": 1}}', True, "cut inside the JSON"),
        NearMiss(f'Checking. {OPEN}\n', True, "cut right after the opener"),
        NearMiss(f'Qwen wraps each call in {OPEN} tags.', False, "prose naming the tag"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {CLOSE}: the response template closes the region at the first one",
                  lambda arguments: any_string(arguments, lambda s: CLOSE in s), where="response template"),
    ),
    corpus_labels=("hermes",),
    variants=("string arguments (Qwen2.5 fine-tunes)", "missing closer at the end of the reply (stop strings)"),
    vllm_parser=("hermes", "qwen3_json", "granite4", "ernie45"),
)
