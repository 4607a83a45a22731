"""The major tool-call formats: one registry entry per wire shape.

Each ``Format`` names a shape, the literal markers that open a call, whether
a call may only open at the start of the reply, a strict parser and a
response template (the declarative dict that transformers'
``parse_response`` runs) for the same shape.

The parsers are strict on purpose. Each reads exactly its own shape and
nothing else, so running every parser over a reply can never turn one
format's call, or ordinary text, into another format's call. Arguments come
back as written: ``qwen-xml`` values stay text (typing them against the
tool's schema is a separate step), the others come back as the JSON or
Python literals they were written as. Text that is not a well-formed call
is not a call: ``parse`` and ``scan`` never raise on any input string.

Not handled: tool-call ids are checked for shape but not returned
(``ParsedToolCall`` has a name and arguments only), and reasoning blocks
(``<think>``, Gemma 4's thought channel) are not removed here; a call
written inside reasoning is still found by the scanning formats.
"""

from __future__ import annotations

import ast
import bisect
import json
import re
from dataclasses import dataclass, field
from typing import Protocol

from templatestudio.tools import ParsedToolCall

__all__ = [
    "CallSpan",
    "Format",
    "FORMATS",
    "Gemma4Parser",
    "Llama3JSONParser",
    "MISTRAL_ARGS_RESPONSE_TEMPLATE",
    "MistralParser",
    "PythonicParser",
    "QwenXMLParser",
    "StrictFencedJSONParser",
    "StrictHermesParser",
    "StrictParser",
    "UnknownFormat",
    "get_format",
]

# Deeper nesting than this in one argument value is refused rather than
# recursed into: no real call nests this deep, and Python's own recursion
# limit would otherwise surface as an exception from parse().
MAX_NESTING = 100


@dataclass(frozen=True)
class CallSpan:
    """One call found in a text, and where it sits."""

    call: ParsedToolCall
    start: int  # offset of the opening marker
    end: int  # offset just past the call's closing text


class StrictParser(Protocol):
    """A ``ToolCallParser`` that also says where each call is."""

    def parse(self, text: str) -> list[ParsedToolCall]: ...

    def scan(self, text: str) -> list[CallSpan]: ...


class _SpanParser:
    """parse() is scan() without the offsets; subclasses write scan()."""

    def parse(self, text: str) -> list[ParsedToolCall]:
        return [span.call for span in self.scan(text)]

    def scan(self, text: str) -> list[CallSpan]:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


_JSON = json.JSONDecoder()
_WHITESPACE = re.compile(r"\s*")


def _skip_space(text: str, index: int) -> int:
    return _WHITESPACE.match(text, index).end()


# One token of JSON text outside any decoding: a string, a run of the
# characters numbers and true/false/null are made of, separators, a bracket.
_JSON_PIECE = re.compile(r'"(?:[^"\\]|\\.)*"|[-+.0-9eEtrufalsn]+|[,:\s]+|[\[\]{}]')


def _json_extent(text: str, index: int) -> int | None:
    """Where the bracketed JSON value opening at index ends, without decoding it.

    It stops at the first character JSON cannot hold outside a string, so
    from any marker it never reads past the next marker: scanning a text
    full of markers stays linear.
    """
    depth, position = 0, index
    while (piece := _JSON_PIECE.match(text, position)) is not None:
        position = piece.end()
        first = piece.group(0)[0]
        if first in "[{":
            depth += 1
        elif first in "]}":
            depth -= 1
            if depth == 0:
                return position
    return None


def _json_at(text: str, index: int) -> tuple[object, int] | None:
    """The JSON object or list starting exactly at index and where it ends, or None.

    Decoding only that extent keeps a failure cheap: json's error message
    counts lines from the start of whatever string it was given.
    """
    if not text.startswith(("{", "["), index):
        return None
    end = _json_extent(text, index)
    if end is None:
        return None
    try:
        value, stop = _JSON.raw_decode(text[index:end])
    except (ValueError, RecursionError):
        return None
    return (value, end) if stop == end - index else None


def _function_call(payload: object, arguments_key: str, optional: dict) -> ParsedToolCall | None:
    """payload as a call when it has exactly a name, its arguments object and allowed extras.

    optional maps each extra key allowed to a check on its value.
    """
    if not isinstance(payload, dict):
        return None
    name, arguments = payload.get("name"), payload.get(arguments_key)
    if not isinstance(name, str) or not name or not isinstance(arguments, dict):
        return None
    for key, value in payload.items():
        if key not in ("name", arguments_key) and not (key in optional and optional[key](value)):
            return None
    return ParsedToolCall(name, arguments)


