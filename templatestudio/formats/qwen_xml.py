"""Qwen3-Coder XML: ``<tool_call><function=NAME><parameter=KEY>value</parameter>…</function></tool_call>``.

Values are the text between the tags with one leading and one trailing
newline removed, exactly as Qwen3-Coder's template writes them; they are
text, typed later against the tool's schema (``string_arguments``). A value
ends at the first ``</parameter>``, a call at the first ``</tool_call>``;
a repeated parameter makes the call unreadable. The wrapper-less
``<function=NAME>…</function>`` (Qwen3.5 replies that drop it) is read too;
such a call ends at the first ``</function>``, so in that shape (never
written by the writer or the templates) a value cannot hold it. A value
that starts or ends with a newline comes back whole: the templates write a
newline of their own on each side, and exactly one is taken.
Reasoning: ``<think>…</think>`` at the start of the reply. The shape is
declared in ``WIRE``; the function element and its parameters are read by
``wire.xml_params`` from that declaration, as Seed-OSS's are.
"""

from __future__ import annotations

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, opener_pattern
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import skip_space
from templatestudio.wire.shape import Call, Invoke, Reasoning, WireShape, XmlParameters
from templatestudio.wire.xml_params import read_invoke, xml_limits
from templatestudio.resumable_match import chars, either, literal, run

# Everything the writer writes, declared: write_call, markers, closers and
# reasoning come from it. The openers and reader below are the module's own
# (hand-written): a call also opens with a bare <function=NAME> (Qwen3.5
# replies that drop the wrapper), which a declaration only lists.
WIRE = WireShape(
    call=Call("<tool_call>", "</tool_call>", head="\n", tail="\n", also_opens=("<function=",)),
    name=Invoke("<function=", ">", "</function>", head="\n"),
    arguments=XmlParameters("<parameter=", ">", "</parameter>", newline_inside=True, values="str"),
    reasoning=Reasoning("<think>", "</think>"),
    stop_tokens=("<|im_end|>",),
)

OPEN, CLOSE = WIRE.call.open, WIRE.call.close
FUNCTION, END_FUNCTION = WIRE.name.open, WIRE.name.close
PARAMETER = WIRE.arguments.open

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
    else:
        end = len(region) - len(CLOSE)  # the extent ends every region just past the closer
        call, after = read_invoke(region, len(OPEN), end, WIRE.name, WIRE.arguments, no_head=_NO_HEAD)
        after = skip_space(region, after)
        if after != end:
            raise CallSyntaxError(f"unexpected text before {CLOSE} at offset {after}")
        after = len(region)
    if after != len(region):
        raise CallSyntaxError(f"unexpected text after the call at offset {after}")
    return [CallSpan(call, 0, len(region))]


OPENERS = (
    Opener(OPEN, opener_pattern(OPEN, SPACES, literal(FUNCTION)), lambda: TagExtent(len(OPEN), CLOSE)),
    # Without its wrapper the tag opens a call only when a parameter or the
    # closing tag follows: prose that names "<function=get_weather>" stays
    # prose, and a reply cut there is prose too (cut_after: never).
    Opener(FUNCTION, opener_pattern(FUNCTION, chars(r"[A-Za-z_]"), run(chars(r"[\w.\-]")), literal(">"), SPACES,
                                    either(literal(PARAMETER), literal(END_FUNCTION))),
           lambda: TagExtent(len(FUNCTION), END_FUNCTION), cut_after=1 << 30),
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
    ),
    wire_limits=xml_limits(WIRE.arguments, CLOSE, "the wire writes text, typed against the schema afterwards"),
    corpus_labels=("qwen-xml",),
    string_arguments=True,
    vllm_parser="qwen3_xml",
)
