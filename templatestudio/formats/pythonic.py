"""Pythonic: ``[name(key=value, …), …]``, Python call syntax with literal values.

Where it stands: a bare list opening the reply (Llama 3.2 and Llama 4
pythonic), LFM2's ``<|tool_call_start|>[…]<|tool_call_end|>`` and Llama 4's
``<|python_start|>[…]<|python_end|>``, either of them anywhere; text around
the list stays content. Read by a small parser of its own, never
evaluated and not through ``ast``: ``ast`` NFKC-normalises identifiers, so
``[𝐝𝐞𝐥𝐞𝐭𝐞_𝐚𝐥𝐥()]`` would come back as a call to ``delete_all``. Names and
keys are returned exactly as written. Values: strings (single or double
quotes, Python escapes), ASCII integers and floats, ``True``/``False``/
``None``, lists and string-keyed dicts. A list whose first item is not
``name(`` + keyword or ``)`` (``[len(row) for row in rows]``,
``[Note(important)]``) is prose; one that starts like a call and then breaks
is refused. An empty wrapped list means "no call". A wrapped list ends at
its first closing token, so a string inside it cannot hold
``<|tool_call_end|>`` or ``<|python_end|>``; the bare list (what the writer
and the templates write) can. Lists of plain calls (scalar values; strings
with no escape or parenthesis) take a fast path (``pythonic_fast_path``)
that reads the same calls and defers everything else to ``_Parser``, which
defines the behaviour; values are read by ``wire.python_literals``. A
reply cut before the list's ``]`` (``max_tokens``) gives no call, however
many calls in it closed: the list is one Python expression, which Meta's
Llama 4 reference and vLLM's pythonic parser read whole or not at all, so
all of it, from ``[`` (or the wrapper) on, is the ``CutToolCall``
(``regions.cut_events``; strictly, the reply raises). The closer is not
optional: a server stops on no ``]``. Not handled: positional arguments, tuples, sets, ``**kwargs``, triple-quoted
strings.
"""

from __future__ import annotations

from templatestudio.calls import CallSpan, ParsedToolCall, region_spans
from templatestudio.formats import pythonic_fast_path as plain
from templatestudio.formats.pythonic_fast_path import ListExtent
from templatestudio.wire.base import (
    Found, FoundCalls, SPACES, CallSyntaxError, Format, NearMiss, Opener, Sample, WireLimit, any_string, opener_pattern,
)
from templatestudio.wire.extents import TagExtent
from templatestudio.wire.python_literals import CONNECTORS, IDENTIFIER, SPACE, PythonLiterals
from templatestudio.wire.shape import Call, HandWritten, Section, WireShape
from templatestudio.resumable_match import chars, literal, run

# The envelope, declared: markers, closers and the wrappers come from it.
# The name and arguments are Python call syntax, which the declaration
# language cannot say: the reader (_Parser and the fast path) and
# write_call below are hand-written.
WIRE = WireShape(
    section=Section("[", "]"),
    call=Call(),
    name=HandWritten("a Python identifier, read as written (never NFKC-normalised), then its argument list"),
    arguments=HandWritten("keyword arguments with Python literal values (wire.python_literals)"),
    separator=", ",
    wrappers=(Section("<|tool_call_start|>", "<|tool_call_end|>"), Section("<|python_start|>", "<|python_end|>")),
)

WRAPPERS = {wrapper.open: wrapper.close for wrapper in WIRE.wrappers}


# --- the parser: every list the format reads --------------------------------------------------


class _NotACall(Exception):
    """Internal: the list is prose, not a call attempt."""


class _Parser(PythonLiterals):
    """The call grammar over Python literals: ``[name(key=value, …), …]``."""

    def calls(self, index: int) -> tuple[list[ParsedToolCall], int]:
        text = self.text
        index = self.space(index + 1)  # past "["
        calls: list[ParsedToolCall] = []
        if text.startswith("]", index):
            return calls, index + 1
        while True:
            calls.append(self.call(index, first=not calls))
            index = self.space(self._after_call)
            if text.startswith(",", index):
                index = self.space(index + 1)
            elif text.startswith("]", index):
                return calls, index + 1
            else:
                raise CallSyntaxError(f"expected , or ] after a call at offset {index}")

    def call(self, index: int, *, first: bool) -> ParsedToolCall:
        text = self.text
        name = IDENTIFIER.match(text, index)
        if name is None or not text.startswith("(", name.end()):
            if first:
                raise _NotACall
            raise CallSyntaxError(f"expected name( at offset {index}")
        index = self.space(name.end() + 1)
        arguments: dict[str, object] = {}
        if first and not text.startswith(")", index):
            key = IDENTIFIER.match(text, index)
            if key is None or not text.startswith("=", self.space(key.end())) or "." in key.group(0):
                raise _NotACall  # positional arguments or an expression: Python in prose
        while not text.startswith(")", index):
            key = IDENTIFIER.match(text, index)
            if key is None or "." in key.group(0):
                raise CallSyntaxError(f"expected a keyword argument at offset {index}")
            index = self.space(key.end())
            if not text.startswith("=", index):
                raise CallSyntaxError(f"expected = after {key.group(0)!r}")
            if key.group(0) in arguments:
                raise CallSyntaxError(f"argument {key.group(0)!r} is given twice")
            arguments[key.group(0)], index = self.value(self.space(index + 1), 0)
            index = self.space(index)
            if text.startswith(",", index):
                index = self.space(index + 1)
            elif not text.startswith(")", index):
                raise CallSyntaxError(f"expected , or ) at offset {index}")
        self._after_call = index + 1
        return ParsedToolCall(name.group(0), arguments)