class _TaggedJSONParser(_SpanParser):
    """A JSON {"name", "arguments"} object between an opening and a closing literal."""

    open_tag: str
    close_tag: str

    def scan(self, text: str) -> list[CallSpan]:
        spans: list[CallSpan] = []
        start = text.find(self.open_tag)
        while start != -1:
            span = self._call_at(text, start)
            if span is not None:
                spans.append(span)
            resume = span.end if span is not None else start + 1
            start = text.find(self.open_tag, resume)
        return spans

    def _call_at(self, text: str, start: int) -> CallSpan | None:
        decoded = _json_at(text, _skip_space(text, start + len(self.open_tag)))
        if decoded is None:
            return None
        payload, after = decoded
        after = _skip_space(text, after)
        if not text.startswith(self.close_tag, after):
            return None
        call = _function_call(payload, "arguments", {})
        return CallSpan(call, start, after + len(self.close_tag)) if call else None


class StrictHermesParser(_TaggedJSONParser):
    """``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, anywhere in the reply.

    Exactly the keys name and arguments; arguments must be a JSON object
    (a JSON string holding one is refused, as is any other key). The
    tutorial's ``tools.HermesParser`` is laxer: it defaults missing
    arguments to {} and decodes arguments given as a JSON string.
    """

    open_tag, close_tag = "<tool_call>", "</tool_call>"


class StrictFencedJSONParser(_TaggedJSONParser):
    """A fenced ``json`` code block holding one ``{"name", "arguments"}`` object."""

    open_tag, close_tag = "```json", "```"


class QwenXMLParser(_SpanParser):
    """``<tool_call><function=NAME><parameter=KEY>value</parameter>…</function></tool_call>``.

    Values are the text between the tags with one leading and one trailing
    newline removed, exactly as Qwen3-Coder's template writes them; they are
    not typed here. A value ends at the first ``</parameter>``, a call at the
    first ``</tool_call>``. A repeated parameter name makes the block not a
    call. Text before the call (a ``<think>`` block, a sentence) is the
    caller's.
    """

    _function = re.compile(r"\s*<function=([^<>\n]+)>")
    _parameter = re.compile(r"\s*<parameter=([^<>\n]+)>")
    _close = re.compile(r"\s*</function>\s*")

    def scan(self, text: str) -> list[CallSpan]:
        if "<tool_call>" not in text:
            return []
        # Every closer's position, found once: openers that share a closer
        # then cost a lookup each, not a rescan, so a flood of openers stays linear.
        call_ends = _positions(text, "</tool_call>")
        value_ends = _positions(text, "</parameter>")
        spans: list[CallSpan] = []
        start = text.find("<tool_call>")
        while start != -1:
            body_start = start + len("<tool_call>")
            close = _next_position(call_ends, body_start)
            if close == -1:
                break
            call = self._read_body(text, body_start, close, value_ends)
            if call is not None:
                spans.append(CallSpan(call, start, close + len("</tool_call>")))
                start = text.find("<tool_call>", close)
            else:
                start = text.find("<tool_call>", start + 1)
        return spans

    def _read_body(self, text: str, start: int, end: int, value_ends: list[int]) -> ParsedToolCall | None:
        head = self._function.match(text, start, end)
        if head is None:
            return None
        arguments: dict[str, str] = {}
        position = head.end()
        while (parameter := self._parameter.match(text, position, end)) is not None:
            key = parameter.group(1)
            value_end = _next_position(value_ends, parameter.end())
            if key in arguments or value_end == -1 or value_end >= end:
                return None
            arguments[key] = _strip_one_newline(text[parameter.end() : value_end])
            position = value_end + len("</parameter>")
        tail = self._close.match(text, position, end)
        if tail is None or tail.end() != end:
            return None
        return ParsedToolCall(head.group(1), arguments)


def _positions(text: str, literal: str) -> list[int]:
    found, at = [], text.find(literal)
    while at != -1:
        found.append(at)
        at = text.find(literal, at + len(literal))
    return found


def _next_position(positions: list[int], start: int) -> int:
    """The first position at or after start, or -1."""
    index = bisect.bisect_left(positions, start)
    return positions[index] if index < len(positions) else -1


def _strip_one_newline(value: str) -> str:
    if value.startswith("\n"):
        value = value[1:]
    if value.endswith("\n"):
        value = value[:-1]
    return value


