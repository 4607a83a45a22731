"""Where the probe's call turn stands in a template's renders: the text the template writes for the call.

``templatestudio.probe`` renders the probe conversation twice, ending at the
generation prompt and with the assistant's call turn; this module cuts the
call turn out of the two: where it starts after the prompt
(``call_turn_start``), the turn of a template that writes a fixed tail after
every conversation (``turn_before_conversation_tail``), and where it ends,
at the template's own end-of-turn text (``turn_end``, ``cut_turn``).

Not handled: a template whose call turn ends otherwise than a plain reply
(the turn is cut at the plain reply's end-of-turn text where that text
appears, else only its trailing whitespace is taken off).
"""

from __future__ import annotations

from templatestudio.probe_call import PROBE_NAME, PROBE_QUESTION, template_variables
from templatestudio.templates import ChatTemplate

# A reply no template writes by itself, to find where a plain turn ends.
_REPLY_MARK = "PROBE-REPLY-7F3A"


def call_turn_start(prompt: str, with_call: str) -> int:
    """Where the assistant's call turn starts in with_call.

    Normally the generation prompt is a prefix of the render with the call.
    Templates whose prompt pre-writes an empty reasoning block that history
    turns do not have (Gemma 4's empty thought channel, Nemotron's open
    ``<think>``) share only part of it; the cut then moves back to just
    after the last ``>`` or newline they share, so it never splits a marker.
    Two cases cut after the whole prompt instead: the rest of the prompt is
    in the turn but for whitespace (vLLM's DeepSeek V3.1 template indents
    the two renders differently), or the turn starts with the prompt's last
    tags (DeepSeek V3.2's prompt ends ``<think></think>``, its history
    turns ``</think>``).
    """
    if with_call.startswith(prompt):
        return len(prompt)
    limit = min(len(prompt), len(with_call))
    index = 0
    while index < limit and prompt[index] == with_call[index]:
        index += 1
    cut = max(with_call.rfind(">", 0, index), with_call.rfind("\n", 0, index)) + 1
    if len(prompt) - cut <= _LONGEST_TAIL:  # bounded: a hostile prompt cannot make this quadratic
        for start in [cut, *(at for at in range(cut + 1, len(prompt)) if prompt[at] == "<")]:
            end = _match_ignoring_space(prompt, start, with_call, cut)
            if end is not None:
                return end
    return cut


_LONGEST_TAIL = 400
_SPACE = " \t\n\r"


def _match_ignoring_space(prompt: str, start: int, text: str, at: int) -> int | None:
    """Where prompt[start:] ends in text from at on, whitespace on either side ignored; None if it is not there."""
    while True:
        while start < len(prompt) and prompt[start] in _SPACE:
            start += 1
        if start == len(prompt):
            return at
        while at < len(text) and text[at] in _SPACE:
            at += 1
        if at == len(text) or text[at] != prompt[start]:
            return None
        start, at = start + 1, at + 1


def turn_before_conversation_tail(
    template: ChatTemplate, prompt: str, with_call: str, tools: list | None, question: dict = PROBE_QUESTION
) -> str | None:
    """The call turn of a template that writes a fixed tail after every conversation; None for any other.

    prompt and with_call are the renders of [question] with the generation
    prompt and of [question, call turn].

    Command R+ ends every render with the same instruction turn and writes
    its generation prompt after it, so the call turn sits between the
    question and that tail. When the render without the generation prompt
    is the question, then the tail, and with_call is the question, a turn
    that opens with the generation prompt's header, then the same tail, the
    call turn is that turn less its header.
    """
    if with_call.startswith(prompt):
        return None
    try:
        plain = template.render([question], tools=tools, **template_variables(tools))
    except Exception:  # noqa: BLE001 - a template may raise anything; the caller's renders succeeded
        return None
    header = prompt[len(plain) :] if prompt.startswith(plain) else ""
    size = 0  # the longest end plain and with_call share
    while size < min(len(plain), len(with_call)) and plain[-1 - size] == with_call[-1 - size]:
        size += 1
    split = len(plain) - size
    turn = with_call[split : len(with_call) - size]
    if not header or not plain[split:].strip() or not with_call.startswith(plain[:split]) or not turn.startswith(header):
        return None
    return turn[len(header) :]


def turn_end(template: ChatTemplate, tools: list | None) -> str | None:
    """What the template writes after a plain assistant reply: its end-of-turn text."""
    reply = {"role": "assistant", "content": _REPLY_MARK}
    try:
        rendered = template.render([PROBE_QUESTION, reply], tools=tools, **template_variables(tools))
    except MemoryError:
        raise  # not the template refusing a shape: see probe.probe_template
    except Exception:  # noqa: BLE001 - any template failure means "unknown", not a crash
        return None
    at = rendered.rfind(_REPLY_MARK)
    if at == -1:
        return None
    return rendered[at + len(_REPLY_MARK) :].strip() or None


def cut_turn(text: str, end: str | None, name: str = PROBE_NAME) -> str:
    """text up to the end-of-turn text end (``turn_end``; None: no cut), trailing whitespace off.

    name: the first call's name (the probe's by default).
    """
    if end:
        at = text.find(end)
        # A template that writes the call as a turn of its own ends the
        # assistant's (empty) message first (GigaChat 3): the cut is then at
        # the end of the turn that holds the call.
        named = text.find(name)
        if at != -1 and named > at:
            at = text.find(end, named)
        if at != -1:
            text = text[:at]
    return text.rstrip()


__all__ = ["call_turn_start", "cut_turn", "turn_before_conversation_tail", "turn_end"]
