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

import json

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import call_from, decode_at, skip_space
from templatestudio.resumable_match import sequence, either, literal

OPEN, PLUGIN, INTERPRETER, CLOSE = "<|action_start|>", "<|plugin|>", "<|interpreter|>", "<|action_end|>"

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


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    position = skip_space(region, len(OPEN))
    if region.startswith(INTERPRETER, position):
        raise CallSyntaxError(f"a code-interpreter action ({INTERPRETER}) is not a tool call and is not read")
    if not region.startswith(PLUGIN, position):
        raise CallSyntaxError(f"expected {PLUGIN} after {OPEN}")
    start = skip_space(region, position + len(PLUGIN))
    if not region.startswith("{", start):
        raise CallSyntaxError(f"no JSON object after {PLUGIN}")
    payload, after = decode_at(region, start, found)
    call, _ = call_from(payload, argument_keys=("arguments", "parameters"))
    after = skip_space(region, after)
    if after == len(region) or (region.startswith(CLOSE, after) and after + len(CLOSE) == len(region)):
        return [CallSpan(call, 0, len(region))]
    raise CallSyntaxError(f"expected {CLOSE} after the call's JSON, at offset {after}")


def write_call(call: ParsedToolCall) -> str:
    body = json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
    return f"{OPEN}{PLUGIN}\n{body}{CLOSE}"


OPENER = Opener(
    OPEN,
    # The action's JSON (or the interpreter's code) must follow: prose naming
    # the tokens ("opens with <|action_start|><|plugin|> and …") stays text.
    opener_pattern(OPEN, SPACES, either(sequence(literal(PLUGIN), SPACES, literal("{")), literal(INTERPRETER))),
    lambda: TagExtent(len(OPEN), CLOSE, "json", close_at_end=True),
)
CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_JSON = '"name": "get_exchange_rate", "{key}": {{"base": "EUR", "quote": "JPY"}}'

FORMAT = Format(
    name="internlm2",
    description='<|action_start|><|plugin|> then JSON {"name", "arguments"|"parameters"} (InternLM2)',
    openers=(OPENER,),
    read_region=read_region,
    write_call=write_call,
    closers=(CLOSE,),
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    reasoning=None,
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
    vllm_parser="internlm",
)