class Llama3JSONParser(_SpanParser):
    """The whole reply is ``{"name": ..., "parameters": {...}}``.

    Allowed around it: leading ``<|python_tag|>`` and whitespace, an extra
    ``"type": "function"`` key (Llama 3.2 echoes the tool list's shape), and
    further calls after ``;`` (the separator vLLM's Llama 3 JSON parser
    accepts). Any other text before or after means the reply is not a call:
    a Llama reply that merely contains JSON for the user stays text.
    """

    _optional = {"type": lambda value: value == "function"}

    def scan(self, text: str) -> list[CallSpan]:
        position = _skip_space(text, 0)
        if text.startswith("<|python_tag|>", position):
            position = _skip_space(text, position + len("<|python_tag|>"))
        spans: list[CallSpan] = []
        span_start = _skip_space(text, 0)
        while True:
            decoded = _json_at(text, position)
            if decoded is None:
                return []
            call = _function_call(decoded[0], "parameters", self._optional)
            if call is None:
                return []
            spans.append(CallSpan(call, span_start, decoded[1]))
            position = _skip_space(text, decoded[1])
            if position == len(text):
                return spans
            if text[position] != ";":
                return []
            position = span_start = _skip_space(text, position + 1)


class MistralParser(_SpanParser):
    """Every call that follows a ``[TOOL_CALLS]`` marker.

    Two published shapes:

    - a JSON list ``[TOOL_CALLS][{"name", "arguments", "id"?}, …]``, also
      with a space after the marker (Mistral Small 3.1, vLLM's templates);
    - ``[TOOL_CALLS]NAME[ARGS]{…}``, optionally ``NAME[CALL_ID]ID[ARGS]{…}``
      (Mistral Small 3.2, Magistral), one marker per call.

    An id, where written, must be a string of letters and digits.
    """

    _named = re.compile(r"([A-Za-z0-9_.\-]+)(?:\[CALL_ID\]([A-Za-z0-9]+))?\[ARGS\]")
    _optional = {"id": lambda value: isinstance(value, str) and value.isalnum()}

    def scan(self, text: str) -> list[CallSpan]:
        spans: list[CallSpan] = []
        start = text.find("[TOOL_CALLS]")
        while start != -1:
            found = self._calls_at(text, start)
            spans.extend(found)
            resume = found[-1].end if found else start + 1
            start = text.find("[TOOL_CALLS]", resume)
        return spans

    def _calls_at(self, text: str, start: int) -> list[CallSpan]:
        body = start + len("[TOOL_CALLS]")
        named = self._named.match(text, body)
        if named is not None:
            decoded = _json_at(text, named.end())
            if decoded is None or not isinstance(decoded[0], dict):
                return []
            return [CallSpan(ParsedToolCall(named.group(1), decoded[0]), start, decoded[1])]
        decoded = _json_at(text, _skip_space(text, body))
        if decoded is None or not isinstance(decoded[0], list) or not decoded[0]:
            return []
        calls = [_function_call(item, "arguments", self._optional) for item in decoded[0]]
        if not all(calls):
            return []
        # One marker opens the whole list, so every call shares its span.
        return [CallSpan(call, start, decoded[1]) for call in calls]


class _GemmaSyntaxError(ValueError):
    """Internal: the text is not Gemma 4 call syntax."""


