"""The live tool loop: thinking split, dispatch, pairing, parallel calls, rounds, leaks.

``split_reasoning``, ``run_tool_round`` and ``template_shows_call_ids`` are
tested without a model. ``run_tool_loop`` runs two ways: on a
``ScriptedModel``, which answers ``generate`` with fixed replies (for what
no stand-in is trained to write: parallel calls, Llama 3.1's tokenizer,
failing and loosely typed tools, a bad history), and on stand-ins from
``tests/standin.py``: tiny Qwen3 models trained in the session to write one
scripted behaviour each (the documented exchange-rate call, an unknown
tool, a malformed call, two rounds, a call rehearsed only in the reasoning).
"""

from __future__ import annotations

import re

import functools

import pytest
import torch
from jinja2 import TemplateError
from transformers import GenerationConfig

from rates import QUESTION, get_exchange_rate
from samples import QWEN3_CALL
from standin import ANSWER, SCRIPT_NAMES, StandInTrainingError, hermes_call, scripts, train_standin
from templatestudio.families import LLAMA31
import templatestudio.loop
from templatestudio.loop import (
    ToolLoopLimit,
    Transcript,
    run_tool_loop,
    run_tool_round,
    template_shows_call_ids,
)
from templatestudio.messages import InvalidConversation
from templatestudio.pairing import validate_tool_pairing
from templatestudio.reader import split_reasoning
from templatestudio.render import load_tokenizer, render
from templatestudio.tools import (
    FencedJSONParser,
    HermesParser,
    ParsedToolCall,
    UnparsedToolCall,
    tool_call_message,
    tool_result_message,
)

EUR_JPY = {"base": "EUR", "quote": "JPY"}
EUR_USD = {"base": "EUR", "quote": "USD"}
UNKNOWN_WEATHER = "error: unknown tool 'get_weather'; available: get_exchange_rate"


def top_quotes(base: str, limit: int) -> list[str]:
    """The currencies most often quoted against a base currency.

    Args:
        base: ISO 4217 code of the base currency, such as "EUR".
        limit: How many currencies to return.
    """
    return ["USD", "JPY", "GBP"][:limit]


@functools.wraps(get_exchange_rate)
def unreachable_rate(base: str, quote: str) -> float:
    raise ConnectionError("rate service unreachable")


@pytest.fixture(scope="module")
def llama31():
    return load_tokenizer(LLAMA31)


class ScriptedModel:
    """Answers ``generate`` with the next of a fixed list of replies.

    It appends the reply's ids and the first stop id to the prompt, as a
    model that wrote the reply and stopped would. Every prompt it receives is
    kept in ``prompts``, so a test can check what was (or was not)
    generated from. Asking for more replies than scripted raises IndexError.
    """

    device = torch.device("cpu")

    def __init__(self, tokenizer, replies: list[str]) -> None:
        self.tokenizer = tokenizer
        self.replies = list(replies)
        self.prompts: list[str] = []
        self.generation_config = GenerationConfig()

    def generate(self, *, input_ids, max_new_tokens, eos_token_id, **_options):
        self.prompts.append(self.tokenizer.decode(input_ids[0], skip_special_tokens=False))
        reply_ids = self.tokenizer(self.replies.pop(0), add_special_tokens=False)["input_ids"]
        written = reply_ids[:max_new_tokens] + [eos_token_id[0]]
        return torch.cat([input_ids, torch.tensor([written])], dim=1)


def assert_trained_on_the_loops_histories(transcript: Transcript, script: str) -> None:
    """Each scripted turn's conversation is the history the loop held before that generation.

    So the stand-in's training prompts are the loop's prompts, and cannot drift from them.
    """
    starts = [i for i, m in enumerate(transcript.messages) if m["role"] == "assistant"]
    histories = [transcript.messages[:i] for i in starts]
    assert histories == [conversation for conversation, _reply in scripts()[script]]


def loop(standin, script: str, **options) -> Transcript:
    model, tokenizer = standin(script)
    options.setdefault("fmt", "hermes")
    return run_tool_loop(model, tokenizer, QUESTION, [get_exchange_rate], **options)


def roles(messages) -> list[str]:
    return [message["role"] for message in messages]


