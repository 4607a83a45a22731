"""The strict setting against a real vLLM server: a broken call fails the request.

A server of its own (a separate module, so the other servers are stopped
first), started with TEMPLATESTUDIO_VLLM_STRICT=1 for the Qwen3 stand-in.
"""

from __future__ import annotations

from server import ask, body, running
from standins import LEAK_QUESTION, QWEN3
from templatestudio.rates import QUESTION


def test_with_the_strict_setting_a_broken_call_fails_the_request(trained_standin, pytestconfig):
    """TEMPLATESTUDIO_VLLM_STRICT=1 in the server's environment: a 400, or an error event, with the reason."""
    trained = trained_standin(QWEN3)
    with running(trained, pytestconfig, "strict-server.log", TEMPLATESTUDIO_VLLM_STRICT="1") as server:
        status, answer = server.post("/v1/chat/completions", body(server, LEAK_QUESTION))
        assert status == 400, answer
        message = answer["error"]["message"]
        assert "TEMPLATESTUDIO_VLLM_STRICT=1" in message and "could not read" in message
        assert "at offset 0" in message
        chunks = server.stream(body(server, LEAK_QUESTION))
        errors = [chunk["error"] for chunk in chunks if "error" in chunk]
        assert len(errors) == 1 and "TEMPLATESTUDIO_VLLM_STRICT=1" in errors[0]["message"]
        good = ask(server, QUESTION)["choices"][0]  # strict changes nothing for a call that reads
        assert good["finish_reason"] == "tool_calls"
