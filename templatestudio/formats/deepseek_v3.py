"""DeepSeek V3 / R1: ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME`` + fenced JSON.

Each call is ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME`` then a
```` ```json ```` fence holding the arguments object, then
``<｜tool▁call▁end｜>``; the calls of one turn sit in one section closed by
``<｜tool▁calls▁end｜>``. Sources: the corpus templates ``deepseekv3``
(DeepSeek-V3), ``deepseek-ai-DeepSeek-R1-Distill-Llama-8B`` and
``llama-cpp-deepseek-r1`` (DeepSeek-R1 as llama.cpp ships it).

Each call is read as a region of its own (the first with the section
token before it, the last with the section closer after it), so a reply
cut between two calls gives the calls before the cut, as between two
Hermes blocks. Read: several calls in one section, whitespace between the
tokens, text before the section. Accepted variants: a section whose
``<｜tool▁calls▁end｜>`` is missing (R1-Distill's template writes a single
call that way; a server that stops on the closer hands the client the
same text), and a call whose section token is missing (each call opens on
its own token). Text between two calls comes back as text. Refused: a
type other than ``function``, a name holding whitespace or ``<``, a fence
other than ```` ```json ````, arguments that are not a JSON object (a JSON
string holding one included), a call that never reaches its
``<｜tool▁call▁end｜>``.

The opening is shared with DeepSeek V3.1 (``deepseek_v31``): the two are
told apart right after ``<｜tool▁call▁begin｜>``, V3 by the word
``function`` and ``<｜tool▁sep｜>`` followed by a name, V3.1 by everything
else, so each text that opens a DeepSeek call is one format's, never both.
Reasoning: R1's ``<think>…</think>`` at the start of the reply.

Not handled: names with whitespace or ``<`` (the name ends at the first
whitespace); the response template closes a call early at a string holding
```` ``` ```` followed by ``<｜tool▁call▁end｜>``.
"""

from __future__ import annotations

import re

import regex

from templatestudio.calls import ParsedToolCall
from templatestudio.wire.base import Found, CallSyntaxError, Format, NearMiss, Sample
from templatestudio.wire.per_call_regions import per_call_regions
from templatestudio.wire.sections import expect, json_object_at
from templatestudio.wire.shape import Call, JsonObject, NameBetween, Reasoning, Section, WireShape
from templatestudio.resumable_match import Pattern, chars, either, literal, sequence

# Everything the writer writes, declared: write_call, markers, closers and
# reasoning come from it. The openers and reader are the shared ones of a
# section read one call per region (wire.per_call_regions); the call's body
# (the type word, the name, the json fence) is read by _read_call below.
WIRE = WireShape(
    section=Section("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", alone=True),
    call=Call("<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", head="function<｜tool▁sep｜>", tail="\n```"),
    name=NameBetween("", "\n```json", head="\n"),
    arguments=JsonObject(),
    separator="\n",
    reasoning=Reasoning("<think>", "</think>"),
    stop_tokens=("<｜end▁of▁sentence｜>",),
)

SECTION, SECTION_END = WIRE.section.open, WIRE.section.close
SEP = WIRE.call.head[len("function"):]  # between the tool's type and its name (V3), or the name and the JSON (V3.1)
CALL, CALL_END = WIRE.call.open, WIRE.call.close
HEAD = WIRE.call.head  # what V3 writes after CALL: the tool's type, then the separator
FENCE, FENCE_END = "```json", "```"
_NAME = re.compile(r"[^ \t\n\r<]+")
_FIRST_NAME_CHAR = r"[^ \t\n\r<{\[\"]"  # a name, not JSON, follows V3's separator


def response_template(open_pattern: str, close_pattern: str) -> dict:
    """DeepSeek's chat turn for transformers' response templates, given how a call opens and closes."""
    return {
        "defaults": {"role": "assistant"},
        "start_anchor": "<｜Assistant｜>",
        "fields": {
            "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
            "tool_calls": {
                "open_pattern": open_pattern,
                "close_pattern": close_pattern,
                "repeats": True,
                "content": "json",
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
            },
            "content": {"close": "<｜end▁of▁sentence｜>", "content": "text"},
        },
    }


RESPONSE_TEMPLATE = response_template(
    r"(?:<｜tool▁calls▁begin｜>\s*)?<｜tool▁call▁begin｜>function<｜tool▁sep｜>(?P<name>[^\s<]+)\s*```json\s*",
    r"\s*```\s*<｜tool▁call▁end｜>(?:\s*<｜tool▁calls▁end｜>)?",
)


