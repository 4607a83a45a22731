"""A Qwen3 stand-in trained on CanIToolCall's live-probe scenarios, for ``canitoolcall probe``.

``canitoolcall probe --base-url …`` is a client nobody here wrote: it sends
its own requests (``canitoolcall.probe.BUILTIN_SCENARIOS``: one call,
parallel calls, no call, nested arguments, unicode, empty arguments, a named
``tool_choice``, an answer after a tool result, reasoning then a call), in
its own order, plain and streamed, with four in flight, and judges what
comes back by its own checks. The stand-in (``standins.train``, the same
method and tokenizer as the server test's Qwen3) learns one reply per
scenario, written the way Qwen3 writes: Hermes ``<tool_call>`` JSON with
unicode unescaped, its reasoning in ``<think>``. The prompts are the
scenarios' messages and tools rendered as vLLM renders them, so at
temperature 0 the served model writes exactly these replies.

What it shows: vLLM with ``--tool-call-parser templatestudio
--reasoning-parser templatestudio`` turns Qwen3-style replies into what an
OpenAI client expects, for every scenario, streaming and not, with the
named choice held to the structural tag. What it cannot show: that a real
model writes these replies (these are scripted), or how the plugin fares on
prompts outside the scenarios.
"""

from __future__ import annotations

import json

from canitoolcall.probe import BUILTIN_SCENARIOS, Scenario

from standins import Script

# The reply the stand-in learns per scenario id: reasoning (or None), calls, content.
_REPLIES: dict[str, tuple[str | None, list[tuple[str, dict]], str]] = {
    "single-call": (None, [("get_weather", {"city": "Paris"})], ""),
    "parallel-calls": (None, [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})], ""),
    "no-call": (None, [], "42"),
    "nested-args": (None, [("create_event", {
        "title": "Design review", "start": "2026-10-01T15:00:00Z",
        "attendees": [{"name": "Ana", "email": "ana@example.com"}, {"name": "Bo", "email": "bo@example.com"}],
        "location": {"city": "Berlin", "room": "4.12"},
    })], ""),
    "unicode-args": (None, [("save_note", {
        "title": "Grüße aus Zürich", "body": "Café ☕ in 東京 — naïve résumé 🚀"})], ""),
    "empty-args": (None, [("get_server_time", {})], ""),
    "forced-tool-choice": (None, [("get_weather", {"city": "Lisbon"})], ""),
    "tool-result-followup": (None, [], "It is 18 °C and clear in Paris."),
    "reasoning-then-call": (
        "9.9 is 9.90, and 9.90 is larger than 9.11.", [("record_answer", {"answer": "9.9"})], ""),
}


def qwen3_reply(reasoning: str | None, calls: list[tuple[str, dict]], content: str) -> str:
    """The raw text Qwen3 writes: <think> block, then content, then one <tool_call> per call."""
    parts = [f"<think>\n{reasoning}\n</think>\n\n"] if reasoning is not None else []
    written = [f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments}, ensure_ascii=False)}\n</tool_call>"
               for name, arguments in calls]
    return "".join(parts) + content + "\n".join(written)


def scripted_answer(scenario_id: str) -> dict:
    """What the server must send for a scenario's reply: reasoning, content, calls (arguments decoded)."""
    reasoning, calls, content = _REPLIES[scenario_id]
    return {"reasoning_content": reasoning, "content": content or None,
            "tool_calls": [{"name": name, "arguments": arguments} for name, arguments in calls]}


def scenarios() -> tuple[Scenario, ...]:
    """The probe's scenarios; a scenario this module has no reply for is an error, not a skip."""
    missing = [scenario.id for scenario in BUILTIN_SCENARIOS if scenario.id not in _REPLIES]
    if missing:
        raise LookupError(f"canitoolcall's probe has scenarios with no scripted reply: {missing}")
    return BUILTIN_SCENARIOS


def probe_script() -> Script:
    """(messages, tools, reply) per scenario, as the probe sends them."""
    return [([dict(m) for m in scenario.messages], [dict(t) for t in scenario.tools],
             qwen3_reply(*_REPLIES[scenario.id])) for scenario in scenarios()]
