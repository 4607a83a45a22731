"""LongCat: ``<longcat_tool_call>{"name": ..., "arguments": {...}}</longcat_tool_call>`` (LongCat-Flash).

Hermes' JSON call object under LongCat's own tags, as Meituan's LongCat-Flash
models write it: exactly the keys ``name`` and ``arguments`` (an object), one
call per block, any number of blocks anywhere in the reply, the template's
newline after the opener and before the closer passed over. Values are JSON
and come back as written. Accepted variant: a last call whose
``</longcat_tool_call>`` is missing because the reply ended right after the
JSON (a server that stops on the closer hands over exactly this); a call
whose JSON is itself cut off still raises. Reasoning: LongCat-Flash-Thinking's
``<longcat_think>…</longcat_think>`` at the start of the reply (its prompt
opens the block when thinking is on); ``</longcat_s>`` ends a turn.

Refused (``UnparsedToolCall``): a JSON list inside one block, a missing
``arguments`` key or any other key, arguments that are not an object (a JSON
string included), text between the JSON and the closer, and the XML-argument
spelling some LongCat releases write under the same tag
(``<longcat_tool_call>NAME`` then ``<longcat_arg_key>k</longcat_arg_key>``
``<longcat_arg_value>v</longcat_arg_value>`` pairs), which is another wire
that this format does not read. The tag followed by anything else (prose
naming it) is text.
"""

from __future__ import annotations

from templatestudio.calls import ParsedToolCall
from templatestudio.resumable_match import chars, either, literal, run, sequence
from templatestudio.wire.base import SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, opener_pattern
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import skip_space
from templatestudio.wire.shape import Call, JsonArguments, NameKey, Reasoning, WireShape

# Everything about the wire, declared: the writer, markers, closers and the reader
# (for the JSON call) come from it. The opener is the module's own: it also
# opens LongCat's XML spelling under the same tag, for the reader to refuse.
WIRE = WireShape(
    call=Call("<longcat_tool_call>", "</longcat_tool_call>", head="\n", tail="\n",
              refused=(("[", "a JSON list inside <longcat_tool_call> is not this format's call"),)),
    name=NameKey("name"),
    arguments=JsonArguments("arguments"),
    separator="\n",
    reasoning=Reasoning("<longcat_think>", "</longcat_think>"),
    stop_tokens=("</longcat_s>",),
    closer_optional=True,
)

OPEN, CLOSE = WIRE.call.open, WIRE.call.close
XML_KEY = "<longcat_arg_key>"  # the XML spelling's first argument tag: recognised only to refuse it
_JSON_CALL = WIRE.derived_reader()


def read_region(region: str, opener: Opener, found):
    start = skip_space(region, len(OPEN))
    if not region.startswith(("{", "["), start):
        raise CallSyntaxError(f"{OPEN}NAME with {XML_KEY} pairs is LongCat's XML spelling, not the JSON call "
                              "this format reads")
    return _JSON_CALL(region, opener, found)


# A JSON call (or a list, to refuse), or a name followed by the XML spelling's
# first argument tag or the closer; the tag before anything else is prose.
OPENER = Opener(
    OPEN,
    opener_pattern(OPEN, SPACES, either(
        literal("{"), literal("["),
        sequence(chars(r"[^ \t\n\r<>{\[]"), run(chars(r"[^ \t\n\r<>]")), SPACES,
                 either(literal(XML_KEY), literal(CLOSE))),
    )),
    lambda: TagExtent(len(OPEN), CLOSE, "json", close_at_end=True),
)

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_ONE = f'{OPEN}\n{{"name": "get_exchange_rate", "arguments": {{"base": "EUR", "quote": "JPY"}}}}\n{CLOSE}'

FORMAT = Format.declared(
    WIRE,
    name="longcat",
    description='JSON {"name", "arguments"} inside <longcat_tool_call> tags (LongCat-Flash)',
    openers=(OPENER,),
    read_region=read_region,
    response_template=None,
    no_response_template=("no LongCat chat template is at hand to anchor the assistant turn and check a "
                          "response template against; the reader stands alone"),
    samples=(
        Sample(_ONE, (CALL,), source="LongCat-Flash's documented tool-call layout"),
        Sample(f"<longcat_think>\nThe user wants a rate.\n</longcat_think>\n{_ONE}", (CALL,),
               source="LongCat-Flash-Thinking: reasoning, then the call"),
        Sample(f'Let me check.\n{OPEN}{{"name": "get_weather", "arguments": {{"city": "Tokyo"}}}}{CLOSE}\n'
               f'{OPEN}{{"name": "get_time", "arguments": {{"timezone": "Asia/Tokyo", "hours": [1, 2.5], '
               f'"dst": null}}}}{CLOSE}',
               (ParsedToolCall("get_weather", {"city": "Tokyo"}),
                ParsedToolCall("get_time", {"timezone": "Asia/Tokyo", "hours": [1, 2.5], "dst": None})),
               source="text, then two calls in one turn, JSON values as written"),
        Sample(f'{OPEN}\n{{"name": "refresh", "arguments": {{}}}}', (ParsedToolCall("refresh", {}),),
               source="closer cut by a stop string"),
    ),
    near_misses=(
        NearMiss(f'{OPEN}{{"name": "get_exchange_rate"}}{CLOSE}', True, "no arguments key"),
        NearMiss(f'{OPEN}{{"name": "func", "arguments": "not a dict"}}{CLOSE}', True, "arguments that are a string"),
        NearMiss(f'{OPEN}[{{"name": "a", "arguments": {{}}}}]{CLOSE}', True, "a list inside one block"),
        NearMiss(f'{OPEN}{{"name": "a", "arguments": {{"x": 1}}', True, "cut inside the JSON"),
        NearMiss(f'{OPEN}{{"name": "a", "arguments": {{}}}} done{CLOSE}', True, "text after the JSON"),
        NearMiss(f"{OPEN}get_weather\n{XML_KEY}city</longcat_arg_key>\n<longcat_arg_value>Oslo</longcat_arg_value>\n"
                 f"{CLOSE}", True, "LongCat's XML spelling, another wire"),
        NearMiss(f"Checking. {OPEN}\n", True, "cut right after the opener"),
        NearMiss(f"LongCat wraps each call in {OPEN} tags of its own.", False, "prose naming the tag"),
    ),
    wire_limits=(),
    corpus_labels=(),
    variants=("missing closer at the end of the reply (stop strings)",),
    vllm_parser=("longcat",),
)
