"""The templates the round trip runs through, and what each one can carry, measured.

A subject is a real chat template with a registered format: every corpus
template whose label maps to a format (``corpus.LABEL_FORMATS``, minus the
known malformed renderings) and every cached tokenizer whose template the
probe reads. Nothing here names a format: the format, the call shape the
template accepts (``probe_template(...).shape``, one of ``CALL_SHAPES``) and
whether it writes values as text (``TemplateProbe.text_values``) all come
from the probe, and the limits of a wire from ``Format.limits_for``.

What a template can carry beyond its format's declared limits is measured,
not assumed (``measure``): representative values (each kind of JSON value,
each piece of the string alphabet, text keys, two calls in one turn) are
rendered through the template and read back. tests/test_roundtrip_property.py
pins the measurement, so a change in a reader or a template shows up as a
failing test, and builds its generators from it.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from jinja2 import TemplateError
from transformers.utils.chat_parsing.response_parser import parse_response

from templatestudio import corpus
from templatestudio.calls import ParsedToolCall, UnparsedToolCall
from templatestudio.engine import read_events
from templatestudio.events import ReasoningDelta, TextDelta, ToolCallEvent
from templatestudio.families import COURSE_FAMILIES
from templatestudio.formats import FORMATS, Format
from templatestudio.probe import CALL_SHAPES, CallShape, probe_template, template_variables
from templatestudio.probe_turn import call_turn_start, turn_before_conversation_tail
from templatestudio.templates import ChatTemplate
from oracle import same_json  # the tests' own comparison, not the package's

CACHED_REPOS = tuple(declared.repo_id for declared in COURSE_FAMILIES)  # every tokenizer in the cache
QUESTION = {"role": "user", "content": "Please look that up."}
TOOLS = [{"type": "function", "function": {
    "name": "lookup", "description": "Look something up.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "What to look up."}}},
}}]  # a described parameter: Command R+'s template prints every description
VARIABLES = template_variables(TOOLS)  # what the probe passes besides tools (firefunction v2's functions, datetime)
_SHAPES = {shape: shape.message() for shape in CALL_SHAPES}
# Text a reader may leave beside the calls: whitespace, the template's own tags (Gemma 4
# ends a call turn with <|tool_response>, which opens the tool's reply) and the separator a
# template writes between two calls (Phi-4-mini's ",", which its reader keeps as content).
_TAGS_ONLY = re.compile(r"(?:\s*(?:<\|?[\w:/]+\|?>|[,;]))*\s*")

Calls = list[tuple[str, dict]]

# --- the string alphabet and the representative values ------------------------------------

def _literals(template: object):
    """The literal strings a response template opens, closes or anchors on (its patterns are regexes)."""
    if isinstance(template, dict):
        for key, value in template.items():
            if key in ("open", "close", "start_anchor"):
                yield from ([value] if isinstance(value, str) else value if isinstance(value, list) else [])
            else:
                yield from _literals(value)


# A tag: <...> or </...> with no quote or bracket inside and at most one inner space
# (DeepSeek V4.1's "</｜DSML｜ parameter>"); and an element tag of control tokens, a word
# between two <|...|> tokens (Kimi K3's "<|close|>argument<|sep|>"), found overlapping. The
# sample call's names, keys and values are one letter each, so no element match holds one.
_TAG = re.compile(r"</?[^<>\s\[\]{}\"']{1,40}(?: [^<>\s\[\]{}\"']{1,40})?>")
_ELEMENT = re.compile(r"(?=(<\|\w+\|>[a-z_]{2,}<\|\w+\|>))")


def _written_tags(fmt: Format) -> set[str]:
    """The tags a format's own writer puts around a call's parts (<arg_key>, <escape>, <|close|>argument<|sep|>, ...)."""
    written = fmt.write_call(ParsedToolCall("f", {"k": "v", "n": 1, "l": ["x"]}))
    return {*_TAG.findall(written), *_ELEMENT.findall(written)}


MARKER_LOOKALIKES = sorted({
    *(tag for fmt in FORMATS.values() for tag in _written_tags(fmt)),
    *(marker for fmt in FORMATS.values() for marker in fmt.markers),
    *(text for fmt in FORMATS.values() for text in _literals(fmt.response_template) if text.strip()),
    *(closer for fmt in FORMATS.values() for closer in fmt.closers),
    *(text for fmt in FORMATS.values() if fmt.reasoning for text in fmt.reasoning),
    '<|"|>', "call:", "[ARGS]", "[CALL_ID]", "<function=f>", "<parameter=x>", "</parameter>",
    '{"name": "f", "arguments": {}}', '{"name": "f", "parameters": {}}', "[f(a=1)]",
    "<|im_end|>", "<turn|>", "<|eot_id|>", "</s>", "<|tool_response>", "<|tool_call_end|>",
})
PUNCTUATION = ['"', "'", "\\", "\\n", "\\u0041", "{", "}", "[", "]", ",", ":", ";", "(", ")", "=", "%s", '}, {"name": ',
               "{{", "}}", "}; ", "é", "日本", "🙂", "\ufeff", "\u2028", "\u2029", "\x85", "\U0001d41d"]
CONTROL = [chr(code) for code in range(32)] + ["\x7f"]
PIECES = tuple(dict.fromkeys([*MARKER_LOOKALIKES, *PUNCTUATION, *CONTROL]))
KIND_SAMPLES = {
    "string": "text", "integer": 42, "number": 2.5, "boolean": True, "null": None,
    "array": ["a", 1], "object": {"k": "v"},
}
KEY_SAMPLES = ("a b", "", "é", "k-1", "class", "None", "1k", "<k>", "k\n")


def kind_of(value: object) -> str:
    for name, kind in (("null", type(None)), ("boolean", bool), ("integer", int), ("number", float),
                       ("string", str), ("array", list), ("object", dict)):
        if isinstance(value, kind):
            return name
    raise TypeError(type(value).__name__)


def strings_in(value: object):
    """Every string in value, keys included, at any depth."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def kinds_in(value: object, top: bool = True):
    """(kind, at top level?) of every value in value."""
    if isinstance(value, dict) and top:
        for item in value.values():
            yield kind_of(item), True
            yield from kinds_in(item, False)
        return
    if isinstance(value, (dict, list)):
        for item in value.values() if isinstance(value, dict) else value:
            yield kind_of(item), False
            yield from kinds_in(item, False)


