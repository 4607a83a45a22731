"""A live tool loop: generate, parse, run the tools, send the results back.

``run_tool_loop`` drives a real model through as many tool rounds as it
asks for, with the pieces the course built: ``safe_render`` with tools,
``parse_tool_calls``, and the step-4 message builders. Three things make it
safe on every family, not only Qwen3:

- ``generate_reply`` keeps special tokens, because several families write
  their call markers as special tokens (Gemma 4's ``<|tool_call>``,
  Mistral's ``[TOOL_CALLS]``, Llama 3.1's ``<|python_tag|>``); it cuts the
  text at the end-of-turn token instead of deleting every special token.
- ``split_thinking`` separates Qwen3's ``<think>`` block, and only the text
  after it is parsed: a call the model rehearses while thinking never runs.
- A tool the model names but nobody registered, or a tool that raises,
  becomes a result message the model reads, not an exception in the host.

Not handled here: sampling (decoding is greedy, so a run repeats on one
machine), reasoning formats other than ``<think>…</think>`` (Gemma 4's
thought channel stays in the reply), calls that need ids to pair results
with calls, and streaming. A reply cut off by ``max_new_tokens`` is parsed
as it stands, so a half-written call surfaces as ``UnparsedToolCall``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from transformers import PreTrainedTokenizerBase

from templatestudio.messages import Conversation
from templatestudio.render import safe_render
from templatestudio.tools import (
    ParsedToolCall,
    ToolCallParser,
    parse_tool_calls,
    tool_call_message,
    tool_result_message,
    tool_schema,
)

# Tokens that close an assistant turn in the families this course meets. Only
# those a tokenizer registers as special count: Gemma's vocabulary also has a
# plain "</s>" that is ordinary text there.
END_OF_TURN_TOKENS = (
    "<|im_end|>",  # Qwen, ChatML
    "<|eot_id|>",  # Llama 3
    "<|eom_id|>",  # Llama 3.1 after a <|python_tag|> call
    "<end_of_turn>",  # Gemma 2 and 3
    "<turn|>",  # Gemma 4
    "<|end|>",  # Phi
    "</s>",  # Llama 2, Mistral
)

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"


def stop_token_ids(tokenizer: PreTrainedTokenizerBase, eos_token_id: object = None) -> list[int]:
    """Ids that end a reply: the model's eos id(s), the tokenizer's, the turn closers.

    eos_token_id is what a model's generation_config holds: None, an int or
    a list of ints.
    """
    ids: set[int] = set()
    if isinstance(eos_token_id, int):
        ids.add(eos_token_id)
    elif isinstance(eos_token_id, Iterable):
        ids.update(int(token_id) for token_id in eos_token_id)
    if tokenizer.eos_token_id is not None:
        ids.add(tokenizer.eos_token_id)
    for token_id, token in tokenizer.added_tokens_decoder.items():
        if token.special and token.content in END_OF_TURN_TOKENS:
            ids.add(token_id)
    return sorted(ids)


def decode_reply(
    tokenizer: PreTrainedTokenizerBase, new_ids: Iterable[int], stop_ids: Iterable[int]
) -> str:
    """The text of generated ids up to the first stop id, special tokens kept.

    The stop token itself is not part of the reply. Decoding never cleans up
    spaces either: the parser must see exactly what the model wrote.
    """
    stops = set(stop_ids)
    kept: list[int] = []
    for token_id in new_ids:
        if int(token_id) in stops:
            break
        kept.append(int(token_id))
    return tokenizer.decode(kept, skip_special_tokens=False, clean_up_tokenization_spaces=False)


def generate_reply(
    model, tokenizer: PreTrainedTokenizerBase, prompt: str, *, max_new_tokens: int = 600
) -> str:
    """Greedy-decode one assistant turn after prompt and return its raw text.

    prompt is a rendered chat (with the generation prompt), so no extra
    special tokens are added when it is encoded. Sampling settings in the
    model's generation_config are overridden, not merely ignored.
    """
    config = model.generation_config
    stop_ids = stop_token_ids(tokenizer, config.eos_token_id)
    encoded = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    input_ids = encoded["input_ids"].to(model.device)
    pad_token_id = config.pad_token_id
    if pad_token_id is None:
        pad_token_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else stop_ids[0]
    output = model.generate(
        input_ids=input_ids,
        attention_mask=encoded["attention_mask"].to(model.device),
        max_new_tokens=max_new_tokens,
        do_sample=False,
        temperature=None,
        top_p=None,
        top_k=None,
        eos_token_id=stop_ids,
        pad_token_id=pad_token_id,
    )
    new_ids = output[0][input_ids.shape[1] :].tolist()
    return decode_reply(tokenizer, new_ids, stop_ids)


def split_thinking(text: str) -> tuple[str, str]:
    """(reasoning, reply) for a reply that may open with a <think> block.

    Both parts come back stripped. Without a block the reasoning is "". A
    block that never closes (generation stopped while thinking) is all
    reasoning and the reply is "", so nothing half-thought is executed.
    """
    stripped = text.strip()
    if THINK_CLOSE in stripped:
        reasoning, reply = stripped.split(THINK_CLOSE, 1)
        return reasoning.removeprefix(THINK_OPEN).strip(), reply.strip()
    if stripped.startswith(THINK_OPEN):
        return stripped.removeprefix(THINK_OPEN).strip(), ""
    return "", stripped


@dataclass
class Transcript:
    """What a tool loop produced.

    messages: the conversation as rendered for the next turn (the caller's
    messages, each call and result, the final answer); replies: every raw
    reply the model wrote, reasoning and markers included, in order.
    """

    messages: Conversation
    replies: list[str] = field(default_factory=list)

    @property
    def answer(self) -> str:
        """The final answer's text (the last message, an assistant reply)."""
        return self.messages[-1]["content"]

    @property
    def calls(self) -> list[dict]:
        """Every call in messages (the caller's history too), as function dicts."""
        return [
            call["function"]
            for message in self.messages
            for call in message.get("tool_calls", [])
        ]


