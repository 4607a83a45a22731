"""Does every tool result answer a call? Pairing checks and safe truncation.

Templates render an orphaned or duplicated tool result without complaint,
and a template such as Qwen3's prints no call id at all, so the position of
a result is the only thing that tells the model which call it answers.
``validate_tool_pairing`` walks a conversation the way a model reads it and
reports every result that answers nothing, every call left unanswered, and
every result that arrives twice or out of order.

The pairing rules, in one place:

- An assistant message with ``tool_calls`` opens one *call block*; the tool
  messages straight after it answer its calls. Any other message (user,
  assistant or system) closes the block, and calls still open then are
  unanswered.
- A result that carries ``tool_call_id`` is matched by id; when it also
  carries a name, the name must be the matched call's name. Calls with ids
  may be answered in any order, unless ``strict_order=True``.
- A result without ``tool_call_id`` is matched by name, and must answer the
  *first* open call: without ids, results must come in call order. A result
  with neither id nor name answers the first open call.

Not handled: two calls with the same name and no ids cannot be told apart,
so order between them is unchecked (the model cannot tell them apart
either). A conversation may end on a call whose results have not arrived
yet, which is where an agent loop runs its tools: that is reported only
with ``allow_pending=False``.

Structure (roles, types) is ``messages.validate_conversation``'s job and
must pass before pairing is checked. ``assert_paired`` runs both and
raises one ``InvalidConversation``; it is this module's, not a flag of
``messages.assert_valid``, so that ``messages`` never imports ``pairing``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from templatestudio.messages import Conversation, InvalidConversation, validate_conversation

ProblemKind = Literal[
    "orphan_result", "unanswered_call", "unmatched_result", "duplicate_result", "out_of_order"
]


@dataclass(frozen=True)
class PairingProblem:
    """One pairing problem: the message index it is at, its kind, a readable message."""

    index: int
    kind: ProblemKind
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass
class _OpenCall:
    position: int
    name: str
    id: str | None
    answered: bool = False


@dataclass
class _CallBlock:
    index: int
    calls: list[_OpenCall] = field(default_factory=list)

    def open_calls(self) -> list[_OpenCall]:
        return [call for call in self.calls if not call.answered]

    def describe(self, call: _OpenCall) -> str:
        return f"tool call {call.position} ({call.name!r}) of message {self.index}"


def _open_block(index: int, message: dict) -> _CallBlock:
    calls = [
        _OpenCall(position, call["function"]["name"], call.get("id"))
        for position, call in enumerate(message["tool_calls"])
    ]
    return _CallBlock(index, calls)


def _unanswered(block: _CallBlock, closed_by: str) -> list[PairingProblem]:
    return [
        PairingProblem(
            block.index,
            "unanswered_call",
            f"message {block.index}: tool call {call.position} ({call.name!r}) has no result "
            f"before {closed_by}",
        )
        for call in block.open_calls()
    ]


def _label(result: dict) -> str:
    parts = []
    if result.get("name") is not None:
        parts.append(repr(result["name"]))
    if result.get("tool_call_id") is not None:
        parts.append(f"tool_call_id {result['tool_call_id']!r}")
    return "tool result " + ", ".join(parts) if parts else "tool result"


def _match_result(
    index: int, result: dict, block: _CallBlock | None, strict_order: bool
) -> PairingProblem | None:
    """Mark the call result answers, or say why it answers none."""
    label = _label(result)
    if block is None:
        return PairingProblem(
            index, "orphan_result", f"message {index}: {label} has no open call before it"
        )
    result_id = result.get("tool_call_id")
    name = result.get("name")
    open_calls = block.open_calls()

    def fits(call: _OpenCall) -> bool:
        if result_id is not None:
            return call.id == result_id and (name is None or call.name == name)
        return name is None or call.name == name

    match = next((call for call in open_calls if fits(call)), None)
    if match is None:
        # A result with neither id nor name could be anyone's; only a result
        # that names its call can be called a duplicate.
        identified = result_id is not None or name is not None
        answered = next(
            (call for call in block.calls if identified and call.answered and fits(call)), None
        )
        if answered is not None:
            return PairingProblem(
                index,
                "duplicate_result",
                f"message {index}: {label} is a second result for {block.describe(answered)}",
            )
        if not open_calls:
            return PairingProblem(
                index,
                "orphan_result",
                f"message {index}: {label} has no open call before it "
                f"(every call of message {block.index} is already answered)",
            )
        waiting = ", ".join(
            f"{call.name!r}" + (f" ({call.id})" if call.id is not None else "")
            for call in open_calls
        )
        return PairingProblem(
            index,
            "unmatched_result",
            f"message {index}: {label} matches no open call of message {block.index} "
            f"(open: {waiting})",
        )
    match.answered = True
    first = open_calls[0]
    ordered = result_id is None or strict_order
    if ordered and match is not first:
        why = "strict_order is on" if result_id is not None else "without ids"
        return PairingProblem(
            index,
            "out_of_order",
            f"message {index}: {label} answers {block.describe(match)} before "
            f"tool call {first.position} ({first.name!r}) is answered; "
            f"{why}, results must follow call order",
        )
    return None


def validate_tool_pairing(
    conversation: Conversation, *, strict_order: bool = False, allow_pending: bool = True
) -> list[PairingProblem]:
    """Every pairing problem in conversation, in message order; empty when paired.

    strict_order=True requires call order even when results carry ids, for
    templates that print no ids (Qwen3, Llama 3.1): there the model sees
    only positions. allow_pending=False also reports calls still open when
    the conversation ends; use it before rendering with a generation prompt,
    where the model would otherwise answer without those results. Raises
    InvalidConversation when the structure itself is invalid, since pairing
    cannot be read from malformed messages.
    """
    structural = validate_conversation(conversation)
    if structural:
        raise InvalidConversation(structural)
    problems: list[PairingProblem] = []
    block: _CallBlock | None = None
    for index, message in enumerate(conversation):
        role = message["role"]
        if role == "tool":
            problem = _match_result(index, message, block, strict_order)
            if problem is not None:
                problems.append(problem)
            continue
        if block is not None:
            problems.extend(_unanswered(block, f"message {index} ({role}) starts"))
            block = None
        if role == "assistant" and message.get("tool_calls"):
            block = _open_block(index, message)
    if block is not None and not allow_pending:
        problems.extend(_unanswered(block, "the conversation ends"))
    return sorted(problems, key=lambda problem: problem.index)


def assert_paired(
    conversation: object, *, strict_order: bool = False, allow_pending: bool = True
) -> None:
    """Raise InvalidConversation listing every problem, or return None.

    The structural check (``messages.assert_valid``) runs first; once the
    structure is valid, every pairing problem ``validate_tool_pairing``
    finds (with the same options) is listed by its message.
    """
    structural = validate_conversation(conversation)
    if structural:
        raise InvalidConversation(structural)
    problems = validate_tool_pairing(
        conversation, strict_order=strict_order, allow_pending=allow_pending
    )
    if problems:
        raise InvalidConversation([problem.message for problem in problems])


def _safe_starts(conversation: Conversation, first: int) -> list[int]:
    # A user message closes every call block, so history that starts at one
    # can hold no result whose call was cut away; it also satisfies the
    # templates that insist the history opens with a user turn.
    return [
        index
        for index in range(first, len(conversation))
        if conversation[index]["role"] == "user"
    ]


def truncate_history(conversation: Conversation, max_messages: int) -> Conversation:
    """The longest recent history of at most max_messages messages, cut safely.

    A leading system message is always kept and counts toward the limit. The
    rest is cut just before a user message, never between a call and its
    results, so a history that was paired stays paired. It returns a new
    list and leaves conversation alone; a conversation already short enough
    comes back whole. Raises ValueError when no safe cut fits the limit (one
    user turn with a long tool loop cannot be shortened without splitting it),
    and InvalidConversation, listing every problem as ``validate_conversation``
    does, when the conversation is malformed: a message without a role has no
    place to be cut at. Not handled: summarising what was dropped.
    """
    if isinstance(max_messages, bool) or not isinstance(max_messages, int):
        raise TypeError(f"max_messages must be an int, got {type(max_messages).__name__}")
    if max_messages < 1:
        raise ValueError(f"max_messages must be at least 1, got {max_messages}")
    problems = validate_conversation(conversation)
    if problems:
        raise InvalidConversation(problems)
    if len(conversation) <= max_messages:
        return list(conversation)
    keep_system = conversation[0]["role"] == "system"
    head = conversation[:1] if keep_system else []
    room = max_messages - len(head)
    starts = _safe_starts(conversation, len(head))
    for start in starts:
        if len(conversation) - start <= room:
            return head + conversation[start:]
    if not starts:
        raise ValueError(
            f"cannot truncate to {max_messages} messages: there is no user message "
            "to start the kept history at"
        )
    shortest = len(head) + len(conversation) - starts[-1]
    raise ValueError(
        f"cannot truncate to {max_messages} messages without splitting a turn: "
        f"the shortest safe history has {shortest} (it starts at message {starts[-1]})"
    )