# --- subjects ------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Subject:
    """One real template with its format, the call shape it accepts and what it renders around a turn."""

    template: ChatTemplate
    format: Format
    shape: CallShape
    text_valued: bool  # the template writes values as text (probe.text_values), or the format does
    prompt: str
    turn_end: str
    response_templates: tuple[tuple[str, dict], ...]
    measured: dict = field(default_factory=dict, compare=False)
    # None for a template that renders calls only without tools, as the probe found
    # (llama.cpp's DeepSeek R1 pipes tools through map(), which transformers cannot dump).
    tools: list | None = field(default_factory=lambda: TOOLS)

    @property
    def name(self) -> str:
        return self.template.name

    @property
    def reasoning_open(self) -> bool:
        return self.format.reasoning_opened_by(self.prompt)


def _subject(template: ChatTemplate) -> Subject | None:
    probe = probe_template(template)
    if probe.format is None:
        return None
    tools = TOOLS if probe.with_tools else None
    prompt = template.render([QUESTION], tools=tools, add_generation_prompt=True, **VARIABLES)
    mark = "ROUND-TRIP-REPLY-MARK"
    plain = template.render([QUESTION, {"role": "assistant", "content": mark}], tools=tools, **VARIABLES)
    fmt = probe.format
    shipped = (("shipped with the model", template.response_template),) if template.response_template else ()
    own = (("the format's", fmt.response_template),) if fmt.response_template else ()
    return Subject(
        template, fmt, probe.shape, bool(probe.text_values) or fmt.string_arguments, prompt,
        plain[plain.rfind(mark) + len(mark):].strip(), own + shipped, tools=tools,
    )


@cache
def all_subjects() -> tuple[Subject, ...]:
    """Every subject: cached tokenizers' templates, then the corpus's (when it is there)."""
    found = [_subject(ChatTemplate.from_hub(repo)) for repo in CACHED_REPOS]
    if corpus.corpus_available():
        labels = corpus.load_labels()
        for path in corpus.corpus_templates():
            label = corpus.label_key(labels.get(path.stem, {}))  # "other:deepseek#v3.1": the variant's format
            if label in corpus.LABEL_FORMATS and path.stem not in corpus.MALFORMED_RENDERINGS:
                subject = _subject(ChatTemplate.from_file(path))
                assert subject is not None and subject.format.name == corpus.LABEL_FORMATS[label], path.stem
                found.append(subject)
    return tuple(subject for subject in found if subject is not None)


def subjects_of(fmt: Format) -> tuple[Subject, ...]:
    return tuple(subject for subject in all_subjects() if subject.format is fmt)


# --- rendering and reading back ----------------------------------------------------------------


def call_turn(subject: Subject, calls: Calls) -> dict:
    """The assistant turn making calls, in the shape the subject's template accepts."""
    message = copy.deepcopy(_SHAPES[subject.shape])
    (model,) = message["tool_calls"]
    message["tool_calls"] = []
    for number, (name, arguments) in enumerate(calls, start=1):
        call = copy.deepcopy(model)
        call["function"] = {"name": name, "arguments": json.dumps(arguments) if isinstance(
            model["function"]["arguments"], str) else copy.deepcopy(arguments)}
        if "id" in call:
            call["id"] = f"call{number:05d}"
        message["tool_calls"].append(call)
    return message