def other_head() -> Pattern:
    """Any text after CALL that is not V3's head: the complement of ``function<｜tool▁sep｜>NAME``.

    One branch per character of HEAD (its first i characters, then any
    other character), and HEAD followed by what cannot start a name.
    """
    differing = [sequence(literal(HEAD[:i]), chars(f"[^{regex.escape(HEAD[i])}]")) for i in range(len(HEAD))]
    return either(*differing, sequence(literal(HEAD), chars(r"[ \t\n\r<{\[\"]")))


def _read_call(region: str, index: int, found: Found | None) -> tuple[ParsedToolCall, None, int]:
    if not region.startswith(HEAD, index):
        raise CallSyntaxError(f"expected {HEAD} after {CALL}, at offset {index}")
    name = _NAME.match(region, index + len(HEAD))
    if name is None:
        raise CallSyntaxError(f"no tool name after {SEP}, at offset {index + len(HEAD)}")
    position = expect(region, name.end(), FENCE, f"after the name {name.group()!r}")
    arguments, position = json_object_at(region, position, name.group(), found)
    position = expect(region, position, FENCE_END, "after the arguments")
    position = expect(region, position, CALL_END, "after the fence")
    return ParsedToolCall(name.group(), arguments), None, position


OPENERS, read_region = per_call_regions(WIRE, sequence(literal(HEAD), chars(_FIRST_NAME_CHAR)), _read_call)

_ARGS = '{"base": "EUR", "quote": "JPY"}'
_ONE = f"{CALL}{HEAD}get_exchange_rate\n```json\n{_ARGS}\n```{CALL_END}"
CALL_SAMPLE = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})

FORMAT = Format.declared(
    WIRE,
    name="deepseek-v3",
    description="<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME + fenced JSON in a calls section (DeepSeek V3, R1)",
    openers=OPENERS,
    read_region=read_region,
    response_template=RESPONSE_TEMPLATE,
    no_response_template="",
    samples=(
        Sample(f"{SECTION}{_ONE}{SECTION_END}", (CALL_SAMPLE,), source="deepseekv3's template"),
        Sample(f"<think>\nThe user wants a rate.\n</think>\n\n{SECTION}{_ONE}{SECTION_END}", (CALL_SAMPLE,),
               source="DeepSeek-R1 with reasoning"),
        Sample(f"{SECTION}{_ONE}\n{CALL}{HEAD}ping\n```json\n{{}}\n```{CALL_END}{SECTION_END}",
               (CALL_SAMPLE, ParsedToolCall("ping", {})), source="two calls, as llama-cpp-deepseek-r1 joins them"),
        Sample(f"{SECTION}{_ONE}", (CALL_SAMPLE,), source="R1-Distill's template: a single call, section never closed"),
        Sample(f"Checking the rate.{SECTION}{_ONE}{SECTION_END}", (CALL_SAMPLE,), source="text before the calls"),
    ),
    near_misses=(
        NearMiss(f"{SECTION}{CALL}func", True, "cut inside the opening"),
        NearMiss(f'{SECTION}{CALL}{HEAD}get_exchange_rate\n```json\n{{"base": "EU', True, "cut inside the JSON"),
        NearMiss(f"{SECTION}{CALL}{HEAD}get_exchange_rate\n```json\n{_ARGS}\n```", True, "cut before the call's end"),
        NearMiss(f"{SECTION}{CALL}{HEAD}get_exchange_rate\n{_ARGS}{CALL_END}{SECTION_END}", True, "no json fence"),
        NearMiss(f"{SECTION}{CALL}{HEAD}get_exchange_rate\n```json\n[1, 2]\n```{CALL_END}{SECTION_END}", True,
                 "arguments that are a JSON list"),
        NearMiss(f"{SECTION}{_ONE}\n{CALL}{HEAD}ping\n```json\n{{}}", True, "the second call cut inside its fence"),
        NearMiss(f"DeepSeek V3 opens its calls with {SECTION} and closes them with {SECTION_END}.", False,
                 "prose naming the tokens"),
    ),
    # JSON carries every value; the only limit (a string holding ``` then
    # <｜tool▁call▁end｜>, for the response template) is in the docstring.
    wire_limits=(),
    corpus_labels=("other:deepseek#v3/r1",),
    variants=("section closer missing after a whole call (R1-Distill's template, stop strings)",
              "a call without its section token"),
    vllm_parser=("deepseek_v3",),
)
