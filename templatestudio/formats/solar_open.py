"""Solar Open: ``<|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>{…}<|tool_call:end|>`` calls.

Model: Upstage's Solar Open 100B. Source: the corpus template
``upstage-Solar-Open-100B``. The calls of one turn follow
``<|tool_calls|>`` and end with ``<|calls|>``; each call carries the id the
model made up (the template asks for ten lowercase letters or digits) and
the id comes back on the call's span. The generation prompt ends
``<|begin|>assistant``; with reasoning the model writes
``<|think|>…<|end|>`` first and then ``<|begin|>assistant`` again before
``<|tool_calls|>``, so the reasoning block closes with that header
(``<|end|>`` alone is also the end of a plain turn).

Each call is read as a region of its own (``sections.CallThenCloser``), as
DeepSeek's are: a reply cut between two calls gives the calls before the
cut. Read: several calls, a call without the section token (each call opens
on its own token), whitespace around the JSON and before ``<|calls|>``,
and a missing ``<|calls|>`` when the reply ends right after a whole call
(it ends the turn, so a server that stops on it hands the client exactly
that). Refused: an empty id or name, or one holding whitespace or ``<``;
whitespace between the id, name and args tokens; arguments that are not a
JSON object (a JSON string holding one included). Text after a call, as
between DeepSeek's calls, comes back as text.

Not handled: the ``<|content|>`` token that opens a plain reply stays in
the content (it is a channel, not a call).
"""

from __future__ import annotations

import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.wire.base import Found, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern
from templatestudio.wire.jsonbody import skip_space
from templatestudio.wire.optional_closer import only_closer_after
from templatestudio.wire.sections import CallThenCloser, expect, json_object_at
from templatestudio.resumable_match import literal
from templatestudio.wire.shape import Call, CallId, JsonObject, NameBetween, Reasoning, Section, WireShape

# The writer's shape. The openers and reader are the module's own: a call
# opens with the section token or alone, its id is any word, and the
# section closer after the last call belongs to it (a stop token may cut it).
WIRE = WireShape(
    section=Section("<|tool_calls|>", "<|calls|>", alone=True),
    call=Call("<|tool_call:begin|>", "<|tool_call:end|>"),
    call_id=CallId("call00001", "<|tool_call:name|>"),
    name=NameBetween("", "<|tool_call:args|>"),
    arguments=JsonObject(),
    separator="",
    reasoning=Reasoning("<|think|>", "<|end|><|begin|>assistant"),
    stop_tokens=("<|calls|>",),
    closer_optional=True,
)

HEADER = "<|begin|>assistant"
SECTION, SECTION_END = WIRE.section.open, WIRE.section.close
CALL, NAME, ARGS, CALL_END = WIRE.call.open, WIRE.call_id.close, WIRE.name.close, WIRE.call.close
REASONING = WIRE.reasoning_pair
_WORD = re.compile(r"[^ \t\n\r<]+")

RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": HEADER,
    "fields": {
        "thinking": {"open": REASONING[0], "close": REASONING[1], "content": "text"},
        "tool_calls": {
            "open_pattern": r"(?:<\|tool_calls\|>)?<\|tool_call:begin\|>(?P<id>[^\s<]+)<\|tool_call:name\|>"
                            r"(?P<name>[^\s<]+)<\|tool_call:args\|>",
            "close_pattern": r"<\|tool_call:end\|>(?:\s*<\|calls\|>)?",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "id": "{id}", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"open": "<|content|>", "close": "<|end|>", "content": "text"},
    },
}


def _word(region: str, index: int, what: str, then: str) -> tuple[str, int]:
    """The id or name at index and the offset past the token that must follow it."""
    found = _WORD.match(region, index)
    if found is None:
        raise CallSyntaxError(f"no {what} at offset {index}")
    if not region.startswith(then, found.end()):
        raise CallSyntaxError(f"expected {then} after the {what} {found.group()!r}, at offset {found.end()}")
    return found.group(), found.end() + len(then)


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
    position = skip_space(region, len(SECTION) if opener.literal == SECTION else 0)
    if not region.startswith(CALL, position):
        raise CallSyntaxError(f"expected {CALL} at offset {position}")
    call_id, position = _word(region, position + len(CALL), "call id", NAME)
    name, position = _word(region, position, "tool name", ARGS)
    arguments, position = json_object_at(region, position, name, found)
    position = skip_space(region, expect(region, position, CALL_END, "after the arguments"))
    if not only_closer_after(region, position, SECTION_END):
        raise CallSyntaxError(f"unexpected text after the call at offset {position}")
    return [CallSpan(ParsedToolCall(name, arguments), 0, len(region), call_id)]


def _extent(skip: int):
    return lambda: CallThenCloser(skip, CALL_END, SECTION_END)


OPENERS = (
    Opener(SECTION, opener_pattern(SECTION, SPACES, literal(CALL)), _extent(len(SECTION))),
    Opener(CALL, opener_pattern(CALL), _extent(len(CALL))),
)
_ARGS = '{"base": "EUR", "quote": "JPY"}'
_ONE = f"{CALL}a1b2c3d4e5{NAME}get_exchange_rate{ARGS}{_ARGS}{CALL_END}"
CALL_SAMPLE = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})

FORMAT = Format.declared(
    WIRE,
    name="solar-open",
    description="<|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>{...} calls (Solar Open)",
    openers=OPENERS,
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(f"{SECTION}{_ONE}{SECTION_END}", (CALL_SAMPLE,), ids=("a1b2c3d4e5",), source="upstage-Solar-Open-100B"),
        Sample(f"<|think|>Two lookups.<|end|>{HEADER}{SECTION}{_ONE}{CALL}k9{NAME}ping{ARGS}{{}}{CALL_END}{SECTION_END}",
               (CALL_SAMPLE, ParsedToolCall("ping", {})), ids=("a1b2c3d4e5", "k9"),
               source="reasoning, the header again, two calls"),
        Sample(f"{SECTION}{CALL}x1{NAME}db.query{ARGS} {{\"sql\": \"select '<|calls|>'\"}} {CALL_END}",
               (ParsedToolCall("db.query", {"sql": "select '<|calls|>'"}),), ids=("x1",),
               source="<|calls|> removed by a stop token; spaces around the JSON"),
    ),
    near_misses=(
        NearMiss(f"Solar lists its calls after {SECTION}.", False, "prose naming the section token"),
        NearMiss(f"{SECTION}{CALL}{NAME}f{ARGS}{{}}{CALL_END}{SECTION_END}", True, "an empty id"),
        NearMiss(f"{SECTION}{CALL}a 1{NAME}f{ARGS}{{}}{CALL_END}{SECTION_END}", True, "an id holding a space"),
        NearMiss(f"{SECTION}{CALL}a1{NAME}f{ARGS}\"{{}}\"{CALL_END}{SECTION_END}", True, "arguments as a JSON string"),
        NearMiss(f"{SECTION}{CALL}a1 {NAME}f{ARGS}{{}}{CALL_END}{SECTION_END}", True, "whitespace between the tokens"),
        NearMiss(f"{SECTION}{CALL}a1{NAME}f{ARGS}{{\"x\": 1", True, "cut inside the arguments"),
    ),
    wire_limits=(
        WireLimit(f"a string holding {CALL_END}: the response template closes the call at the first one",
                  lambda arguments: any_string(arguments, lambda s: CALL_END in s), where="response template"),
    ),
    corpus_labels=("other:solar",),
    variants=("<|calls|> missing at the end of the reply", "a call without the section token"),
)
