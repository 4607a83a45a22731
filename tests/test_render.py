"""render.py: every render goes through the model's own template, unchanged."""

from __future__ import annotations

import functools

import pytest
from transformers import PreTrainedTokenizerBase

from families import FAMILIES
from rates import QUESTION, get_exchange_rate
from templatestudio.messages import InvalidConversation
from templatestudio.render import (
    first_divergence,
    load_tokenizer,
    render,
    render_continuation,
    render_ids,
    safe_render,
    visible_whitespace,
)
from templatestudio.tools import tool_schema

TOOLS = [tool_schema(get_exchange_rate)]
STARTED = [*QUESTION, {"role": "assistant", "content": "One euro buys"}]


def test_load_tokenizer_brings_the_chat_template():
    tokenizer = load_tokenizer(FAMILIES["qwen3"])
    assert isinstance(tokenizer, PreTrainedTokenizerBase)
    assert tokenizer.name_or_path == "Qwen/Qwen3-0.6B"
    assert "<|im_start|>" in tokenizer.chat_template


def test_render_is_apply_chat_template_as_text(tokenizers):
    for tokenizer in tokenizers.values():
        expected = tokenizer.apply_chat_template(QUESTION, tokenize=False, add_generation_prompt=True)
        assert render(tokenizer, QUESTION) == expected


def test_render_without_generation_prompt(qwen3):
    assert render(qwen3, QUESTION, add_generation_prompt=False) == (
        "<|im_start|>user\nHow many yen is one euro?<|im_end|>\n"
    )
    assert render(qwen3, QUESTION) == (
        "<|im_start|>user\nHow many yen is one euro?<|im_end|>\n<|im_start|>assistant\n"
    )


def test_tools_none_renders_like_no_tools(tokenizers):
    for tokenizer in tokenizers.values():
        assert render(tokenizer, QUESTION, tools=None) == render(tokenizer, QUESTION)


def test_tools_is_keyword_only(qwen3):
    with pytest.raises(TypeError):
        render(qwen3, QUESTION, True, TOOLS)  # positional on purpose


def test_render_with_tools_puts_the_schema_in_qwen3s_system_turn(qwen3):
    prompt = render(qwen3, QUESTION, tools=TOOLS)
    assert prompt.startswith("<|im_start|>system\n# Tools\n")
    assert '{"type": "function", "function": {"name": "get_exchange_rate"' in prompt
    assert prompt.endswith("<|im_start|>assistant\n")


def test_safe_render_checks_the_contract_before_rendering(qwen3):
    with pytest.raises(InvalidConversation, match="message 0: role must be one of"):
        safe_render(qwen3, [{"role": "human", "content": "hi"}])


def test_safe_render_carries_tools_and_generation_prompt(qwen3):
    assert safe_render(qwen3, QUESTION, tools=TOOLS) == render(qwen3, QUESTION, tools=TOOLS)
    assert safe_render(qwen3, QUESTION, add_generation_prompt=False) == render(
        qwen3, QUESTION, add_generation_prompt=False
    )


def test_functools_partial_as_a_tool_is_refused(qwen3):
    euro_rate = functools.partial(get_exchange_rate, "EUR")
    with pytest.raises(ValueError) as caught:
        render(qwen3, QUESTION, tools=[euro_rate])
    assert str(caught.value) == (
        "Tools should either be a JSON schema, or a callable function with type hints "
        "and a docstring suitable for auto-conversion to a schema."
    )


def test_render_ids_are_the_tokens_of_the_render(tokenizers):
    for tokenizer in tokenizers.values():
        ids = render_ids(tokenizer, QUESTION)
        assert isinstance(ids, list) and all(isinstance(i, int) for i in ids)
        assert tokenizer.decode(ids) == render(tokenizer, QUESTION)


def test_render_ids_without_generation_prompt_is_a_prefix(qwen3):
    with_prompt = render_ids(qwen3, QUESTION)
    without = render_ids(qwen3, QUESTION, add_generation_prompt=False)
    assert with_prompt[: len(without)] == without
    assert len(with_prompt) > len(without)


def test_render_continuation_leaves_the_last_turn_open(tokenizers):
    for family, tokenizer in tokenizers.items():
        text = render_continuation(tokenizer, STARTED)
        assert text.endswith("One euro buys"), family


def test_render_continuation_needs_an_assistant_message_last(qwen3):
    for conversation in ([], QUESTION):
        with pytest.raises(ValueError, match="^render_continuation needs an assistant message last$"):
            render_continuation(qwen3, conversation)


def test_visible_whitespace():
    assert visible_whitespace("a b\tc\nd") == "a·b[TAB]c\\n\nd"
    assert visible_whitespace("") == ""


@pytest.mark.parametrize(
    "a,b,expected",
    [
        ("abc", "abc", None),
        ("abc", "abd", 2),
        ("abc", "ab", 2),
        ("", "x", 0),
        ("", "", None),
        ([1, 2, 3], [1, 2, 3], None),
        ([1, 2, 3], [1, 9, 3], 1),
        ([1, 2], [1, 2, 3], 2),
    ],
)
def test_first_divergence(a, b, expected):
    assert first_divergence(a, b) == expected


def test_first_divergence_finds_qwen3s_generation_prompt(qwen3):
    with_prompt = render(qwen3, QUESTION)
    without = render(qwen3, QUESTION, add_generation_prompt=False)
    assert with_prompt[first_divergence(with_prompt, without) :] == "<|im_start|>assistant\n"
