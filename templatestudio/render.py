"""Rendering through the model's own chat template, and tools to compare renders.

Everything goes through ``tokenizer.apply_chat_template``: the template the
model's authors shipped decides the wire format, never code in this package.
"""

from __future__ import annotations

from transformers import PreTrainedTokenizerBase

from templatestudio.messages import Conversation, assert_valid


def load_tokenizer(model_id: str) -> PreTrainedTokenizerBase:
    """Load a tokenizer together with the chat template it ships with."""
    # Imported on use: AutoTokenizer pulls in torch, which `check` never needs.
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_id)


def render(
    tokenizer: PreTrainedTokenizerBase,
    conversation: Conversation,
    *,
    add_generation_prompt: bool = True,
    tools: list[dict] | None = None,
) -> str:
    """Render conversation as the prompt text the model reads.

    tools is a list of JSON tool schemas. A template with no tools branch
    ignores it silently, which is why the probes in ``tools`` exist.
    """
    return tokenizer.apply_chat_template(
        conversation,
        tools=tools,
        tokenize=False,
        add_generation_prompt=add_generation_prompt,
    )


def safe_render(
    tokenizer: PreTrainedTokenizerBase,
    conversation: Conversation,
    *,
    add_generation_prompt: bool = True,
    tools: list[dict] | None = None,
) -> str:
    """Validate conversation against the input contract, then render it."""
    assert_valid(conversation)
    return render(
        tokenizer, conversation, add_generation_prompt=add_generation_prompt, tools=tools
    )


def render_ids(
    tokenizer: PreTrainedTokenizerBase,
    conversation: Conversation,
    *,
    add_generation_prompt: bool = True,
) -> list[int]:
    """Render conversation straight to the token ids the model receives."""
    encoded = tokenizer.apply_chat_template(
        conversation, tokenize=True, add_generation_prompt=add_generation_prompt
    )
    return encoded["input_ids"]


def render_continuation(tokenizer: PreTrainedTokenizerBase, conversation: Conversation) -> str:
    """Render with the last assistant turn left open, for the model to continue."""
    if not conversation or conversation[-1]["role"] != "assistant":
        raise ValueError("render_continuation needs an assistant message last")
    return tokenizer.apply_chat_template(
        conversation,
        tokenize=False,
        add_generation_prompt=False,
        continue_final_message=True,
    )


def visible_whitespace(text: str) -> str:
    """Make tabs, spaces and newlines visible so two renders compare by eye."""
    shown = text.replace("\t", "[TAB]").replace(" ", "·")
    return shown.replace("\n", "\\n\n")


def first_divergence(a: str | list[int], b: str | list[int]) -> int | None:
    """Index of the first difference between a and b, or None when equal.

    Works on strings (characters) and on token-id lists alike; when one is a
    prefix of the other, the divergence is where the shorter one ends.
    """
    for index, (left, right) in enumerate(zip(a, b)):
        if left != right:
            return index
    if len(a) != len(b):
        return min(len(a), len(b))
    return None
