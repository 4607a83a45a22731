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
  are unique in the conversation, and results follow in call order. Text
  the model writes beside its calls stays on their turn (Llama 3.1's
  template prints no content on a call turn: only the history keeps it).
- Before every render the history must pass ``validate_tool_pairing`` with
  no call left open; where the template prints no ids, results must also
  follow call order, since position is all the model sees. A caller's
  history with an orphaned or misplaced result raises
  ``InvalidConversation`` before anything is generated.

Not handled here: sampling (decoding is greedy, so a run repeats on one
machine), running calls concurrently (the calls of one reply run one
after another, in order), and streaming. A reply cut
off by ``max_new_tokens`` is read strictly (``read_tool_calls(...,
strict=True)``), so a half-written call surfaces as ``UnparsedToolCall``
instead of a round that runs only the calls before it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from jinja2 import TemplateError
from transformers import PreTrainedTokenizerBase

from templatestudio.dispatch import Tool, ToolOutcome, dispatch
from templatestudio.messages import Conversation, InvalidConversation, validate_conversation
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
    format, or fmt when given; values a format writes as text typed by the
    tools' schemas), reasoning split off by the format's rule.
    The calls of a reply then go through ``run_tool_round``: each runs via
    ``dispatch``, in order, and the calls and their results are appended in
    the shape this template accepts, the reply's text beside its calls
    (every character outside the calls and the reasoning, the ends
    stripped) as their turn's content. A reply without calls is the answer
    and ends the loop. max_rounds is how many rounds of calls may run.

    Raises ``InvalidConversation`` when the caller's conversation is
    malformed (checked before anything else, in ``validate_conversation``'s
    words: a dict or a str is "not a list", not a list of bad messages), or
    a tool result in it answers no call, is out of call order on a template
    without ids, or a call is left without its result (checked before the
    first generation); ``UnparsedToolCall`` when a reply looks like a call
    that the reader cannot read (a leaked call is never returned as an
    answer); ``ToolLoopLimit`` when the model asks for a round after
    max_rounds; ``TypeError`` when max_rounds is not an int (a bool is
    refused too) and ``ValueError`` when it is negative, both before
    anything is generated. The caller's conversation list is not modified.
    """
    problems = validate_conversation(conversation)
    if problems:  # list() would take a dict or a str apart into "messages" and blame each
        raise InvalidConversation(problems)
    # rounds counts up to max_rounds by ones, so it must be a whole number reached from 0.
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, int):
        raise TypeError(f"max_rounds must be an int, got {type(max_rounds).__name__}")
    if max_rounds < 0:
        raise ValueError(f"max_rounds must not be negative, got {max_rounds}")
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
        # layout=False: text on the two sides of a call stays apart ("A  B", not "AB").
        source = tokenizer if fmt is None else fmt
        reply = read_tool_calls(raw, source, prefix=prompt, strict=True, layout=False, tools=schemas)
        calls = reply.calls
        if not calls:
            transcript.messages.append({"role": "assistant", "content": reply.content.strip()})
            return transcript
        if rounds == max_rounds:
            raise ToolLoopLimit(max_rounds, calls[-1], transcript)
        rounds += 1
        run_tool_round(transcript.messages, calls, tools, one_turn=one_turn, content=reply.content)


def run_tool_round(
    messages: Conversation, calls: list[ParsedToolCall], tools: list[Tool], *, one_turn: bool,
    content: str = "",
) -> list[ToolOutcome]:
    """Run calls through ``dispatch`` and append them and their results to messages.

    With one_turn every call goes into one assistant turn, followed by one
    result per call in call order; without it each call gets its own turn,
    followed by its result, for templates that refuse several calls in a
    turn (``supports_parallel_calls(tokenizer).supported`` is the flag
    ``run_tool_loop`` passes). The history carries the arguments the tools
    ran with (typed by their schema) and ids ``call00001``, ``call00002``,
    ... numbered on from the highest such id already in messages (past
    ``call99999``, the lowest free ones), never one in use. content, the
    text the model wrote beside the calls, is stripped and goes on the first
    turn, whatever its place among the calls was (a turn keeps none); blank
    text adds no content key. Calls run in order, all of them, even after
    one fails. Returns the outcomes in call order; messages is modified in
    place.
    """
    outcomes = [dispatch(call, tools) for call in calls]
    groups = [outcomes] if one_turn else [[outcome] for outcome in outcomes]
    for position, group in enumerate(groups):
        _append_turn(messages, group, content.strip() if position == 0 else "")
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


_GENERATED_ID = re.compile(rf"{re.escape(ID_PREFIX)}([0-9]{{{ID_DIGITS}}})")
_LAST = 10**ID_DIGITS - 1  # 99999: call99999 is the last id of Mistral's nine characters


def _fresh_ids(messages: Conversation, count: int) -> list[str]:
    """count ids that no call or result in messages uses, in the order to hand them out.

    They number on from the highest ``callNNNNN`` in messages. Past
    call99999 they take the lowest free numbers from call00001, and only
    once all 99999 nine-character ids are in use do they grow a digit
    (call100000, ...), which Mistral's templates refuse: never an error here.
    """
    taken = {
        value
        for message in messages
        for value in [message.get("tool_call_id"), *(c.get("id") for c in message.get("tool_calls", []))]
        if isinstance(value, str)  # no other value equals a generated id, and it may be unhashable
    }
    numbers = [int(match.group(1)) for value in taken if (match := _GENERATED_ID.fullmatch(value))]
    start = max(numbers, default=0) + 1
    order = itertools.chain(range(start, _LAST + 1), range(1, start), itertools.count(_LAST + 1))
    free = (call_id for n in order if (call_id := f"{ID_PREFIX}{n:0{ID_DIGITS}d}") not in taken)
    return list(itertools.islice(free, count))


def _append_turn(messages: Conversation, outcomes: list[ToolOutcome], content: str) -> None:
    """One assistant turn making these calls, then one result per call in call order."""
    ids = _fresh_ids(messages, len(outcomes))
    calls = [{"name": o.name, "arguments": o.arguments, "id": i} for o, i in zip(outcomes, ids)]
    turn = parallel_tool_call_message(calls)
    if content:
        turn = {"role": "assistant", "content": content, "tool_calls": turn["tool_calls"]}
    messages.append(turn)
    for wire_call, outcome in zip(turn["tool_calls"], outcomes):
        messages.append(result_for_call(wire_call, outcome.content))
