"""The server's settings against a real vLLM server: strict leaks, and argument pieces.

A server of its own (a separate module, so it runs after the other servers
stop), started for the Qwen3 stand-in with TEMPLATESTUDIO_VLLM_STRICT=1 and
TEMPLATESTUDIO_VLLM_ARGUMENT_DELTAS=1: a broken call fails the request (after
its pieces went out, in a stream), and a call that reads reaches the client
in pieces that join to its arguments.
"""

from __future__ import annotations

import json

from server import ask, body, joined, running
from standins import EUR_JPY, LEAK_QUESTION, QWEN3
from templatestudio.rates import QUESTION


def test_with_the_strict_setting_a_broken_call_fails_the_request(trained_standin, pytestconfig):
    """A 400, or an error event, with the reason; a call that reads streams its arguments in pieces."""
    trained = trained_standin(QWEN3)
    with running(trained, pytestconfig, "strict-server.log", TEMPLATESTUDIO_VLLM_STRICT="1",
                 TEMPLATESTUDIO_VLLM_ARGUMENT_DELTAS="1") as server:
        status, answer = server.post("/v1/chat/completions", body(server, LEAK_QUESTION))
        assert status == 400, answer
        message = answer["error"]["message"]
        assert "TEMPLATESTUDIO_VLLM_STRICT=1" in message and "could not read" in message
        assert "at offset 0" in message
        chunks = server.stream(body(server, LEAK_QUESTION))
        errors = [chunk["error"] for chunk in chunks if "error" in chunk]
        assert len(errors) == 1 and "TEMPLATESTUDIO_VLLM_STRICT=1" in errors[0]["message"]
        # Its pieces went out before the reader refused it: the error names the unfinished slot.
        assert "(tool call 0, whose arguments were streamed, stays unfinished)" in errors[0]["message"]
        good = ask(server, QUESTION)["choices"][0]  # strict changes nothing for a call that reads
        assert good["finish_reason"] == "tool_calls"
        streamed = joined(server.stream(body(server, QUESTION)))
    (call,) = streamed["calls"]
    assert json.loads(call["arguments"]) == EUR_JPY and streamed["finish_reason"] == "tool_calls"
    # About one piece per token of {"base": "EUR", "quote": "JPY"}, the last with the closing brace.
    assert streamed["argument_pieces"][0] >= 5, streamed["argument_pieces"]
