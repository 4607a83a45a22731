"""The input contract: what a conversation must look like before it is rendered.

Chat templates are forgiving in the worst way: a misspelled role or a tool
call without a name renders without an error and the model reads nonsense.
``validate_conversation`` lists every problem it can see, with the index of
the message it is in, so a caller can fix them all in one pass.

Fields a template reads as text are held to ``str`` (``None`` counts as
absent): ``content``, ``name`` and ``tool_call_id``, and the reasoning
keys ``reasoning_content``, ``thinking`` and ``reasoning``, which Gemma 4's
template joins to text and fails on with a bare ``TypeError`` otherwise.
``function.arguments`` is a dict or a str holding one JSON object, since a
template prints such a str into the prompt as it stands.

Not handled here: multimodal content parts (``content`` as a list of parts)
are rejected, because none of the templates this course renders accept them
in a tool conversation; whether a dict's arguments are JSON-serialisable is
left to the render; and whether each tool result answers a call is the
pairing check's job (``templatestudio.pairing``), not this module's.
"""

from __future__ import annotations

import json
from typing import Literal, NotRequired, TypedDict

ROLES = ("system", "user", "assistant", "tool")


class FunctionCall(TypedDict):
    name: str
    arguments: dict | str


class ToolCall(TypedDict):
    type: Literal["function"]
    function: FunctionCall
    id: NotRequired[str]


class Message(TypedDict):
    role: Literal["system", "user", "assistant", "tool"]
    content: NotRequired[str]
    tool_calls: NotRequired[list[ToolCall]]
    name: NotRequired[str]
    tool_call_id: NotRequired[str]


Conversation = list[Message]


class InvalidConversation(ValueError):
    """Raised by ``assert_valid``; ``problems`` holds every problem found."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        listing = "\n".join(f"- {problem}" for problem in self.problems)
        super().__init__(f"{len(self.problems)} problem(s) in the conversation:\n{listing}")


def _validate_tool_calls(index: int, tool_calls: object) -> list[str]:
    where = f"message {index}"
    if not isinstance(tool_calls, list) or not tool_calls:
        return [f"{where}: tool_calls must be a non-empty list"]
    problems: list[str] = []
    for position, call in enumerate(tool_calls):
        at = f"{where}, tool call {position}"
        if not isinstance(call, dict):
            problems.append(f"{at}: must be a dict, got {type(call).__name__}")
            continue
        if call.get("type", "function") != "function":
            problems.append(f"{at}: type must be 'function', got {call.get('type')!r}")
        if "id" in call and not isinstance(call["id"], str):
            problems.append(f"{at}: id must be a str, got {type(call['id']).__name__}")
        function = call.get("function")
        if not isinstance(function, dict):
            problems.append(f"{at}: needs a 'function' dict with name and arguments")
            continue
        name = function.get("name")
        if not isinstance(name, str) or not name:
            problems.append(f"{at}: function.name must be a non-empty str")
        problem = _arguments_problem(function.get("arguments"))
        if problem is not None:
            problems.append(f"{at}: function.arguments {problem}")
    return problems


# What json.loads returns, named as JSON names it: "got a JSON array".
_JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    # A repeated key prints twice in the prompt but reaches a tool once: what
    # the model reads and what runs would differ.
    seen: set[str] = set()
    for key, _value in pairs:
        if key in seen:
            raise ValueError(f"an object that repeats the key {key!r}")
        seen.add(key)
    return dict(pairs)


def _no_constant(name: str) -> object:
    raise ValueError(f"{name}, which is not JSON")  # json.loads would read it; JSON has no NaN


def _arguments_problem(arguments: object) -> str | None:
    """What is wrong with a call's arguments (to follow "function.arguments "), or None.

    Valid: a dict, or a str holding exactly one JSON object.
    """
    if isinstance(arguments, dict):
        return None
    if not isinstance(arguments, str):
        return f"must be a dict or a JSON str, got {type(arguments).__name__}"
    lead = "str must hold a JSON object, got"
    try:
        # Only the shape matters here: parse_int=float, since int() refuses over 4300 digits.
        decoded = json.loads(
            arguments, object_pairs_hook=_unique_keys, parse_constant=_no_constant, parse_int=float
        )
    except json.JSONDecodeError as error:
        return f"{lead} text that is not JSON ({error.msg} at char {error.pos})"
    except ValueError as error:  # raised by the two hooks above
        return f"{lead} {error}"
    except RecursionError:
        return f"{lead} text nested too deeply to decode"
    if isinstance(decoded, dict):
        return None
    return f"{lead} JSON {'null' if decoded is None else _JSON_KINDS[type(decoded)]}"


# Keys a template prints as text; None is read as absent, as the pairing check reads it.
_TEXT_FIELDS = ("content", "name", "tool_call_id", "reasoning_content", "thinking", "reasoning")


def _validate_message(index: int, message: object) -> list[str]:
    where = f"message {index}"
    if not isinstance(message, dict):
        return [f"{where}: must be a dict, got {type(message).__name__}"]
    role = message.get("role")
    if role not in ROLES:
        return [f"{where}: role must be one of {', '.join(ROLES)}, got {role!r}"]
    problems: list[str] = []
    has_content = "content" in message and message["content"] is not None
    for key in _TEXT_FIELDS:
        if message.get(key) is not None and not isinstance(message[key], str):
            problems.append(f"{where}: {key} must be a str, got {type(message[key]).__name__}")
    if role == "assistant" and "tool_calls" in message:
        problems.extend(_validate_tool_calls(index, message["tool_calls"]))
    elif "tool_calls" in message:
        problems.append(f"{where}: only an assistant message may carry tool_calls")
    elif not has_content:
        article = "an" if role == "assistant" else "a"  # "a user", "an assistant"
        problems.append(f"{where}: {article} {role} message needs content")
    return problems


def validate_conversation(conversation: object) -> list[str]:
    """Return every problem in conversation; an empty list means it is valid."""
    if not isinstance(conversation, list):
        return [f"conversation must be a list of messages, got {type(conversation).__name__}"]
    if not conversation:
        return ["conversation is empty"]
    problems: list[str] = []
    for index, message in enumerate(conversation):
        problems.extend(_validate_message(index, message))
    return problems


def assert_valid(conversation: object) -> None:
    """Raise InvalidConversation listing every problem, or return None.

    Structure only. Whether each tool result answers a call is checked by
    ``templatestudio.pairing.assert_paired``, which runs this check first
    and raises the same exception; it lives there because pairing builds on
    this module, which imports nothing from the package.
    """
    problems = validate_conversation(conversation)
    if problems:
        raise InvalidConversation(problems)
