"""Stand-ins for the vLLM server test: tiny models trained on the prompts vLLM renders.

Two families whose chat templates write different call formats, with their
real tokenizers from the Hugging Face cache: Qwen3 (Hermes ``<tool_call>``
JSON, a ``Qwen3ForCausalLM``) and Llama 3.1 (the whole reply is
``{"name", "parameters"}``, a ``LlamaForCausalLM``). Each is trained, with
``tests/standin.py``'s method (frozen random embedding, softmax over
candidate tokens, trained until every reply token wins by a margin), to
write scripted replies after scripted conversations.

The prompts are rendered the way vLLM renders a ``/v1/chat/completions``
request, not with ``apply_chat_template(tools=[get_json_schema(fn)])``:
vLLM validates each tool into its own ``ChatCompletionToolsParam`` and dumps
it back, which drops keys the OpenAI schema does not have (the course
schema's ``"return"``), and it decodes each assistant call's ``arguments``
string into a dict. ``render_like_vllm`` does both with vLLM's own classes;
the server test then checks, through the server's ``/tokenize``, that every
trained prompt is token for token what the server renders.

Sizes: head_dim 32, because vLLM's CPU attention kernel refuses 16.

What a stand-in shows: vLLM loads it, renders the request, generates, and
hands the text to the tool parser, and the parser's answer reaches the
client. What it cannot show: that Qwen3 or Llama 3.1 write these replies
(they write them because they were trained to), or any reply outside the
scripts.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from templatestudio.families import LLAMA31 as LLAMA31_REPO  # noqa: E402
from templatestudio.families import family as course_family  # noqa: E402
from templatestudio.formats import FORMATS  # noqa: E402
from templatestudio.rates import QUESTION, get_exchange_rate  # noqa: E402
from templatestudio.reader import read_tool_calls  # noqa: E402
from standin import _close_rivals, _margin, _training_batch  # noqa: E402 - one training method
from templatestudio.render import load_tokenizer  # noqa: E402
from templatestudio.tools import tool_schema  # noqa: E402

ANSWER = "One euro is approximately 162.4 yen."
LEAK_QUESTION = [{"role": "user", "content": "Check the euro rate, but write the call badly."}]
EUR_JPY = {"base": "EUR", "quote": "JPY"}
RATE_RESULT = "162.4"
# Stands in for the server's random call id while rendering training prompts;
# neither template renders call ids, and the /tokenize check would catch one that did.
PLACEHOLDER_ID = "chatcmpl-tool-00000000000000000000000000000000"


def tools_as_sent() -> list[dict]:
    """The course's schema for get_exchange_rate, as a client sends it (with "return")."""
    return [tool_schema(get_exchange_rate)]


@dataclass(frozen=True)
class Family:
    name: str
    repo: str
    architecture: str  # "qwen3" or "llama"
    end: str  # the text of the token that ends a reply
    format: str  # the templatestudio format the template writes
    call_text: str  # the reply that calls get_exchange_rate(EUR, JPY)
    answer_text: str  # the reply after the tool's result
    leak_text: str  # a broken call, for the leak policy test


QWEN3 = Family(
    name="qwen3",
    repo=course_family("qwen3").repo_id,
    architecture="qwen3",
    end="<|im_end|>",
    format="hermes",
    call_text=(
        "<think>\nThe get_exchange_rate tool answers this.\n</think>\n\n"
        '<tool_call>\n{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}\n</tool_call>'
    ),
    answer_text="<think>\nThe tool says 162.4.\n</think>\n\n" + ANSWER,
    # one closing brace short: the reader cannot read it, the leak policy decides
    leak_text='<tool_call>\n{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}\n</tool_call>',
)
LLAMA31 = Family(
    name="llama3.1",
    repo=LLAMA31_REPO,
    architecture="llama",
    end="<|eot_id|>",
    format="llama3-json",
    call_text='{"name": "get_exchange_rate", "parameters": {"base": "EUR", "quote": "JPY"}}',
    answer_text=ANSWER,
    # Malformed, not cut: both argument keys (a reply cut inside a call is no leak: the
    # plugin sends the calls before the cut and logs the cut one).
    leak_text='{"name": "get_exchange_rate", "parameters": {"base": "EUR"}, "arguments": {"quote": "JPY"}}',
)
FAMILIES = (QWEN3, LLAMA31)