class Gemma4Parser(_SpanParser):
    """``<|tool_call>call:NAME{key:value,…}<tool_call|>``, one call per block.

    The grammar Gemma 4's template writes: keys bare (or wrapped in
    ``<|"|>``), strings between ``<|"|>`` delimiters with nothing escaped,
    bare numbers, ``true``/``false``, ``null``, lists ``[…]`` and nested
    objects ``{…}``, no whitespace between tokens. A null may also appear as
    ``None``/``none``: that is what the template itself writes for a Python
    None, and Google's guide reads bare ``none`` as null. Any other bare
    word is refused rather than guessed to be a string.
    """

    _name = re.compile(r"call:(\w+)")
    _number = re.compile(r"-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?")
    _key = re.compile(r"[A-Za-z_][\w\-]*")
    _words = {"true": True, "false": False, "null": None, "None": None, "none": None}
    _quote = '<|"|>'

    def scan(self, text: str) -> list[CallSpan]:
        spans: list[CallSpan] = []
        start = text.find("<|tool_call>")
        while start != -1:
            span = self._call_at(text, start)
            if span is not None:
                spans.append(span)
            start = text.find("<|tool_call>", span.end if span else start + 1)
        return spans

    def _call_at(self, text: str, start: int) -> CallSpan | None:
        name = self._name.match(text, start + len("<|tool_call>"))
        if name is None or not text.startswith("{", name.end()):
            return None
        try:
            arguments, after = self._object(text, name.end(), 0)
        except _GemmaSyntaxError:
            return None
        if not text.startswith("<tool_call|>", after):
            return None
        return CallSpan(ParsedToolCall(name.group(1), arguments), start, after + len("<tool_call|>"))

    def _value(self, text: str, index: int, depth: int) -> tuple[object, int]:
        if depth > MAX_NESTING:
            raise _GemmaSyntaxError("nested too deeply")
        if text.startswith(self._quote, index):
            return self._string(text, index)
        if text.startswith("{", index):
            return self._object(text, index, depth + 1)
        if text.startswith("[", index):
            return self._list(text, index, depth + 1)
        number = self._number.match(text, index)
        if number is not None:
            is_float = number.group(1) or number.group(2)
            literal = number.group(0)
            return (float(literal) if is_float else int(literal)), number.end()
        for word, value in self._words.items():
            if text.startswith(word, index) and not _is_word_char(text, index + len(word)):
                return value, index + len(word)
        raise _GemmaSyntaxError(f"no value at {index}")

    def _string(self, text: str, index: int) -> tuple[str, int]:
        body = index + len(self._quote)
        end = text.find(self._quote, body)
        if end == -1:
            raise _GemmaSyntaxError("unterminated string")
        return text[body:end], end + len(self._quote)

    def _object(self, text: str, index: int, depth: int) -> tuple[dict, int]:
        result: dict[str, object] = {}
        index += 1  # past "{"
        if text.startswith("}", index):
            return result, index + 1
        while True:
            if text.startswith(self._quote, index):
                key, index = self._string(text, index)
            else:
                key_match = self._key.match(text, index)
                if key_match is None:
                    raise _GemmaSyntaxError(f"no key at {index}")
                key, index = key_match.group(0), key_match.end()
            if key in result or not text.startswith(":", index):
                raise _GemmaSyntaxError(f"bad key at {index}")
            result[key], index = self._value(text, index + 1, depth)
            if text.startswith(",", index):
                index += 1
            elif text.startswith("}", index):
                return result, index + 1
            else:
                raise _GemmaSyntaxError(f"expected , or }} at {index}")

    def _list(self, text: str, index: int, depth: int) -> tuple[list, int]:
        result: list[object] = []
        index += 1  # past "["
        if text.startswith("]", index):
            return result, index + 1
        while True:
            value, index = self._value(text, index, depth)
            result.append(value)
            if text.startswith(",", index):
                index += 1
            elif text.startswith("]", index):
                return result, index + 1
            else:
                raise _GemmaSyntaxError(f"expected , or ] at {index}")


def _is_word_char(text: str, index: int) -> bool:
    return index < len(text) and (text[index].isalnum() or text[index] == "_")


