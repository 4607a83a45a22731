"""Parallel calls: one turn, several calls, ids every template accepts, and the probe."""

from __future__ import annotations

import copy
import re

import pytest
from jinja2 import TemplateError

from corpus_guard import require_corpus
from templatestudio.corpus import corpus_dir
from templatestudio.families import LLAMA31
from templatestudio.messages import assert_valid
from templatestudio.pairing import validate_tool_pairing
from templatestudio.parallel import (
    ParallelSupport,
    parallel_tool_call_message,
    result_for_call,
    supports_parallel_calls,
)
from templatestudio.render import load_tokenizer, render
from templatestudio.tools import ParsedToolCall

USER = {"role": "user", "content": "Convert EUR to JPY and USD to GBP."}
TWO_RATES = [
    {"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}},
    {"name": "get_exchange_rate", "arguments": {"base": "USD", "quote": "GBP"}},
]


@pytest.fixture(scope="module")
def llama31():
    return load_tokenizer(LLAMA31)


def with_template(tokenizer, source: str):
    """A shallow copy of tokenizer that renders with source instead of its own template."""
    twin = copy.copy(tokenizer)
    twin.chat_template = source
    return twin


# --- building the turn ------------------------------------------------------------


def test_ids_are_generated_in_the_nine_character_shape():
    turn = parallel_tool_call_message(TWO_RATES)
    assert turn["role"] == "assistant"
    ids = [call["id"] for call in turn["tool_calls"]]
    assert ids == ["call00001", "call00002"]
    assert all(re.fullmatch(r"[A-Za-z0-9]{9}", call_id) for call_id in ids)
    assert [call["function"]["arguments"] for call in turn["tool_calls"]] == [
        {"base": "EUR", "quote": "JPY"},
        {"base": "USD", "quote": "GBP"},
    ]
    assert_valid([USER, turn])


def test_json_string_arguments_are_normalised():
    turn = parallel_tool_call_message([{"name": "a", "arguments": '{"base": "EUR"}'}])
    assert turn["tool_calls"][0]["function"]["arguments"] == {"base": "EUR"}


def test_parsed_calls_are_accepted_in_order():
    parsed = [ParsedToolCall("a", {"x": 1}), ParsedToolCall("b", {})]
    turn = parallel_tool_call_message(parsed)
    assert [call["function"]["name"] for call in turn["tool_calls"]] == ["a", "b"]


def test_given_ids_are_kept_and_generated_ones_skip_them():
    turn = parallel_tool_call_message(
        [{"name": "a", "arguments": {}, "id": "call00001"}, {"name": "b", "arguments": {}}]
    )
    assert [call["id"] for call in turn["tool_calls"]] == ["call00001", "call00002"]


def test_first_id_continues_numbering_across_turns():
    turn = parallel_tool_call_message(TWO_RATES, first_id=41)
    assert [call["id"] for call in turn["tool_calls"]] == ["call00041", "call00042"]


@pytest.mark.parametrize(
    "calls,error,message",
    [
        ([], ValueError, "a parallel call turn needs at least one call"),
        (
            [("a", {})],
            TypeError,
            "call 0 must be a mapping with name and arguments or a parsed call, got tuple",
        ),
        ([{"name": "a"}], ValueError, "call 0 is missing arguments"),
        (
            [{"name": "a", "arguments": "[1, 2]"}],
            ValueError,
            "arguments did not decode to a JSON object",
        ),
        (
            [{"name": "a", "arguments": {}, "id": 7}],
            ValueError,
            "call 0: id must be a non-empty str, got 7",
        ),
        (
            [
                {"name": "a", "arguments": {}, "id": "call00001"},
                {"name": "b", "arguments": {}, "id": "call00001"},
            ],
            ValueError,
            "call 1: id 'call00001' is used twice in one turn",
        ),
    ],
)
def test_bad_calls_are_refused(calls, error, message):
    with pytest.raises(error, match=re.escape(message)):
        parallel_tool_call_message(calls)


def test_bad_first_id_is_refused():
    with pytest.raises(TypeError, match="first_id must be an int, got str"):
        parallel_tool_call_message(TWO_RATES, first_id="1")
    with pytest.raises(ValueError, match="first_id must not be negative, got -1"):
        parallel_tool_call_message(TWO_RATES, first_id=-1)
    with pytest.raises(ValueError, match="generated call ids ran past call99999"):
        parallel_tool_call_message(TWO_RATES, first_id=99999)


def test_result_for_call_carries_name_and_id():
    turn = parallel_tool_call_message(TWO_RATES)
    results = [
        result_for_call(call, text) for call, text in zip(turn["tool_calls"], ["162.4", "0.79"])
    ]
    assert results[1] == {
        "role": "tool", "name": "get_exchange_rate", "content": "0.79", "tool_call_id": "call00002"
    }
    assert validate_tool_pairing([USER, turn, *results], allow_pending=False) == []
    no_id = {"type": "function", "function": {"name": "a", "arguments": {}}}
    assert "tool_call_id" not in result_for_call(no_id, "1")


# --- what each family's template does with two calls -------------------------------


@pytest.mark.parametrize(
    "family,supported,rendered,text",
    [
        ("qwen3", True, 2, "Qwen/Qwen3-0.6B: both calls rendered"),
        ("gemma4", True, 2, "google/gemma-4-E2B-it: both calls rendered"),
        ("llama3", False, 0, "NousResearch/Meta-Llama-3-8B-Instruct: both calls dropped"),
        ("gemma3", False, 0, "unsloth/gemma-3-1b-it: both calls dropped"),
    ],
)
def test_probe_on_the_course_families(tokenizers, family, supported, rendered, text):
    result = supports_parallel_calls(tokenizers[family])
    assert (result.supported, result.calls_rendered, result.refusal) == (supported, rendered, None)
    assert str(result) == text


def test_probe_reports_llama31_refusal_in_its_own_words(llama31):
    assert supports_parallel_calls(llama31) == ParallelSupport(
        LLAMA31, False, 0, "This model only supports single tool-calls at once!"
    )
    assert str(supports_parallel_calls(llama31)) == (
        f"{LLAMA31}: refused: This model only supports single tool-calls at once!"
    )


def test_llama31_still_takes_one_call(llama31):
    turn = parallel_tool_call_message(TWO_RATES[:1])
    text = render(llama31, [USER, turn], add_generation_prompt=False)
    assert '"parameters": {"base": "EUR", "quote": "JPY"}' in text


def test_probe_sees_one_dropped_call_and_a_reversed_pair(qwen3):
    first_only = (
        "{% for m in messages %}{% if m.tool_calls %}"
        "{{ m.tool_calls[0].function.name }}{% endif %}{% endfor %}"
    )
    reversed_calls = (
        "{% for m in messages %}{% if m.tool_calls %}{% for c in m.tool_calls | reverse %}"
        "{{ c.function.name }} {% endfor %}{% endif %}{% endfor %}"
    )
    one = supports_parallel_calls(with_template(qwen3, first_only))
    assert (one.supported, one.calls_rendered) == (False, 1)
    assert str(one) == "Qwen/Qwen3-0.6B: only 1 of 2 calls rendered"
    swapped = supports_parallel_calls(with_template(qwen3, reversed_calls))
    assert (swapped.supported, swapped.calls_rendered) == (False, 2)
    assert str(swapped) == "Qwen/Qwen3-0.6B: both calls rendered, in the wrong order"


def test_probe_lets_a_template_bug_through(qwen3):
    broken = with_template(qwen3, "{{ messages[0].content + 1 }}")
    with pytest.raises(TypeError):
        supports_parallel_calls(broken)


def test_qwen3_shows_results_only_by_position(qwen3):
    turn = parallel_tool_call_message(TWO_RATES)
    results = [
        result_for_call(call, text) for call, text in zip(turn["tool_calls"], ["162.4", "0.79"])
    ]
    text = render(qwen3, [USER, turn, *results])
    assert "call00001" not in text  # no ids: order is the only pairing signal
    assert text.index("162.4\n</tool_response>") < text.index("0.79\n</tool_response>")


def test_gemma4_names_a_result_from_its_tool_call_id(gemma4):
    turn = parallel_tool_call_message(
        [{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}},
         {"name": "get_time", "arguments": {"zone": "Asia/Tokyo"}}]
    )
    anonymous = [
        {"role": "tool", "tool_call_id": call["id"], "content": text}
        for call, text in zip(turn["tool_calls"], ["162.4", "09:00"])
    ]
    text = render(gemma4, [USER, turn, *anonymous])
    assert "response:get_exchange_rate{" in text and "response:get_time{" in text


