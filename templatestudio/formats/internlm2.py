"""InternLM2: ``<|action_start|><|plugin|>`` + a JSON call + ``<|action_end|>``.

Model: Shanghai AI Lab's InternLM2 / InternLM2.5 chat models. Source: the
corpus template ``tool_chat_template_internlm2_tool`` (vLLM's), which
writes ``{"name": NAME, "arguments": {…}}``; InternLM's own tool-use
format writes ``"parameters"`` in the same place, so either key is read
(exactly one of them). One call per action block, any number of blocks
anywhere in the reply.

Accepted variants: the ``parameters`` key; whitespace between the tokens
and around the JSON; a last block whose ``<|action_end|>`` is missing
because the reply ended right after the JSON (InternLM's servers stop on
that token). Refused: a code-interpreter action (``<|action_start|>
<|interpreter|>``: code to run, not a tool call), both or neither of the
argument keys, any other key, arguments that are not a JSON object (the
template double-encodes string arguments into a JSON string; the model
never writes that), text between the JSON and the closer. The token alone
in prose stays text. No reasoning channel.

The response template passes the call object through as written, so a
call with ``parameters`` comes back from it under that key, not
``arguments``.
"""

from __future__ import annotations

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.base import Format, NearMiss, Sample, WireLimit, any_string
from templatestudio.wire.shape import Call, JsonArguments, NameKey, WireShape

# Openers, reader, writer and closers are derived from this declaration.
WIRE = WireShape(
    call=Call(
        "<|action_start|>", "<|action_end|>", head="<|plugin|>\n",
        # A code-interpreter action opens like a call; it is code to run, so it is refused, not shown.
        refused=(("<|interpreter|>", "a code-interpreter action (<|interpreter|>) is not a tool call and is not read"),),
    ),
    name=NameKey("name"),
    arguments=JsonArguments("arguments", also=("parameters",)),
    stop_tokens=("<|action_end|>", "<|im_end|>"),
    closer_optional=True,
)

OPEN, CLOSE = WIRE.call.open, WIRE.call.close
PLUGIN, INTERPRETER = WIRE.call.head.strip(), WIRE.call.refused[0][0]

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<\|action_start\|>\s*<\|plugin\|>",
            "close": CLOSE,
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close": ["<|im_end|>"], "content": "text"},
    },
}

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_JSON = '"name": "get_exchange_rate", "{key}": {{"base": "EUR", "quote": "JPY"}}'

FORMAT = Format.declared(
    WIRE,
    name="internlm2",
    description='<|action_start|><|plugin|> then JSON {"name", "arguments"|"parameters"} (InternLM2)',
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(f"{OPEN}{PLUGIN}\n{{{_JSON.format(key='arguments')}}}{CLOSE}", (CALL,),
               source="tool_chat_template_internlm2_tool"),
        Sample(f"I will look it up.{OPEN}{PLUGIN}\n{{{_JSON.format(key='parameters')}}}{CLOSE}\n", (CALL,),
               source="InternLM2's own parameters key, after text"),
        Sample(f'{OPEN}{PLUGIN}{{"name": "a", "arguments": {{}}}}{CLOSE}{OPEN} {PLUGIN}\n{{"name": "b", "arguments": {{"x": [1]}}}}',
               (ParsedToolCall("a", {}), ParsedToolCall("b", {"x": [1]})), source="two blocks, the last closer cut by a stop"),
    ),
    near_misses=(
        NearMiss(f"InternLM marks actions with {OPEN} and {CLOSE}.", False, "prose naming the tokens"),
        NearMiss(f"{OPEN}{INTERPRETER}\n```python\nprint(1)\n```{CLOSE}", True, "a code-interpreter action"),
        NearMiss(f'{OPEN}{PLUGIN}{{"name": "f", "arguments": {{}}, "parameters": {{}}}}{CLOSE}', True, "both argument keys"),
        NearMiss(f'{OPEN}{PLUGIN}{{"name": "f", "arguments": "{{}}"}}{CLOSE}', True, "arguments as a JSON string"),
        NearMiss(f'{OPEN}{PLUGIN}{{"name": "f", "arguments": {{}}}} ok{CLOSE}', True, "text before the closer"),
        NearMiss(f'{OPEN}{PLUGIN}\n{{"name": "f", "arguments": {{"x": 1', True, "cut inside the JSON"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {CLOSE}: the response template closes the region at the first one",
                  lambda arguments: any_string(arguments, lambda s: CLOSE in s), where="response template"),
    ),
    corpus_labels=("other:internlm",),
    variants=("the parameters key (InternLM's own format)", "missing closer at the end of the reply (stop token)"),
    vllm_parser=("internlm",),
)
