"""Tool calling through a chat template: the way in, the probes, the way out.

Way in: ``tool_schema`` (from a Python function), ``tool_call_message`` and
``tool_result_message``, with arguments normalised to a dict. Probes:
``renders_tools`` and ``call_survives`` catch templates that silently drop
tools or past calls. Way out: ``parse_tool_calls`` prefers the model's own
response template and otherwise uses the fallback parser you name, raising
``UnparsedToolCall`` rather than letting a call reach a user as text.

Not handled here: parallel calls in one turn, result pairing, formats
other than Hermes and fenced JSON, and calls a crude check cannot see;
later modules add them (``templatestudio.reader`` is the production reader).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Protocol

from transformers import PreTrainedTokenizerBase
from transformers.utils import get_json_schema

from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.messages import Conversation
from templatestudio.render import render


def tool_schema(fn: Callable[..., object]) -> dict:
    """The JSON schema a template renders for fn.

    It comes from fn's type hints and Google-style docstring, so the
    docstring is interface: a missing ``Args:`` line raises, it does not
    quietly produce a weaker schema.
    """
    return get_json_schema(fn)


def renders_tools(
    tokenizer: PreTrainedTokenizerBase, conversation: Conversation, tools: list[dict]
) -> bool:
    """True when passing tools changes the render at all."""
    with_tools = render(tokenizer, conversation, tools=tools)
    return with_tools != render(tokenizer, conversation)


def tool_call_message(name: str, arguments: dict | str) -> dict:
    """An assistant turn calling one tool; tool_calls is a list even for one call."""
    function = {"name": name, "arguments": normalize_arguments(arguments)}
    return {"role": "assistant", "tool_calls": [{"type": "function", "function": function}]}


def tool_result_message(name: str, content: str) -> dict:
    """A tool turn carrying one result back; content must already be a str."""
    if not isinstance(content, str):
        raise TypeError(f"tool result content must be a str, got {type(content).__name__}")
    return {"role": "tool", "name": name, "content": content}


def call_survives(tokenizer: PreTrainedTokenizerBase, name: str) -> bool:
    """True when an assistant tool call reaches the rendered prompt.

    No tools= is passed, so the name can only appear through the call itself.
    """
    conversation = [{"role": "user", "content": "Use the tool."}, tool_call_message(name, {})]
    return name in render(tokenizer, conversation, add_generation_prompt=False)


def normalize_arguments(arguments: object) -> dict:
    """Arguments as a dict, decoding a JSON string when that is what arrived."""
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        decoded = json.loads(arguments)
        if not isinstance(decoded, dict):
            raise ValueError(f"arguments did not decode to a JSON object: {arguments!r}")
        return decoded
    raise ValueError(f"arguments must be a dict or a JSON string, got {type(arguments).__name__}")


class ToolCallParser(Protocol):
    """Reads the tool calls out of one format's raw output text."""

    def parse(self, text: str) -> list[ParsedToolCall]: ...


class HermesParser:
    """JSON calls inside <tool_call> tags, the format Qwen3's template asks for."""

    pattern = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)

    def parse(self, text: str) -> list[ParsedToolCall]:
        calls: list[ParsedToolCall] = []
        for match in self.pattern.finditer(text):
            try:
                payload = json.loads(match.group(1))
            except json.JSONDecodeError:
                continue  # a tagged block that is not JSON is not a call
            if isinstance(payload, dict) and isinstance(payload.get("name"), str):
                arguments = normalize_arguments(payload.get("arguments", {}))
                calls.append(ParsedToolCall(payload["name"], arguments))
        return calls


class FencedJSONParser(HermesParser):
    """JSON calls in a fenced json code block, Qwen2.5-Coder's habit."""

    pattern = re.compile(r"```json\s*(\{.*?\})\s*```", re.DOTALL)


def looks_like_tool_call(text: str) -> bool:
    """Crude leak detector: a quoted "name" key and a quoted "arguments" key."""
    return '"name"' in text and '"arguments"' in text


def parse_tool_calls(
    tokenizer: PreTrainedTokenizerBase,
    text: str,
    *,
    prefix: str,
    fallback: ToolCallParser | None = None,
) -> list[ParsedToolCall]:
    """The calls in text, read by the model's response template when it has one.

    Otherwise the fallback parser you chose for this family reads them, and
    text that still looks like a call raises instead of coming back empty.
    The response template is checked as an attribute, not by catching
    parse_response's AttributeError, so "no template" and "broken output"
    never share a path.
    """
    if tokenizer.response_template is not None:
        message = tokenizer.parse_response(text, prefix=prefix)
        return [
            ParsedToolCall(
                call["function"]["name"], normalize_arguments(call["function"]["arguments"])
            )
            for call in message.get("tool_calls", [])
        ]
    if fallback is None:
        raise ValueError(
            f"{tokenizer.name_or_path} ships no response template; pass a fallback parser"
        )
    calls = fallback.parse(text)
    if not calls and looks_like_tool_call(text):
        raise UnparsedToolCall(
            f"{type(fallback).__name__} found no call in text that looks like one"
        )
    return calls
