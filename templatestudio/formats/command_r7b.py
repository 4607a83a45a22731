"""Command R7B: ``<|START_ACTION|>[{"tool_call_id", "tool_name", "parameters"}, …]<|END_ACTION|>``.

Read as Cohere's published c4ai-command-r7b-12-2024 template writes it: a
JSON list of calls between the action tokens, each with exactly
``tool_name`` and ``parameters`` (an object) and, as the template numbers
them, a ``tool_call_id`` string, which comes back as the call's id. A call
without an id is read with none. Several calls share one list; any number
of action blocks in a reply.

Reasoning: the tool plan ``<|START_THINKING|>…<|END_THINKING|>`` at the
start of the reply. A plain answer comes between ``<|START_RESPONSE|>`` and
``<|END_RESPONSE|>``: those two tokens are the reply's framing, so the reader
drops them and the text between is the content.

Command A (vLLM ``cohere_command3``) writes this wire token for token: the
same action block, tool plan and response block (Cohere's own renderer,
cohere-melody's ``render_cmd3``, writes the history so). Command A+ (vLLM
``cohere_command4``, ``render_cmd4``) writes the same action block and tool
plan, and its answer between ``<|START_TEXT|>`` and ``<|END_TEXT|>`` (its
parser takes the response block too): those two tokens are framing as
well. Grounded answers' citation marks (``<co>…</co: 0:[1]>``) are content
and come back as written (vLLM's parser moves them to citations).

The response template reads one action block per reply (its list becomes
the calls; a second block would replace the first), which is what the model
writes; the reader reads any number.

Refused: a bare object instead of the list, an empty list, ``name`` or
``arguments`` keys (another format's call), parameters written as a string,
any other key, a block never closed.
"""

from __future__ import annotations

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.base import Format, NearMiss, Sample, WireLimit, any_string
from templatestudio.wire.shape import Call, JsonArguments, JsonList, NameKey, Reasoning, WireShape

# Openers, reader, writer and closers are derived from this declaration.
WIRE = WireShape(
    call=Call("<|START_ACTION|>", "<|END_ACTION|>",
              refused=(("{", "<|START_ACTION|> must hold a JSON list of calls, not a dict"),)),
    name=NameKey("tool_name"),
    arguments=JsonArguments(
        "parameters",
        extras={"tool_call_id": lambda value: isinstance(value, str) and bool(value)},
        id_key="tool_call_id",
        written_extras=(("tool_call_id", "0"),),
        listed=JsonList("[\n    ", "\n]"),
    ),
    reasoning=Reasoning("<|START_THINKING|>", "<|END_THINKING|>"),
    stop_tokens=("<|END_OF_TURN_TOKEN|>",),
    # The response block's tokens open no call: they are dropped and the text between them is the content
    # (Command A+ writes its answer between the text tokens).
    framing=("<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_TEXT|>", "<|END_TEXT|>"),
)

OPEN, CLOSE = WIRE.call.open, WIRE.call.close
RESPONSE, END_RESPONSE, TEXT, END_TEXT = WIRE.framing

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
    "fields": {
        "thinking": {"open": "<|START_THINKING|>", "close": "<|END_THINKING|>", "content": "text"},
        "content": {"open": RESPONSE, "close": END_RESPONSE, "content": "text"},
        "tool_calls": {
            "open": OPEN,
            "close": CLOSE,
            "content": "json",
            "transform_each": True,
            "transform": {"type": "function", "function": {"name": "{tool_name}", "arguments": "{parameters}"}},
        },
    },
}

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ITEM = '{"tool_call_id": "0", "tool_name": "get_exchange_rate", "parameters": {"base": "EUR", "quote": "JPY"}}'
_ONE = f"{OPEN}[\n    {_ITEM}\n]{CLOSE}"

FORMAT = Format.declared(
    WIRE,
    name="command-r7b",
    description='<|START_ACTION|>[{"tool_call_id", "tool_name", "parameters"}]<|END_ACTION|> (Cohere Command R7B, Command A, Command A+)',
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(_ONE, (CALL,), ids=("0",), source="Command R7B's template"),
        Sample(f"<|START_THINKING|>I will look up the rate.<|END_THINKING|>{_ONE}", (CALL,), ids=("0",),
               source="with the tool plan"),
        Sample(f'{OPEN}[\n    {_ITEM},\n    {{"tool_call_id": "1", "tool_name": "ping", "parameters": {{}}}}\n]{CLOSE}',
               (CALL, ParsedToolCall("ping", {})), ids=("0", "1"), source="two calls in one list"),
        Sample(f'{OPEN}[{{"tool_name": "ping", "parameters": {{"n": [1, 2.5, null]}}}}]{CLOSE}',
               (ParsedToolCall("ping", {"n": [1, 2.5, None]}),), ids=(None,), source="no id written"),
        Sample(f"{RESPONSE}The rate is 160.{END_RESPONSE}", (), source="a plain answer: framing dropped"),
        Sample(f"<|START_THINKING|>A greeting.<|END_THINKING|>{TEXT}Hello!{END_TEXT}", (),
               source="Command A+'s answer block: framing dropped"),
    ),
    near_misses=(
        NearMiss(f'{OPEN}[{{"tool_call_id": "0", "tool_name": "a", "parameters": {{"x": 1', True, "cut inside the JSON"),
        NearMiss(f"{OPEN}[{_ITEM}]", True, "never closed"),
        NearMiss(f"{OPEN}{_ITEM}{CLOSE}", True, "a bare object, not a list"),
        NearMiss(f'{OPEN}[{{"name": "a", "arguments": {{}}}}]{CLOSE}', True, "another format's keys"),
        NearMiss(f'{OPEN}[{{"tool_name": "a", "parameters": "{{}}"}}]{CLOSE}', True, "parameters as a string"),
        NearMiss(f"Command R7B writes {OPEN} before its calls.", False, "prose naming the token"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {CLOSE}: the response template closes the block at the first one",
                  lambda arguments: any_string(arguments, lambda s: CLOSE in s), where="response template"),
    ),
    corpus_labels=("other:command-r7b",),
    vllm_parser=("cohere_command3", "cohere_command4"),
)