def render_wire(subject: Subject, calls: Calls) -> str:
    """What the model writes for calls: the render's addition after the prompt, without the end of turn."""
    with_call = subject.template.render([QUESTION, call_turn(subject, calls)], tools=subject.tools, **VARIABLES)
    prompt = subject.prompt
    turn = turn_before_conversation_tail(subject.template, prompt, with_call, subject.tools, QUESTION)
    if turn is not None:  # Command R+: the call turn sits before the tail every render ends with
        return turn.rstrip()
    # Where the probe cuts: it also handles a prompt that pre-writes an empty reasoning block
    # the history turn lacks, and vLLM's DeepSeek V3.1 template indenting the two renders apart.
    added = with_call[call_turn_start(prompt, with_call):].rstrip()
    if subject.turn_end and added.endswith(subject.turn_end):  # only at the very end: a value may hold it
        added = added[: -len(subject.turn_end)]
    return added


def read_wire(subject: Subject, wire: str) -> tuple[Calls, list[str | None], str]:
    """The calls, ids and visible content the format's reader finds in wire (raises UnparsedToolCall)."""
    # As the probe reads it: a block the prompt opened and the turn never closes was dropped from history (Apriel 1.6).
    opened = subject.reasoning_open and subject.format.reasoning[1] in wire
    events = read_events(wire, subject.format, reasoning_open=opened)
    calls = [event for event in events if isinstance(event, ToolCallEvent)]
    content = "".join(event.text for event in events if isinstance(event, TextDelta))
    assert all(isinstance(event, (ToolCallEvent, TextDelta, ReasoningDelta)) for event in events)
    return [(event.call.name, event.call.arguments) for event in calls], [event.id for event in calls], content


def tool_schemas(calls: Calls) -> list[dict]:
    """Schemas that type each call's top-level arguments as generated (for text-valued wires)."""
    return [{"type": "function", "function": {"name": name, "description": "generated", "parameters": {
        "type": "object", "properties": {key: {"type": kind_of(value)} for key, value in arguments.items()}}}}
        for name, arguments in calls]


def read_with_response_template(subject: Subject, template: dict, wire: str, calls: Calls) -> Calls:
    tools = tool_schemas(calls) if subject.text_valued else None
    with contextlib.redirect_stdout(io.StringIO()):  # transformers prints what it could not parse
        message = parse_response(wire, template, prefix="", tools=tools)
    return [(call["function"]["name"], call["function"]["arguments"]) for call in message.get("tool_calls", [])]


def same_calls(read: Calls, calls: Calls) -> bool:
    return len(read) == len(calls) and all(
        name == want and same_json(arguments, wanted)
        for (name, arguments), (want, wanted) in zip(read, calls)
    )


def reader_carries(subject: Subject, calls: Calls) -> bool:
    try:
        read, _, content = read_wire(subject, render_wire(subject, calls))
    except (UnparsedToolCall, TemplateError):
        return False
    return same_calls(read, calls) and _TAGS_ONLY.fullmatch(content) is not None


def template_carries(subject: Subject, template: dict, calls: Calls) -> bool:
    try:
        return same_calls(read_with_response_template(subject, template, render_wire(subject, calls), calls), calls)
    except Exception:  # noqa: BLE001 - parse_response raises ValueError, KeyError, json errors...
        return False


def content_is_only_tags(content: str) -> bool:
    return _TAGS_ONLY.fullmatch(content) is not None


# --- measuring what a subject carries --------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A representative to measure: what it is (kind, nested, piece, edge, key), one call's arguments, and a test on calls."""

    what: str
    detail: object
    arguments: dict
    present: Callable[[Calls], bool]

    @property
    def label(self) -> str:
        return f"{self.what} {self.detail!r}" if self.what in ("piece", "edge", "key") else f"{self.what} {self.detail}"


def _has_kind(kind: str, top: bool):
    return lambda calls: any((kind, top) in set(kinds_in(arguments)) for _, arguments in calls)


def _has_text(text: str, edge: bool = False):
    if edge:
        return lambda calls: any(s.startswith(text) or s.endswith(text) for _, a in calls for s in strings_in(a))
    return lambda calls: any(text in s for _, arguments in calls for s in strings_in(arguments))


def _has_key(key: str):
    return lambda calls: any(key in arguments for _, arguments in calls)