def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan] | None:
    closer = WRAPPERS.get(opener.literal)
    if not closer and type(found) is FoundCalls:
        return found.spans
    start = SPACE.match(region, len(opener.literal) if closer else 0).end()
    parser = _Parser(region)
    if not region.startswith("[", start):
        raise CallSyntaxError(f"expected [ after {opener.literal}")
    end = len(region) - len(closer) if closer else len(region)
    fast = plain.fast_calls(region, start, len(region))
    if fast is not None and SPACE.match(region, fast[1]).end() == end:
        return fast[0]
    try:
        calls, after = parser.calls(start)
    except _NotACall:
        if closer:
            raise CallSyntaxError(f"the list after {opener.literal} is not a list of calls") from None
        return None
    except RecursionError:
        raise CallSyntaxError("values nested too deeply") from None
    if SPACE.match(region, after).end() != end:
        raise CallSyntaxError(f"unexpected text after the list at offset {after}")
    return region_spans(calls, len(region))


def _write_value(value: object) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_write_value(k)}: {_write_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_write_value(item) for item in value) + "]"
    return repr(value)


def write_call(call: ParsedToolCall) -> str:
    arguments = ", ".join(f"{key}={_write_value(value)}" for key, value in call.arguments.items())
    return f"[{call.name}({arguments})]"


_NAME_START = chars(rf"(?:[^\W0-9]|[{CONNECTORS}])")
OPENERS = (
    Opener("[", opener_pattern("[", SPACES, _NAME_START, run(chars(rf"[\w.{CONNECTORS}]")), literal("(")),
           ListExtent, start_only=True, cut_after=1 << 30),
    *(Opener(wrapper, opener_pattern(wrapper, SPACES, literal("[")), lambda wrapper=wrapper, close=close: TagExtent(len(wrapper), close))
      for wrapper, close in WRAPPERS.items()),
)
CALL = ParsedToolCall("get_exchange_rate", {"base": "EUR", "quote": "JPY"})

FORMAT = Format.declared(
    WIRE,
    name="pythonic",
    description="[name(key=value, ...)] Python-literal calls (Llama 3.2/4 pythonic, LFM2)",
    openers=OPENERS,
    read_region=read_region,
    write_call=write_call,  # hand-written: the declaration cannot write Python literals
    response_template=None,
    no_response_template=(
        "transformers' response-template language cannot read Python literals: True/None stay text "
        "and nested brackets defeat its patterns"
    ),
    samples=(
        Sample('[get_exchange_rate(base="EUR", quote="JPY")]', (CALL,), source="Llama 3.2 pythonic"),
        Sample("[get_exchange_rate(base='EUR', quote='JPY'), ping()]", (CALL, ParsedToolCall("ping", {}))),
        Sample('[s(q="a, b", n=10, f=0.5, live=True, since=None, p=["x"], o={"d": 7})]',
               (ParsedToolCall("s", {"q": "a, b", "n": 10, "f": 0.5, "live": True, "since": None, "p": ["x"], "o": {"d": 7}}),)),
        Sample('<|tool_call_start|> [get_exchange_rate(base="EUR", quote="JPY")]<|tool_call_end|>Checking.', (CALL,),
               source="LFM2, a space before the list"),
        Sample("<|python_start|>[get_weather(city='LA', metric='C')]<|python_end|>",
               (ParsedToolCall("get_weather", {"city": "LA", "metric": "C"}),), source="Llama 4"),
        Sample("<|tool_call_start|>[]<|tool_call_end|>No call needed.", (), source="LFM2: an empty block, no call"),
        Sample("[𝐝𝐞𝐥𝐞𝐭𝐞_𝐚𝐥𝐥(confirm=True)]", (ParsedToolCall("𝐝𝐞𝐥𝐞𝐭𝐞_𝐚𝐥𝐥", {"confirm": True}),),
               source="a name as written, never normalised to delete_all"),
    ),
    near_misses=(
        NearMiss("[len(row) for row in rows] gives each row's length.", False, "a list comprehension"),
        NearMiss("[Note(important)] Read this first.", False, "a bracketed note"),
        NearMiss('[get_weather(city=)]', True, "a keyword with no value"),
        NearMiss("<|tool_call_start|>[get_weather(city='LA')", True, "cut inside the wrapper"),
    ),
    wire_limits=(
        WireLimit("a float that is infinite or not a number: repr writes a name, not a literal",
                  lambda arguments: any_string(arguments, lambda s: False) or _bad_float(arguments)),
        WireLimit("a keyword that is not a plain identifier (Python syntax has no way to write it)",
                  lambda arguments: any(not IDENTIFIER.fullmatch(key) or "." in key for key in arguments)),
    ),
    corpus_labels=("pythonic",),
    variants=("LFM2 <|tool_call_start|> wrapper", "Llama 4 <|python_start|> wrapper", "text after the list"),
    vllm_parser=("pythonic", "lfm2", "llama4_pythonic"),
)


def _bad_float(value: object) -> bool:
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if isinstance(value, dict):
        return any(_bad_float(item) for item in value.values())
    if isinstance(value, list):
        return any(_bad_float(item) for item in value)
    return False
