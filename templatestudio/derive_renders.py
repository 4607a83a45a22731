"""The renders a wire shape is derived from: one template's call turn for calls that differ in one thing.

Each render is the call turn as ``probe.render_call_turn`` cuts it, with
the call message in the form the probe found the template accepts
(``TemplateProbe.shape``) and the tools it accepts (with or without).
``derive_text`` compares them; ``derive_trust`` reads the round-trip set
back. The calls are fixed here, so every derivation sees the same pairs:

- ``one``: one call, one string argument; ``other_name``: the same with
  another name (the name is a slot when only it changes);
- ``two_arguments``: a second argument, an integer (what stands between
  two arguments); ``typed``: a boolean (how a value that is not a string
  is spelled, where values are text);
- ``two_calls``: two calls in one turn (what stands between calls, and
  whether a section wraps them); None for a template that raises on more
  than one call a turn (Llama 3.1's) or writes only the first (GigaChat's),
  whose round-trip set then holds single calls only;
- ``reasoning``: a plain reply with a reasoning text, rendered whole
  (where the template writes reasoning at all);
- ``round_trip``: the calls the derived shape must read back exactly:
  every JSON type, nested, empty arguments, quotes, a newline, non-ASCII
  text, several calls.

Not handled: templates that render a call only after its result, and
reasoning written under any key but ``reasoning_content``, ``thinking`` or
``reasoning``.
"""

from __future__ import annotations

from dataclasses import dataclass

from templatestudio.calls import NoToolCallFormat, ParsedToolCall
from templatestudio.probe import probe_template, render_call_turn
from templatestudio.probe_call import PROBE_ARGUMENTS, PROBE_NAME, PROBE_QUESTION, PROBE_TOOL, template_variables
from templatestudio.probe_turn import turn_end
from templatestudio.templates import ChatTemplate

__all__ = ["NAME", "ONE", "OTHER_NAME", "REASONING_MARK", "ANSWER_MARK", "Renders", "renders_of"]

NAME, OTHER_NAME = PROBE_NAME, "studio_probe_other"
ONE = {"note": "two words"}
TWO = {"note": "two words", "count": 42}
TYPED = {"note": "two words", "enabled": True}
REASONING_MARK, ANSWER_MARK = "STUDIO-REASONING-41C", "STUDIO-ANSWER-41C"
_OTHER_TOOL = {"type": "function", "function": {**PROBE_TOOL["function"], "name": OTHER_NAME}}

ROUND_TRIP: tuple[tuple[ParsedToolCall, ...], ...] = (
    (ParsedToolCall(NAME, PROBE_ARGUMENTS),),
    (ParsedToolCall(NAME, {}),),
    (ParsedToolCall(NAME, {"note": 'a "quoted" word\nand a second line', "tags": ["héllo ☃", "日本語"]}),),
    (ParsedToolCall(NAME, {"count": -7, "ratio": 1e-05, "nested": {"deep": {"list": [1, [2, {}]]}}}),),
    (ParsedToolCall(NAME, ONE), ParsedToolCall(OTHER_NAME, TWO)),
    (ParsedToolCall(OTHER_NAME, TWO), ParsedToolCall(NAME, {}), ParsedToolCall(NAME, ONE)),
)


@dataclass(frozen=True)
class Renders:
    """One template's call turns for the fixed calls above (see the module docstring), and its turn end."""

    template: str
    prompt: str  # the generation prompt the call turns follow
    one: str
    other_name: str
    two_arguments: str
    typed: str
    two_calls: str | None  # None: the template raises on two calls in one turn, or writes only the first
    reasoning: str | None  # the whole render of a reply with reasoning; None when the reasoning is not written
    ids: tuple[str, ...]  # the ids the calls of a turn are given, in order; () when the template takes none
    turn_end: str | None
    round_trip: tuple[tuple[tuple[ParsedToolCall, ...], str], ...]


def renders_of(template: ChatTemplate) -> Renders:
    """Every render derivation needs; NoToolCallFormat when the template writes no call or raises on one."""
    probe = probe_template(template)
    if probe.error is not None or not probe.call_survives:
        raise NoToolCallFormat(f"nothing to derive from: {probe.reason}")
    tools = [PROBE_TOOL, _OTHER_TOOL] if probe.with_tools else None

    def rendered(calls: list[tuple[str, dict]], what: str) -> tuple[str, str]:
        """(prompt, wire) of the call turn making calls; what names them in the refusal."""
        try:
            prompt, _, wire = render_call_turn(template, probe.shape.message_for(calls), tools)
        except MemoryError:
            raise
        except Exception as error:  # noqa: BLE001 - a template may raise anything
            raise NoToolCallFormat(f"the template raised on {what}: {type(error).__name__}: {error}") from None
        return prompt, wire

    def turn(calls: list[tuple[str, dict]], what: str) -> str:
        return rendered(calls, what)[1]

    try:
        two_calls: str | None = turn([(NAME, ONE), (OTHER_NAME, ONE)], "two calls")
    except NoToolCallFormat:
        two_calls = None  # Llama 3.1 raises on more than one call a turn: one call it is
    if two_calls is not None and OTHER_NAME not in two_calls:
        two_calls = None  # GigaChat's templates write the first call of a turn only
    round_trip = tuple(
        (calls, turn([(call.name, call.arguments) for call in calls], f"the round-trip calls {index}"))
        for index, calls in enumerate(ROUND_TRIP)
        if len(calls) == 1 or two_calls is not None
    )
    prompt, one = rendered([(NAME, ONE)], "one call")
    return Renders(
        template=template.name,
        prompt=prompt,
        one=one,
        other_name=turn([(OTHER_NAME, ONE)], "a call of another name"),
        two_arguments=turn([(NAME, TWO)], "two arguments"),
        typed=turn([(NAME, TYPED)], "a boolean argument"),
        two_calls=two_calls,
        reasoning=_reasoning_render(template, tools),
        ids=tuple(probe.shape.call_id(number) for number in (1, 2, 3)) if probe.shape.id_length else (),
        turn_end=turn_end(template, tools),
        round_trip=round_trip,
    )


def _reasoning_render(template: ChatTemplate, tools: list | None) -> str | None:
    """The render of a reply that carries reasoning, under the first key the template writes; None if none."""
    for key in ("reasoning_content", "thinking", "reasoning"):
        reply = {"role": "assistant", "content": ANSWER_MARK, key: REASONING_MARK}
        try:
            text = template.render([PROBE_QUESTION, reply], tools=tools, **template_variables(tools))
        except MemoryError:
            raise
        except Exception:  # noqa: BLE001 - a template that refuses the key writes no reasoning under it
            continue
        if REASONING_MARK in text and ANSWER_MARK in text:
            return text
    return None