def rate_call(call_id: str, arguments: dict) -> dict:
    """A get_exchange_rate call as it sits in an assistant turn."""
    function = {"name": "get_exchange_rate", "arguments": arguments}
    return {"id": call_id, "type": "function", "function": function}


def rate_result(call_id: str, content: str) -> dict:
    return {"role": "tool", "name": "get_exchange_rate", "content": content, "tool_call_id": call_id}


# --- split_reasoning: the reader's split, named format, nothing stripped ----


def test_split_reasoning_separates_the_block():
    raw = "<think>\nNeed the rate.\n</think>\n\n" + QWEN3_CALL
    assert split_reasoning(raw, "hermes") == ("\nNeed the rate.\n", "\n\n" + QWEN3_CALL)


def test_split_reasoning_without_a_block_has_empty_reasoning():
    assert split_reasoning("  One euro is 162.4 yen.\n", "hermes") == ("", "  One euro is 162.4 yen.\n")


def test_split_reasoning_with_an_empty_block():
    # What Qwen3 writes when thinking is switched off in its template.
    assert split_reasoning("<think>\n\n</think>\n\nHi", "hermes") == ("\n\n", "\n\nHi")


def test_unclosed_thinking_is_all_reasoning():
    assert split_reasoning("<think>\nStill thinking " + QWEN3_CALL, "hermes") == (
        "\nStill thinking " + QWEN3_CALL,
        "",
    )


def test_a_call_inside_reasoning_is_not_in_the_reply():
    raw = f"<think>\nMaybe {QWEN3_CALL}\n</think>\n\nOne euro is 162.4 yen."
    reasoning, reply = split_reasoning(raw, "hermes")
    assert HermesParser().parse(reasoning)  # it really is a call...
    assert HermesParser().parse(reply) == []  # ...and the reply does not carry it


def test_a_think_closer_inside_a_later_call_does_not_end_reasoning():
    call = '<tool_call>\n{"name": "note", "arguments": {"text": "</think> is a tag"}}\n</tool_call>'
    reasoning, reply = split_reasoning("<think>\nPlan.\n</think>\n\n" + call, "hermes")
    assert (reasoning, reply) == ("\nPlan.\n", "\n\n" + call)
    assert split_reasoning(call, "hermes") == ("", call)


def test_a_block_after_visible_text_is_not_reasoning():
    assert split_reasoning("Hi <think>x</think>", "hermes") == ("", "Hi <think>x</think>")


def test_split_reasoning_needs_the_format_named():
    # No silent default: formats differ in their blocks (Gemma 4's thought channel is not <think>).
    with pytest.raises(TypeError):
        split_reasoning("<think>x</think>")  # type: ignore[call-arg]
    gemma = split_reasoning("<think>x</think>y", "gemma4")
    assert gemma == ("", "<think>x</think>y")


def test_the_loop_no_longer_offers_a_second_split():
    assert not hasattr(templatestudio.loop, "split_thinking")


# --- run_tool_round: dispatch, ids, grouping, order --------------------------


def test_a_round_appends_the_call_with_an_id_and_its_result():
    messages = list(QUESTION)
    outcomes = run_tool_round(
        messages, [ParsedToolCall("get_exchange_rate", EUR_JPY)], [get_exchange_rate], one_turn=True
    )
    assert messages[1:] == [
        {"role": "assistant", "tool_calls": [rate_call("call00001", EUR_JPY)]},
        rate_result("call00001", "162.4"),
    ]
    assert [outcome.is_error for outcome in outcomes] == [False]


def test_unknown_tool_becomes_a_readable_error_result():
    messages = list(QUESTION)
    call = ParsedToolCall("get_weather", {"city": "Tokyo"})
    run_tool_round(messages, [call], [get_exchange_rate], one_turn=True)
    assert messages[-1]["content"] == UNKNOWN_WEATHER
    # The call stays in the history as the model wrote it, so the model sees what it asked for.
    written = messages[-2]["tool_calls"][0]["function"]
    assert written == {"name": "get_weather", "arguments": {"city": "Tokyo"}}