def call_message(content: str | None, call_id: str = PLACEHOLDER_ID, reasoning: str | None = None) -> dict:
    """The assistant turn a client sends back: the call as the server returned it (its reasoning too, if any).

    vLLM hands ``reasoning`` to the template (as ``reasoning_content`` too),
    and Qwen3's template writes it back inside ``<think>`` for the turn after
    the last question: the prompt is the one the stand-in was trained on.
    """
    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": "get_exchange_rate", "arguments": json.dumps(EUR_JPY)},
            }
        ],
    }
    if reasoning is not None:
        message["reasoning"] = reasoning
    return message


def result_message(call_id: str = PLACEHOLDER_ID) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": RATE_RESULT}


def expected_call_content(family: Family) -> str | None:
    """The text around the call as the model wrote it (what the stand-in's training turn holds as content)."""
    before = family.call_text.split("<tool_call>")[0] if family.format == "hermes" else ""
    return before or None


def served_split(text: str, family: Family) -> tuple[str | None, str | None]:
    """(reasoning, content) the server returns for a reply, by the package's own reader (the oracle).

    The server runs ``--reasoning-parser templatestudio``: the reasoning goes
    to ``reasoning``, without its tags; vLLM sends empty parts as null.
    """
    reply = read_tool_calls(text, FORMATS[family.format])
    return reply.reasoning or None, reply.content or None


def conversations(family: Family, call_id: str = PLACEHOLDER_ID) -> list[tuple[list[dict], str]]:
    """(messages as a client sends them, raw reply the stand-in must write) per scripted turn."""
    question = list(QUESTION)
    after_call = [*question, call_message(expected_call_content(family), call_id), result_message(call_id)]
    return [(question, family.call_text), (after_call, family.answer_text), (list(LEAK_QUESTION), family.leak_text)]


def render_like_vllm(tokenizer, messages: list[dict], tools: list[dict]) -> str:
    """The prompt vLLM renders for a chat request with these messages and tools.

    Tools go through vLLM's ChatCompletionToolsParam (which drops "return"),
    call arguments are decoded from their JSON string, as vLLM does.
    """
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionToolsParam

    tool_dicts = [ChatCompletionToolsParam.model_validate(tool).model_dump() for tool in tools]
    conversation = []
    for message in messages:
        message = dict(message)
        if message.get("tool_calls"):
            message["tool_calls"] = [
                {**call, "function": {**call["function"], "arguments": json.loads(call["function"]["arguments"])}}
                for call in message["tool_calls"]
            ]
        conversation.append(message)
    return tokenizer.apply_chat_template(
        conversation, tools=tool_dicts, add_generation_prompt=True, tokenize=False
    )


def _tiny_model(family: Family, tokenizer):
    from transformers import AutoConfig, LlamaConfig, LlamaForCausalLM, Qwen3ForCausalLM

    sizes = {
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "head_dim": 32,  # vLLM's CPU attention refuses 16
        "tie_word_embeddings": True,
    }
    if family.architecture == "qwen3":
        config = AutoConfig.from_pretrained(family.repo)  # Qwen3-0.6B's vocabulary, rope and special ids
        config.update({**sizes, "max_window_layers": 2})
        if hasattr(config, "layer_types"):
            config.layer_types = ["full_attention"] * config.num_hidden_layers
        model_class = Qwen3ForCausalLM
    else:
        config = LlamaConfig(
            vocab_size=len(tokenizer),
            max_position_embeddings=8192,
            rope_theta=500000.0,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=_stop_ids(tokenizer, family),
            **sizes,
        )
        model_class = LlamaForCausalLM
    config.dtype = "float32"
    return model_class(config)


def _stop_ids(tokenizer, family: Family) -> list[int]:
    ids = [tokenizer.convert_tokens_to_ids(family.end)]
    if family.architecture == "llama":  # <|end_of_text|>, <|eom_id|>, <|eot_id|>, as Llama 3.1 ships
        ids = [tokenizer.convert_tokens_to_ids(t) for t in ("<|end_of_text|>", "<|eom_id|>", "<|eot_id|>")]
    return ids


