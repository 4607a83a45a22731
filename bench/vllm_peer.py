"""vLLM's tool parsers on the benchmark's replies; run by bench/run.py under the vLLM environment's Python.

    .venv-vllm/bin/python bench/vllm_peer.py CASES.json  ->  JSON on stdout

CASES.json holds {"cases": [{"id", "format", "parser", "markers", "tokenizer",
"text", "chunk" (null: the whole text at once), "runs"}]}. Each case is read
by the vLLM parser it names (bench/measure.py's ``_peer``: the first name in the
format's ``vllm_parser``; null: none, or one the bench does not run), with the
tokenizer bench/measure.py names (a course family's whose template writes
the format, else Qwen3's) to which the format's markers are added as special
tokens when it lacks them (vLLM's DeepSeek and Kimi parsers look their
control tokens up in the vocabulary; no such tokenizer is cached). Mistral
has no parser here: vLLM's Mistral parser chooses the shape it reads (the
JSON list or ``NAME[ARGS]``) by the Mistral tokenizer's version, and no
Mistral tokenizer is cached, so it would read 0 calls of the ``NAME[ARGS]``
shape ``write_call`` writes. Streaming feeds the chunks to ``extract_tool_calls_streaming``
with the running text and no token ids (the parsers measured read text),
and joins the name and argument deltas per call index.

Output: {"vllm": version, "results": {id: {"seconds": best, "calls":
[[name, arguments]...]}, or {"at least": seconds, "read": n, "of": total}
for a case stopped after ``ALLOWANCE`` seconds (each case runs in a forked
child, killed then: a whole-text parse cannot be interrupted), or {"error":
"..."}}}. Timing covers the parser's calls only, a fresh parser per run,
best of "runs".
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time


def _tokenizer(repo: str, markers: list[str], cache: dict):
    # transformers' tokenizer, not vLLM's get_tokenizer: vLLM's wrapper caches the
    # vocabulary when it is made, so tokens added afterwards stay invisible to the parsers.
    from transformers import AutoTokenizer

    key = (repo, tuple(markers))
    if key not in cache:
        tokenizer = AutoTokenizer.from_pretrained(repo)
        missing = [marker for marker in markers if marker not in tokenizer.get_vocab()]
        if missing:
            tokenizer.add_special_tokens({"additional_special_tokens": missing})
        cache[key] = tokenizer
    return cache[key]


def _request(text: str):
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    tools = [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
             for name in ("write_report", "get_exchange_rate")]
    return ChatCompletionRequest(messages=[{"role": "user", "content": "x"}], model="bench", tools=tools)


def _whole(parser, text: str, request) -> list:
    result = parser.extract_tool_calls(text, request)
    return [[call.function.name, json.loads(call.function.arguments)] for call in result.tool_calls]


def _stream(parser, text: str, chunk: int, request, deadline: float) -> list:
    """The calls streamed; raises Stopped when the deadline (perf_counter) passes first."""
    calls: dict[int, list] = {}
    current = ""
    for start in range(0, len(text), chunk):
        if time.perf_counter() > deadline:
            raise Stopped(start, len(text))
        delta = text[start : start + chunk]
        previous, current = current, current + delta
        message = parser.extract_tool_calls_streaming(previous, current, delta, [], [], [], request)
        for call in (message.tool_calls if message is not None and message.tool_calls else ()):
            entry = calls.setdefault(call.index, ["", ""])
            function = call.function
            if function is not None:
                name = function.get("name") if isinstance(function, dict) else function.name
                arguments = function.get("arguments") if isinstance(function, dict) else function.arguments
                entry[0] += name or ""
                entry[1] += arguments or ""
    return [[name, json.loads(arguments) if arguments else {}] for _, (name, arguments) in sorted(calls.items())]


class Stopped(Exception):
    """The stream outlived its time allowance after reading `at` of `total` characters."""

    def __init__(self, at: int, total: int) -> None:
        super().__init__(at, total)
        self.at, self.total = at, total


ALLOWANCE = 30.0  # seconds per case; a parser still running then is reported as a lower bound


def _one(case: dict, tokenizers: dict) -> dict:
    from vllm.tool_parsers import ToolParserManager

    name = case["parser"]
    try:
        tokenizer = _tokenizer(case["tokenizer"], case["markers"], tokenizers)
        make = ToolParserManager.get_tool_parser(name)
        request = _request(case["text"])
        best, calls = float("inf"), None
        for _ in range(case["runs"]):
            parser = make(tokenizer)
            started = time.perf_counter()
            if case["chunk"] is None:
                calls = _whole(parser, case["text"], request)
            else:
                try:
                    calls = _stream(parser, case["text"], case["chunk"], request, started + ALLOWANCE)
                except Stopped as stopped:
                    return {"at least": time.perf_counter() - started, "parser": name,
                            "read": stopped.at, "of": stopped.total}
            best = min(best, time.perf_counter() - started)
            if best > 5:  # one slow run is enough
                break
        return {"seconds": best, "calls": calls, "parser": name}
    except Exception as error:  # noqa: BLE001 - a peer that fails is reported, not fatal
        return {"error": f"{type(error).__name__}: {str(error)[:200]}", "parser": name}


def _in_child(case: dict, tokenizers: dict) -> dict:
    """_one in a forked child killed after ALLOWANCE seconds: a whole-text parse cannot be interrupted."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: everything vLLM imported and loaded is already here
        os.close(reader)
        with os.fdopen(writer, "w") as out:
            json.dump(_one(case, tokenizers), out)
        os._exit(0)
    os.close(writer)
    started = time.perf_counter()
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([reader], [], [], max(0.0, started + ALLOWANCE + 5 - time.perf_counter()))
        if not ready:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(reader)
            return {"at least": time.perf_counter() - started, "parser": case["parser"],
                    "read": 0, "of": len(case["text"])}
        data = os.read(reader, 1 << 20)
        if not data:
            break
        chunks.append(data)
    os.close(reader)
    os.waitpid(pid, 0)
    return json.loads(b"".join(chunks) or b'{"error": "the child died without an answer"}')


def run(cases: list[dict]) -> dict:
    tokenizers: dict = {}
    for case in cases:  # load every tokenizer once, here, so each forked child inherits them
        if case["parser"] is not None:
            _tokenizer(case["tokenizer"], case["markers"], tokenizers)
    results = {}
    for case in cases:
        if case["parser"] is None:
            results[case["id"]] = {"error": "no vLLM parser for this format"}
        else:
            results[case["id"]] = _in_child(case, tokenizers)
    return results


def main() -> None:
    import logging

    logging.disable(logging.CRITICAL)  # vLLM logs every parse error it swallows
    with open(sys.argv[1], encoding="utf-8") as handle:
        cases = json.load(handle)["cases"]
    import vllm

    results = run(cases)
    json.dump({"vllm": vllm.__version__, "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
