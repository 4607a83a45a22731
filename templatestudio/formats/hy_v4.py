"""HY v4: ``<tool_calls>`` holding ``<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>…</tool_call>``.

Read as Tencent's HY v4 models write it: one ``<tool_calls>…</tool_calls>``
section per turn holding one or more calls back to back, each
``<tool_call>`` then the name at once, then GLM-style
``<arg_key>``/``<arg_value>`` pairs, then ``</tool_call>``. Whitespace
between the tags is passed over (the model writes none); a name, key or
value comes back exactly as written between its tags, nothing stripped.
Values are text: the model writes a string as it is and any other value as
its JSON, typed later against the tool's schema (``string_arguments``).
Reasoning: ``<think>…</think>`` at the start of the reply (the prompt opens
it when thinking is on).

Where a value ends (``wire.xml_params``' scanner, shared by the extent and
the reader): an ``</arg_value>`` ends it only when whitespace and then the
next ``<arg_key>``, or ``</tool_call>`` followed by the next ``<tool_call>``
or ``</tool_calls>``, follow it; any other tag in a value is its text.

The section opens a call only when ``<tool_call>``, a name and then
``<arg_key>`` or ``</tool_call>`` follow it (``<tool_calls>[`` is Apriel's
JSON list; a name then ``<tool_sep>`` is HY v3's wire, ``formats.hy_v3``);
a call outside a section is GLM's wire. Refused: a name holding whitespace,
``<`` or ``>``, a key without its value, a key given twice, a value whose
``</arg_value>`` is missing, anything else in the section or between the
tags, an empty or never-closed section. Not handled: a value holding the
boundary above (it ends the value, ``wire_limits``), a key holding
``</arg_key>``, and checkpoints whose structural tokens carry a suffix
(``<tool_calls:6124c78e>``): their tags are other literals.
"""

from __future__ import annotations

import re

from templatestudio.calls import CallSpan, ParsedToolCall
from templatestudio.resumable_match import chars, either, literal, run, sequence
from templatestudio.wire.base import (
    Found, SPACES, WS, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.jsonbody import call_from, decode_at
from templatestudio.wire.shape import Call, KeyValuePairs, NameBetween, Reasoning, Section, WireShape
from templatestudio.wire.xml_extent import ValueAwareExtent
from templatestudio.wire.xml_params import holds_boundary, value_ends
from templatestudio.wire.sections import element_spans
from templatestudio.wire.named_pairs import read_pairs

# The writer's shape; the opener and reader are the module's own (below), shared with HY v3.
WIRE = WireShape(
    section=Section("<tool_calls>", "</tool_calls>"),
    call=Call("<tool_call>", "</tool_call>"),
    name=NameBetween("", ""),
    arguments=KeyValuePairs("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", between="", after=""),
    separator="",
    reasoning=Reasoning("<think>", "</think>"),
)

_NAME = re.compile(r"[^ \t\n\r<>]+")
_SPACE = re.compile(f"{WS}*")


class SectionReader:
    """The opener and region reader of a HY-style section of calls.

    sep: the literal the wire writes after the name ("": none). typed: the
    (open, close) tags of a type a pair may give between its key and value,
    passed over (values are typed against the schema). json_body: a call may
    hold one JSON call object instead of a name and pairs.
    """

    def __init__(self, wire: WireShape, sep: str, *, typed: tuple[str, str] | None = None,
                 json_body: bool = False) -> None:
        self.open, self.close = wire.section.open, wire.section.close
        self.call_open, self.call_close = wire.call.open, wire.call.close
        self.pairs = pairs = wire.arguments
        self.key, self.end_key, self.value, self.end_value = (
            pairs.key_open, pairs.key_close, pairs.value_open, pairs.value_close)
        self.sep, self.typed, self.json_body = sep, typed, json_body
        escaped = {name: re.escape(getattr(self, name)) for name in
                   ("open", "close", "call_open", "call_close", "key", "end_key", "value", "end_value")}
        # What the model writes after a value: the next key, or the call's closer and then
        # the next call or the section's end.
        self.ends = value_ends(self.end_value, f"{escaped['key']}|{escaped['call_close']}{WS}*"
                                              f"(?:{escaped['call_open']}|{escaped['close']})")
        after_name = literal(sep) if sep else either(literal(self.key), literal(self.call_close))
        named = sequence(chars(r"[^ \t\n\r<>{\[]"), run(chars(r"[^ \t\n\r<>]")), SPACES, after_name)
        self.opener = Opener(
            self.open,
            opener_pattern(self.open, SPACES, literal(self.call_open),
                           either(named, sequence(SPACES, literal("{"))) if json_body else named),
            # A key is passed over whole: its text ends only at </arg_key>, as the reader reads it.
            lambda: ValueAwareExtent(len(self.open), escaped["value"], self.close, self.ends,
                                     (self.key, self.end_key)),
        )

    def holds_boundary(self, text: str, tail: str) -> bool:
        """Whether a string written as a value, then tail, meets a value's boundary before its end."""
        return holds_boundary(text, f"{self.key}k{self.end_key}{self.value}", self.ends, tail)

    def _json_call(self, region: str, position: int, end: int) -> tuple[ParsedToolCall, int]:
        payload, after = decode_at(region, position)
        call, _ = call_from(payload)
        after = _SPACE.match(region, after, end).end()
        if not region.startswith(self.call_close, after):
            raise CallSyntaxError(f"expected {self.call_close} after the call's JSON, at offset {after}")
        return call, after + len(self.call_close)

    def _past_type(self, region: str, position: int, end: int, key: str) -> int:
        """Past the type a pair gives between its key and value, if the wire has one and it is there."""
        if self.typed is None or not region.startswith(self.typed[0], position):
            return position
        type_end = region.find(self.typed[1], position, end)
        kind = region[position + len(self.typed[0]) : type_end] if type_end != -1 else ""
        if not kind or any(c in kind for c in "<>\n"):
            raise CallSyntaxError(f"the type of {key!r} is not one tag {self.typed[0]}TYPE{self.typed[1]}")
        return _SPACE.match(region, type_end + len(self.typed[1]), end).end()

    def _call(self, region: str, position: int, end: int) -> tuple[ParsedToolCall, int]:
        body = _SPACE.match(region, position + len(self.call_open), end).end()
        if self.json_body and region.startswith("{", body):
            return self._json_call(region, body, end)
        name = _NAME.match(region, position + len(self.call_open), end)
        if name is None:
            raise CallSyntaxError(f"no function name right after {self.call_open} at offset {position}")
        position = _SPACE.match(region, name.end(), end).end()
        if self.sep:
            if not region.startswith(self.sep, position):
                raise CallSyntaxError(f"expected {self.sep} after the function name {name.group()!r}")
            position = _SPACE.match(region, position + len(self.sep), end).end()
        # The boundary may reach the section's closer: read_pairs looks for it up to the region's end.
        arguments, position = read_pairs(region, position, end, self.pairs, self.ends, past_type=self._past_type)
        if not region.startswith(self.call_close, position):
            raise CallSyntaxError(f"expected {self.key} or {self.call_close} at offset {position}")
        return ParsedToolCall(name.group(), arguments), position + len(self.call_close)

    def read_region(self, region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
        # The extent ends every region just past the section's closer.
        return element_spans(region, len(self.open), len(region) - len(self.close), self.call_open, self._call,
                             none=f"no {self.call_open} in the {self.open} section",
                             expected=f"expected {self.call_open} or {self.close}")


READER = SectionReader(WIRE, "")
OPEN, CLOSE = READER.open, READER.close

CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})
_CALL = "<tool_call>get_exchange_rate<arg_key>base</arg_key><arg_value>EUR</arg_value>" \
        "<arg_key>quote</arg_key><arg_value>JPY</arg_value></tool_call>"
