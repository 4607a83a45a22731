"""PLaMo 3: ``<|plamo:begin_tool_request:plamo|>`` … NAME … ``{…}`` … in a tool-requests section.

Every marker is a ``<|plamo:…|>`` token. The calls of one turn sit between
``<|plamo:begin_tool_requests:plamo|>`` and ``<|plamo:end_tool_requests:plamo|>``;
each call is::

    <|plamo:begin_tool_request:plamo|>
      <|plamo:begin_tool_name:plamo|>NAME<|plamo:end_tool_name:plamo|>
      <|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{…}<|plamo:end_tool_arguments:plamo|>
    <|plamo:end_tool_request:plamo|>

written with nothing between the tokens (the line breaks above are for
reading). Source: vLLM 0.33's PLaMo 3 parser and its tool-call grammar
(the structural tag that constrains the model's calls); no PLaMo 3 chat
template is at hand. Read: several calls in one section, whitespace
between the tokens and around the JSON, text before the section. The
turn's end token ``<|plamo:tag|>`` (the stop token; a server that does not
stop on it leaves it after the section or the answer) is framing: dropped.

Reasoning: ``<|plamo:begin_think:plamo|>…<|plamo:end_think:plamo|>`` (the
thinking mode's prompt opens it, so a reply may start inside it), read at
the start of the reply only: vLLM's parser also reads a think block after
content; here its tokens stay in the content.

Refused: a section with no call, or whose call lacks
``<|plamo:begin_tool_request:plamo|>`` (vLLM's parser reads a bare
``<|plamo:begin_tool_name:plamo|>`` there; the grammar never writes it), an
empty name or one holding whitespace or ``<``, an argument header other
than ``<|plamo:constrain|>json<|plamo:msg|>``, arguments that are not a JSON
object, text between calls or after the last one inside the section, a
section or call never closed (a reply cut there is a cut call; vLLM returns
a call whose arguments were whole before the cut). Prose that names the
section token without a call token after it stays text.
"""

from __future__ import annotations

import re