class ToolLoopLimit(RuntimeError):
    """The model still asked for tools after max_rounds rounds of them.

    ``call`` is the call that would have started the next round and
    ``transcript`` everything up to it.
    """

    def __init__(self, max_rounds: int, call: ParsedToolCall, transcript: Transcript) -> None:
        self.call = call
        self.transcript = transcript
        super().__init__(
            f"the model still calls tools after {max_rounds} round(s); "
            f"last call: {call.name} {call.arguments}"
        )


def run_tool_call(call: ParsedToolCall, registry: dict[str, Callable[..., object]]) -> str:
    """Run one parsed call and return the result text the model will read.

    An unknown tool name or an exception inside the tool becomes an error
    text starting with "error:", because the model can recover from a
    result it can read and cannot from a crashed host. Arguments are passed
    as written; checking them against the schema is not done here.
    """
    tool = registry.get(call.name)
    if tool is None:
        available = ", ".join(sorted(registry))
        return f"error: unknown tool {call.name!r}; available: {available}"
    try:
        return str(tool(**call.arguments))
    except Exception as error:  # noqa: BLE001 - any failure is reported to the model
        return f"error: {call.name} raised {type(error).__name__}: {error}"


def run_tool_loop(
    model,
    tokenizer: PreTrainedTokenizerBase,
    conversation: Conversation,
    tools: list[Callable[..., object]],
    *,
    fallback: ToolCallParser | None = None,
    max_rounds: int = 4,
    max_new_tokens: int = 600,
) -> Transcript:
    """Let the model call tools until it answers, and return the transcript.

    tools are plain Python functions; their schemas come from
    ``tool_schema``. Each round renders with ``safe_render(..., tools=...)``,
    generates, and parses the reply after any <think> block with
    ``parse_tool_calls(..., fallback=fallback)``. Every call in a reply runs
    in order, each appended as a call message followed by its result. A
    reply without calls is the answer and ends the loop.

    Raises ``UnparsedToolCall`` when a reply looks like a call that the
    parser cannot read (a leaked call is never returned as an answer), and
    ``ToolLoopLimit`` when the model asks for a round after max_rounds.
    The caller's conversation list is not modified.
    """
    schemas = [tool_schema(tool) for tool in tools]
    registry = {schema["function"]["name"]: tool for schema, tool in zip(schemas, tools)}
    transcript = Transcript(messages=list(conversation))
    rounds = 0
    while True:
        prompt = safe_render(tokenizer, transcript.messages, tools=schemas)
        raw = generate_reply(model, tokenizer, prompt, max_new_tokens=max_new_tokens)
        transcript.replies.append(raw)
        _reasoning, reply = split_thinking(raw)
        calls = parse_tool_calls(tokenizer, reply, prefix=prompt, fallback=fallback)
        if not calls:
            transcript.messages.append({"role": "assistant", "content": reply})
            return transcript
        if rounds == max_rounds:
            raise ToolLoopLimit(max_rounds, calls[-1], transcript)
        rounds += 1
        for call in calls:
            transcript.messages.append(tool_call_message(call.name, call.arguments))
            result = run_tool_call(call, registry)
            transcript.messages.append(tool_result_message(call.name, result))