_TAIL = "</arg_value></tool_call></tool_calls>"  # what the model writes after a last value

FORMAT = Format.declared(
    WIRE,
    name="hy-v4",
    description="<tool_calls><tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>… (HY v4)",
    openers=(READER.opener,),
    read_region=READER.read_region,
    response_template=None,
    no_response_template=("no HY v4 chat template is at hand to anchor the assistant turn and check a response "
                          "template against; the reader stands alone"),
    samples=(
        Sample(f"{OPEN}{_CALL}{CLOSE}", (CALL,), source="the section vLLM's hy_v4 structural tag writes"),
        Sample(f"<think>The user wants a rate.</think>Checking.{OPEN}{_CALL}<tool_call>ping</tool_call>{CLOSE}",
               (CALL, ParsedToolCall("ping", {})), source="reasoning, text, then two calls in one section"),
        Sample(f"{OPEN}\n<tool_call>write_note<arg_key>text</arg_key>\n<arg_value> two\nlines </arg_value>\n"
               f"<arg_key>count</arg_key><arg_value>3</arg_value>\n</tool_call>\n{CLOSE}",
               (ParsedToolCall("write_note", {"text": " two\nlines ", "count": "3"}),),
               source="whitespace between the tags passed over, values kept exactly, numbers as their text"),
        Sample(f"{OPEN}<tool_call>note<arg_key>text</arg_key><arg_value>a</arg_value> b</tool_call></arg_value>"
               f"</tool_call>{CLOSE}", (ParsedToolCall("note", {"text": "a</arg_value> b</tool_call>"}),),
               source="a value holding the closers where no boundary follows them"),
    ),
    near_misses=(
        NearMiss(f"{OPEN}<tool_call>get_exchange_rate<arg_k", True, "cut inside a key tag"),
        NearMiss(f"{OPEN}{_CALL}", True, "a section never closed"),
        NearMiss(f"{OPEN}<tool_call>a<arg_key>x</arg_key><arg_value>1</arg_value><arg_key>x</arg_key>"
                 f"<arg_value>2</arg_value></tool_call>{CLOSE}", True, "a key given twice"),
        NearMiss(f"{OPEN}<tool_call>a<arg_key>x</arg_key></tool_call>{CLOSE}", True, "a key without a value"),
        NearMiss(f"{OPEN}<tool_call>a<arg_key>x</arg_key><arg_value>1</tool_call>{CLOSE}", True,
                 "a value whose closer is missing"),
        NearMiss(f"{OPEN}{_CALL}done{CLOSE}", True, "text inside the section"),
        NearMiss(f"HY wraps its calls in {OPEN} and {CLOSE} tags.", False, "prose naming the tags"),
    ),
    wire_limits=(
        WireLimit(f"a string holding what the model writes after a value ({READER.end_value} then {READER.key}, "
                  f"or {READER.call_close} then {READER.call_open} or {CLOSE}): it ends the value",
                  lambda arguments: any_string(arguments, lambda s: READER.holds_boundary(s, _TAIL))),
        WireLimit(f"a key holding {READER.end_key}, which ends the key",
                  lambda arguments: any(READER.end_key in key for key in arguments)),
        WireLimit("a value that is not a string: the wire writes its JSON as text, typed against the schema afterwards",
                  lambda arguments: any(not isinstance(value, str) for value in arguments.values())),
    ),
    corpus_labels=(),
    string_arguments=True,
    vllm_parser=("hy_v4",),
)
