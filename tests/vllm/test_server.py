"""A real vLLM server with the templatestudio plugin, for two families, one command line.

For each stand-in (tests/vllm/standins.py: Qwen3, whose template writes
Hermes ``<tool_call>`` JSON, and Llama 3.1, whose template writes the
whole reply as ``{"name", "parameters"}``) the test trains the model on the
prompts vLLM renders, starts ``vllm.entrypoints.openai.api_server`` on
127.0.0.1 with ``--tool-call-parser templatestudio``, and checks, over
HTTP: the trained prompts are what the server renders (``/tokenize``); the
plugin logged the format it found; a call comes back in ``tool_calls``,
non-streaming and streaming, with ``finish_reason: "tool_calls"``, equal to
the package's own reader on the text the model wrote; the follow-up turn
with the tool's result gets the answer; a broken call comes back as
content with a warning in the server log. Runs under
``.venv-vllm`` (``make vllm-test``); each server is stopped by its pid.

``TEMPLATESTUDIO_RECORD_FIXTURE=1`` rewrites tests/vllm/fixtures/
serving_exchange.json (the request/response pairs notebook 21 shows);
otherwise the test checks that the committed file is what the server says.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from server import Server, ask, body, joined, running
from standins import (
    EUR_JPY,
    FAMILIES,
    LEAK_QUESTION,
    call_message,
    conversations,
    result_message,
    served_split,
    tools_as_sent,
)
from templatestudio import UnparsedToolCall
from templatestudio.formats import FORMATS
from templatestudio.rates import QUESTION
from templatestudio.reader import read_tool_calls

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "serving_exchange.json"
RECORD = os.environ.get("TEMPLATESTUDIO_RECORD_FIXTURE") == "1"


@pytest.fixture(scope="module", params=FAMILIES, ids=[family.name for family in FAMILIES])
def served(request, trained_standin):
    """(family, trained stand-in, running server); one server at a time, stopped after its tests."""
    trained = trained_standin(request.param)
    with running(trained, request.config, "server.log") as server:
        yield request.param, trained, server


def raw_reply(server: Server, messages: list[dict]) -> str:
    """What the model wrote, untouched: the chat prompt (``/tokenize``) completed by ``/v1/completions``.

    The completions endpoint runs neither parser, so the reasoning block and
    the call markup stand as the model wrote them (the chat endpoint would
    split the reasoning off even with tool_choice "none").
    """
    status, rendered = server.post("/tokenize", {"model": str(server.model_dir), "messages": messages,
                                                 "tools": tools_as_sent(), "add_generation_prompt": True})
    assert status == 200, rendered
    status, answer = server.post("/v1/completions", {
        "model": str(server.model_dir), "prompt": rendered["tokens"], "temperature": 0, "max_tokens": 160,
        "skip_special_tokens": False,
    })
    assert status == 200, answer
    return answer["choices"][0]["text"]


def test_the_server_renders_the_prompts_the_stand_in_was_trained_on(served):
    family, trained, server = served
    for (messages, _), prompt_ids in zip(conversations(family), trained.prompt_ids):
        status, answer = server.post("/tokenize", {"model": str(server.model_dir), "messages": messages,
                                                   "tools": tools_as_sent(), "add_generation_prompt": True})
        assert status == 200, answer
        assert tuple(answer["tokens"]) == prompt_ids, "vLLM renders this conversation differently"


def test_the_plugin_logged_the_format_it_found_at_start_up(served):
    family, _, server = served
    assert f"writes tool calls in the {family.format} format" in server.log()


def test_a_call_non_streaming_is_the_packages_own_reading(served):
    family, _, server = served
    choice = ask(server, QUESTION)["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    (call,) = choice["message"]["tool_calls"]
    assert call["type"] == "function" and call["id"].startswith("chatcmpl-tool-")
    assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == ("get_exchange_rate", EUR_JPY)
    assert (choice["message"]["reasoning"], choice["message"]["content"]) == served_split(family.call_text, family)
    text = raw_reply(server, QUESTION)
    assert text == family.call_text  # the stand-in wrote what it was trained to write
    reply = read_tool_calls(text, FORMATS[family.format])
    assert [(c.name, c.arguments) for c in reply.calls] == [
        (call["function"]["name"], json.loads(call["function"]["arguments"]))
    ]


def test_a_call_streaming_equals_the_non_streamed_answer(served):
    family, _, server = served
    whole = ask(server, QUESTION)["choices"][0]
    streamed = joined(server.stream(body(server, QUESTION)))
    assert streamed["finish_reason"] == "tool_calls"
    (call,) = streamed["calls"]
    assert call["id"].startswith("chatcmpl-tool-")
    (expected,) = whole["message"]["tool_calls"]
    assert call["name"] == expected["function"]["name"]
    assert json.loads(call["arguments"]) == json.loads(expected["function"]["arguments"]) == EUR_JPY
    # By default a call's arguments go out in one piece when it closes (TEMPLATESTUDIO_VLLM_ARGUMENT_DELTAS
    # turns pieces on: test_server_strict.py), so the stream shows nothing the whole reply does not.
    assert streamed["argument_pieces"] == [1]
    assert streamed["content"] == (whole["message"]["content"] or "")
    assert streamed["reasoning"] == (whole["message"]["reasoning"] or "")
    for fragment in streamed["content_fragments"]:  # no piece of the call ever shows as content
        assert "<tool_call" not in fragment and '"name"' not in fragment, fragment


def test_the_follow_up_turn_with_the_result_gets_the_answer(served):
    family, _, server = served
    first = ask(server, QUESTION)["choices"][0]["message"]
    call_id = first["tool_calls"][0]["id"]
    follow_up = [*QUESTION, call_message(first["content"], call_id, first["reasoning"]), result_message(call_id)]
    choice = ask(server, follow_up)["choices"][0]
    assert choice["finish_reason"] == "stop"
    reasoning, content = served_split(family.answer_text, family)
    assert (choice["message"]["reasoning"], choice["message"]["content"]) == (reasoning, content)
    assert not choice["message"].get("tool_calls")
    streamed = joined(server.stream(body(server, follow_up)))
    assert (streamed["reasoning"], streamed["content"], streamed["calls"], streamed["finish_reason"]) == (
        reasoning or "", content or "", [], "stop")


def test_a_broken_call_comes_back_as_content_with_a_warning(served):
    family, _, server = served
    choice = ask(server, LEAK_QUESTION)["choices"][0]
    assert choice["finish_reason"] == "stop" and not choice["message"].get("tool_calls")
    assert choice["message"]["content"] == family.leak_text
    streamed = joined(server.stream(body(server, LEAK_QUESTION)))
    assert (streamed["content"], streamed["calls"]) == (family.leak_text, [])
    warnings = [line for line in server.log().splitlines() if "returned as content, unchanged" in line]
    assert len(warnings) == 2, warnings  # one per request, naming where the call starts
    # The warning is the reader's own refusal of that text (where the call opens, and why).
    with pytest.raises(UnparsedToolCall) as refused:
        read_tool_calls(family.leak_text, FORMATS[family.format], strict=True)
    assert "at offset 0" in str(refused.value)
    assert all("WARNING" in line and str(refused.value) in line for line in warnings), warnings


def _normalized(answer: dict) -> dict:
    """A response without what changes from run to run: ids, timestamps, the model's folder."""
    answer = json.loads(json.dumps(answer))
    answer["id"], answer["created"], answer["model"] = "chatcmpl-…", 0, "stand-in"
    # vllm-VERSION-HASH, the hash covering the model's (temporary) folder
    answer["system_fingerprint"] = answer["system_fingerprint"].rsplit("-", 1)[0] + "-…"
    for choice in answer["choices"]:
        for call in choice["message"].get("tool_calls") or []:
            call["id"] = "chatcmpl-tool-…"
    return answer