class PythonicParser(_SpanParser):
    """``[name(key=value, …), …]``: Python call syntax with literal values.

    The bare list must be the whole reply (Llama 3.2 and Llama 4 pythonic).
    LFM2 wraps the list as ``<|tool_call_start|>[…]<|tool_call_end|>`` at
    the start of the reply and may write text after it. Read with ``ast``,
    never evaluated: only keyword arguments whose values are JSON-like
    literals (str, int, float, bool, None, lists and str-keyed dicts) are
    accepted. Positional arguments, ``**kwargs``, tuples, sets, bytes,
    names and expressions make the reply not a call.
    """

    _wrapped = ("<|tool_call_start|>", "<|tool_call_end|>")

    def scan(self, text: str) -> list[CallSpan]:
        start = _skip_space(text, 0)
        opener, closer = self._wrapped
        if text.startswith(opener, start):
            list_start = start + len(opener)
            list_end = text.find(closer, list_start)
            if list_end == -1:
                return []
            end = list_end + len(closer)
        else:
            list_start, list_end = start, len(text.rstrip())
            end = list_end
        calls = self._calls(text[list_start:list_end])
        return [CallSpan(call, start, end) for call in calls]

    def _calls(self, source: str) -> list[ParsedToolCall]:
        if not (source.startswith("[") and source.endswith("]")):
            return []
        try:
            tree = ast.parse(source, mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return []
        if not isinstance(tree.body, ast.List) or not tree.body.elts:
            return []
        calls: list[ParsedToolCall] = []
        for node in tree.body.elts:
            call = self._call(node)
            if call is None:
                return []
            calls.append(call)
        return calls

    def _call(self, node: ast.expr) -> ParsedToolCall | None:
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
            return None
        arguments: dict[str, object] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                return None
            try:
                value = ast.literal_eval(keyword.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                return None
            if not _json_like(value, 0):
                return None
            arguments[keyword.arg] = value
        return ParsedToolCall(node.func.id, arguments)


def _json_like(value: object, depth: int) -> bool:
    if depth > MAX_NESTING:
        return False
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, list):
        return all(_json_like(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_like(v, depth + 1) for k, v in value.items())
    return False


# Response templates. Each is the declarative dict transformers'
# ``parse_response(text, schema=..., prefix=...)`` runs. start_anchor only
# matters when a full prompt is passed as prefix; it lists the assistant
# headers of the families known to write the format.
_CHATML = "<|im_start|>assistant\n"
_LLAMA3 = "<|start_header_id|>assistant<|end_header_id|>\n\n"
_TRANSFORM = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
_THINK = {"open": "<think>", "close": "</think>", "content": "text"}

HERMES_RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": [_CHATML, "<|start_of_role|>assistant<|end_of_role|>"],
    "fields": {
        "thinking": _THINK,
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close": ["<|im_end|>", "<|end_of_text|>"], "content": "text"},
    },
}

FENCED_JSON_RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": _CHATML,
    "fields": {
        "tool_calls": {
            "open_pattern": r"```json\s*",
            "close_pattern": r"\s*```",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
}

QWEN_XML_RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": _CHATML,
    "fields": {
        "thinking": _THINK,
        "tool_calls": {
            "open_pattern": r"<tool_call>\s*<function=(?P<name>[^<>\n]+)>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                # No value_parser: values stay text, as the parser returns them.
                "tag_pattern": r"<parameter=(?P<key>[^<>\n]+)>\n?(?P<value>.*?)\n?</parameter>",
            },
            "transform": _TRANSFORM,
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
}

LLAMA3_JSON_RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": _LLAMA3,
    "fields": {
        "tool_calls": {
            # A call opens the reply, or follows the ";" that closed the last one.
            "open_pattern": (
                r'(?:\A\s*(?:<\|python_tag\|>)?|(?<=;))\s*\{\s*(?:"type":\s*"function",\s*)?'
                r'"name":\s*"(?P<name>[^"\\]+)",\s*"parameters":\s*'
            ),
            "close_pattern": r"\}\s*(?:;|\Z)",
            "content": "json",
            "repeats": True,
            "transform": _TRANSFORM,
        },
        "content": {"content": "text"},
    },
}

MISTRAL_RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "[/INST]",
    "fields": {
        "tool_calls": {
            "open_pattern": r"\[TOOL_CALLS\]\s*(?=\[)",
            "close": "</s>",
            "content": "json",
            "transform_each": True,
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
        },
        "content": {"content": "text"},
    },
}

MISTRAL_ARGS_RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "[/INST]",
    "fields": {
        "tool_calls": {
            "open_pattern": r"\[TOOL_CALLS\](?P<name>[A-Za-z0-9_.\-]+)(?:\[CALL_ID\][A-Za-z0-9]+)?\[ARGS\]",
            "close_pattern": r"(?=\[TOOL_CALLS\])|</s>",
            "repeats": True,
            "content": "json",
            "transform": _TRANSFORM,
        },
        "content": {"content": "text"},
    },
}
"""The newer Mistral shape, ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{…}``.

The mistral format's ``response_template`` reads the JSON-list shape; one
response template cannot read both, because the list needs
``transform_each`` over a parsed list while this shape needs a name captured
from the marker. A tokenizer whose template writes this shape (Mistral
Small 3.2) should be given this dict instead.
"""

GEMMA4_RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": ["<|turn>model\n", "<tool_response|>"],
    "fields": {
        "thinking": {"open": "<|channel>thought\n", "close": "<channel|>", "content": "text"},
        "tool_calls": {
            "open_pattern": r"<\|tool_call>call:(?P<name>\w+)",
            "close": "<tool_call|>",
            "repeats": True,
            "content": "json",
            "content_args": {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
            "transform": _TRANSFORM,
        },
        "content": {"close": ["<turn|>", "<|tool_response>", "<eos>"], "content": "text"},
    },
}

