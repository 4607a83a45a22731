"""Qwen3-Coder XML: ``<tool_call><function=NAME><parameter=KEY>value</parameter>…</function></tool_call>``.

Values are the text between the tags with one leading and one trailing
newline removed, exactly as Qwen3-Coder's, Qwen3.5's and Qwen3.8's
templates write them; they are text, typed later against the tool's schema
(``string_arguments``). A value that starts or ends with a newline comes
back whole: the templates write a newline of their own on each side, and
exactly one is taken. A repeated parameter makes the call unreadable.

No escaping exists: a value may hold ``</parameter>``, ``</function>``,
``<tool_call>`` or ``</tool_call>``. A ``</parameter>`` ends the value only
when whitespace and then the next ``<parameter=KEY>`` or ``</function>``
and ``</tool_call>`` follow it, as the templates write them; the call ends
at the first ``</tool_call>`` outside a value (``wire.xml_params``, which
reads Seed-OSS's calls by the same rule). A closer the model left out is
recovered where the structure stands unmistakably: a ``<parameter=KEY>`` on
a line of its own starts the next parameter, and ``</function>`` then
``</tool_call>`` ends the last value when only whitespace and the reply's
end, the next call or ``<|im_end|>`` follow. A value so recovered that also holds
a ``</parameter>`` that did not end it is refused (either reading could be
meant).

The wrapper-less ``<function=NAME>…</function>`` (Qwen3.5 and Qwen3-Coder
replies that drop ``<tool_call>``) is read too, and a ``</tool_call>`` right
after it (whitespace between) belongs to the call. A reply that starts
with the bare tag (after whitespace or reasoning) and ends inside it or
right after it was cut in a call (``Reply.cut``); elsewhere a bare tag at
the reply's end is prose naming it. Reasoning:
``<think>…</think>`` at the start of the reply. A block the reply never
closes ends where a whole call opening (``<tool_call>`` then
``<function=``) stands at a line start inside it, and the call is read:
Qwen3.5 starts calls inside the ``<think>`` its prompt opened. A closed
block is all reasoning, a call rehearsed in it included.

Not handled: a value holding the templates' own boundary (``</parameter>``
then ``<parameter=KEY>`` or ``</function>`` ``</tool_call>``; a line that
starts with ``<parameter=KEY>``): it reads as that boundary, since the
template writes both alike (``wire_limits``); in the wrapper-less shape a
value missing its ``</parameter>`` before ``</function>`` (``</function>``
in a value's text is too common to end it); a call that opens mid-line,
or as a bare ``<function=NAME>`` (plain text, where ``<tool_call>`` is
Qwen3.5's special token), inside a reasoning block never closed: it stays
reasoning.
"""

from __future__ import annotations

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import (
    Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.jsonbody import skip_space
from templatestudio.wire.optional_closer import ThenOptionalCloser, only_closer_after
from templatestudio.wire.shape import NEVER, Call, Invoke, Reasoning, WireShape, XmlParameters
from templatestudio.wire.xml_extent import parameter_extents
from templatestudio.wire.xml_params import read_invoke, xml_limits
from templatestudio.resumable_match import chars, either, literal, optional, run, sequence

# Everything the writer writes, declared: write_call, markers, closers and
# reasoning come from it, and so does where a value ends (wire.xml_params
# builds that rule from these literals). The openers and reader below are
# the module's own (hand-written): a call also opens with a bare
# <function=NAME> (Qwen3.5 replies that drop the wrapper), which a
# declaration only lists.
WIRE = WireShape(
    call=Call("<tool_call>", "</tool_call>", head="\n", tail="\n", also_opens=("<function=",)),
    name=Invoke("<function=", ">", "</function>", head="\n"),
    arguments=XmlParameters("<parameter=", ">", "</parameter>", newline_inside=True, values="str"),
    reasoning=Reasoning("<think>", "</think>", ends_at_call=True),
    stop_tokens=("<|im_end|>",),
)

OPEN, CLOSE = WIRE.call.open, WIRE.call.close
FUNCTION, END_FUNCTION = WIRE.name.open, WIRE.name.close
PARAMETER = WIRE.arguments.open
# What may follow a whole call: the next call's opening or a stop token. A
# last value missing its </parameter> ends at </function></tool_call> only
# where one of these (or the reply's end) comes next (wire.xml_params).
AFTER_CALL = (*WIRE.markers, *WIRE.stop_tokens)

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open_pattern": r"<tool_call>\s*<function=(?P<name>[^<>\n]+)>",
            "close": CLOSE,
            "repeats": True,
            "content": "xml-inline",
            "content_args": {"tag_pattern": r"<parameter=(?P<key>[^<>\n]+)>\n?(?P<value>.*?)\n?</parameter>"},
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
}


