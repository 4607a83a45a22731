"""MiniCPM5: ``<function name="NAME"><param name="KEY">value</param>…</function>``, one element per call.

Read as MiniCPM5 writes its calls: each call one ``<function name="NAME">``
element holding ``<param name="KEY">`` parameters, no wrapper around it,
any number of calls in a reply with text between them. Names, keys and
values come back exactly as written; values are text, typed later against
the tool's schema (``string_arguments``). Whitespace between the tags is
passed over.

Accepted variant: a value written as one CDATA section,
``<![CDATA[…]]>`` (the model quotes multi-line text and code so), comes
back as the text inside it, whitespace included.

Where a value ends (``wire.xml_params``): a ``</param>`` ends it only when
whitespace and then the next ``<param name="KEY">`` or ``</function>``
follow, so a value may hold ``</param>`` or ``</function>`` in any other
place; a ``<param name="KEY">`` on a line of its own ends a value whose
closer was left out (refused when that value also holds a ``</param>``).
The call ends at its ``</function>`` found outside the values.

Refused: a parameter given twice, text inside the element that is not
a parameter, a call never closed, a ``<param>`` without a name (the
call's own markup follows the tag). Not
handled: the tokenizer's byte-level spellings (``Ġ`` for a space,
``<functionname=``: a decoding fault of the server, not the model's
wire), XML entities (``&amp;`` comes back as written), parameters
wrapped in an ``<arguments>`` element, a value holding the boundary the
writer puts between parameters (``wire_limits``). Reasoning:
``<think>…</think>`` at the start of the reply.
"""

from __future__ import annotations

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.resumable_match import chars, either, literal, run
from templatestudio.wire.base import (
    Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.shape import Call, Invoke, Reasoning, WireShape, XmlParameters
from templatestudio.wire.xml_extent import parameter_extents
from templatestudio.wire.xml_params import read_invoke, xml_limits

# The writer's shape. The opener and reader are the module's own: a call
# is its element alone, read on the shared XML-parameter reader, and a
# value may be quoted as CDATA.
WIRE = WireShape(
    call=Call(),
    name=Invoke('<function name="', '">', "</function>"),
    arguments=XmlParameters('<param name="', '">', "</param>", after="", values="json"),
    reasoning=Reasoning("<think>", "</think>"),
)

FUNCTION, END_FUNCTION = WIRE.name.open, WIRE.name.close
PARAMETER = WIRE.arguments.open
CDATA, END_CDATA = "<![CDATA[", "]]>"


def _unquoted(value: str) -> str:
    """A value written as one CDATA section is the text inside it; any other value is as written."""
    if value.startswith(CDATA) and value.endswith(END_CDATA) and len(value) >= len(CDATA) + len(END_CDATA):
        inner = value[len(CDATA) : -len(END_CDATA)]
        if END_CDATA not in inner:
            return inner
    return value


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    call, after = read_invoke(region, 0, len(region), WIRE.name, WIRE.arguments,
                              no_head=f'no {FUNCTION}NAME"> where the call should start')
    if after != len(region):
        raise CallSyntaxError(f"unexpected text after the call at offset {after}")
    arguments = {key: _unquoted(value) for key, value in call.arguments.items()}
    return [CallSpan(ParsedToolCall(call.name, arguments), 0, len(region))]


# The tag opens a call only when its name is closed and a parameter or the
# closing tag follows: prose that names '<function name="NAME">' stays prose.
OPENER = Opener(FUNCTION, opener_pattern(FUNCTION, run(chars(r'[^<>\n"]')), literal('">'), SPACES,
                                         either(literal(PARAMETER), literal(END_FUNCTION))),
                parameter_extents(WIRE.arguments, WIRE.name, None))

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ONE = '<function name="get_exchange_rate"><param name="base">EUR</param><param name="quote">JPY</param></function>'

FORMAT = Format.declared(
    WIRE,
    name="minicpm5",
    description='<function name="NAME"><param name="KEY">text</param></function> (MiniCPM5)',
    openers=(OPENER,),
    read_region=read_region,
    response_template=None,
    no_response_template=("no MiniCPM5 chat template is at hand to anchor the assistant turn, and a CDATA value "
                          "cannot be unquoted by a response template"),
    samples=(
        Sample(_ONE, (CALL,), source="the call vLLM's MiniCPM5 parser documents"),
        Sample(f"<think>\nThe user wants a rate.\n</think>\n{_ONE}\n", (CALL,), source="with reasoning"),
        Sample('Head\n<function name="get_weather"><param name="city">北京</param></function>\nTXT\n'
               '<function name="sum_values"><param name="nums">[7,8,9]</param><param name="exact">false</param>'
               '</function>\nTail\n',
               (ParsedToolCall("get_weather", {"city": "北京"}),
                ParsedToolCall("sum_values", {"nums": "[7,8,9]", "exact": "false"})),
               source="two calls with text between them"),
        Sample('<function name="write_file"><param name="path">a.py</param>\n'
               '<param name="content"><![CDATA[    def foo():\n        return "</param>"\n]]></param>\n</function>',
               (ParsedToolCall("write_file", {"path": "a.py", "content": '    def foo():\n        return "</param>"\n'}),),
               source="a CDATA value, whitespace kept"),
        Sample('<function name="noop"></function>', (ParsedToolCall("noop", {}),), source="no parameters"),
    ),
    near_misses=(
        NearMiss('<function name="get_weather"><param name="city">北京</param>', True, "never closed"),
        NearMiss('<function name="a"><param name="x">1</param><param name="x">2</param></function>', True,
                 "a parameter given twice"),
        NearMiss('<function name="a"><param name="x">1</param>stray</function>', True, "text inside the element"),
        NearMiss('<function name="a"><param>1</param></function>', True,
                 "a parameter without a name: the call's own markup follows the tag"),
        NearMiss('MiniCPM5 writes <function name="NAME"> tags.', False, "prose naming the tag"),
    ),
    wire_limits=(
        *xml_limits(WIRE.arguments, END_FUNCTION, None, "the wire writes its JSON as text, typed against the "
                    "schema afterwards"),
        WireLimit(f"a string written as one CDATA section ({CDATA}…{END_CDATA}): it is read as the text inside",
                  lambda arguments: any_string(arguments, lambda s: _unquoted(s) != s)),
    ),
    corpus_labels=(),
    string_arguments=True,
    vllm_parser=("minicpm5",),
)