from templatestudio.calls import ParsedToolCall
from templatestudio.resumable_match import either, literal, sequence
from templatestudio.wire.base import (
    SPACES, CallSyntaxError, Found, Format, NearMiss, Opener, Sample, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.token_extent import TokenExtent
from templatestudio.wire.jsonbody import skip_space
from templatestudio.wire.sections import expect, json_object_at, read_section
from templatestudio.wire.shape import NEVER, Call, JsonObject, NameBetween, Reasoning, Section, WireShape

# The writer's shape. The opener and reader are the module's own (``wire.sections``):
# a section's calls are read together, in one region.
WIRE = WireShape(
    section=Section("<|plamo:begin_tool_requests:plamo|>", "<|plamo:end_tool_requests:plamo|>"),
    call=Call("<|plamo:begin_tool_request:plamo|>", "<|plamo:end_tool_request:plamo|>",
              tail="<|plamo:end_tool_arguments:plamo|>"),
    # The name's closer is the name token's end and the JSON arguments' header.
    name=NameBetween("<|plamo:begin_tool_name:plamo|>",
                     "<|plamo:end_tool_name:plamo|>"
                     "<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>"),
    arguments=JsonObject(),
    separator="",
    reasoning=Reasoning("<|plamo:begin_think:plamo|>", "<|plamo:end_think:plamo|>"),
    stop_tokens=("<|plamo:tag|>",),
    # The turn's end token, written after the section when the server does not stop on it: dropped.
    framing=("<|plamo:tag|>",),
    # The grammar writes the tokens against the text: whitespace beside them is the model's, and stays.
    spacing="",
)

SECTION, SECTION_END = WIRE.section.open, WIRE.section.close
CALL, CALL_END, ARGUMENTS_END = WIRE.call.open, WIRE.call.close, WIRE.call.tail
NAME = WIRE.name.open
_NAME_CLOSE = "<|plamo:end_tool_name:plamo|>"
_ARGUMENTS = WIRE.name.close.removeprefix(_NAME_CLOSE)
THINK, THINK_END = WIRE.reasoning_pair
(EOT,) = WIRE.framing
_NAME = re.compile(r"[^\s<]+")


def _read_call(region: str, index: int, found: Found | None) -> tuple[ParsedToolCall, None, int]:
    position = expect(region, index, NAME, f"after {CALL}")
    name = _NAME.match(region, position)
    if name is None:
        raise CallSyntaxError(f"expected a tool name after {NAME}, at offset {position}")
    position = expect(region, name.end(), _NAME_CLOSE, f"after the tool name {name.group()!r}")
    start = skip_space(region, position)
    if not region.startswith(_ARGUMENTS, start):
        raise CallSyntaxError(f"expected {_ARGUMENTS} before the arguments of {name.group()!r}, at offset {start}")
    arguments, position = json_object_at(region, start + len(_ARGUMENTS), name.group(), found)
    position = expect(region, position, ARGUMENTS_END, "after the arguments")
    position = expect(region, position, CALL_END, "after the arguments' closer")
    return ParsedToolCall(name.group(), arguments), None, position


def read_region(region: str, opener: Opener, found: Found | None):
    if opener.literal != SECTION:
        return []  # framing: the turn's end token
    start = skip_space(region, len(SECTION))
    if region.startswith(NAME, start):
        raise CallSyntaxError(f"a call without {CALL} inside {SECTION}, at offset {start}")
    if region.startswith(SECTION_END, start):
        raise CallSyntaxError(f"an empty {SECTION}: no call between it and {SECTION_END}")
    return read_section(region, SECTION, SECTION_END, CALL, _read_call, found=found)


# Hand-written: the section token opens a section when whitespace and then a
# call token (or the name token, or the section's end, both refused) follow it;
# prose that names the token stays text.
OPENER = Opener(
    SECTION,
    opener_pattern(SECTION, sequence(SPACES, either(literal(CALL), literal(NAME), literal(SECTION_END)))),
    lambda: TagExtent(len(SECTION), SECTION_END, "json"),
)
EOT_OPENER = Opener(EOT, literal(EOT), TokenExtent(EOT), cut_after=NEVER)

_ARGS = '{"city": "東京", "days": 3}'
_ONE = f"{CALL}{NAME}weather{_NAME_CLOSE}{_ARGUMENTS}{_ARGS}{ARGUMENTS_END}{CALL_END}"
CALL_SAMPLE = ParsedToolCall("weather", {"city": "東京", "days": 3})
_PING = f"{CALL}{NAME}ping{_NAME_CLOSE}{_ARGUMENTS}{{}}{ARGUMENTS_END}{CALL_END}"

FORMAT = Format.declared(
    WIRE,
    name="plamo3",
    description="<|plamo:begin_tool_request:plamo|> name and JSON arguments tokens, in a tool-requests section (PLaMo 3)",
    openers=(OPENER, EOT_OPENER),
    read_region=read_region,
    response_template=None,
    no_response_template=("no PLaMo 3 chat template is at hand to anchor the assistant turn (the wire here comes "
                          "from vLLM's parser and tool-call grammar)"),
    samples=(
        Sample(f"{SECTION}{_ONE}{SECTION_END}", (CALL_SAMPLE,), source="vLLM's PLaMo 3 tool-call grammar"),
        Sample(f"{THINK}The user wants the weather.{THINK_END}Let me check. {SECTION}{_ONE}{_PING}{SECTION_END}"
               f"{EOT}", (CALL_SAMPLE, ParsedToolCall("ping", {})),
               source="reasoning, content, two calls, the turn's end token"),
        Sample(f"{SECTION}\n{CALL} {NAME}weather{_NAME_CLOSE} {_ARGUMENTS} {_ARGS} {ARGUMENTS_END} {CALL_END}\n"
               f"{SECTION_END}", (CALL_SAMPLE,), source="whitespace between the tokens"),
        Sample(f"Tokyo is sunny.{EOT}", (), source="a plain answer; the turn's end token dropped"),
        Sample(f'{SECTION}{CALL}{NAME}fs.read{_NAME_CLOSE}{_ARGUMENTS}{{"path": "a<b>.txt", "n": [1, null]}}'
               f"{ARGUMENTS_END}{CALL_END}{SECTION_END}",
               (ParsedToolCall("fs.read", {"path": "a<b>.txt", "n": [1, None]}),),
               source="a dotted name, markup in a string"),
    ),
    near_misses=(
        NearMiss(f"{SECTION}{CALL}{NAME}weath", True, "cut inside the name"),
        NearMiss(f'{SECTION}{CALL}{NAME}weather{_NAME_CLOSE}{_ARGUMENTS}{{"city": "東', True, "cut inside the JSON"),
        NearMiss(f"{SECTION}{_ONE}", True, "the section never closes"),
        NearMiss(f"{SECTION}{NAME}weather{_NAME_CLOSE}{_ARGUMENTS}{_ARGS}{ARGUMENTS_END}{SECTION_END}", True,
                 "a call without its request token"),
        NearMiss(f"{SECTION}{SECTION_END}", True, "an empty section"),
        NearMiss(f"{SECTION}{CALL}{NAME}get weather{_NAME_CLOSE}{_ARGUMENTS}{_ARGS}{ARGUMENTS_END}{CALL_END}"
                 f"{SECTION_END}", True, "a name with a space"),
        NearMiss(f"{SECTION}{CALL}{NAME}weather{_NAME_CLOSE}<|plamo:begin_tool_arguments:plamo|>{_ARGS}"
                 f"{ARGUMENTS_END}{CALL_END}{SECTION_END}", True, "no JSON constraint header"),
        NearMiss(f'{SECTION}{CALL}{NAME}weather{_NAME_CLOSE}{_ARGUMENTS}"{{}}"{ARGUMENTS_END}{CALL_END}{SECTION_END}',
                 True, "arguments written as a JSON string"),
        NearMiss(f"{SECTION}{_ONE} noise {SECTION_END}", True, "text after a call, inside the section"),
        NearMiss(f"PLaMo 3 opens its calls with {SECTION}.", False, "prose naming the section token"),
    ),
    wire_limits=(),
    corpus_labels=(),
    vllm_parser=("plamo3",),
)
