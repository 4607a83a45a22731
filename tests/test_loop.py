"""The live tool loop: thinking split, tool errors, rounds, leaks.

The model-free parts (``split_thinking``, ``run_tool_call``) are tested
directly. ``run_tool_loop`` runs on stand-ins from ``tests/standin.py``:
tiny Qwen3 models trained in the session to write one scripted behaviour
each (the documented exchange-rate call, an unknown tool, a malformed call,
two rounds, a call rehearsed only in the reasoning).
"""

from __future__ import annotations

import functools

import pytest

from rates import QUESTION, get_exchange_rate
from samples import QWEN3_CALL
from standin import ANSWER, StandInTrainingError, train_standin
from templatestudio.loop import (
    ToolLoopLimit,
    Transcript,
    run_tool_call,
    run_tool_loop,
    split_thinking,
)
from templatestudio.tools import (
    FencedJSONParser,
    HermesParser,
    ParsedToolCall,
    UnparsedToolCall,
)

EUR_JPY = {"base": "EUR", "quote": "JPY"}
REGISTRY = {"get_exchange_rate": get_exchange_rate}


def loop(standin, script: str, **options) -> Transcript:
    model, tokenizer = standin(script)
    options.setdefault("fallback", HermesParser())
    return run_tool_loop(model, tokenizer, QUESTION, [get_exchange_rate], **options)


# --- split_thinking ---------------------------------------------------------


def test_split_thinking_separates_the_block():
    raw = "<think>\nNeed the rate.\n</think>\n\n" + QWEN3_CALL
    assert split_thinking(raw) == ("Need the rate.", QWEN3_CALL)


def test_split_thinking_without_a_block_has_empty_reasoning():
    assert split_thinking("  One euro is 162.4 yen.\n") == ("", "One euro is 162.4 yen.")


def test_split_thinking_with_an_empty_block():
    # What Qwen3 writes when thinking is switched off in its template.
    assert split_thinking("<think>\n\n</think>\n\nHi") == ("", "Hi")


def test_unclosed_thinking_is_all_reasoning():
    assert split_thinking("<think>\nStill thinking " + QWEN3_CALL) == (
        "Still thinking " + QWEN3_CALL,
        "",
    )


def test_a_call_inside_reasoning_is_not_in_the_reply():
    raw = f"<think>\nMaybe {QWEN3_CALL}\n</think>\n\nOne euro is 162.4 yen."
    reasoning, reply = split_thinking(raw)
    assert HermesParser().parse(reasoning)  # it really is a call...
    assert HermesParser().parse(reply) == []  # ...and the reply does not carry it


# --- run_tool_call -----------------------------------------------------------


def test_run_tool_call_returns_the_result_as_text():
    assert run_tool_call(ParsedToolCall("get_exchange_rate", EUR_JPY), REGISTRY) == "162.4"


def test_unknown_tool_becomes_a_readable_error():
    call = ParsedToolCall("get_weather", {"city": "Tokyo"})
    assert run_tool_call(call, REGISTRY) == (
        "error: unknown tool 'get_weather'; available: get_exchange_rate"
    )


def test_unknown_tool_lists_every_available_tool_sorted():
    registry = {"zeta": print, "alpha": print}
    assert run_tool_call(ParsedToolCall("beta", {}), registry) == (
        "error: unknown tool 'beta'; available: alpha, zeta"
    )


def test_a_tool_that_raises_becomes_a_readable_error():
    @functools.wraps(get_exchange_rate)
    def unreachable(base: str, quote: str) -> float:
        raise ConnectionError("rate service unreachable")

    call = ParsedToolCall("get_exchange_rate", EUR_JPY)
    result = run_tool_call(call, {"get_exchange_rate": unreachable})
    assert result == "error: get_exchange_rate raised ConnectionError: rate service unreachable"


def test_wrong_arguments_become_a_readable_error():
    result = run_tool_call(ParsedToolCall("get_exchange_rate", {"currency": "EUR"}), REGISTRY)
    assert result.startswith("error: get_exchange_rate raised TypeError: ")
    assert "currency" in result


# --- run_tool_loop on stand-ins ---------------------------------------------