class StandInTrainingError(RuntimeError):
    """Training ended without the stand-in writing every scripted reply."""


@dataclass(frozen=True)
class Trained:
    family: Family
    folder: Path
    prompts: tuple[str, ...]  # the rendered prompts it was trained on, in script order
    prompt_ids: tuple[tuple[int, ...], ...]
    seconds: float
    steps: int


Script = list[tuple[list[dict], list[dict], str]]  # (messages, tools, reply) as a client sends them


def course_script(family: Family) -> Script:
    """The family's scripted turns, each with the course's tool."""
    return [(messages, tools_as_sent(), reply) for messages, reply in conversations(family)]


def train(family: Family, out_dir: str | Path, *, script: Script | None = None, seed: int = 0,
          max_steps: int = 800, learning_rate: float = 1e-2, min_margin: float = 3.0,
          random_negatives: int = 2048) -> Trained:
    """Train family's stand-in on script (by default ``course_script``), check it greedily, save it to out_dir."""
    import torch
    from transformers import GenerationConfig

    from templatestudio.loop import generate_reply

    started = time.perf_counter()
    tokenizer = load_tokenizer(family.repo)
    script = course_script(family) if script is None else script
    prompts = [render_like_vllm(tokenizer, messages, tools) for messages, tools, _ in script]
    examples = []
    for prompt, (_, _, reply) in zip(prompts, script):
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        reply_ids = tokenizer(reply + family.end, add_special_tokens=False)["input_ids"]
        examples.append((prompt, prompt_ids, reply_ids))
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(1)  # two shared cores: a second thread mostly waits
    try:
        torch.manual_seed(seed)
        model = _tiny_model(family, tokenizer)
        embedding = model.get_input_embeddings().weight
        with torch.no_grad():
            embedding.normal_(0.0, 0.5)
        embedding.requires_grad_(False)
        batch, rows, positions, targets = _training_batch(examples)
        candidates = {int(t) for t in batch.flatten()} | set(targets.tolist())
        candidates |= set(torch.randint(0, embedding.shape[0], (random_negatives,)).tolist())
        optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=learning_rate)
        model.train()
        steps, converged = 0, False
        while steps < max_steps:
            ordered = sorted(candidates)
            column = {token_id: index for index, token_id in enumerate(ordered)}
            candidate_targets = torch.tensor([column[t] for t in targets.tolist()])
            hidden = model.model(input_ids=batch).last_hidden_state[rows, positions]
            logits = hidden @ embedding[torch.tensor(ordered)].T
            if _margin(logits, candidate_targets) >= min_margin:
                with torch.no_grad():
                    close = _close_rivals(model.lm_head(hidden), targets, min_margin)
                if not close:
                    converged = True
                    break
                candidates |= close
                continue
            loss = torch.nn.functional.cross_entropy(logits, candidate_targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            steps += 1
        model.eval()
        model.generation_config = GenerationConfig(
            eos_token_id=_stop_ids(tokenizer, family), bos_token_id=tokenizer.bos_token_id
        )
        for (prompt, _ids, reply_ids), (_, _, expected) in zip(examples, script):
            written = generate_reply(model, tokenizer, prompt, max_new_tokens=len(reply_ids) + 8)
            if not converged or written != expected:
                raise StandInTrainingError(
                    f"{family.name} stand-in after {steps} steps wrote {written!r}, script says {expected!r}"
                )
        out = Path(out_dir)
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
    finally:
        torch.set_num_threads(previous_threads)
    return Trained(
        family, out, tuple(prompts), tuple(tuple(ids) for _, ids, _ in examples),
        time.perf_counter() - started, steps,
    )


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Train a vLLM-test stand-in and save it.")
    parser.add_argument("family", choices=[family.name for family in FAMILIES])
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    trained = train(next(f for f in FAMILIES if f.name == args.family), args.out_dir)
    print(f"{args.family}: {trained.steps} steps, {trained.seconds:.1f} s, saved to {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
