"""Templates outside the class derivation claims: literals of any style around the calls, or none at all.

``derive_synthetic`` draws templates that write a shape derivation claims;
these draw templates that write calls between arbitrary pieces (markup,
words, punctuation, digits, nothing) in a section or not, the name closed
by a word or a sign. Whatever the pieces, ``derive`` answers with a shape
or a reason, never an exception, and a shape it gives reads back every tool
name its own writer writes: names drawn here under OpenAI's rule (letters,
digits, ``_`` and ``-``), not the derivation's trial names. (A name closed
by ``args`` cannot hold an ``a`` in a name class that stops at it: such a
shape was derived, wrote ``get_exchange_rateargs{...}`` and read it as text.)
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio import ParsedToolCall, detect_format, read_events, resolve_format
from templatestudio.__main__ import main
from templatestudio.derive import derive, derived_format
from templatestudio.events import TextDelta, ToolCallEvent
from templatestudio.probe import TemplateProbeError
from templatestudio.templates import ChatTemplate

PIECES = st.sampled_from(["", "", "<call>", "</call>", "CALL:", "@@", "|", "[C]", "<｜c｜>", "->", "args", ">", ":",
                          "\n", "-", "_", "9", "; ", "<|fn|>", "fn=", "```json\n", "```"])
# Names under OpenAI's rule, long enough to hold most of its characters (a short draw mostly holds none
# of the few a shape might stop at).
NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
NAMES = st.text(NAME_CHARS, min_size=1, max_size=64).filter(lambda name: name[0] not in "-0123456789")


def _text(piece: str) -> str:
    """A piece written by the template as an expression (Jinja reads none of it as syntax)."""
    return "{{ " + json.dumps(piece) + " }}" if piece else ""


def template_of(pieces: dict[str, str], json_call: bool) -> str:
    """A chat template that writes each call between the drawn pieces."""
    if json_call:
        body = '{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments|tojson }}}'
    else:
        body = _text(pieces["name_open"]) + "{{ tc.function.name }}" + _text(pieces["name_close"]) + \
            "{{ tc.function.arguments|tojson }}"
    return ("{%- for m in messages %}{% if m.role == 'assistant' %}<|assistant|>{% if m.tool_calls %}"
            + _text(pieces["section_open"]) + "{% for tc in m.tool_calls %}{% if not loop.first %}"
            + _text(pieces["separator"]) + "{% endif %}" + _text(pieces["call_open"]) + body
            + _text(pieces["call_close"]) + "{% endfor %}" + _text(pieces["section_close"])
            + "{% else %}{{ m.content }}{% endif %}<|end|>{% else %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endif %}"
            "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}")


PARTS = ("section_open", "section_close", "call_open", "call_close", "name_open", "name_close", "separator")
# Any piece in any part: mostly refused, each with its reason (a section of bare objects raised IndexError).
ANY_PIECES = st.fixed_dictionaries({part: PIECES for part in PARTS})


@st.composite
def _framed(draw) -> dict[str, str]:
    """Pieces that frame a call as real templates do, the name closed by a word, a sign, a digit or markup."""
    section = draw(st.sampled_from([("", ""), ("<calls>", "</calls>"), ("<|calls|>", "<|/calls|>")]))
    return {"section_open": section[0], "section_close": section[1],
            "call_open": draw(st.sampled_from(["<call>", "CALL:", "[C]", "<|fn|>", "@@", "<｜c｜>"])),
            "call_close": draw(st.sampled_from(["", "</call>", "|", "@@", "<|/fn|>"])),
            "name_open": draw(st.sampled_from(["", "fn=", "name:"])),
            "name_close": draw(st.sampled_from(["args", "->", ">", ":", "[ARGS]", "-", "9", "_x", "(", "<|a|>", "\n"])),
            "separator": draw(st.sampled_from(["\n", "", "; "]))}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ANY_PIECES | _framed(), st.booleans(), st.lists(NAMES, min_size=1, max_size=4))
def test_any_template_derives_a_shape_that_reads_its_own_writing_or_says_why(pieces, json_call, names):
    found = derive(ChatTemplate("hostile", template_of(pieces, json_call)))
    assert (found.wire is None) != (found.refused is None)
    if found.wire is None:
        assert found.refused.strip()
        return
    fmt = derived_format(found.wire, "hostile")
    # And each name with the name characters of the template's own literals in it (the class that
    # broke: a name holding the first letter of the word that closes names).
    own = "".join(char for part in PARTS for char in pieces[part] if char in NAME_CHARS)
    for name in names + [name + own for name in names] + [name[:1] + own + name[1:] for name in names]:
        call = ParsedToolCall(name, {"city": "Paris", "days": 3})
        written = fmt.write_call(call)
        events = read_events(written, fmt)
        assert [event.call for event in events if isinstance(event, ToolCallEvent)] == [call], (written, found.wire)
        assert not "".join(event.text for event in events if isinstance(event, TextDelta)).strip(), written


# A template that hangs only on a turn of two calls: the probe renders one call a turn and ends; the
# derivation renders two and is stopped by its own sandbox.
HANGS_ON_TWO_CALLS = template_of(
    {"section_open": "", "section_close": "", "call_open": "<call>", "call_close": "</call>", "name_open": "",
     "name_close": ">", "separator": "\n"}, False).replace(
    "{% for tc in m.tool_calls %}",
    "{% if m.tool_calls|length > 1 %}{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
    "{% endfor %}{% endif %}{% for tc in m.tool_calls %}", 1)


def test_a_derivation_stopped_by_the_sandbox_is_a_stop_not_a_missing_format(tmp_path, capsys):
    path = tmp_path / "hangs.jinja"
    path.write_text(HANGS_ON_TWO_CALLS, encoding="utf-8")
    assert main(["check", "--deadline", "1.5", str(path)]) == 1
    out, err = capsys.readouterr()
    assert "hangs" in out and "none: stopped by the sandbox" in out
    assert err.startswith("hangs: the template did not finish rendering within the 1.5 s deadline"), err
    with pytest.raises(TemplateProbeError, match="TemplateTimeout"):
        detect_format(ChatTemplate("hangs-detect", HANGS_ON_TWO_CALLS), deadline=1.5)
    with pytest.raises(TemplateProbeError, match="TemplateTimeout"):
        resolve_format(ChatTemplate("hangs-resolve", HANGS_ON_TWO_CALLS), deadline=1.5)
