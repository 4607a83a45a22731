"""Checkers for the exercises of notebook 14 (detect the format) and notebook 17 (stream without a leak).

14.1 ``check_cut_wire(cut_wire)``: cut the call's text out of two renders.
14.2 ``check_which_format(which_format)``: name the one reader that reads the probe call back.
14.3 ``check_format_prediction(template, prediction)``: predict what the probe finds in a template.
17.1 ``check_holdback(holdback)``: release a streamed reply's text, never a piece of ``<tool_call>``.
17.2 ``check_stream_reply(stream_reply)``: drive ``ToolCallStream`` and gather what the user sees and the calls.

Each checker builds its cases when called (the templates come from the
offline Hugging Face cache, the formats from ``templatestudio.formats``), runs
the answer through ``exercises.checking.check`` and returns whether all pass.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations

from exercises.checking import Case, check, check_value

__all__ = [
    "TOY_OPEN",
    "check_cut_wire",
    "check_format_prediction",
    "check_holdback",
    "check_stream_reply",
    "check_which_format",
    "chunkings",
]

MARK = "MARK"  # the plain reply whose render shows where a turn ends


# --- 14.1 cut the wire ---------------------------------------------------------

def _reference_cut(prompt: str, with_call: str, with_marker: str) -> str | None:
    if not with_call.startswith(prompt):
        return None
    added = with_call[len(prompt):]
    turn_end = with_marker[with_marker.rfind(MARK) + len(MARK):].strip()
    if turn_end and turn_end in added:
        added = added[: added.find(turn_end)]
    return added.rstrip()


def _renders(template) -> tuple[str, str, str]:
    from templatestudio.probe import PROBE_ARGUMENTS, PROBE_NAME, PROBE_QUESTION, PROBE_TOOL
    from templatestudio.tools import tool_call_message

    tools = [PROBE_TOOL]
    prompt = template.render([PROBE_QUESTION], tools=tools, add_generation_prompt=True)
    with_call = template.render([PROBE_QUESTION, tool_call_message(PROBE_NAME, PROBE_ARGUMENTS)], tools=tools)
    with_marker = template.render([PROBE_QUESTION, {"role": "assistant", "content": MARK}], tools=tools)
    return prompt, with_call, with_marker


@lru_cache(maxsize=1)
def _cut_cases() -> tuple[Case, ...]:
    from templatestudio.families import family
    from templatestudio.templates import ChatTemplate

    cases = []
    toys = [
        # (label, prompt, render with the call, render with MARK)
        ("a template that writes nothing after a turn", "U: hi\nA:", 'U: hi\nA:<call>{"x": 1}</call>',
         "U: hi\nA:MARK"),
        ("a turn end after blank lines", "<u>hi</u><a>", '<u>hi</u><a>\n[CALL] f {}\n\n</a>\n',
         "<u>hi</u><a>MARK</a>\n"),
        ("a prompt that is not a prefix (the template rewrote the question)", "<u>hi</u><a>",
         '<u>hi (tools: f)</u><a>[CALL] f {}</a>', "<u>hi</u><a>MARK</a>"),
        ("a space before the turn's end", "<u>q</u><a>",
         '<u>q</u><a><tc>{"note": "x"}</tc> </a>', "<u>q</u><a>MARK </a>"),
    ]
    for label, prompt, with_call, with_marker in toys:  # first: a failure prints short texts
        cases.append(Case(label, (prompt, with_call, with_marker), _reference_cut(prompt, with_call, with_marker)))
    for name in ("qwen3", "gemma4", "llama3.1"):
        renders = _renders(ChatTemplate.from_hub(family(name).repo_id))
        cases.append(Case(f"{name}'s template from the cache", renders, _reference_cut(*renders)))
    return tuple(cases)


def check_cut_wire(answer) -> bool:
    """answer(prompt, with_call, with_marker) -> the call's text, or None when prompt is not a prefix."""
    return check("Exercise 14.1 (cut the wire)", answer, _cut_cases())


# --- 14.2 which reader reads it back -----------------------------------------------

def _probe_call():
    from templatestudio.probe import PROBE_ARGUMENTS, PROBE_NAME
    from templatestudio.tools import ParsedToolCall

    return ParsedToolCall(PROBE_NAME, PROBE_ARGUMENTS)


@lru_cache(maxsize=1)
def _which_cases() -> tuple[Case, ...]:
    from templatestudio.formats import FORMATS

    call = _probe_call()
    cases = []
    for name in ("hermes", "llama3-json", "gemma4", "mistral", "pythonic", "harmony", "kimi-k2"):
        cases.append(Case(f"the probe call as {name} writes it", (FORMATS[name].write_call(call),), name))
    cases += [
        Case("two readers read it back (phi4-mini's wire is also Llama 3.1's JSON)",
             (FORMATS["phi4-mini"].write_call(call),), None),
        Case("prose, no call", ("I cannot call tools, sorry.",), None),
        Case("a Hermes call that lost an argument",
             ('<tool_call>\n{"name": "studio_probe_lookup", "arguments": {"note": "two words"}}\n</tool_call>',),
             None),
        Case("an empty reply", ("",), None),
    ]
    return tuple(cases)


def check_which_format(answer) -> bool:
    """answer(wire) -> the name of the one registered format that reads the probe call back exactly, else None."""
    return check("Exercise 14.2 (which reader reads it back)", answer, _which_cases())


