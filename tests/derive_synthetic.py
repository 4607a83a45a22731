"""Synthetic chat templates that write calls in a given wire shape: the class derivation must recover.

``shapes()`` is a hypothesis strategy over the shapes ``templatestudio.derive``
says it derives (a JSON call object after a literal or bare, alone or in a
JSON list; a JSON object after the name, in a section or not; the
keyed-values grammar; XML-style parameters in a named element, in a call
or in a section), with
literals drawn from the styles real templates use (``<tag>``, ``<|tag|>``,
``[TAG]``, full-width bars) and their layout; ``template_of`` writes a Jinja
chat template that renders a conversation with those calls exactly as the
shape's own writer would. A derivation that recovers the class reads and
writes every call of every such template as the shape does.
"""

from __future__ import annotations

import json

from hypothesis import strategies as st

from templatestudio.wire.shape import (
    Call, Invoke, JsonArguments, JsonList, JsonObject, NameBetween, NameKey, OwnValues, Reasoning, Section, WireShape,
    XmlParameters,
)

FRAMING = ("<|user|>", "<|assistant|>", "<|end|>", "<|tools|>")
WORDS = st.text("abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8).filter(
    lambda word: word not in ("user", "assistant", "end", "tools"))


def _tag(style: str, word: str, closing: bool) -> str:
    slash = "/" if closing else ""
    return {"angle": f"<{slash}{word}>", "bars": f"<|{slash}{word}|>", "square": f"[{slash}{word.upper()}]",
            "wide": f"<｜{slash}{word}｜>"}[style]


STYLES = st.sampled_from(["angle", "bars", "square", "wide"])
LAYOUT = st.sampled_from(["", "\n"])


@st.composite
def shapes(draw) -> WireShape:
    """A wire shape of a kind derivation claims, with distinct literals (``FRAMING`` kept out)."""
    kind = draw(st.sampled_from(["json call", "named json", "own values", "invoke parameters"]))
    words = draw(st.lists(WORDS, min_size=4, max_size=4, unique=True))
    call_open, call_close = _tag(draw(STYLES), words[0], False), _tag(draw(STYLES), words[0], True)
    head, tail, separator = draw(LAYOUT), draw(LAYOUT), draw(LAYOUT)
    reasoning = None
    if draw(st.booleans()):
        style = draw(STYLES)
        reasoning = Reasoning(_tag(style, words[1], False), _tag(style, words[1], True))
    section_style = draw(STYLES)
    section = Section(_tag(section_style, words[2] + "s", False), _tag(section_style, words[2] + "s", True),
                      head=draw(LAYOUT), tail=draw(LAYOUT))
    if kind == "json call":
        name, key = NameKey("name"), draw(st.sampled_from(["arguments", "parameters"]))
        if draw(st.booleans()):  # bare: no literal of its own, a JSON object or a list of them
            listed = draw(st.booleans())
            arguments = JsonArguments(key, listed=JsonList() if listed else None)
            return WireShape(Call(marker="[" if listed else "{"), name, arguments, separator=separator,
                             reasoning=reasoning)
        close = call_close if draw(st.booleans()) else ""
        return WireShape(Call(call_open, close, head=head, tail=tail if close else ""), name, JsonArguments(key),
                         separator=separator, reasoning=reasoning)
    if kind == "named json":
        name_close = draw(st.sampled_from([">", "[ARGS]", "<|args|>", ":"]))
        name_open = draw(st.sampled_from(["", "call:", "<fn="]))
        close = call_close if draw(st.booleans()) else ""
        sectioned = bool(close) and draw(st.booleans())
        return WireShape(Call(call_open, close, tail=tail if close else ""),
                         NameBetween(name_open, name_close, head=draw(LAYOUT)), JsonObject(),
                         section=section if sectioned else None,
                         separator=separator, reasoning=reasoning)
    if kind == "own values":
        name_open = draw(st.sampled_from(["", "call:"]))
        quote = draw(st.sampled_from(['<|"|>', "<esc>", "<|q|>"]))
        return WireShape(Call(call_open, call_close), NameBetween(name_open, ""), OwnValues(quote),
                         separator=separator, reasoning=reasoning)
    element, parameter = words[2], words[3]
    name = Invoke(f"<{element}=", ">", f"</{element}>", head=draw(LAYOUT))
    arguments = XmlParameters(f"<{parameter}=", ">", f"</{parameter}>", after=draw(LAYOUT),
                              newline_inside=draw(st.booleans()), values="json")
    if draw(st.booleans()):  # elements with no literals of their own, in a section (MiniMax's shape)
        return WireShape(Call(), name, arguments, section=section, separator=draw(st.sampled_from(["\n"])),
                         reasoning=reasoning)
    return WireShape(Call(call_open, call_close, head=head, tail=tail), name, arguments, separator=separator,
                     reasoning=reasoning)


