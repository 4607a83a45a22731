"""A live tool loop: generate, parse, run the tools, send the results back.

``run_tool_loop`` drives a real model through as many tool rounds as it
asks for, with the pieces the course built: ``safe_render`` with tools and
``read_tool_calls``, plus ``dispatch``, the pairing check and the parallel
call turn. What makes it safe on every family, not only Qwen3:

- ``generate_reply`` keeps special tokens, because several families write
  their call markers as special tokens (Gemma 4's ``<|tool_call>``,
  Mistral's ``[TOOL_CALLS]``, Llama 3.1's ``<|python_tag|>``); it cuts the
  text at the end-of-turn token instead of deleting every special token.
- The reader splits off the reasoning block by the format's rule (Qwen3's
  ``<think>``, Gemma 4's thought channel): a call the model rehearses
  while thinking never runs.
- Every call goes through ``dispatch``: arguments are typed by the tool's
  schema (``"10"`` becomes 10 for an integer), and an unknown tool, a bad
  argument or a tool that raises becomes an ``error: ...`` result the model
  reads, not an exception in the host.
- ``run_tool_round`` writes each round in the shape the template accepts:
  all calls of a reply in one assistant turn when ``supports_parallel_calls``
  says both calls of its probe survive, one turn per call otherwise (Llama
  3.1 refuses two calls in a turn). Calls get ids ``call00001``, ... that
  are unique in the conversation, and results follow in call order.
- Before every render the history must pass ``validate_tool_pairing`` with
  no call left open; where the template prints no ids, results must also
  follow call order, since position is all the model sees. A caller's
  history with an orphaned or misplaced result raises
  ``InvalidConversation`` before anything is generated.

Not handled here: sampling (decoding is greedy, so a run repeats on one
machine), running calls concurrently (the calls
of one reply run one after another, in order), and streaming. A reply cut
off by ``max_new_tokens`` is read strictly (``read_tool_calls(...,
strict=True)``), so a half-written call surfaces as ``UnparsedToolCall``
instead of a round that runs only the calls before it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from jinja2 import TemplateError
from transformers import PreTrainedTokenizerBase

from templatestudio.dispatch import Tool, ToolOutcome, dispatch
from templatestudio.messages import Conversation, InvalidConversation
from templatestudio.pairing import validate_tool_pairing
from templatestudio.parallel import (
    ID_DIGITS,
    ID_PREFIX,
    PROBE_CALLS,
    parallel_tool_call_message,
    result_for_call,
    supports_parallel_calls,
)
from templatestudio.render import render, safe_render
from templatestudio.calls import ParsedToolCall
from templatestudio.formats import Format
from templatestudio.reader import read_tool_calls
from templatestudio.tools import tool_schema

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


def run_tool_loop(
    model,
    tokenizer: PreTrainedTokenizerBase,
    conversation: Conversation,
    tools: list[Tool],
    *,
    fmt: Format | str | None = None,
    max_rounds: int = 4,
    max_new_tokens: int = 600,
) -> Transcript:
    """Let the model call tools until it answers, and return the transcript.

    tools are plain Python functions; their schemas come from
    ``tool_schema``. Each round checks the history's pairing, renders with
    ``safe_render(..., tools=...)``, generates, and reads the reply with
    ``read_tool_calls`` (the tokenizer's response template or detected
    format, or fmt when given), reasoning split off by the format's rule.
    The calls of a reply then go through ``run_tool_round``: each runs via
    ``dispatch``, in order, and the calls and their results are appended in
    the shape this template accepts. A reply without calls is the answer
    and ends the loop.

    Raises ``InvalidConversation`` when the caller's conversation is
    malformed or a tool result in it answers no call, is out of call order
    on a template without ids, or a call is left without its result (checked
    before the first generation); ``UnparsedToolCall`` when a reply looks
    like a call that the reader cannot read (a leaked call is never returned
    as an answer); and ``ToolLoopLimit`` when the model asks for a round
    after max_rounds. The caller's conversation list is not modified.
    """
    schemas = [tool_schema(tool) for tool in tools]
    transcript = Transcript(messages=list(conversation))
    strict_order = not template_shows_call_ids(tokenizer)
    # Templates that refuse two calls in one turn (Llama 3.1) get one turn per call.
    one_turn = supports_parallel_calls(tokenizer).supported
    rounds = 0
    while True:
        _check_pairing(transcript.messages, strict_order=strict_order)
        prompt = safe_render(tokenizer, transcript.messages, tools=schemas)
        raw = generate_reply(model, tokenizer, prompt, max_new_tokens=max_new_tokens)
        transcript.replies.append(raw)
        reply = read_tool_calls(raw, tokenizer if fmt is None else fmt, prefix=prompt, strict=True)
        calls = reply.calls
        if not calls:
            transcript.messages.append({"role": "assistant", "content": reply.content.strip()})
            return transcript
        if rounds == max_rounds:
            raise ToolLoopLimit(max_rounds, calls[-1], transcript)
        rounds += 1
        run_tool_round(transcript.messages, calls, tools, one_turn=one_turn)


def run_tool_round(
    messages: Conversation, calls: list[ParsedToolCall], tools: list[Tool], *, one_turn: bool
) -> list[ToolOutcome]:
    """Run calls through ``dispatch`` and append them and their results to messages.

    With one_turn every call goes into one assistant turn, followed by one
    result per call in call order; without it each call gets its own turn,
    followed by its result, for templates that refuse several calls in a
    turn (``supports_parallel_calls(tokenizer).supported`` is the flag
    ``run_tool_loop`` passes). The history carries the arguments the tools
    ran with (typed by their schema) and ids ``call00001``, ``call00002``,
    ... numbered on from the highest such id already in messages, so an id
    never repeats. Calls run in order, all of them, even after one fails.
    Returns the outcomes in call order; messages is modified in place.
    """
    outcomes = [dispatch(call, tools) for call in calls]
    groups = [outcomes] if one_turn else [[outcome] for outcome in outcomes]
    for group in groups:
        _append_turn(messages, group)
    return outcomes


def template_shows_call_ids(tokenizer: PreTrainedTokenizerBase) -> bool:
    """Whether the template prints a call's id into the prompt (Mistral's does, Qwen3's not).

    Renders one call with a generated id and its result; a template that
    raises on it counts as showing no ids, the cautious answer, because
    then results are also held to call order.
    """
    turn = parallel_tool_call_message(PROBE_CALLS[:1])
    conversation = [
        {"role": "user", "content": "Use the tool."},
        turn,
        result_for_call(turn["tool_calls"][0], "done"),
    ]
    try:
        text = render(tokenizer, conversation, add_generation_prompt=False)
    except TemplateError:
        return False
    return turn["tool_calls"][0]["id"] in text


def _check_pairing(messages: Conversation, *, strict_order: bool) -> None:
    """Refuse to render a history in which a result does not answer its call."""
    problems = validate_tool_pairing(messages, strict_order=strict_order, allow_pending=False)
    if problems:
        raise InvalidConversation([problem.message for problem in problems])


_GENERATED_ID = re.compile(rf"{re.escape(ID_PREFIX)}(\d{{{ID_DIGITS}}})")


def _next_call_number(messages: Conversation) -> int:
    """One past the highest ``callNNNNN`` id in messages (1 when there is none)."""
    numbers = [
        int(match.group(1))
        for message in messages
        for call in message.get("tool_calls", [])
        if isinstance(call.get("id"), str) and (match := _GENERATED_ID.fullmatch(call["id"]))
    ]
    return max(numbers, default=0) + 1


def _append_turn(messages: Conversation, outcomes: list[ToolOutcome]) -> None:
    """One assistant turn making these calls, then one result per call in call order."""
    calls = [{"name": outcome.name, "arguments": outcome.arguments} for outcome in outcomes]
    turn = parallel_tool_call_message(calls, first_id=_next_call_number(messages))
    messages.append(turn)
    for wire_call, outcome in zip(turn["tool_calls"], outcomes):
        messages.append(result_for_call(wire_call, outcome.content))
