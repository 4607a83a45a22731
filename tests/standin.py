"""Tiny stand-ins for Qwen3-0.6B, trained in seconds, so CI can run the live loop.

Qwen3-0.6B's weights are about 1.5 GB and cannot be downloaded where CI
runs. A stand-in is a real ``Qwen3ForCausalLM`` (the architecture of
Qwen3-0.6B, shrunk to two small layers) with the real Qwen3 tokenizer and
chat template, trained from a fixed seed to write scripted replies: for each
conversation state in a script, the exact raw text the model must write
after the rendered prompt. The conversations are built with the loop's own
``run_tool_round`` (``dispatch``, call ids, the parallel-or-not grouping
the loop picks for Qwen3's template) and rendered with ``safe_render`` as
``run_tool_loop`` renders them, so the stand-in is trained on exactly the
prompts the loop sends, and a change to the loop changes the training too.

What a stand-in proves: the loop, the rendering, the decoding and the
parsing work end to end on a model loaded with ``AutoModelForCausalLM``
from a directory, generating through ``model.generate`` token by token.
What it does not prove: that Qwen3-0.6B writes these replies. It writes
them because it was trained to; the real model's behaviour is documented by
the tutorial and checked only by a real run.

Not handled: prompts outside a script (the stand-in's reply to those is
arbitrary) and any tokenizer other than Qwen3's.

Run ``python tests/standin.py DIR`` to save the step-13 stand-in to DIR
and point ``TEMPLATESTUDIO_LIVE_MODEL`` at it to run notebook 13 without
the real weights.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # families, rates and samples live at the repo root
    sys.path.insert(0, str(ROOT))

from families import FAMILIES  # noqa: E402
from rates import QUESTION, get_exchange_rate  # noqa: E402
from samples import QWEN3_CALL  # noqa: E402
from templatestudio.loop import generate_reply, run_tool_round  # noqa: E402
from templatestudio.parallel import supports_parallel_calls  # noqa: E402
from templatestudio.render import load_tokenizer, safe_render  # noqa: E402
from templatestudio.tools import ParsedToolCall, tool_schema  # noqa: E402

QWEN3 = FAMILIES["qwen3"]
END = "<|im_end|>"
# The answer and the call are the tutorial's documented Qwen3 output; the
# reasoning is ours (the tutorial cuts it off without showing it).
ANSWER = "One euro is approximately 162.4 yen."
THINK_CALL = (
    "<think>\nThe user wants to know how many yen one euro buys. The get_exchange_rate "
    "tool gives that with base EUR and quote JPY.\n</think>\n\n"
)
THINK_ANSWER = "<think>\nThe tool says one euro buys 162.4 yen.\n</think>\n\n"
THINK_RECOVER = "<think>\nThat tool does not exist. get_exchange_rate does.\n</think>\n\n"
THINK_AGAIN = "<think>\nTo be sure, I will also ask for the inverse rate.\n</think>\n\n"
TOOLS = [get_exchange_rate]
SCRIPT_NAMES = ("exchange_rate", "unknown_tool", "malformed_call", "two_rounds", "reasoned_call")


class StandInTrainingError(RuntimeError):
    """Training ended without the stand-in reproducing every scripted reply."""


def hermes_call(name: str, arguments: dict) -> str:
    """A call written the way Qwen3 writes it (samples.QWEN3_CALL's layout)."""
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


@functools.cache
def qwen3_tokenizer():
    """The real Qwen3 tokenizer, loaded once: scripts and training share it."""
    return load_tokenizer(QWEN3)


def _after_call(conversation: list[dict], name: str, arguments: dict) -> list[dict]:
    """conversation plus one call and its result, appended exactly as run_tool_loop does."""
    messages = list(conversation)
    one_turn = supports_parallel_calls(qwen3_tokenizer()).supported
    run_tool_round(messages, [ParsedToolCall(name, arguments)], TOOLS, one_turn=one_turn)
    return messages


@functools.cache
def scripts() -> dict[str, list[tuple[list[dict], str]]]:
    """Every script: (conversation, raw reply to write after it) per turn.

    Built on first use, because the conversations come from the loop's own
    code and that needs the Qwen3 tokenizer.
    """
    eur_jpy = {"base": "EUR", "quote": "JPY"}
    question = list(QUESTION)
    after_rate = _after_call(question, "get_exchange_rate", eur_jpy)
    after_weather = _after_call(question, "get_weather", {"city": "Tokyo"})
    after_weather_rate = _after_call(after_weather, "get_exchange_rate", eur_jpy)
    jpy_eur = {"base": "JPY", "quote": "EUR"}
    after_two = _after_call(after_rate, "get_exchange_rate", jpy_eur)
    broken = QWEN3_CALL.replace("}}", "}")  # one closing brace short: not JSON
    rehearsed = (
        "<think>\nI might write " + hermes_call("get_weather", {"city": "Tokyo"})
        + " but the rate is known: 162.4.\n</think>\n\n"
    )
    return {
        # step 13 as the tutorial documents it: one call, then the answer
        "exchange_rate": [
            (question, THINK_CALL + QWEN3_CALL + END),
            (after_rate, THINK_ANSWER + ANSWER + END),
        ],
        # calls a tool nobody registered, reads the error, recovers
        "unknown_tool": [
            (question, THINK_CALL + hermes_call("get_weather", {"city": "Tokyo"}) + END),
            (after_weather, THINK_RECOVER + QWEN3_CALL + END),
            (after_weather_rate, THINK_ANSWER + ANSWER + END),
        ],
        # a call the parser cannot read
        "malformed_call": [(question, THINK_CALL + broken + END)],
        # asks for the inverse rate in a second round before answering
        "two_rounds": [
            (question, THINK_CALL + QWEN3_CALL + END),
            (after_rate, THINK_AGAIN + hermes_call("get_exchange_rate", jpy_eur) + END),
            (after_two, THINK_ANSWER + ANSWER + END),
        ],
        # writes a call inside its reasoning only, then answers
        "reasoned_call": [(question, rehearsed + ANSWER + END)],
    }


@dataclass(frozen=True)
class TrainingReport:
    script: str
    steps: int
    seconds: float
    final_loss: float
    reply_tokens: int


def _examples(tokenizer, script):
    """(prompt, prompt ids, reply ids) per turn; reply ids end with <|im_end|>."""
    schemas = [tool_schema(tool) for tool in TOOLS]
    pairs = []
    for conversation, reply in script:
        prompt = safe_render(tokenizer, conversation, tools=schemas)
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        reply_ids = tokenizer(reply, add_special_tokens=False)["input_ids"]
        pairs.append((prompt, prompt_ids, reply_ids))
    return pairs


def _tiny_config():
    from transformers import AutoConfig

    # Qwen3-0.6B's own config (vocabulary, rope, special ids), shrunk.
    config = AutoConfig.from_pretrained(QWEN3)
    config.update(
        {
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "max_window_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "head_dim": 16,
            "tie_word_embeddings": True,
        }
    )
    if hasattr(config, "layer_types"):
        config.layer_types = ["full_attention"] * config.num_hidden_layers
    config.dtype = "float32"
    return config


def _training_batch(examples):
    """Right-padded ids, plus (row, position, target) for every reply token."""
    import torch

    length = max(len(prompt_ids) + len(reply_ids) for _, prompt_ids, reply_ids in examples)
    batch = torch.zeros((len(examples), length), dtype=torch.long)
    rows, positions, targets = [], [], []
    for row, (_prompt, prompt_ids, reply_ids) in enumerate(examples):
        sequence = prompt_ids + reply_ids
        batch[row, : len(sequence)] = torch.tensor(sequence)
        for offset, token_id in enumerate(reply_ids):
            rows.append(row)
            positions.append(len(prompt_ids) + offset - 1)  # the position that predicts it
            targets.append(token_id)
    return batch, torch.tensor(rows), torch.tensor(positions), torch.tensor(targets)


def train_standin(
    script_name: str,
    out_dir: str | Path,
    *,
    seed: int = 0,
    threads: int = 1,
    max_steps: int = 600,
    learning_rate: float = 3e-2,
    min_margin: float = 2.0,
    random_negatives: int = 2048,
) -> TrainingReport:
    """Train the stand-in for scripts()[script_name] and save it to out_dir.

    Deterministic for a given seed and thread count. How it stays cheap:
    the 151,936-row embedding, tied to the output projection, is frozen at a
    random initialisation and only the two layers and the norms learn
    (about 74,000 numbers). The loss is a softmax over candidate tokens:
    every token of the script's prompts and replies, random_negatives more,
    and every token that ever comes within min_margin of a target on the
    full vocabulary. Training ends only when every reply token beats the
    whole vocabulary by min_margin logits, and greedy generation is then
    checked against every scripted reply: a mismatch raises
    StandInTrainingError instead of saving a stand-in that does not do what
    its script says. One thread by default: on a shared two-core machine
    two threads mostly wait for each other (measured three times slower).
    """
    import torch
    from transformers import GenerationConfig, Qwen3ForCausalLM
    from transformers.utils import logging as transformers_logging

    script = scripts()[script_name]
    previous_threads = torch.get_num_threads()
    previous_deterministic = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    started = time.perf_counter()
    try:
        tokenizer = qwen3_tokenizer()
        examples = _examples(tokenizer, script)
        torch.manual_seed(seed)
        model = Qwen3ForCausalLM(_tiny_config())
        embedding = model.get_input_embeddings().weight
        with torch.no_grad():
            # Wide enough that logits can separate tokens without training it.
            embedding.normal_(0.0, 0.5)
        embedding.requires_grad_(False)
        batch, rows, positions, targets = _training_batch(examples)
        candidates = {int(t) for t in batch.flatten()} | set(targets.tolist())
        negatives = torch.randint(0, embedding.shape[0], (random_negatives,))
        candidates |= set(negatives.tolist())
        trainable = [p for p in model.parameters() if p.requires_grad]
        optimizer = torch.optim.Adam(trainable, lr=learning_rate)
        model.train()
        steps, loss_value, converged = 0, float("nan"), False
        while steps < max_steps:
            ordered = sorted(candidates)
            column = {token_id: index for index, token_id in enumerate(ordered)}
            candidate_targets = torch.tensor([column[t] for t in targets.tolist()])
            # Right padding needs no mask: a causal model never looks ahead.
            hidden = model.model(input_ids=batch).last_hidden_state[rows, positions]
            logits = hidden @ embedding[torch.tensor(ordered)].T
            loss = torch.nn.functional.cross_entropy(logits, candidate_targets)
            loss_value = loss.item()
            if _margin(logits, candidate_targets) >= min_margin:
                with torch.no_grad():
                    close = _close_rivals(model.lm_head(hidden), targets, min_margin)
                if not close:
                    converged = True
                    break
                candidates |= close
                continue
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            steps += 1
        model.eval()
        model.generation_config = GenerationConfig.from_pretrained(QWEN3)
        for (prompt, _ids, reply_ids), (_conversation, reply) in zip(examples, script):
            written = generate_reply(model, tokenizer, prompt, max_new_tokens=len(reply_ids) + 8)
            if not converged or written != reply.removesuffix(END):
                raise StandInTrainingError(
                    f"stand-in {script_name!r} after {steps} steps (loss {loss_value:.4f}) "
                    f"wrote {written!r}, script says {reply!r}"
                )
        # Saved in config.json, so whoever loads the folder can tell (and say)
        # that the replies come from a stand-in, not from Qwen3-0.6B.
        model.config.templatestudio_standin = script_name
        out = Path(out_dir)
        bars_were_on = transformers_logging.is_progress_bar_enabled()
        transformers_logging.disable_progress_bar()  # a bar on stderr per save is noise in CI
        try:
            model.save_pretrained(out)
            tokenizer.save_pretrained(out)
        finally:
            if bars_were_on:
                transformers_logging.enable_progress_bar()
    finally:
        torch.set_num_threads(previous_threads)
        torch.use_deterministic_algorithms(previous_deterministic)
    return TrainingReport(
        script=script_name,
        steps=steps,
        seconds=time.perf_counter() - started,
        final_loss=loss_value,
        reply_tokens=len(targets),
    )


def _margin(logits, targets) -> float:
    """Smallest lead of a target logit over the best other logit (<0: wrong)."""
    import torch

    with torch.no_grad():
        rivals = logits.scatter(1, targets[:, None], float("-inf")).max(dim=1).values
        return (logits.gather(1, targets[:, None]).squeeze(1) - rivals).min().item()


def _close_rivals(logits, targets, margin: float) -> set[int]:
    """Token ids that come within margin of some target logit."""
    import torch

    close = logits > logits.gather(1, targets[:, None]) - margin
    close[torch.arange(len(targets)), targets] = False
    return set(close.nonzero()[:, 1].tolist())


LIVE_MODEL_VARIABLE = "TEMPLATESTUDIO_LIVE_MODEL"
# The notebooks that run a model: the first live round (13) and the capstone loop (20).
LIVE_NOTEBOOKS = ("13_live_tool_loop.ipynb", "20_capstone_loop.ipynb")
_trained: dict[str, Path] = {}
_session_root: list[Path] = []


def trained_standin(script_name: str, config=None) -> Path:
    """The directory of the stand-in for script_name, trained once per process.

    Stand-ins go to one temporary directory that remove_trained_standins
    deletes. With a pytest config, the training time is reported on the
    terminal.
    """
    if script_name not in _trained:
        import tempfile

        if not _session_root:
            _session_root.append(Path(tempfile.mkdtemp(prefix="templatestudio-standin-")))
        folder = _session_root[0] / f"qwen3-standin-{script_name}"
        report = train_standin(script_name, folder)
        _trained[script_name] = folder
        plugins = config.pluginmanager if config else None
        reporter = plugins.get_plugin("terminalreporter") if plugins else None
        capture = plugins.get_plugin("capturemanager") if plugins else None
        if reporter is not None:
            # Training inside a test's fixture runs while output is captured;
            # the time belongs on the terminal all the same.
            with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
                reporter.write_line(
                    f"stand-in {script_name!r}: trained in {report.seconds:.1f} s "
                    f"({report.steps} steps, {report.reply_tokens} reply tokens)"
                )
    return _trained[script_name]


def remove_trained_standins() -> None:
    import shutil

    for root in _session_root:
        shutil.rmtree(root, ignore_errors=True)
    _session_root.clear()
    _trained.clear()


def point_live_model_at_standin(config, items) -> None:
    """Set TEMPLATESTUDIO_LIVE_MODEL to the trained stand-in if notebook 13 or 20 will run.

    nbval starts a notebook's kernel when the notebook's first cell runs,
    after collection, and the kernel inherits os.environ: setting the
    variable at the end of collection is early enough. A model the user
    named is never replaced.
    """
    import os

    if os.environ.get(LIVE_MODEL_VARIABLE):
        return
    if any(item.path.name in LIVE_NOTEBOOKS for item in items):
        os.environ[LIVE_MODEL_VARIABLE] = str(trained_standin("exchange_rate", config))


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Train a Qwen3 stand-in and save it.")
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--script", choices=SCRIPT_NAMES, default="exchange_rate")
    args = parser.parse_args(argv)
    report = train_standin(args.script, args.out_dir)
    print(
        f"{report.script}: {report.steps} steps, {report.seconds:.1f} s, "
        f"loss {report.final_loss:.4f}, saved to {args.out_dir}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