def test_a_tool_that_raises_becomes_a_readable_error_result():
    messages = list(QUESTION)
    call = ParsedToolCall("get_exchange_rate", EUR_JPY)
    (outcome,) = run_tool_round(messages, [call], [unreachable_rate], one_turn=True)
    assert outcome.is_error
    assert messages[-1]["content"] == (
        "error: get_exchange_rate raised ConnectionError: rate service unreachable"
    )


def test_a_number_written_as_text_is_typed_before_the_tool_runs():
    messages = list(QUESTION)
    call = ParsedToolCall("top_quotes", {"base": "EUR", "limit": "2"})
    (outcome,) = run_tool_round(messages, [call], [top_quotes], one_turn=True)
    assert outcome.arguments == {"base": "EUR", "limit": 2}
    assert messages[-1]["content"] == '["USD", "JPY"]'
    # The history shows the typed value the tool ran with, not the string.
    assert messages[-2]["tool_calls"][0]["function"]["arguments"] == {"base": "EUR", "limit": 2}


def test_wrong_argument_names_become_a_readable_error_result():
    messages = list(QUESTION)
    run_tool_round(
        messages, [ParsedToolCall("get_exchange_rate", {"currency": "EUR"})], [get_exchange_rate],
        one_turn=True,
    )
    assert messages[-1]["content"] == (
        "error: get_exchange_rate: unknown parameter 'currency' (accepts: base, quote); "
        "missing required parameter 'base'; missing required parameter 'quote'"
    )


THREE_CALLS = [
    ParsedToolCall("get_exchange_rate", EUR_JPY),
    ParsedToolCall("get_weather", {"city": "Tokyo"}),
    ParsedToolCall("top_quotes", {"base": "EUR", "limit": 1}),
]


def test_one_turn_holds_every_call_and_results_follow_in_call_order():
    messages = list(QUESTION)
    run_tool_round(messages, THREE_CALLS, [get_exchange_rate, top_quotes], one_turn=True)
    assert roles(messages) == ["user", "assistant", "tool", "tool", "tool"]
    turn = messages[1]
    assert [call["id"] for call in turn["tool_calls"]] == ["call00001", "call00002", "call00003"]
    assert [call["function"]["name"] for call in turn["tool_calls"]] == [
        "get_exchange_rate", "get_weather", "top_quotes"
    ]
    assert [(m["tool_call_id"], m["content"]) for m in messages[2:]] == [
        ("call00001", "162.4"),
        ("call00002", UNKNOWN_WEATHER + ", top_quotes"),
        ("call00003", '["USD"]'),
    ]
    assert validate_tool_pairing(messages, strict_order=True, allow_pending=False) == []


def test_one_turn_per_call_when_the_template_takes_one_call_at_a_time():
    messages = list(QUESTION)
    run_tool_round(messages, THREE_CALLS, [get_exchange_rate, top_quotes], one_turn=False)
    assert roles(messages) == ["user", *["assistant", "tool"] * 3]
    assert [len(m["tool_calls"]) for m in messages if "tool_calls" in m] == [1, 1, 1]
    assert [m.get("tool_call_id") for m in messages[1:]] == [
        None, "call00001", None, "call00002", None, "call00003"
    ]
    assert messages[4]["content"].startswith("error: unknown tool 'get_weather'")
    assert validate_tool_pairing(messages, strict_order=True, allow_pending=False) == []


def test_calls_run_in_call_order_even_after_one_fails():
    ran = []

    @functools.wraps(get_exchange_rate)
    def recording(base: str, quote: str) -> float:
        ran.append(quote)
        return get_exchange_rate(base, quote)

    calls = [
        ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "USD"}),
        ParsedToolCall("get_weather", {"city": "Tokyo"}),
        ParsedToolCall("get_exchange_rate", EUR_JPY),
    ]
    outcomes = run_tool_round(list(QUESTION), calls, [recording], one_turn=True)
    assert ran == ["USD", "JPY"]
    assert [outcome.is_error for outcome in outcomes] == [False, True, False]


