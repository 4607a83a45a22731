"""Functionary v3.1: ``<function=NAME>{…}</function>`` (MeetKai Functionary medium v3.1, on Llama 3.1).

Source: the corpus template ``meetkai-functionary-medium-v3.1``: each call
is the tag, the arguments as one JSON object, and ``</function>``; several
calls follow each other, and the turn ends with ``<|eom_id|>`` (text).

Read: any number of calls anywhere in the reply, whitespace between the
tag and the object; the name is the text between ``=`` and ``>``, exactly
as written. Refused (``UnparsedToolCall``): arguments that are a JSON
string (the template double-encodes string arguments; the model writes
the object), a name holding whitespace, text between the object and
``</function>``, a call that never closes.

Qwen3-Coder's XML (``qwen-xml``) has a bare ``<function=NAME>`` opener too;
the two are told apart by what follows the tag: ``{`` or ``"`` here,
``<parameter=`` or ``</function>`` there, so each format's reader refuses
the other's call as foreign. As in qwen-xml, a reply that ends inside the
tag or right after it is prose ("Call <function=get_weather>"), not a
call cut short.

Not handled: the code-interpreter call ``<|python_tag|>CODE`` that the
template writes for a tool named ``python`` (it is llama3-json's marker,
and code after it is refused or text there). No reasoning block, no ids.
"""

from __future__ import annotations

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.base import Format, NearMiss, Sample, WireLimit, any_string
from templatestudio.wire.shape import NEVER, Call, JsonObject, NameBetween, WireShape

# Openers, reader, writer and closers are derived from this declaration.
WIRE = WireShape(
    # Mid-line, a reply ending inside the tag or just after it is prose (cut_after: never):
    # prose does end on it (vLLM's own qwen3_coder test docstring ends on "...start
    # directly with <function=...>", one of the peer cases). At a line start it is a call
    # cut short (cut_at_line), as functionary writes its calls on lines of their own. A
    # reply that starts with it is caught by qwen-xml's start-of-reply opener, which every
    # reader guards; one cut after the JSON body began ("<function=f>{") was cut in a call
    # anywhere (cut_in_body).
    call=Call("<function=", "</function>", cut_after=NEVER, cut_in_body=True, cut_at_line=len("<function=")),
    # No quote in the tag, so the extent's string tracking starts at the JSON.
    name=NameBetween("", ">", chars=r'[^<>\n"]'),
    arguments=JsonObject(),
    separator="",
    stop_tokens=("<|eom_id|>", "<|eot_id|>"),
)

OPEN, CLOSE = WIRE.call.open, WIRE.call.close

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|start_header_id|>assistant<|end_header_id|>\n\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r'<function=(?P<name>[^<>\n"]+)>',
            "close": CLOSE,
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"content": "text"},
    },
}

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ONE = '<function=get_exchange_rate>{"base": "EUR", "quote": "JPY"}</function>'

FORMAT = Format.declared(
    WIRE,
    name="functionary-v3.1",
    description="<function=NAME>{JSON arguments}</function> (MeetKai Functionary v3.1)",
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(_ONE, (CALL,), source="Functionary v3.1's template"),
        Sample('<function=a>{}</function><function=b>{"x": [1, 2]}</function>',
               (ParsedToolCall("a", {}), ParsedToolCall("b", {"x": [1, 2]})), source="two calls in a row"),
        Sample("Let me check.\n" + _ONE, (CALL,), source="text before the call"),
        Sample('<function=write_note>\n{"text": "ends with </function> here"}\n</function>',
               (ParsedToolCall("write_note", {"text": "ends with </function> here"}),),
               source="a closer inside a string; whitespace around the object"),
    ),
    near_misses=(
        NearMiss('<function=get_exchange_rate>{"base": "EUR"', True, "cut inside the JSON"),
        NearMiss('<function=get_exchange_rate>{"base": "EUR"}', True, "never closed"),
        NearMiss('<function=get_exchange_rate>"{\\"base\\": \\"EUR\\"}"</function>', True, "arguments double-encoded"),
        NearMiss('<function=a>{"x": 1} and then</function>', True, "text before the closer"),
        NearMiss("<function=get weather>{}</function>", True, "a name with a space"),
        NearMiss("<function=get_weather>{", True, "cut right after the body's brace"),
        NearMiss("Checking.\n<function=get_weather> {", True, "cut after prose, once the body began"),
        NearMiss("Use the <function=NAME> tag, then the arguments.", False, "prose naming the tag"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {CLOSE}: the response template closes the call at the first one",
                  lambda arguments: any_string(arguments, lambda s: CLOSE in s), where="response template"),
    ),
    corpus_labels=("other:functionary",),
    variants=("whitespace around the arguments", "several calls in one turn"),
)
