"""Muse (Muse Spark, Muse Glimmer): a message addressed ``to=NAME`` holding an ``<atem:function_calls>`` block.

What a Muse reply looks like after its generation prompt
``<|start|>assistant``: messages, each a header ``to=RECIPIENT<|message|>``,
a body and ``<|eom|>`` (more messages follow) or ``<|eot|>`` (the turn
ends), the later ones opened by ``<|start|>assistant ``. Read:

- calls: a message addressed to a tool, ``to=NAME<|message|>``, whose body
  is one ``<atem:function_calls>`` block holding ``<atem:invoke
  name="NAME">`` elements with ``<atem:parameter name="KEY">value
  </atem:parameter>`` parameters, as Muse Glimmer's chat template writes
  them (one invoke per message; several in one block are read too). Names,
  keys and values come back exactly as written: the template writes a
  string as it is and lists and objects as JSON, spaces not stripped, so
  values are text typed later against the tool's schema
  (``string_arguments``). The call's name is the invoke's; the recipient
  (``NAME`` or ``tool.NAME``) only addresses the message;
- reasoning: the ``to=self<|message|>…<|eom|>`` message at the start of the
  reply;
- content: the bodies of ``to=user`` (the answer) and ``to=commentary``
  (an update between calls) messages. Their headers, ``<|start|>assistant ``
  before a ``to=NAME<|message|>`` header (harmony writes the same token before
  its own headers), ``<|eom|>`` and ``<|eot|>`` are the reply's framing: the reader drops
  them (the regions read as no call; a start before a call's header is read
  with the call, so a refused call hands its start back with it). A
  ``to=developer`` message is dropped whole, as Muse Spark's parser drops it.

Where a value ends (``wire.xml_params``): a ``</atem:parameter>`` ends it
only when whitespace and then the next parameter's tag or
``</atem:invoke>`` follow; a parameter tag on a line of its own ends a
value whose closer was left out (refused when that value also holds the
closer). A block in a ``to=user`` or ``to=commentary`` message is that
message's text, never a call (an answer that shows the syntax).

Refused: a message to a tool whose body is not a block (JSON, text, a
damaged block tag), a block in a message to ``self`` (after the first message), a
block with no invoke or with text beside its invokes, a parameter given twice, a block
never closed. Not handled: a reasoning message after another message (the
engine reads reasoning only at the start: it stays text, its header
included), a bare ``<|message|>`` header (Muse Spark's parser takes it for
reasoning, Muse Glimmer's for content: it stays text), a block with no
message header (a server that strips special tokens), values or JSON
holding ``</atem:function_calls>`` or the boundary the writer puts between
parameters (``wire_limits``), names holding whitespace, ``<``, ``"`` or
``=``.
"""

from __future__ import annotations