def test_ids_continue_after_the_highest_id_already_in_the_history():
    earlier = {
        "role": "assistant",
        "tool_calls": [rate_call("call00007", EUR_USD), rate_call("abc123xyz", EUR_JPY)],
    }
    messages = [
        *QUESTION,
        earlier,
        rate_result("call00007", "1.1"),
        rate_result("abc123xyz", "162.4"),
        {"role": "user", "content": "And again?"},
    ]
    run_tool_round(messages, THREE_CALLS[:2], [get_exchange_rate], one_turn=True)
    assert [call["id"] for call in messages[-3]["tool_calls"]] == ["call00008", "call00009"]


def test_ids_start_at_one_after_calls_without_ids():
    messages = [
        *QUESTION,
        tool_call_message("get_exchange_rate", EUR_JPY),
        tool_result_message("get_exchange_rate", "162.4"),
        {"role": "user", "content": "And in dollars?"},
    ]
    run_tool_round(messages, THREE_CALLS[:1], [get_exchange_rate], one_turn=True)
    assert messages[-2]["tool_calls"][0]["id"] == "call00001"


def test_llama31_renders_one_turn_per_call_and_refuses_one_turn_for_all(llama31):
    per_call, together = list(QUESTION), list(QUESTION)
    calls = [
        ParsedToolCall("get_exchange_rate", EUR_JPY),
        ParsedToolCall("get_exchange_rate", EUR_USD),
    ]
    run_tool_round(per_call, calls, [get_exchange_rate], one_turn=False)
    run_tool_round(together, calls, [get_exchange_rate], one_turn=True)
    text = render(llama31, per_call)
    assert text.index('"quote": "JPY"') < text.index('"quote": "USD"')
    assert text.count("<|start_header_id|>ipython<|end_header_id|>") == 2
    with pytest.raises(TemplateError, match="only supports single tool-calls at once"):
        render(llama31, together)


# --- template_shows_call_ids --------------------------------------------------


def test_qwen3_and_llama31_templates_show_no_call_ids(qwen3, llama31):
    assert template_shows_call_ids(qwen3) is False
    assert template_shows_call_ids(llama31) is False


def test_a_template_that_prints_ids_is_recognised():
    tokenizer = load_tokenizer("Qwen/Qwen3-0.6B")
    tokenizer.chat_template = (
        "{% for m in messages %}"
        "{% for c in m.tool_calls or [] %}[{{ c.id }}] {{ c.function.name }}{% endfor %}"
        "{% if m.role == 'tool' %}({{ m.tool_call_id }}) {{ m.content }}{% endif %}"
        "{% endfor %}"
    )
    assert template_shows_call_ids(tokenizer) is True


# --- run_tool_loop on a scripted model -----------------------------------------


TWO_HERMES_CALLS = hermes_call("get_exchange_rate", EUR_JPY) + "\n" + hermes_call(
    "get_exchange_rate", EUR_USD
)


def test_qwen3_parallel_calls_share_one_turn_with_ids(qwen3):
    model = ScriptedModel(qwen3, [TWO_HERMES_CALLS, ANSWER])
    transcript = run_tool_loop(model, qwen3, QUESTION, [get_exchange_rate], fmt="hermes")
    assert roles(transcript.messages) == ["user", "assistant", "tool", "tool", "assistant"]
    assert [c["id"] for c in transcript.messages[1]["tool_calls"]] == ["call00001", "call00002"]
    assert [m["tool_call_id"] for m in transcript.messages[2:4]] == ["call00001", "call00002"]
    assert transcript.calls == [
        {"name": "get_exchange_rate", "arguments": EUR_JPY},
        {"name": "get_exchange_rate", "arguments": EUR_USD},
    ]
    # The second prompt shows both calls in one turn, then both results, in call order.
    second = model.prompts[1]
    assert second.count("<|im_start|>assistant\n<tool_call>") == 1
    assert second.index('"quote": "JPY"') < second.index('"quote": "USD"')
    assert second.count("<tool_response>") == 2
    assert transcript.answer == ANSWER


