"""Tools written into the system message, for chat templates that have no tools branch.

Some templates never look at ``tools=``: Llama 3 8B Instruct's and Gemma 3's
render the same prompt with and without it (``renders_tools`` is False), so
a model served through them never hears of a tool. Such a model can still
be told about tools the way any instruction reaches it: in the system
message. ``tools_in_system_prompt`` returns a copy of a conversation whose
system message ends with an instruction and one JSON line per tool; the
template then renders that text like any other system text.

The default instruction asks for a reply that is one JSON object
``{"name": ..., "parameters": {...}}``, which the ``llama3-json`` format
(``REPLY_FORMAT``) reads: ``read_tool_calls(reply, REPLY_FORMAT)``. Pass your
own ``instruction`` for another reply shape, and read replies in the format
that matches it.

Not handled: what the model makes of the block. A model trained without
tools follows such an instruction as well as it follows any other, and
nothing here constrains its reply. Templates that fold the system message
into the first user turn (Gemma 3's) get the block there. Sending a call
and its result back is the caller's affair: a template without a tools
branch usually drops ``tool_calls`` too (``call_survives`` is False), so
the call goes back as the assistant's text and the result as a message the
template does render.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from templatestudio.tools import tool_schema

__all__ = ["DEFAULT_INSTRUCTION", "REPLY_FORMAT", "tools_in_system_prompt"]

# The registered format that reads the reply DEFAULT_INSTRUCTION asks for.
REPLY_FORMAT = "llama3-json"
DEFAULT_INSTRUCTION = (
    "You can call the tools listed below, one JSON schema per line. To call one, reply with a single "
    'JSON object and nothing else: {"name": TOOL_NAME, "parameters": {ARGUMENT: VALUE, ...}}. '
    "When no tool is needed, answer in plain text."
)


def _schema_of(tool: object, position: int) -> dict:
    """The function part of one tool (a JSON tool schema or a plain function), checked."""
    if callable(tool) and not isinstance(tool, dict):
        tool = tool_schema(tool)  # raises transformers' own error for a function it cannot describe
    if not isinstance(tool, dict):
        raise TypeError(
            f"tools[{position}] must be a JSON tool schema (a dict) or a function, got {type(tool).__name__}"
        )
    function = tool.get("function", tool) if tool.get("type", "function") == "function" else None
    if function is None:
        raise ValueError(f"tools[{position}] has type {tool.get('type')!r}; only function tools can be listed")
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"tools[{position}] has no function name (expected {{'function': {{'name': ...}}}})")
    return function


def tools_in_system_prompt(
    messages: Sequence[dict],
    tools: Sequence[dict | Callable[..., object]],
    *,
    instruction: str = DEFAULT_INSTRUCTION,
) -> list[dict]:
    """A copy of messages whose system message lists tools, for a template that drops ``tools=``.

    tools are JSON tool schemas (what ``tool_schema`` returns) or plain
    functions. The block is the instruction, then each tool's function
    object as one line of JSON, in the order given. A system message at
    position 0 keeps its text, with the block after a blank line; without
    one, a system message holding only the block is put first. messages is
    not modified.

    Raises TypeError when messages or tools is not a list (or tuple), a
    message is not a dict, a tool is neither a dict nor a function, or the
    first message is a system message whose content is not a str; ValueError
    when tools is empty, a tool has no function name, two tools share a
    name, or the instruction is blank.
    """
    if not isinstance(messages, (list, tuple)):
        raise TypeError(f"messages must be a list of message dicts, got {type(messages).__name__}")
    for position, message in enumerate(messages):
        if not isinstance(message, dict):
            raise TypeError(f"messages[{position}] must be a dict, got {type(message).__name__}")
    if not isinstance(tools, (list, tuple)):
        raise TypeError(f"tools must be a list of tool schemas or functions, got {type(tools).__name__}")
    if not tools:
        raise ValueError("tools is empty: there is nothing to list in the system prompt")
    if not isinstance(instruction, str) or not instruction.strip():
        raise ValueError("instruction is blank: the model would get the schemas without being told what to do")
    functions = [_schema_of(tool, position) for position, tool in enumerate(tools)]
    names = [function["name"] for function in functions]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"two tools share a name: {', '.join(repeated)}; the model could not tell them apart")
    block = "\n".join([instruction.strip(), *(json.dumps(function, ensure_ascii=False) for function in functions)])
    copied = [dict(message) for message in messages]
    if copied and copied[0].get("role") == "system":
        content = copied[0].get("content")
        if not isinstance(content, str):
            raise TypeError(
                f"the system message's content must be a str to add tools to it, got {type(content).__name__}"
            )
        copied[0]["content"] = f"{content.rstrip()}\n\n{block}" if content.strip() else block
        return copied
    return [{"role": "system", "content": block}, *copied]
