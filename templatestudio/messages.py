"""The input contract: what a conversation must look like before it is rendered.

Chat templates are forgiving in the worst way: a misspelled role or a tool
call without a name renders without an error and the model reads nonsense.
``validate_conversation`` lists every problem it can see, with the index of
the message it is in, so a caller can fix them all in one pass.

Not handled here: multimodal content parts (``content`` as a list of parts)
are rejected, because none of the templates this course renders accept them
in a tool conversation; and whether each tool result answers a call is the
pairing check's job (``templatestudio.pairing``), not this module's.
"""

from __future__ import annotations

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
        arguments = function.get("arguments")
        if not isinstance(arguments, (dict, str)):
            kind = type(arguments).__name__
            problems.append(f"{at}: function.arguments must be a dict or a JSON str, got {kind}")
    return problems


def _validate_message(index: int, message: object) -> list[str]:
    where = f"message {index}"
    if not isinstance(message, dict):
        return [f"{where}: must be a dict, got {type(message).__name__}"]
    role = message.get("role")
    if role not in ROLES:
        return [f"{where}: role must be one of {', '.join(ROLES)}, got {role!r}"]
    problems: list[str] = []
    has_content = "content" in message and message["content"] is not None
    if has_content and not isinstance(message["content"], str):
        kind = type(message["content"]).__name__
        problems.append(f"{where}: content must be a str, got {kind}")
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