def test_llama31_parallel_calls_get_one_turn_each(llama31):
    reply = (
        '<|python_tag|>{"name": "get_exchange_rate", "parameters": {"base": "EUR", "quote": "JPY"}};'
        ' {"name": "get_exchange_rate", "parameters": {"base": "EUR", "quote": "USD"}}'
    )
    model = ScriptedModel(llama31, [reply, ANSWER])
    transcript = run_tool_loop(
        model, llama31, QUESTION, [get_exchange_rate], fmt="llama3-json"
    )
    assert roles(transcript.messages) == ["user", *["assistant", "tool"] * 2, "assistant"]
    assert [m.get("tool_call_id") for m in transcript.messages[1:5]] == [
        None, "call00001", None, "call00002"
    ]
    assert model.prompts[1].count("<|start_header_id|>ipython<|end_header_id|>") == 2
    assert transcript.answer == ANSWER


def test_the_loop_feeds_a_failing_tool_back_as_an_error_result(qwen3):
    model = ScriptedModel(qwen3, [QWEN3_CALL, ANSWER])
    transcript = run_tool_loop(model, qwen3, QUESTION, [unreachable_rate], fmt="hermes")
    error = "error: get_exchange_rate raised ConnectionError: rate service unreachable"
    assert transcript.messages[2]["content"] == error
    assert error in model.prompts[1]