def test_documented_exchange_rate_loop(standin):
    transcript = loop(standin, "exchange_rate")
    assert [m["role"] for m in transcript.messages] == ["user", "assistant", "tool", "assistant"]
    assert transcript.calls == [{"name": "get_exchange_rate", "arguments": EUR_JPY}]
    assert transcript.messages[2] == {
        "role": "tool",
        "name": "get_exchange_rate",
        "content": "162.4",
    }
    assert transcript.answer == ANSWER
    assert len(transcript.replies) == 2
    assert split_thinking(transcript.replies[0])[1] == QWEN3_CALL
    assert transcript.replies[0].startswith("<think>")


def test_loop_leaves_the_callers_conversation_alone(standin):
    conversation = list(QUESTION)
    model, tokenizer = standin("exchange_rate")
    run_tool_loop(model, tokenizer, conversation, [get_exchange_rate], fallback=HermesParser())
    assert conversation == QUESTION


def test_unknown_tool_result_is_fed_back_and_the_model_recovers(standin):
    transcript = loop(standin, "unknown_tool")
    assert transcript.messages[2] == {
        "role": "tool",
        "name": "get_weather",
        "content": "error: unknown tool 'get_weather'; available: get_exchange_rate",
    }
    # The stand-in was trained to answer the error with the right call.
    assert [call["name"] for call in transcript.calls] == ["get_weather", "get_exchange_rate"]
    assert transcript.answer == ANSWER


def test_malformed_call_raises_unparsed_tool_call(standin):
    message = "HermesParser found no call in text that looks like one"
    with pytest.raises(UnparsedToolCall, match=message):
        loop(standin, "malformed_call")


def test_wrong_parser_raises_instead_of_answering_with_the_call(standin):
    with pytest.raises(UnparsedToolCall, match="FencedJSONParser found no call"):
        loop(standin, "exchange_rate", fallback=FencedJSONParser())


def test_two_rounds_complete(standin):
    transcript = loop(standin, "two_rounds")
    assert transcript.calls == [
        {"name": "get_exchange_rate", "arguments": EUR_JPY},
        {"name": "get_exchange_rate", "arguments": {"base": "JPY", "quote": "EUR"}},
    ]
    assert [m["role"] for m in transcript.messages].count("tool") == 2
    assert len(transcript.replies) == 3
    assert transcript.answer == ANSWER


def test_two_rounds_within_exactly_two_allowed(standin):
    assert loop(standin, "two_rounds", max_rounds=2).answer == ANSWER


def test_more_rounds_than_allowed_raises_naming_the_last_call(standin):
    with pytest.raises(ToolLoopLimit) as caught:
        loop(standin, "two_rounds", max_rounds=1)
    assert str(caught.value) == (
        "the model still calls tools after 1 round(s); "
        "last call: get_exchange_rate {'base': 'JPY', 'quote': 'EUR'}"
    )
    assert caught.value.call == ParsedToolCall("get_exchange_rate", {"base": "JPY", "quote": "EUR"})
    # The call that broke the limit was not run.
    assert len(caught.value.transcript.calls) == 1


def test_no_rounds_allowed_raises_on_the_first_call(standin):
    with pytest.raises(ToolLoopLimit, match="after 0 round"):
        loop(standin, "exchange_rate", max_rounds=0)


def test_call_rehearsed_in_reasoning_is_never_run(standin):
    ran = []

    @functools.wraps(get_exchange_rate)
    def recording(base: str, quote: str) -> float:
        ran.append((base, quote))
        return get_exchange_rate(base, quote)

    model, tokenizer = standin("reasoned_call")
    transcript = run_tool_loop(model, tokenizer, QUESTION, [recording], fallback=HermesParser())
    assert "<tool_call>" in transcript.replies[0]
    assert transcript.calls == []
    assert ran == []
    assert transcript.answer == ANSWER


def test_qwen3_without_a_fallback_parser_is_refused(standin):
    with pytest.raises(ValueError, match="ships no response template; pass a fallback parser"):
        loop(standin, "exchange_rate", fallback=None)


def test_a_standin_that_did_not_learn_its_script_is_not_saved(tmp_path):
    with pytest.raises(StandInTrainingError, match="stand-in 'malformed_call' after 2 steps"):
        train_standin("malformed_call", tmp_path / "standin", max_steps=2)
    assert not (tmp_path / "standin").exists()
