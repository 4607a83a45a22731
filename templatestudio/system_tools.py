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
template does render. A hand-written schema must be plain JSON data
(dicts with str keys, lists or tuples, str, int, float, bool, None) no
deeper than ``MAX_DEPTH`` levels; anything else is refused, not converted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence

from templatestudio.tools import tool_schema

__all__ = ["DEFAULT_INSTRUCTION", "MAX_DEPTH", "REPLY_FORMAT", "tools_in_system_prompt"]

# The registered format that reads the reply DEFAULT_INSTRUCTION asks for.
REPLY_FORMAT = "llama3-json"
DEFAULT_INSTRUCTION = (
    "You can call the tools listed below, one JSON schema per line. To call one, reply with a single "
    'JSON object and nothing else: {"name": TOOL_NAME, "parameters": {ARGUMENT: VALUE, ...}}. '
    "When no tool is needed, answer in plain text."
)
# Far deeper than any real schema, and far enough below the interpreter's
# recursion limit that json.dumps never meets it.
MAX_DEPTH = 100


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


def _json_problem(value: object) -> tuple[type[Exception], str] | None:
    """What in value JSON cannot hold, as (error type, where and what), or None.

    Walked with a stack, not recursion, so a deep or circular schema is
    reported instead of overflowing. json.dumps would turn a non-str key
    into a string and write NaN bare; both are refused here instead. A path
    joins keys with dots, so a key holding a dot reads ambiguously.
    """
    stack: list[tuple[object, str, tuple[int, ...]]] = [(value, "", ())]
    while stack:
        item, path, enclosing = stack.pop()
        at = f"the value at {path or 'the top level'}"
        if isinstance(item, float) and not math.isfinite(item):
            return ValueError, f"{at} is {item!r}, which JSON has no form for"
        # Past sys.get_int_max_str_digits() (640 digits at the least, over
        # 2,000 bits) json.dumps raises a bare ValueError; smaller ints are safe.
        if isinstance(item, int) and item.bit_length() > 2_000:
            try:
                int.__repr__(item)
            except ValueError:
                return ValueError, f"{at} is an int too long for Python to write as digits"
        if item is None or isinstance(item, (str, int, float)):
            continue
        if not isinstance(item, (dict, list, tuple)):
            return TypeError, f"{at} is a {type(item).__name__}, which JSON has no form for"
        if id(item) in enclosing:
            return ValueError, f"{at} is a {type(item).__name__} that encloses it (a circular reference)"
        if len(enclosing) == MAX_DEPTH:
            return ValueError, f"{at} nests deeper than MAX_DEPTH ({MAX_DEPTH}) levels"
        if isinstance(item, dict):
            odd = [key for key in item if not isinstance(key, str)]
            if odd:
                return TypeError, f"{at} has the key {odd[0]!r} ({type(odd[0]).__name__}); JSON keys are str"
            children = [(child, f"{path}.{key}" if path else key) for key, child in item.items()]
        else:
            children = [(child, f"{path}[{index}]") for index, child in enumerate(item)]
        inner = (*enclosing, id(item))
        # reversed onto the stack, so the first problem in reading order is the one reported
        stack.extend((child, where, inner) for child, where in reversed(children))
    return None


def _json_line(function: dict, position: int) -> str:
    """One tool's function object as a line of JSON, or a precise error naming the tool."""
    problem = _json_problem(function)
    if problem is not None:
        error, what = problem
        raise error(f"tools[{position}] ({function['name']}) cannot be written as JSON: {what}")
    return json.dumps(function, ensure_ascii=False, allow_nan=False)


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
    first message is a system message whose content is not a str, the
    instruction is not a str, or a schema holds a value or key JSON has no
    form for (a set, an object, a non-str key); ValueError when tools is
    empty, a tool has no function name, two tools share a name, the
    instruction is blank, or a schema holds NaN or Infinity, contains itself
    or nests deeper than ``MAX_DEPTH``. Errors in a schema name the tool and
    the path to the value (``tools[0] (f) ... parameters.enum``).
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
    if not isinstance(instruction, str):
        raise TypeError(f"instruction must be a str, got {type(instruction).__name__}")
    if not instruction.strip():
        raise ValueError("instruction is blank: the model would get the schemas without being told what to do")
    functions = [_schema_of(tool, position) for position, tool in enumerate(tools)]
    names = [function["name"] for function in functions]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"two tools share a name: {', '.join(repeated)}; the model could not tell them apart")
    lines = [_json_line(function, position) for position, function in enumerate(functions)]
    block = "\n".join([instruction.strip(), *lines])
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