def _candidates() -> list[Candidate]:
    found = [Candidate("kind", kind, {f"v_{kind}": sample}, _has_kind(kind, True))
             for kind, sample in KIND_SAMPLES.items()]
    found += [Candidate("nested", kind, {f"n_{kind}": [sample]}, _has_kind(kind, False))
              for kind, sample in KIND_SAMPLES.items()]
    for number, piece in enumerate(PIECES):
        found.append(Candidate("piece", piece, {f"p{number}": f"a{piece}a"}, _has_text(piece)))
        found.append(Candidate("edge", piece, {f"e{number}": f"{piece}a{piece}"}, _has_text(piece, edge=True)))
    found += [Candidate("key", key, {key: "v"}, _has_key(key)) for key in KEY_SAMPLES]
    return found


MEASURED = tuple(_candidates())
TWO_CALLS = Candidate("two", "calls", {}, lambda calls: len(calls) > 1)
# A template that renders two calls right but writes its end-of-turn tokens after every
# later call (DeepSeek-R1-Distill's: "<｜tool▁calls▁end｜><｜end▁of▁sentence｜>" inside the loop).
THREE_CALLS = Candidate("three", "calls", {}, lambda calls: len(calls) > 2)
NOT_THIS_SHAPE = Candidate("not", "this call shape", {}, lambda calls: True)
CANDIDATES = {candidate.label: candidate for candidate in (*MEASURED, TWO_CALLS, THREE_CALLS, NOT_THIS_SHAPE)}


def _failing(candidates: list[Candidate], carries) -> set[str]:
    """Labels of the candidates not carried; tried all at once first, one by one when that fails."""
    if not candidates:
        return set()
    merged = {key: value for candidate in candidates for key, value in candidate.arguments.items()}
    if len(merged) == sum(len(candidate.arguments) for candidate in candidates) and carries(merged):
        return set()
    return {candidate.label for candidate in candidates if not carries(candidate.arguments)}


def measure(subject: Subject) -> dict[str, set[str]]:
    """What the subject cannot carry beyond its format's declared limits, per reader.

    Keys: "reader", and "response template: <label>" for each response
    template. Each value is the set of candidate labels (CANDIDATES) that
    fail, leaving out the candidates a declared limit of that reader
    already names (``Format.limits_for``); a response template that cannot
    read even a plain call of this template is {NOT_THIS_SHAPE.label}.
    """
    if subject.measured:
        return subject.measured
    fmt = subject.format

    def undeclared(where: str) -> list[Candidate]:
        return [c for c in MEASURED if not fmt.limits_for(c.arguments, "wire")
                and not (where != "wire" and fmt.limits_for(c.arguments, where))]

    def by_reader(arguments: dict) -> bool:
        return reader_carries(subject, [("f", arguments)])

    measured = {"reader": _failing(undeclared("wire"), by_reader)}
    try:
        two = render_wire(subject, [("f", {}), ("g", {})])
    except TemplateError:
        measured["reader"].add(TWO_CALLS.label)
    else:
        try:
            dropped = len(read_wire(subject, two)[0]) < 2  # GigaChat's templates keep only the first call
        except UnparsedToolCall:
            dropped = False
        if dropped:
            measured["reader"].add(TWO_CALLS.label)
        elif not reader_carries(subject, [("f", {}), ("g", {}), ("h", {})]):
            measured["reader"].add(THREE_CALLS.label)
    for label, template in subject.response_templates:
        def by_template(arguments: dict, template=template) -> bool:
            return template_carries(subject, template, [("f", arguments)])

        if not by_template({"query": "plain"}):
            measured[f"response template: {label}"] = {NOT_THIS_SHAPE.label}
            continue
        measured[f"response template: {label}"] = _failing(undeclared("response template"), by_template) - measured["reader"]
    subject.measured.update(measured)
    return measured


def applicable_templates(subject: Subject) -> list[tuple[str, dict]]:
    """The response templates that read this subject's wire at all."""
    measured = measure(subject)
    return [(label, template) for label, template in subject.response_templates
            if NOT_THIS_SHAPE.label not in measured[f"response template: {label}"]]


def summary(labels: set[str]) -> dict[str, object]:
    """A measured set, compact: failing kinds, the smallest failing pieces, keys, and the flags."""
    chosen = [CANDIDATES[label] for label in labels]
    pieces = {c.detail for c in chosen if c.what == "piece"}
    smallest = {text for text in pieces if not any(other != text and other in text for other in pieces)}
    edges = {c.detail for c in chosen if c.what == "edge"} - pieces
    found: dict[str, object] = {}
    for name, what in (("kinds", "kind"), ("nested kinds", "nested"), ("keys", "key")):
        details = sorted(c.detail for c in chosen if c.what == what)
        if details:
            found[name] = details
    if smallest:
        found["pieces"] = sorted(smallest)
    if edges:
        found["at the ends only"] = sorted(edges)
    found.update({c.label: True for c in chosen if c in (TWO_CALLS, THREE_CALLS, NOT_THIS_SHAPE)})
    return found