def test_the_recorded_exchange_is_what_the_server_answers(served):
    """tests/vllm/fixtures/serving_exchange.json, shown by notebook 21, matches this server.

    rendered_prompt is the first trained prompt, which the /tokenize test
    checks is token for token what the server renders for the request.
    """
    family, trained, server = served
    first = ask(server, QUESTION)
    message = first["choices"][0]["message"]
    call_id = message["tool_calls"][0]["id"]
    follow_up = [*QUESTION, call_message(message["content"], "chatcmpl-tool-…", message["reasoning"]),
                 result_message("chatcmpl-tool-…")]
    sent_follow_up = [*QUESTION, call_message(message["content"], call_id, message["reasoning"]), result_message(call_id)]
    request = {k: v for k, v in body(server, QUESTION).items() if k != "model"}
    entry = {
        "rendered_prompt": trained.prompts[0],
        # what the model wrote, untouched (/v1/completions on the same prompt: no parser runs)
        "raw_replies": {"call": raw_reply(server, QUESTION), "broken_call": raw_reply(server, LEAK_QUESTION)},
        "request": request,
        "response": _normalized(first),
        "follow_up_request": {**request, "messages": follow_up},
        "follow_up_response": _normalized(ask(server, sent_follow_up)),
    }
    recorded = json.loads(FIXTURE.read_text(encoding="utf-8")) if FIXTURE.exists() else {}
    if RECORD:
        recorded[family.name] = entry
        FIXTURE.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert recorded.get(family.name) == entry, (
        "the recorded exchange differs from what the server answers; "
        "re-record with TEMPLATESTUDIO_RECORD_FIXTURE=1 make vllm-test"
    )