# One value of a pythonic keyword argument: a quoted string, a bracketed
# literal nested up to three levels, or a bare token up to the next , ) or ].
_PY_STRING = r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'"
_PY_FLAT = rf"(?:[^\[\]{{}}\"']|{_PY_STRING})*"
_PY_LEVEL2 = rf"[\[{{](?:[^\[\]{{}}\"']|{_PY_STRING}|[\[{{]{_PY_FLAT}[\]}}])*[\]}}]"
_PY_NESTED = rf"[\[{{](?:[^\[\]{{}}\"']|{_PY_STRING}|{_PY_LEVEL2})*[\]}}]"
_PY_VALUE = rf"{_PY_STRING}|{_PY_NESTED}|[^,)\]]+"

PYTHONIC_RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": [_LLAMA3, "<|header_start|>assistant<|header_end|>\n\n", _CHATML],
    "fields": {
        "tool_calls": {
            "open_pattern": r"(?:\A\s*(?:<\|tool_call_start\|>)?\[|(?<=\)),\s*)(?P<name>\w+)\(",
            "close_pattern": r"\)(?:\](?:<\|tool_call_end\|>)?)?",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": rf"(?P<key>\w+)=(?P<value>{_PY_VALUE})",
                "value_parser": {
                    "name": "json",
                    "args": {"string_delims": [["'", "'"]], "allow_non_json": True},
                },
            },
            "transform": _TRANSFORM,
        },
        "content": {"content": "text"},
    },
}


@dataclass(frozen=True)
class Format:
    """One tool-call wire format.

    Formats compare and hash by name, description, markers and start_only.
    """

    name: str
    description: str
    markers: tuple[str, ...]
    start_only: bool
    parser: StrictParser = field(compare=False)
    response_template: dict = field(compare=False, repr=False)


def _registry(*formats: Format) -> dict[str, Format]:
    return {fmt.name: fmt for fmt in formats}


FORMATS: dict[str, Format] = _registry(
    Format(
        "hermes",
        'JSON {"name", "arguments"} inside <tool_call> tags (Qwen2.5, Qwen3, QwQ, Hermes)',
        ("<tool_call>",),
        False,
        StrictHermesParser(),
        HERMES_RESPONSE_TEMPLATE,
    ),
    Format(
        "fenced-json",
        'a fenced json code block holding {"name", "arguments"} (Qwen2.5-Coder)',
        ("```json",),
        False,
        StrictFencedJSONParser(),
        FENCED_JSON_RESPONSE_TEMPLATE,
    ),
    Format(
        "qwen-xml",
        "<tool_call><function=NAME><parameter=KEY>text (Qwen3-Coder, Qwen3.5)",
        ("<tool_call>",),
        False,
        QwenXMLParser(),
        QWEN_XML_RESPONSE_TEMPLATE,
    ),
    Format(
        "llama3-json",
        'the whole reply is {"name", "parameters"}, maybe after <|python_tag|> (Llama 3.1-3.3)',
        ("{", "<|python_tag|>"),
        True,
        Llama3JSONParser(),
        LLAMA3_JSON_RESPONSE_TEMPLATE,
    ),
    Format(
        "mistral",
        "[TOOL_CALLS] then a JSON list, or NAME[ARGS]{...} per call (Mistral)",
        ("[TOOL_CALLS]",),
        False,
        MistralParser(),
        MISTRAL_RESPONSE_TEMPLATE,
    ),
    Format(
        "gemma4",
        '<|tool_call>call:NAME{key:value}<tool_call|> with <|"|> strings (Gemma 4)',
        ("<|tool_call>",),
        False,
        Gemma4Parser(),
        GEMMA4_RESPONSE_TEMPLATE,
    ),
    Format(
        "pythonic",
        "[name(key=value, ...)] Python-literal calls (Llama 3.2/4 pythonic, LFM2)",
        ("[", "<|tool_call_start|>"),
        True,
        PythonicParser(),
        PYTHONIC_RESPONSE_TEMPLATE,
    ),
)


class UnknownFormat(ValueError):
    """A format name the registry does not hold."""


def get_format(name: str) -> Format:
    """The registered format called name; UnknownFormat lists the known names."""
    try:
        return FORMATS[name]
    except KeyError:
        known = ", ".join(FORMATS)
        raise UnknownFormat(f"unknown tool-call format {name!r}; known formats: {known}") from None
