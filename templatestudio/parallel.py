"""Several tool calls in one assistant turn, and a probe for templates that allow it.

A model may ask for several tools at once; the loop then runs every call and
sends one result per call back, in call order. Ids are what let a template
that prints them (Mistral's, Gemma 4's name lookup) tie a result to its
call, and Mistral's templates refuse any id that is not exactly nine
alphanumeric characters, so generated ids have that shape: ``call00001``.

Not handled: choosing which calls may run concurrently (that is the
caller's policy) and templates that need ids in another shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from jinja2 import TemplateError
from transformers import PreTrainedTokenizerBase

from templatestudio.render import render
from templatestudio.tools import normalize_arguments, tool_result_message

ID_PREFIX = "call"
ID_DIGITS = 5  # "call" + 5 digits = the nine characters Mistral's templates check


def _call_parts(call: object, position: int) -> tuple[str, object, object]:
    """Name, arguments and id (or None) of one call given as a mapping or a parsed call."""
    if isinstance(call, Mapping):
        missing = [key for key in ("name", "arguments") if key not in call]
        if missing:
            raise ValueError(f"call {position} is missing {' and '.join(missing)}")
        return call["name"], call["arguments"], call.get("id")
    if hasattr(call, "name") and hasattr(call, "arguments"):
        return call.name, call.arguments, getattr(call, "id", None)
    raise TypeError(
        f"call {position} must be a mapping with name and arguments or a parsed call, "
        f"got {type(call).__name__}"
    )


def _id_numbers(first_id: int, taken: set[str]) -> Iterable[str]:
    number = first_id
    while True:
        candidate = f"{ID_PREFIX}{number:0{ID_DIGITS}d}"
        if len(candidate) != len(ID_PREFIX) + ID_DIGITS:
            raise ValueError(f"generated call ids ran past {ID_PREFIX}{'9' * ID_DIGITS}")
        if candidate not in taken:
            yield candidate
        number += 1


def parallel_tool_call_message(calls: Iterable[object], *, first_id: int = 1) -> dict:
    """One assistant turn that makes every call in calls, in the order given.

    Each call is a mapping ``{"name", "arguments", "id"?}`` or a parsed call
    (``ParsedToolCall``; an ``id`` attribute is used when present). Arguments
    are normalised to a dict. A call without an id gets ``call00001``,
    ``call00002``, ... counting from first_id and skipping ids already used
    in this turn; pass first_id to keep ids unique across a conversation.
    Given ids are kept as they are, so only generated ids are guaranteed to
    suit Mistral's nine-character rule.
    """
    if isinstance(first_id, bool) or not isinstance(first_id, int):
        raise TypeError(f"first_id must be an int, got {type(first_id).__name__}")
    if first_id < 0:
        raise ValueError(f"first_id must not be negative, got {first_id}")
    parts = [_call_parts(call, position) for position, call in enumerate(calls)]
    if not parts:
        raise ValueError("a parallel call turn needs at least one call")
    given: set[str] = set()
    for position, (_name, _arguments, call_id) in enumerate(parts):
        if call_id is None:
            continue
        if not isinstance(call_id, str) or not call_id:
            raise ValueError(f"call {position}: id must be a non-empty str, got {call_id!r}")
        if call_id in given:
            raise ValueError(f"call {position}: id {call_id!r} is used twice in one turn")
        given.add(call_id)
    fresh = _id_numbers(first_id, given)
    tool_calls = []
    for name, arguments, call_id in parts:
        function = {"name": name, "arguments": normalize_arguments(arguments)}
        tool_calls.append(
            {"id": call_id if call_id is not None else next(fresh), "type": "function",
             "function": function}
        )
    return {"role": "assistant", "tool_calls": tool_calls}


def result_for_call(call: Mapping, content: str) -> dict:
    """The tool message answering call: its name, and its id as tool_call_id when it has one."""
    message = tool_result_message(call["function"]["name"], content)
    if call.get("id") is not None:
        message["tool_call_id"] = call["id"]
    return message


@dataclass(frozen=True)
class ParallelSupport:
    """What a template did with a turn of two calls.

    supported is True when both calls reached the render, in call order.
    calls_rendered counts the calls that did (0 when the template drops
    calls); refusal holds the template's own error text when it raised.
    """

    model: str
    supported: bool
    calls_rendered: int
    refusal: str | None = None

    def __str__(self) -> str:
        if self.refusal is not None:
            return f"{self.model}: refused: {self.refusal}"
        if self.supported:
            return f"{self.model}: both calls rendered"
        if self.calls_rendered == 0:
            return f"{self.model}: both calls dropped"
        if self.calls_rendered == 1:
            return f"{self.model}: only 1 of 2 calls rendered"
        return f"{self.model}: both calls rendered, in the wrong order"


# Without tools=, a name in the render can only come from the call itself;
# two distinct names also show the order the template wrote them in.
PROBE_CALLS = (
    {"name": "probe_first_tool", "arguments": {"city": "Oslo"}},
    {"name": "probe_second_tool", "arguments": {"city": "Lima"}},
)


def supports_parallel_calls(tokenizer: PreTrainedTokenizerBase) -> ParallelSupport:
    """Render one turn with two calls and report whether both survive.

    A template that raises a ``jinja2.TemplateError`` on the turn (Llama
    3.1's ``raise_exception``) is reported with its message as the refusal;
    any other exception propagates, because it is a bug, not a refusal.
    """
    conversation = [
        {"role": "user", "content": "Use both tools."},
        parallel_tool_call_message(PROBE_CALLS),
    ]
    model = tokenizer.name_or_path
    try:
        text = render(tokenizer, conversation, add_generation_prompt=False)
    except TemplateError as error:
        return ParallelSupport(model, False, 0, str(error))
    positions = [text.find(call["name"]) for call in PROBE_CALLS]
    rendered = sum(position >= 0 for position in positions)
    in_order = rendered == len(PROBE_CALLS) and positions == sorted(positions)
    return ParallelSupport(model, in_order, rendered)