# --- Mistral's id rule, from the corpus ---------------------------------------------


@pytest.fixture(scope="module")
def mistral_nemo_template() -> str:
    require_corpus()
    path = corpus_dir() / "templates" / "mistralai-Mistral-Nemo-Instruct-2407.jinja"
    return path.read_text(encoding="utf-8")


def test_generated_ids_satisfy_mistral_nemo(qwen3, mistral_nemo_template):
    mistral = with_template(qwen3, mistral_nemo_template)
    assert supports_parallel_calls(mistral).supported
    turn = parallel_tool_call_message(TWO_RATES)
    results = [result_for_call(call, '"ok"') for call in turn["tool_calls"]]
    text = render(mistral, [USER, turn, *results])
    assert '"id": "call00001"}, {"name": "get_exchange_rate"' in text
    assert '"call_id": "call00002"}[/TOOL_RESULTS]' in text


def test_mistral_nemo_refuses_ids_of_another_shape(qwen3, mistral_nemo_template):
    mistral = with_template(qwen3, mistral_nemo_template)
    turn = parallel_tool_call_message([{"name": "a", "arguments": {}, "id": "call_1"}])
    refusal = "Tool call IDs should be alphanumeric strings with length 9!"
    with pytest.raises(TemplateError, match=refusal):
        render(mistral, [USER, turn])
