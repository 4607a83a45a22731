"""HY v3: ``<tool_calls>`` holding ``<tool_call>NAME<tool_sep>`` then ``<arg_key>``/``<arg_value>`` pairs (Hy3).

Read as Tencent's Hy3 models write it: one ``<tool_calls>…</tool_calls>``
section per turn holding one or more calls, each ``<tool_call>``, the name
at once, ``<tool_sep>``, then ``<arg_key>k</arg_key><arg_value>v</arg_value>``
pairs, then ``</tool_call>``. Both layouts the model writes are read: each
tag on a line of its own, and everything on one line; whitespace between
the tags is passed over, a name, key or value comes back exactly as written
between its tags. Values are text (a string as it is, any other value as its
JSON), typed later against the tool's schema (``string_arguments``).
Reasoning: ``<think>…</think>``; the prompt opens the block when thinking is
on, so the reply starts inside it.

This is HY v4's wire (``formats.hy_v4``) with ``<tool_sep>`` after the name,
read by the same section reader: where a value ends, what is refused and
what is not handled are said there. The section opens a call only when
``<tool_call>``, a name and ``<tool_sep>`` follow it, so the two wires (and
Apriel's ``<tool_calls>[``) never overlap; a call whose ``<tool_sep>`` is
missing is HY v4's, and one outside a section is GLM's. Not handled: a
checkpoint's suffixed structural tokens (``<tool_calls:SUFFIX>``).
"""

from __future__ import annotations

from templatestudio.calls import ParsedToolCall
from templatestudio.formats.hy_v4 import SectionReader
from templatestudio.wire.base import Format, NearMiss, Sample, WireLimit, any_string
from templatestudio.wire.shape import Call, KeyValuePairs, NameBetween, Reasoning, Section, WireShape

# The writer's shape, one tag a line as the vLLM examples show it; the opener and
# reader are HY's section reader, told that a <tool_sep> ends the name.
WIRE = WireShape(
    section=Section("<tool_calls>", "</tool_calls>", head="\n", tail="\n"),
    call=Call("<tool_call>", "</tool_call>"),
    name=NameBetween("", "<tool_sep>", head="\n"),
    arguments=KeyValuePairs("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
    separator="\n",
    reasoning=Reasoning("<think>", "</think>"),
)

READER = SectionReader(WIRE, WIRE.name.close)
OPEN, CLOSE, SEP = READER.open, READER.close, READER.sep

CALL = ParsedToolCall("get_weather", {"city": "Beijing", "date": "2026-03-30"})
_LINES = (f"{OPEN}\n<tool_call>get_weather{SEP}\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n"
          f"<arg_key>date</arg_key>\n<arg_value>2026-03-30</arg_value>\n</tool_call>\n{CLOSE}")
_INLINE = (f"{OPEN}<tool_call>get_weather{SEP}<arg_key>city</arg_key><arg_value>Beijing</arg_value>"
           f"<arg_key>date</arg_key><arg_value>2026-03-30</arg_value></tool_call>{CLOSE}")
_TAIL = "</arg_value>\n</tool_call>\n</tool_calls>"  # what the writer puts after a last value

FORMAT = Format.declared(
    WIRE,
    name="hy-v3",
    description="<tool_calls><tool_call>NAME<tool_sep><arg_key>k</arg_key><arg_value>v</arg_value></tool_call> (Hy3)",
    openers=(READER.opener,),
    read_region=READER.read_region,
    response_template=None,
    no_response_template=("no Hy3 chat template is at hand to anchor the assistant turn and check a response "
                          "template against; the reader stands alone"),
    samples=(
        Sample(_LINES, (CALL,), source="Hy3, one tag a line (vLLM's hy_v3 examples)"),
        Sample(_INLINE, (CALL,), source="Hy3, everything on one line"),
        Sample(f"<think>The user wants the date.</think>Checking.{OPEN}\n"
               f"<tool_call>get_current_date{SEP}\n</tool_call>\n"
               f"<tool_call>get_weather{SEP}\n<arg_key>city</arg_key>\n<arg_value>Hangzhou</arg_value>\n"
               f"</tool_call>\n{CLOSE}",
               (ParsedToolCall("get_current_date", {}), ParsedToolCall("get_weather", {"city": "Hangzhou"})),
               source="reasoning, text, then two calls, the first without arguments"),
        Sample(f"{OPEN}<tool_call>write_note{SEP}<arg_key>text</arg_key><arg_value> two\nlines </arg_value>"
               f"<arg_key>count</arg_key><arg_value>3</arg_value></tool_call>{CLOSE}",
               (ParsedToolCall("write_note", {"text": " two\nlines ", "count": "3"}),),
               source="values kept exactly, numbers as their text"),
    ),
    near_misses=(
        NearMiss(f"{OPEN}\n<tool_call>get_weather{SEP}\n<arg_k", True, "cut inside a key tag"),
        NearMiss(f"{OPEN}\n<tool_call>get_weather{SEP}\n</tool_call>\n", True, "a section never closed"),
        NearMiss(f"{OPEN}<tool_call>a{SEP}<arg_key>x</arg_key><arg_value>1</arg_value><arg_key>x</arg_key>"
                 f"<arg_value>2</arg_value></tool_call>{CLOSE}", True, "a key given twice"),
        NearMiss(f"{OPEN}<tool_call>a{SEP}<arg_key>x</arg_key></tool_call>{CLOSE}", True, "a key without a value"),
        NearMiss(f"{OPEN}<tool_call>a{SEP}<arg_key>x</arg_key><arg_value>1</tool_call>{CLOSE}", True,
                 "a value whose closer is missing"),
        NearMiss(f"{OPEN}<tool_call>a{SEP}note</tool_call>{CLOSE}", True, "text after the separator"),
        NearMiss(f"Hy3 puts {SEP} after the name, inside {OPEN} sections.", False, "prose naming the tags"),
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
    variants=("one tag a line", "one line"),
    string_arguments=True,
    vllm_parser=("hy_v3",),
)
