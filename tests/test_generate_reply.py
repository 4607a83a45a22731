"""Decoding a reply without losing call markers, on every family in the cache.

``decode_reply`` is the model-free half of ``generate_reply``: these tests
encode what a model of each family writes (a call, then its end-of-turn
token, then text a runaway model might add), decode it the way the loop
does and parse the result. ``generate_reply`` itself runs on the trained
Qwen3 stand-in at the end.
"""

from __future__ import annotations

import json

import pytest

from rates import QUESTION, get_exchange_rate
from samples import GEMMA4_CALL, PLAIN_ANSWER, QWEN3_CALL
from templatestudio.families import LLAMA31
from templatestudio.loop import decode_reply, generate_reply, stop_token_ids
from templatestudio.render import load_tokenizer, safe_render
from templatestudio.tools import HermesParser, ParsedToolCall, parse_tool_calls, tool_schema

EUR_JPY = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
LLAMA31_CALL = (
    '<|python_tag|>{"name": "get_exchange_rate", "parameters": {"base": "EUR", "quote": "JPY"}}'
)
# What a model could write after its turn ended if generation did not stop.
RUNAWAY = "\nuser\nAnd in dollars?"


@pytest.fixture(scope="module")
def llama31():
    return load_tokenizer(LLAMA31)


def encode(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def token_names(tokenizer, ids) -> set[str]:
    return set(tokenizer.convert_ids_to_tokens(list(ids)))


@pytest.mark.parametrize(
    "family,expected",
    [
        ("qwen3", {"<|im_end|>"}),
        ("llama3", {"<|eot_id|>"}),
        ("gemma3", {"<end_of_turn>"}),
        ("gemma4", {"<turn|>", "<end_of_turn>"}),
    ],
)
def test_stop_tokens_are_the_turn_closers(tokenizers, family, expected):
    assert token_names(tokenizers[family], stop_token_ids(tokenizers[family])) == expected


def test_llama31_stops_after_a_python_tag_call_too(llama31):
    assert token_names(llama31, stop_token_ids(llama31)) == {"<|eot_id|>", "<|eom_id|>"}


def test_generation_config_eos_ids_are_added(qwen3):
    # Qwen3-0.6B's generation_config lists <|endoftext|> as well as <|im_end|>.
    ids = stop_token_ids(qwen3, [151645, 151643])
    assert token_names(qwen3, ids) == {"<|im_end|>", "<|endoftext|>"}
    assert stop_token_ids(qwen3, 151643) == ids


def test_gemma_plain_text_end_tag_is_not_a_stop_token(tokenizers):
    # Gemma's vocabulary has "</s>" as an ordinary (non-special) token.
    gemma3 = tokenizers["gemma3"]
    plain_tag = gemma3.convert_tokens_to_ids("</s>")
    assert plain_tag not in stop_token_ids(gemma3)


def test_qwen3_call_survives_and_parses(qwen3):
    ids = encode(qwen3, QWEN3_CALL + "<|im_end|>" + RUNAWAY)
    text = decode_reply(qwen3, ids, stop_token_ids(qwen3))
    assert text == QWEN3_CALL
    prompt = safe_render(qwen3, QUESTION, tools=[tool_schema(get_exchange_rate)])
    assert parse_tool_calls(qwen3, text, prefix=prompt, fallback=HermesParser()) == [EUR_JPY]


def test_gemma4_call_markers_survive_and_its_response_template_parses(gemma4):
    ids = encode(gemma4, GEMMA4_CALL + "<turn|>" + RUNAWAY)
    text = decode_reply(gemma4, ids, stop_token_ids(gemma4))
    assert text == GEMMA4_CALL
    prompt = safe_render(gemma4, QUESTION, tools=[tool_schema(get_exchange_rate)])
    assert parse_tool_calls(gemma4, text, prefix=prompt) == [EUR_JPY]


def test_skipping_special_tokens_would_lose_gemma4_call(gemma4):
    # Why decode_reply keeps special tokens: the usual decode deletes the
    # call markers, and the response template then finds no call at all.
    ids = encode(gemma4, GEMMA4_CALL)
    skipped = gemma4.decode(ids, skip_special_tokens=True)
    assert "<|tool_call>" not in skipped
    prompt = safe_render(gemma4, QUESTION, tools=[tool_schema(get_exchange_rate)])
    assert parse_tool_calls(gemma4, skipped, prefix=prompt) == []


def test_llama31_python_tag_survives(llama31):
    ids = encode(llama31, LLAMA31_CALL + "<|eom_id|>" + RUNAWAY)
    text = decode_reply(llama31, ids, stop_token_ids(llama31))
    assert text == LLAMA31_CALL
    payload = json.loads(text.removeprefix("<|python_tag|>"))
    assert (payload["name"], payload["parameters"]) == (EUR_JPY.name, EUR_JPY.arguments)
    assert "<|python_tag|>" not in llama31.decode(ids, skip_special_tokens=True)


@pytest.mark.parametrize("family,end", [("llama3", "<|eot_id|>"), ("gemma3", "<end_of_turn>")])
def test_plain_answers_round_trip_on_families_without_tool_calling(tokenizers, family, end):
    tokenizer = tokenizers[family]
    ids = encode(tokenizer, PLAIN_ANSWER + end + RUNAWAY)
    text = decode_reply(tokenizer, ids, stop_token_ids(tokenizer))
    assert text == PLAIN_ANSWER
    assert HermesParser().parse(text) == []


def test_spaces_before_punctuation_are_kept(tokenizers):
    # Llama 3's tokenizer config asks for clean-up, which would rewrite " ,".
    llama3 = tokenizers["llama3"]
    text = 'rate , then {"base" : "EUR"} .'
    assert decode_reply(llama3, encode(llama3, text), []) == text


def test_reply_without_a_stop_token_is_returned_whole(qwen3):
    ids = encode(qwen3, QWEN3_CALL)
    assert decode_reply(qwen3, ids, stop_token_ids(qwen3)) == QWEN3_CALL


def test_reply_that_is_only_a_stop_token_is_empty(qwen3):
    assert decode_reply(qwen3, encode(qwen3, "<|im_end|>"), stop_token_ids(qwen3)) == ""


def test_generate_reply_on_the_standin_keeps_the_call_and_drops_the_end_token(standin):
    from standin import scripts

    model, tokenizer = standin("exchange_rate")
    (_conversation, scripted), _answer = scripts()["exchange_rate"]
    prompt = safe_render(tokenizer, QUESTION, tools=[tool_schema(get_exchange_rate)])
    reply = generate_reply(model, tokenizer, prompt)
    assert reply == scripted.removesuffix("<|im_end|>")
    assert reply.endswith(QWEN3_CALL)
    # The saved generation_config asks for sampling; generate_reply is greedy.
    assert model.generation_config.do_sample is True
    assert generate_reply(model, tokenizer, prompt) == reply


def test_generate_reply_stops_at_max_new_tokens(standin):
    model, tokenizer = standin("exchange_rate")
    prompt = safe_render(tokenizer, QUESTION, tools=[tool_schema(get_exchange_rate)])
    full = generate_reply(model, tokenizer, prompt)
    short = generate_reply(model, tokenizer, prompt, max_new_tokens=5)
    assert len(encode(tokenizer, short)) == 5
    assert full.startswith(short)