# --- 14.3 predict, then probe --------------------------------------------------------

def check_format_prediction(template, prediction) -> bool:
    """template: a Hugging Face repo id, template text or a ChatTemplate; prediction: a format name or None.

    The probe decides (``templatestudio.detect.detect_format``, registered
    formats only). An unfinished answer (``...``) is "not yet".
    """
    from templatestudio.detect import detect_format
    from templatestudio.templates import ChatTemplate

    title = "Exercise 14.3 (predict, then probe)"
    if prediction is ...:
        print(f"{title}: not yet (set PREDICTION to a format name, or None).")
        return False
    if isinstance(template, str) and "{" not in template:
        template = ChatTemplate.from_hub(template)
    found = detect_format(template, deadline=None, derive=False)
    return check_value(title, prediction, found.name if found is not None else None)


# --- 17.1 your own holdback ------------------------------------------------------

TOY_OPEN, TOY_CLOSE = "<tool_call>", "</tool_call>"


def _reference_holdback(chunks: list[str]) -> list[str]:
    """What may be shown after each chunk, and at the end; every <tool_call>…</tool_call> is a call."""
    released_per_step, buffer, in_call = [], "", False
    for chunk in [*chunks, None]:
        final = chunk is None
        buffer += "" if final else chunk
        released = ""
        while True:
            if in_call:
                end = buffer.find(TOY_CLOSE)
                if end < 0:
                    if final:
                        buffer = ""  # the reply ended inside the call: none of it is shown
                    break
                buffer, in_call = buffer[end + len(TOY_CLOSE):], False
                continue
            start = buffer.find(TOY_OPEN)
            if start >= 0:
                released += buffer[:start]
                buffer, in_call = buffer[start + len(TOY_OPEN):], True
                continue
            if final:
                released, buffer = released + buffer, ""
                break
            keep = next((k for k in range(min(len(buffer), len(TOY_OPEN) - 1), 0, -1)
                         if TOY_OPEN.startswith(buffer[-k:])), 0)
            released += buffer[: len(buffer) - keep]
            buffer = buffer[len(buffer) - keep:]
            break
        released_per_step.append(released)
    return released_per_step


HOLDBACK_REPLIES = (
    "Plain prose, no call at all.",
    '<tool_call>{"name": "f"}</tool_call>',
    'Sure. <tool_call>{"a": 1}</tool_call> Done.',
    "Tags look like <tool but this is not one.",
    "x<tool_call>{}</tool_call><tool_call>{}</tool_call>y",
    '<<tool_call>{"b": [1, 2]}</tool_call>',
    "Ends inside a call <tool_call>{\"a\"",
    "Ends on a piece of a marker <tool_ca",
)


def chunkings(text: str) -> list[list[str]]:
    """Every split of text into one, two or three non-empty chunks, and one character per chunk."""
    found = [[text], list(text)]
    cuts = range(1, len(text))
    found += [[text[:a], text[a:]] for a in cuts]
    found += [[text[:a], text[a:b], text[b:]] for a, b in combinations(cuts, 2)]
    return found


@lru_cache(maxsize=1)
def _holdback_cases() -> tuple[Case, ...]:
    cases = []
    for reply in HOLDBACK_REPLIES:
        for chunks in chunkings(reply):
            cases.append(Case(f"{reply!r} in {len(chunks)} chunk(s)", (list(chunks),), _reference_holdback(chunks)))
    return tuple(cases)


def check_holdback(answer) -> bool:
    """answer(chunks) -> what to show after each chunk, then at the end (len(chunks) + 1 strings)."""
    return check("Exercise 17.1 (your own holdback)", answer, _holdback_cases())


# --- 17.2 drive the real stream --------------------------------------------------------

def _stream_replies() -> list[tuple[str, str]]:
    from templatestudio.formats import FORMATS

    def sample(fmt: str, index: int) -> str:
        return FORMATS[fmt].samples[index].text

    return [
        ("hermes", "<think>\nI could write <tool_call> here.\n</think>\n\nChecking.\n\n" + sample("hermes", 0)),
        ("hermes", "Our tools are wrapped in <tool_call> tags; no call this time."),
        ("gemma4", sample("gemma4", 1)),
        ("mistral", sample("mistral", 0)),
        ("hermes", sample("hermes", 2)),
    ]


def _whole(fmt: str, text: str) -> tuple[str, list[str]]:
    from templatestudio.stream import TextDelta, ToolCallEvent, read_events

    events = read_events(text, fmt)
    return ("".join(e.text for e in events if isinstance(e, TextDelta)),
            [e.call.name for e in events if isinstance(e, ToolCallEvent)])


@lru_cache(maxsize=1)
def _stream_cases() -> tuple[Case, ...]:
    from templatestudio.formats import FORMATS

    cases = []
    for fmt, text in _stream_replies():
        expected = _whole(FORMATS[fmt], text)
        splits = [[text], list(text)] + [[text[:a], text[a:]] for a in range(1, len(text))]
        for chunks in splits:
            cases.append(Case(f"a {fmt} reply of {len(text)} characters in {len(chunks)} chunk(s)",
                              (fmt, chunks), expected))
    return tuple(cases)


def check_stream_reply(answer) -> bool:
    """answer(fmt, chunks) -> (the text the user sees, the names of the calls in order)."""
    return check("Exercise 17.2 (drive the real stream)", answer, _stream_cases())