def _literal(text: str) -> str:
    """text as a Jinja expression: a JSON string literal is a Jinja one (transformers trims blocks' newlines)."""
    return "{{ " + json.dumps(text) + " }}" if text else ""


_OWN_VALUES = (
    "{% macro kv(v, q) %}{% if v is string %}{{ q }}{{ v }}{{ q }}{% elif v is mapping %}{{ '{' }}"
    "{% for k, x in v.items() %}{% if not loop.first %},{% endif %}{{ k }}:{{ kv(x, q) }}{% endfor %}{{ '}' }}"
    "{% elif v is sameas true %}true{% elif v is sameas false %}false{% elif v is none %}null"
    "{% elif v is iterable %}[{% for x in v %}{% if not loop.first %},{% endif %}{{ kv(x, q) }}{% endfor %}]"
    "{% else %}{{ v }}{% endif %}{% endmacro %}"
)


def _call_block(wire: WireShape) -> str:
    call, name, arguments = wire.call, wire.name, wire.arguments
    function = "call.function"
    if isinstance(name, NameKey):
        body = (_literal('{"' + name.key + '": ') + "{{ call.function.name | tojson }}"
                + _literal(', "' + arguments.key + '": ') + f"{{{{ {function}.arguments | tojson }}}}" + _literal("}"))
        return _literal(call.open + call.head) + body + _literal(call.tail + call.close)  # (a bare list: its items)
    if isinstance(name, NameBetween):
        if isinstance(arguments, OwnValues):
            written = f"{{{{ kv({function}.arguments, {json.dumps(arguments.quote)}) }}}}"
        else:
            written = f"{{{{ {function}.arguments | tojson }}}}"
        return (_literal(call.open + call.head + name.open) + f"{{{{ {function}.name }}}}"
                + _literal(name.close + name.head) + written + _literal(call.tail + call.close))
    newline = "\n" if arguments.newline_inside else ""
    parameters = (
        f"{{% for k, v in {function}.arguments.items() %}}" + _literal(arguments.open) + "{{ k }}"
        + _literal(arguments.name_close + newline) + "{% if v is string %}{{ v }}{% else %}{{ v | tojson }}{% endif %}"
        + _literal(newline + arguments.close + arguments.after) + "{% endfor %}"
    )
    return (_literal(call.open + call.head + name.open) + f"{{{{ {function}.name }}}}"
            + _literal(name.name_close + name.head) + parameters
            + _literal(name.tail + name.close + call.tail + call.close))


def written(wire: WireShape, calls: list) -> str:
    """What a template of wire writes for calls: ``wire.write_calls``, but a bare list holds every call."""
    listed = getattr(wire.arguments, "listed", None)
    if listed is None or wire.call.open:
        return wire.write_calls(calls)
    items = [{wire.name.key: call.name, wire.arguments.key: call.arguments} for call in calls]
    return "[" + ", ".join(json.dumps(item, ensure_ascii=False) for item in items) + "]"


def template_of(wire: WireShape) -> str:
    """A chat template whose assistant turns write their calls as ``written`` says."""
    reasoning = ""
    if wire.reasoning is not None:
        reasoning = ("{% if message.reasoning_content %}" + _literal(wire.reasoning.open)
                     + "{{ message.reasoning_content }}" + _literal(wire.reasoning.close) + "{% endif %}")
    section, separator = wire.section, wire.separator
    opening = closing = ""
    if section is not None:
        opening, closing = _literal(section.open + section.head), _literal(section.tail + section.close)
    if getattr(wire.arguments, "listed", None) is not None and not wire.call.open:
        opening, closing, separator = _literal("["), _literal("]"), ", "
    return (
        _OWN_VALUES
        + "{% if tools %}<|tools|>{% for tool in tools %}{{ tool.function.name }} {% endfor %}<|end|>{% endif %}"
        + "{% for message in messages %}<|{{ message.role }}|>"
        + "{% if message.tool_calls %}" + opening + "{% for call in message.tool_calls %}{% if not loop.first %}"
        + _literal(separator) + "{% endif %}" + _call_block(wire) + "{% endfor %}" + closing
        + "{% else %}" + reasoning + "{{ message.content }}{% endif %}<|end|>{% endfor %}"
        + "{% if add_generation_prompt %}<|assistant|>{% endif %}"
    )