_NO_HEAD = "no <function=NAME> where the call should start"


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    if opener.literal == FUNCTION:
        call, after = read_invoke(region, 0, len(region), WIRE.name, WIRE.arguments, no_head=_NO_HEAD)
        # The extent took a </tool_call> that follows the bare call: the wrapper's closer, left without its opener.
        if only_closer_after(region, after, CLOSE):
            after = len(region)
    else:
        end = len(region) - len(CLOSE)  # the extent ends every region just past the closer
        call, after = read_invoke(region, len(OPEN), end, WIRE.name, WIRE.arguments, no_head=_NO_HEAD, call_close=CLOSE,
                                  after_call=AFTER_CALL)
        after = skip_space(region, after)
        if after != end:
            raise CallSyntaxError(f"unexpected text before {CLOSE} at offset {after}")
        after = len(region)
    if after != len(region):
        raise CallSyntaxError(f"unexpected text after the call at offset {after}")
    return [CallSpan(call, 0, len(region))]


_BARE = opener_pattern(FUNCTION, chars(r"[A-Za-z_]"), run(chars(r"[\w.\-]")), literal(">"), SPACES,
                       either(literal(PARAMETER), literal(END_FUNCTION)))


def _at_most(piece, count: int):
    """piece repeated up to count times."""
    pattern = sequence()
    for _ in range(count):
        pattern = optional(sequence(piece, pattern))
    return pattern


# The same opening with a name of at most 64 characters, for the reply's
# start: its cut is a call's (a longer run there is prose the other opener
# reads once, so a flood of name characters is not looked at twice).
_BARE_AT_START = opener_pattern(FUNCTION, chars(r"[A-Za-z_]"), _at_most(chars(r"[\w.\-]"), 63), literal(">"), SPACES,
                                either(literal(PARAMETER), literal(END_FUNCTION)))


_BARE_ELEMENT = parameter_extents(WIRE.arguments, WIRE.name, None)


def _bare_extent():
    return ThenOptionalCloser(_BARE_ELEMENT(), CLOSE)


OPENERS = (
    Opener(OPEN, opener_pattern(OPEN, SPACES, literal(FUNCTION)),
           parameter_extents(WIRE.arguments, WIRE.name, (OPEN, CLOSE), AFTER_CALL)),
    # Without its wrapper the tag opens a call only when a parameter or the
    # closing tag follows: prose that names "<function=get_weather>" stays
    # prose. Where the reply starts with it (after whitespace), a reply that
    # ends anywhere from the tag on was cut in the call's opening, since
    # nothing but a call starts so (cut_after: the tag, the default);
    # elsewhere a reply cut there is prose (cut_after: never). The call ends
    # at </function>, and a </tool_call> right after it is its own.
    Opener(FUNCTION, _BARE_AT_START, _bare_extent, start_only=True),
    Opener(FUNCTION, _BARE, _bare_extent, cut_after=NEVER),
)

_ONE = ("<tool_call>\n<function=get_exchange_rate>\n<parameter=base>\nEUR\n</parameter>\n"
        "<parameter=quote>\nJPY\n</parameter>\n</function>\n</tool_call>")
CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})

FORMAT = Format.declared(
    WIRE,
    name="qwen-xml",
    description="<tool_call><function=NAME><parameter=KEY>text (Qwen3-Coder, Qwen3.5)",
    openers=OPENERS,
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(_ONE, (CALL,), source="Qwen3-Coder's template"),
        Sample("<think>\n\n</think>\n\n" + _ONE, (CALL,)),
        Sample(_ONE + "\n" + _ONE.replace("EUR", "USD"), (CALL, ParsedToolCall("get_exchange_rate", {"base": "USD", "quote": "JPY"}))),
        Sample("<tool_call>\n<function=write_note>\n<parameter=text>\nfirst line\nsecond line\n</parameter>\n</function>\n</tool_call>",
               (ParsedToolCall("write_note", {"text": "first line\nsecond line"}),)),
        Sample("<function=ping>\n</function>", (ParsedToolCall("ping", {}),), source="no wrapper"),
    ),
    near_misses=(
        NearMiss("<tool_call>\n<func", True, "cut inside the opening"),
        NearMiss("<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n", True, "never closed"),
        NearMiss("<tool_call>\n<function=a>\n<parameter=x>1</parameter><parameter=x>2</parameter></function></tool_call>",
                 True, "a parameter given twice"),
        NearMiss("Write <function=NAME> tags? No.", False, "prose naming the tag"),
        NearMiss("Call <function=get_weather> first.", False, "prose naming a call"),
        NearMiss("<function=get_current_weather>\n", True, "cut after a bare opening tag (vLLM's tests)"),
        NearMiss("\n<function=get_cur", True, "cut inside a bare opening tag that starts the reply"),
        NearMiss("<function=", True, "a reply that is only the bare tag's literal was cut in a call"),
        NearMiss("See <function=get_weather>", False, "prose ending on a bare tag (vLLM's docstrings do)"),
        NearMiss("See <function=get_weather> in the docs.", False, "prose naming a bare tag, going on past it"),
    ),
    wire_limits=(
        *xml_limits(WIRE.arguments, END_FUNCTION, CLOSE, "the wire writes text, typed against the schema afterwards",
                    AFTER_CALL),
        WireLimit(f"a string holding {WIRE.arguments.close} or {CLOSE}: the response template's value and call end "
                  f"at the first", lambda arguments: any_string(
                      arguments, lambda s: WIRE.arguments.close in s or CLOSE in s), where="response template"),
    ),
    corpus_labels=("qwen-xml",),
    string_arguments=True,
    vllm_parser=("qwen3_xml", "qwen3_coder", "step3p5", "step5"),
)