def test_a_reply_cut_inside_its_second_call_stops_the_loop_before_any_call_runs(qwen3):
    # Issue 22: the reader keeps the first call and reports the cut one, but
    # the loop reads strictly: it never runs half of what the model asked for.
    cut = QWEN3_CALL + "\n" + QWEN3_CALL[: len(QWEN3_CALL) // 2]
    ran = []

    @functools.wraps(get_exchange_rate)
    def counted_rate(base: str, quote: str) -> float:
        ran.append((base, quote))
        return get_exchange_rate(base, quote)

    model = ScriptedModel(qwen3, [cut, ANSWER])
    with pytest.raises(UnparsedToolCall, match="^the reply ended inside a tool call: '<tool_call>"):
        run_tool_loop(model, qwen3, QUESTION, [counted_rate], fmt="hermes")
    assert ran == [] and len(model.prompts) == 1


def test_the_loop_types_arguments_before_they_reach_the_tool_and_the_history(qwen3):
    written = hermes_call("top_quotes", {"base": "EUR", "limit": "10"})
    model = ScriptedModel(qwen3, [written, ANSWER])
    transcript = run_tool_loop(model, qwen3, QUESTION, [top_quotes], fmt="hermes")
    assert transcript.calls == [{"name": "top_quotes", "arguments": {"base": "EUR", "limit": 10}}]
    assert transcript.messages[2]["content"] == '["USD", "JPY", "GBP"]'
    assert '"limit": 10' in model.prompts[1]


def test_an_orphaned_result_in_the_callers_history_is_refused_before_generating(qwen3):
    model = ScriptedModel(qwen3, [ANSWER])
    history = [*QUESTION, tool_result_message("get_exchange_rate", "162.4")]
    orphan = "message 1: tool result 'get_exchange_rate' has no open call before it"
    with pytest.raises(InvalidConversation, match=orphan):
        run_tool_loop(model, qwen3, history, [get_exchange_rate], fmt="hermes")
    assert model.prompts == []


def test_a_call_left_unanswered_in_the_callers_history_is_refused(qwen3):
    model = ScriptedModel(qwen3, [ANSWER])
    history = [*QUESTION, tool_call_message("get_exchange_rate", EUR_JPY)]
    with pytest.raises(InvalidConversation, match="has no result before the conversation ends"):
        run_tool_loop(model, qwen3, history, [get_exchange_rate], fmt="hermes")
    assert model.prompts == []


def test_results_out_of_call_order_are_refused_where_the_template_shows_no_ids(qwen3):
    # With ids the pairing is unambiguous, but Qwen3's prompt prints none:
    # the model would read the USD rate as the answer to the JPY call.
    turn = {
        "role": "assistant",
        "tool_calls": [rate_call("call00001", EUR_JPY), rate_call("call00002", EUR_USD)],
    }
    history = [
        *QUESTION,
        turn,
        rate_result("call00002", "1.1"),
        rate_result("call00001", "162.4"),
    ]
    assert validate_tool_pairing(history, allow_pending=False) == []  # fine where ids are shown
    model = ScriptedModel(qwen3, [ANSWER])
    with pytest.raises(InvalidConversation, match="results must follow call order"):
        run_tool_loop(model, qwen3, history, [get_exchange_rate], fmt="hermes")
    assert model.prompts == []


def test_a_paired_history_is_accepted_and_continued(qwen3):
    history = [
        *QUESTION,
        tool_call_message("get_exchange_rate", EUR_JPY),
        tool_result_message("get_exchange_rate", "162.4"),
        {"role": "assistant", "content": ANSWER},
        {"role": "user", "content": "And in dollars?"},
    ]
    model = ScriptedModel(qwen3, [hermes_call("get_exchange_rate", EUR_USD), "About 1.1 dollars."])
    transcript = run_tool_loop(model, qwen3, history, [get_exchange_rate], fmt="hermes")
    assert transcript.messages[5]["tool_calls"][0]["id"] == "call00001"
    assert transcript.answer == "About 1.1 dollars."


# --- run_tool_loop on stand-ins ---------------------------------------------


def test_documented_exchange_rate_loop(standin):
    transcript = loop(standin, "exchange_rate")
    assert_trained_on_the_loops_histories(transcript, "exchange_rate")
    assert [m["role"] for m in transcript.messages] == ["user", "assistant", "tool", "assistant"]
    assert transcript.calls == [{"name": "get_exchange_rate", "arguments": EUR_JPY}]
    assert transcript.messages[2] == {
        "role": "tool",
        "name": "get_exchange_rate",
        "content": "162.4",
        "tool_call_id": "call00001",
    }
    assert transcript.answer == ANSWER
    assert len(transcript.replies) == 2
    assert split_reasoning(transcript.replies[0], "hermes")[1].strip() == QWEN3_CALL
    assert transcript.replies[0].startswith("<think>")


def test_every_script_is_named():
    assert tuple(scripts()) == SCRIPT_NAMES


def test_loop_leaves_the_callers_conversation_alone(standin):
    conversation = list(QUESTION)
    model, tokenizer = standin("exchange_rate")
    run_tool_loop(model, tokenizer, conversation, [get_exchange_rate], fmt="hermes")
    assert conversation == QUESTION


def test_unknown_tool_result_is_fed_back_and_the_model_recovers(standin):
    transcript = loop(standin, "unknown_tool")
    assert_trained_on_the_loops_histories(transcript, "unknown_tool")
    assert transcript.messages[2] == {
        "role": "tool",
        "name": "get_weather",
        "content": UNKNOWN_WEATHER,
        "tool_call_id": "call00001",
    }
    # The stand-in was trained to answer the error with the right call.
    assert [call["name"] for call in transcript.calls] == ["get_weather", "get_exchange_rate"]
    assert transcript.answer == ANSWER


def test_malformed_call_raises_unparsed_tool_call(standin):
    message = "the hermes format cannot read the tool call at offset"
    with pytest.raises(UnparsedToolCall, match=message):
        loop(standin, "malformed_call")


def test_wrong_format_raises_instead_of_answering_with_the_call(standin):
    message = r"the fenced-json format left a tool call unread: '<tool_call>' at offset \d+ opens a call in the hermes format"
    with pytest.raises(UnparsedToolCall, match=message):
        loop(standin, "exchange_rate", fmt="fenced-json")


def test_two_rounds_complete(standin):
    transcript = loop(standin, "two_rounds")
    assert_trained_on_the_loops_histories(transcript, "two_rounds")
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
    transcript = run_tool_loop(model, tokenizer, QUESTION, [recording], fmt="hermes")
    assert "<tool_call>" in transcript.replies[0]
    assert transcript.calls == []
    assert ran == []
    assert transcript.answer == ANSWER


def test_without_a_format_the_loop_reads_the_one_its_template_writes(standin):
    # Qwen3 ships no response template: the format comes from probing its chat template.
    transcript = loop(standin, "exchange_rate", fmt=None)
    assert transcript.answer == ANSWER


def test_a_standin_that_did_not_learn_its_script_is_not_saved(tmp_path):
    with pytest.raises(StandInTrainingError, match="stand-in 'malformed_call' after 2 steps"):
        train_standin("malformed_call", tmp_path / "standin", max_steps=2)
    assert not (tmp_path / "standin").exists()
