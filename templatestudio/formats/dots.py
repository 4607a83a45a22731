"""dots: ``<dots_function_call>`` holding ``<invoke name="NAME">`` calls with ``<parameter name="k">v</parameter>``.

Read as vLLM's dots parser documents the models writing it: one
``<dots_function_call>…</dots_function_call>`` block holding one or more
``<invoke>`` elements, each call's parameters inside it, in MiniMax's
invoke/parameter spelling under dots' own block tag. Any number of blocks in
a reply, text between them. Whitespace between the tags is passed over;
names, keys and values come back exactly as written. The writer spells a
string value as it is and any other value as its JSON, so values are text,
typed later against the tool's schema (``string_arguments``).

Where a value ends (``wire.xml_params``): a ``</parameter>`` ends it only
when whitespace and then the next ``<parameter name="KEY">`` or
``</invoke>`` follow, so a value may hold ``</parameter>`` in any other
place; a ``<parameter name="KEY">`` on a line of its own ends a value whose
closer was left out (refused when that value also holds a ``</parameter>``).

Accepted variant: a block holding one JSON call object instead of invokes,
``{"name": NAME, "arguments": {...}}`` (or ``"parameters"`` for
``"arguments"``), read and never written; its values are JSON, as written.

Refused: an empty block, a block holding anything but invokes (or one JSON
call object), a parameter outside an invoke, a parameter given twice, an
invoke or block never closed, a JSON body with other keys or that is not an
object. Not handled: a value or JSON string holding
``</dots_function_call>`` (the block ends at the first), names holding
``<``, ``>`` or a newline, a value holding the boundary the writer puts
between parameters (``wire_limits``). No reasoning block is declared:
none is documented for the dots models' calls.
"""

from __future__ import annotations

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.resumable_match import either, literal
from templatestudio.wire.base import (
    Found, SPACES, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.jsonbody import call_from, decode_whole, skip_space
from templatestudio.wire.shape import Call, Invoke, Section, WireShape, XmlParameters
from templatestudio.wire.xml_params import read_invoke, xml_limits
from templatestudio.wire.sections import element_spans

# The writer's shape. The opener and reader are the module's own: several
# invokes share one block, each a span of it, and a block may hold a JSON
# call object instead.
WIRE = WireShape(
    section=Section("<dots_function_call>", "</dots_function_call>", head="\n", tail="\n"),
    call=Call(),
    name=Invoke('<invoke name="', '">', "</invoke>", head="\n"),
    arguments=XmlParameters('<parameter name="', '">', "</parameter>", values="json"),
)

OPEN, CLOSE = WIRE.section.open, WIRE.section.close
INVOKE, END_INVOKE = WIRE.name.open, WIRE.name.close
PARAMETER, END_PARAMETER = WIRE.arguments.open, WIRE.arguments.close
_JSON_KEYS = ("arguments", "parameters")


def _json_call(region: str, position: int, end: int) -> list[CallSpan]:
    call, _ = call_from(decode_whole(region, position, end), argument_keys=_JSON_KEYS)
    return [CallSpan(call, 0, len(region))]


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    end = len(region) - len(CLOSE)  # the extent ends every region just past the closer
    position = skip_space(region, len(OPEN))
    if region.startswith("{", position):
        return _json_call(region, position, end)
    return element_spans(region, position, end, INVOKE,
                         lambda text, at, stop: read_invoke(text, at, stop, WIRE.name, WIRE.arguments),
                         none=f"no {INVOKE}…> and no JSON call object in the block",
                         expected=f"expected another invoke or {CLOSE}")


# The block's tag alone in prose opens nothing: an invoke or a JSON object must follow it.
OPENER = Opener(OPEN, opener_pattern(OPEN, SPACES, either(literal(INVOKE), literal("{"))),
                lambda: TagExtent(len(OPEN), CLOSE))

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_INVOKE = ('<invoke name="get_exchange_rate">\n<parameter name="base">EUR</parameter>\n'
           '<parameter name="quote">JPY</parameter>\n</invoke>\n')
_ONE = f"{OPEN}\n{_INVOKE}{CLOSE}"

FORMAT = Format.declared(
    WIRE,
    name="dots",
    description='<dots_function_call><invoke name="NAME"><parameter name="k">text (dots)',
    openers=(OPENER,),
    read_region=read_region,
    response_template=None,
    no_response_template=("no dots chat template that writes calls is at hand to anchor the assistant turn; the "
                          "reader stands alone"),
    samples=(
        Sample(_ONE, (CALL,), source="the invoke block vLLM's dots parser documents"),
        Sample(f'ok{OPEN}<invoke name="set_location"><parameter name="location">{{"city": "Shanghai"}}</parameter>'
               f'<parameter name="days">3</parameter></invoke>{CLOSE}',
               (ParsedToolCall("set_location", {"location": '{"city": "Shanghai"}', "days": "3"}),),
               source="text before the block, no layout, values kept as written"),
        Sample(f'{OPEN}<invoke name="search"><parameter name="query">chairs</parameter></invoke>'
               f'<invoke name="open"><parameter name="id">7</parameter></invoke>{CLOSE}\n'
               f'{OPEN}{{"name": "search", "arguments": {{"query": "tables"}}}}{CLOSE}',
               (ParsedToolCall("search", {"query": "chairs"}), ParsedToolCall("open", {"id": "7"}),
                ParsedToolCall("search", {"query": "tables"})),
               source="two invokes in one block, then a block holding a JSON call"),
        Sample(f'{OPEN}\n{{"name": "fetch_url", "parameters": {{"url": "https://example.com"}}}}\n{CLOSE}',
               (ParsedToolCall("fetch_url", {"url": "https://example.com"}),),
               source='a JSON call under "parameters", as seen from a dots model behind an API'),
        Sample(f'{OPEN}\n<invoke name="write_note">\n<parameter name="text">a </parameter> inside\nline two'
               f'</parameter>\n</invoke>\n{CLOSE}',
               (ParsedToolCall("write_note", {"text": "a </parameter> inside\nline two"}),),
               source="a value holding the closer where no parameter follows it"),
    ),
    near_misses=(
        NearMiss(f"{OPEN}\n<inv", True, "cut inside the opening"),
        NearMiss(f"{OPEN}\n{_INVOKE}", True, "never closed"),
        NearMiss(f'{OPEN}<invoke name="a"><parameter name="x">1</parameter><parameter name="x">2</parameter>'
                 f"</invoke>{CLOSE}", True, "a parameter given twice"),
        NearMiss(f'{OPEN}<invoke name="a"><parameter name="x">1</parameter>{CLOSE}', True, "an invoke never closed"),
        NearMiss(f'{OPEN}<invoke name="a"></invoke>done{CLOSE}', True, "text inside the block"),
        NearMiss(f'{OPEN}{{"name": "a"}}{CLOSE}', True, "a JSON call without arguments"),
        NearMiss(f"dots wraps its calls in {OPEN} tags.", False, "prose naming the tag"),
    ),
    wire_limits=(
        *xml_limits(WIRE.arguments, END_INVOKE, None, "the wire writes its JSON as text, typed against the "
                    "schema afterwards"),
        WireLimit(f"a string holding {CLOSE}, which ends the block",
                  lambda arguments: any_string(arguments, lambda s: CLOSE in s)),
    ),
    corpus_labels=(),
    string_arguments=True,
    vllm_parser=("dots",),
)
