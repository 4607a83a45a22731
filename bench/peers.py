"""The peers the benchmark measures against, and the check that a reader's calls are the ones written.

transformers: ``parse_response`` (whole replies, bench/workloads.py) and
``ResponseParser`` (streams), with each format's response template. vLLM:
its tool parsers, run by bench/vllm_peer.py under the vLLM environment's
interpreter, which is handed every case at once in a JSON file (one start,
one import of vLLM).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

from transformers.utils.chat_parsing import ResponseParser

BENCH = Path(__file__).resolve().parent


def stream_transformers(fmt, pieces: list[str]) -> list:
    parser = ResponseParser(fmt.response_template, prefix="")
    for piece in pieces:
        parser.feed(piece)
    message, _ = parser.finalize()
    return [(c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls", [])]


def verdict(read, expected) -> str:
    try:
        found = read()
    except Exception as error:  # noqa: BLE001 - a peer that raises is wrong, and the row says how
        return f"WRONG: raises {type(error).__name__}"
    if found == expected:
        return "yes"
    if len(found) != len(expected):
        return f"WRONG: {len(found)} calls of {len(expected)}"
    return "WRONG: " + _first_difference(found, expected)


def _first_difference(found, expected) -> str:
    for (name, arguments), (want, wanted) in zip(found, expected):
        if name != want:
            return f"name {name!r}"
        for key in wanted:
            if arguments.get(key) != wanted[key]:
                got = arguments.get(key)
                if isinstance(got, str) and isinstance(wanted[key], str):
                    return f"{key!r} is {len(got) - len(wanted[key]):+d} characters off"
                return f"{key!r} differs"
        if arguments != wanted:
            return "extra keys"
    return "differs"


def run_vllm(python: str | None, cases: list[dict]) -> tuple[str | None, dict]:
    """vLLM's answers for cases, or (None, {}) when there is no vLLM interpreter."""
    if python is None or not Path(python).exists():
        return None, {}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as handle:
        json.dump({"cases": cases}, handle)
    try:
        done = subprocess.run([python, str(BENCH / "vllm_peer.py"), handle.name], capture_output=True, text=True,
                              env={**os.environ, "VLLM_LOGGING_LEVEL": "ERROR"}, timeout=3600)
    finally:
        os.unlink(handle.name)
    if done.returncode != 0:
        return f"vLLM failed: {done.stderr.strip().splitlines()[-1:]}", {}
    answer = json.loads(done.stdout)
    return answer["vllm"], answer["results"]


def vllm_cell(results: dict, case_id: str, expected) -> tuple[float | None, str]:
    found = results.get(case_id)
    if found is None:
        return None, "-"
    if "error" in found:
        return None, found["error"]
    if "at least" in found:  # stopped: its time is a lower bound, its answer unknown
        return found["at least"], f"stopped after {found['at least']:.0f} s" + (
            f" at {found['read'] / found['of']:.0%}" if found["read"] else "")
    calls = [tuple(call) for call in found["calls"]]
    return found["seconds"], "yes" if calls == [tuple(c) for c in expected] else (
        f"WRONG: {len(calls)} calls of {len(expected)}" if len(calls) != len(expected)
        else "WRONG: " + _first_difference(calls, expected))