import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.resumable_match import chars, either, literal, optional, run, sequence
from templatestudio.wire.base import (
    Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.token_extent import TokenExtent
from templatestudio.wire.jsonbody import skip_space
from templatestudio.wire.shape import Call, HandWritten, Invoke, Reasoning, WireShape, XmlParameters
from templatestudio.wire.xml_params import read_invoke, xml_limits
from templatestudio.wire.sections import element_spans

# The declared shape: a call is a message addressed to a tool, from its
# header's to= to the block's closer; the recipient stands in the header,
# so the name, the openers, the reader and the writer are this module's own.
WIRE = WireShape(
    call=Call("to=", "</atem:function_calls>"),
    name=HandWritten("the recipient to=NAME stands in the message header, and the recipient decides whether the "
                     "message is a call, the reasoning, the answer or an update; the block's invoke names the call"),
    arguments=XmlParameters('<atem:parameter name="', '">', "</atem:parameter>", values="json"),
    separator="",
    reasoning=Reasoning("to=self<|message|>", "<|eom|>"),
    stop_tokens=("<|eot|>",),
    # The next message's start and the messages' ends: the reply's framing, dropped by the reader.
    framing=("<|start|>assistant ", "<|eom|>", "<|eot|>"),
    addressed=True,  # to=NAME in the header: a message body is content
)

(TO, BLOCK_END), MESSAGE = (WIRE.call.open, WIRE.call.close), "<|message|>"
BLOCK = "<atem:function_calls>"
INVOKE = Invoke('<atem:invoke name="', '">', "</atem:invoke>", head="\n")
START, EOM, EOT = WIRE.framing
_NEVER = 1 << 30  # cut_after for framing: a reply cut inside it is prose
_RECIPIENT = r'[^ \t\n\r<"=]'
_NO_CALLS = ("self",)  # a recipient whose message is never a call (developer messages are dropped whole)


def _header(region: str) -> tuple[str, int]:
    """The recipient of a call's header and the offset past it and the whitespace after.

    The region opens with the header's to=, or with the next message's start
    before it (``FRAMED_CALL_OPENER``).
    """
    start = (len(START) if region.startswith(START) else 0) + len(TO)
    end = region.find(MESSAGE, start)
    recipient = region[start:end]
    if recipient in _NO_CALLS:
        raise CallSyntaxError(f"a call block in a message to {recipient!r}, which is no tool")
    return recipient, skip_space(region, end + len(MESSAGE))


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    if opener is TOOL_HEADER:
        recipient, _ = _header(region)
        raise CallSyntaxError(f"a message to the tool {recipient!r} whose body is not a {BLOCK} block")
    if opener is not CALL_OPENER and opener is not FRAMED_CALL_OPENER:
        return []  # framing: a header, the next message's start, a message's end; the text around it is content
    _, position = _header(region)
    # The extent ends every call just past the block's closer; the spans cover the message, header included.
    return element_spans(region, position + len(BLOCK), len(region) - len(BLOCK_END), INVOKE.open,
                         lambda text, at, end: read_invoke(text, at, end, INVOKE, WIRE.arguments),
                         none=f"no {INVOKE.open}…> in the block", expected=f"expected another invoke or {BLOCK_END}")


# Hand-written: the declared name is (see WIRE), so the header is written here, as Muse Glimmer's template writes
# a call message (the generation prompt already wrote <|start|>assistant; the message's end is the framing's).
def write_call(call: ParsedToolCall) -> str:
    body = f"{INVOKE.open}{call.name}{INVOKE.name_close}{INVOKE.head}{WIRE.arguments.write(call.arguments)}{INVOKE.close}"
    return f"{TO}{call.name}{MESSAGE}{BLOCK}\n{body}\n{BLOCK_END}"


def _framing_header(recipient: str) -> Opener:
    """A content message's header: dropped, its body is content (tried before the call opener)."""
    return Opener(TO, opener_pattern(TO, literal(recipient + MESSAGE)), lambda: TagExtent(0, MESSAGE),
                  cut_after=_NEVER)


# A header addressed to a tool, then the block, opens a call (a block holding no invoke is refused).
CALL_OPENER = Opener(TO, opener_pattern(TO, run(chars(_RECIPIENT), at_least=1), literal(MESSAGE), SPACES,
                                        literal(BLOCK)),
                     lambda: TagExtent(len(TO), BLOCK_END), cut_after=_NEVER)
# The next message's start, then a call's header: one call from the start on. The start is
# framing, but it frames this call, so it is settled with it: were the call refused (a block in a
# message to self), a stream that had already dropped the start would lose it from the text it
# hands back from the refusal on.
FRAMED_CALL_OPENER = Opener(START, opener_pattern(START, literal(TO), run(chars(_RECIPIENT), at_least=1),
                                                  literal(MESSAGE), SPACES, literal(BLOCK)),
                            lambda: TagExtent(len(START) + len(TO), BLOCK_END), cut_after=_NEVER)


def _not(word: str) -> object:
    """A recipient other than word (not empty): any run of recipient characters that differs from it."""
    other = chars(_RECIPIENT[:-1] + re.escape(word[0]) + "]")  # a recipient character other than word's first
    after = optional(_not(word[1:])) if len(word) > 1 else run(chars(_RECIPIENT), at_least=1)
    return either(sequence(other, run(chars(_RECIPIENT))), sequence(literal(word[0]), after))


def _deviates(word: str, first: bool = True) -> object:
    """Text that parts from word before word is whole (at its first character, whitespace is passed over first)."""
    space = " \t\n\r" if first else ""
    other = chars(f"[^{re.escape(word[0])}{space}]")
    return other if len(word) == 1 else either(other, sequence(literal(word[0]), _deviates(word[1:], False)))


# A message addressed to a tool is a call: a header to any recipient but the ones whose messages are
# text, reasoning or dropped (tried after their openers; self is not handled, see the docstring), then
# a body that parts from the block's tag, is a malformed call, not prose. A reply that ends before
# its body has parted from the tag stays what it was (a header cut short is prose: _NEVER).
TOOL_HEADER = Opener(TO, opener_pattern(TO, _not("self"), literal(MESSAGE), SPACES, _deviates(BLOCK)),
                     lambda: TagExtent(0, MESSAGE), cut_after=_NEVER)
OPENERS = (
    _framing_header("user"),
    _framing_header("commentary"),
    # A developer message is dropped whole, its end included (or the reply's end).
    Opener(TO, opener_pattern(TO, literal("developer" + MESSAGE)), lambda: TagExtent(0, (EOM, EOT), close_at_end=True),
           cut_after=_NEVER),
    CALL_OPENER,
    TOOL_HEADER,
    FRAMED_CALL_OPENER,
    # The next message's start is framing only before a header of this wire (harmony writes the same token).
    Opener(START, opener_pattern(START, literal(TO), run(chars(_RECIPIENT), at_least=1), literal(MESSAGE)),
           TokenExtent(START), cut_after=_NEVER),
    *(Opener(item, literal(item), TokenExtent(item), cut_after=_NEVER) for item in (EOM, EOT)),
)

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_BODY = ('<atem:function_calls>\n<atem:invoke name="get_exchange_rate">\n<atem:parameter name="base">EUR'
         '</atem:parameter>\n<atem:parameter name="quote">JPY</atem:parameter>\n</atem:invoke>\n</atem:function_calls>')
_CALL = f"to=get_exchange_rate{MESSAGE}{_BODY}"
_THINK = f" to=self{MESSAGE}The user wants a rate.{EOM}"

FORMAT = Format.declared(
    WIRE,
    name="muse-atem",
    description="to=NAME<|message|><atem:function_calls><atem:invoke name=...><atem:parameter ... (Muse Spark, Glimmer)",
    openers=OPENERS,
    read_region=read_region,
    write_call=write_call,
    response_template=None,
    no_response_template=("the recipient in each message header decides what its body is (a call, the reasoning, "
                          "the answer, an update), which a response template's fields cannot say"),
    samples=(
        Sample(f" {_CALL}{EOM}", (CALL,), source="Muse Glimmer's template, right after the generation prompt"),
        Sample(f"{_THINK}{START}{_CALL}{EOM}", (CALL,), source="reasoning, then a call"),
        Sample(f" to=commentary{MESSAGE}Checking the rate.{EOM}{START}{_CALL}", (CALL,),
               source="an update, then a call whose <|eom|> the server removed"),
        Sample(f"{_THINK}{START}{_CALL}{EOM}{START}to=user{MESSAGE}The rate is 160.{EOT}", (CALL,),
               source="a call, then the answer (no stop at <|eom|>)"),
        Sample(f' to=weather.forecast{MESSAGE}<atem:function_calls>\n<atem:invoke name="weather.forecast">\n'
               f'<atem:parameter name="days">3</atem:parameter>\n<atem:parameter name="note"> line one\n"two"\n'
               f'</atem:parameter>\n<atem:parameter name="places">["Oslo", "Rome"]</atem:parameter>\n'
               f'</atem:invoke>\n</atem:function_calls>{EOM}',
               (ParsedToolCall("weather.forecast", {"days": "3", "note": ' line one\n"two"\n',
                                                    "places": '["Oslo", "Rome"]'}),),
               source="a namespaced tool, values as written"),
        Sample(f"{_THINK}{START}to=user{MESSAGE}Use <atem:function_calls> to call.{EOT}", (),
               source="reasoning, then an answer naming the block"),
    ),
    near_misses=(
        NearMiss(f" to=get_exchange_rate{MESSAGE}<atem:function_calls>\n<atem:invoke name=\"get_exch", True,
                 "cut inside the invoke"),
        NearMiss(f" {_CALL[: -len(BLOCK_END)]}", True, "the block never closes"),
        NearMiss(f' to=a{MESSAGE}<atem:function_calls>\n<atem:invoke name="a">\n<atem:parameter name="x">1'
                 f'</atem:parameter>\n<atem:parameter name="x">2</atem:parameter>\n</atem:invoke>\n'
                 f'</atem:function_calls>', True, "a parameter given twice"),
        NearMiss(f' to=a{MESSAGE}<atem:function_calls>\n<atem:invoke name="a">\n</atem:invoke>\ndone\n'
                 f'</atem:function_calls>', True, "text inside the block"),
        NearMiss(f"{START}to=developer{MESSAGE}{_BODY}{EOM}x{START}to=self{MESSAGE}{_BODY}", True,
                 "a block in a message to self"),
        NearMiss(f' to=lookup{MESSAGE}<atem:function_calls>[{{"name": "lookup", "arguments": {{}}}}]'
                 f"</atem:function_calls>{EOM}", True, "JSON in the block, no invoke"),
        NearMiss(f' to=lookup{MESSAGE}{{"q": "x"}}{EOM}', True, "a message to a tool with a JSON body, no block"),
        NearMiss(f' to=lookup{MESSAGE}atem:function_calls>\n<atem:invoke name="lookup">\n</atem:invoke>\n'
                 f"</atem:function_calls>{EOM}", True, "the block's tag damaged"),
        NearMiss(f"Done. to=self{MESSAGE}Later thoughts.", False,
                 "a later message to self: text, its header included (not handled)"),
        NearMiss("Muse addresses a tool with to=NAME in the message header.", False, "prose naming the recipient"),
    ),
    wire_limits=(
        *xml_limits(WIRE.arguments, INVOKE.close, None, "the wire writes its JSON as text, typed against the "
                    "schema afterwards"),
        WireLimit(f"a string holding {BLOCK_END}, which ends the block",
                  lambda arguments: any_string(arguments, lambda s: BLOCK_END in s)),
    ),
    corpus_labels=(),
    string_arguments=True,
    vllm_parser=("muse_glimmer", "muse", "musespark1x"),
)
