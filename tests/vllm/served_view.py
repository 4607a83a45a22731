"""What a client of a vLLM server gets from the templatestudio parsers, for notebook 21.

``answer`` (a whole reply) and ``streamed`` (a reply cut into pieces) give
the same results in two environments:

- where vLLM is importable (``.venv-vllm``, ``make vllm-test``), vLLM
  composes the plugin's tool and reasoning parsers
  (``ParserManager.get_parser``, as the server does at start-up) and the
  answer is what the composition's ``parse`` and ``parse_delta`` return;
- where it is not (the course's ``.venv``), the two steps those vLLM classes
  wrap run directly: ``served_reasoning`` takes the reasoning off and
  ``served`` reads the rest.

``tests/vllm/test_reasoning_plugin.py`` and ``test_plugin_inprocess.py`` check
that both give the reader's answer for every format, whole and streamed, so
notebook 21's outputs are the same in both environments (``make vllm-test``
runs it under nbval in ``.venv-vllm``).
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import unittest.mock

from templatestudio import ArgumentsDelta
from templatestudio.calls import UnparsedToolCall
from templatestudio.integrations.served import DELTAS_VARIABLE, ReplyStream, leak, read_reply
from templatestudio.integrations.served_detect import detect_served_format
from templatestudio.integrations.served_reasoning import ReasoningSplit, split_reply

with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:  # vLLM prints notices on import; they are not part of the answer
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
        from vllm.parser.parser_manager import ParserManager

        import templatestudio.integrations.vllm_plugin  # noqa: F401 - registers both parsers, as --tool-parser-plugin does
    except ImportError:
        ParserManager = None

VLLM_IMPORTABLE = ParserManager is not None


class _Lines(logging.Handler):
    def emit(self, record):
        print("log:", record.levelname, record.getMessage())


def print_plugin_log() -> None:
    """Print the plugin's warnings as ``log: LEVEL message`` lines (inside vLLM its handler adds timestamps)."""
    log = logging.getLogger("vllm.templatestudio")
    log.handlers[:] = [_Lines()]
    log.propagate = False
    log.setLevel(logging.WARNING)


def _served_parser(tokenizer, tools: list[dict], messages: list[dict]):
    # What the server builds for each request: both templatestudio parsers, composed by vLLM.
    composed = ParserManager.get_parser(tool_parser_name="templatestudio", reasoning_parser_name="templatestudio",
                                        enable_auto_tools=True, tokenizer=tokenizer)
    return composed(tokenizer, tools), ChatCompletionRequest(model="m", messages=messages, tools=tools)


def answer(tokenizer, text: str, tools: list[dict], messages: list[dict]):
    """(reasoning, content, [(name, arguments)]) the client gets for a whole reply."""
    if VLLM_IMPORTABLE:
        parser, request = _served_parser(tokenizer, tools, messages)
        reasoning, content, calls = parser.parse(text, request, enable_auto_tools=True)
        return reasoning, content, [(c.name, json.loads(c.arguments)) for c in calls or []]
    fmt = detect_served_format(tokenizer).format
    reasoning, rest = split_reply(text, fmt)  # the reasoning parser
    try:
        content, calls = read_reply(rest or "", fmt, reasoning_taken=True)  # the tool parser
    except UnparsedToolCall as refused:
        leak(refused, fmt, strict=False)
        return reasoning, rest, []
    return reasoning, content or None, [(call.name, call.arguments) for call, _ in calls]


def streamed(tokenizer, text: str, tools: list[dict], messages: list[dict], size: int = 6,
             deltas: bool = False) -> list[tuple[str, str]]:
    """(kind, text) the client receives, delta by delta, for text cut every size characters.

    deltas: the server runs with TEMPLATESTUDIO_VLLM_ARGUMENT_DELTAS=1.
    """
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    out: list[tuple[str, str]] = []
    if VLLM_IMPORTABLE:
        with unittest.mock.patch.dict(os.environ, {DELTAS_VARIABLE: "1" if deltas else "0"}):
            parser, request = _served_parser(tokenizer, tools, messages)  # the setting is read when built
        for index, piece in enumerate(pieces):
            message = parser.parse_delta(piece, [], request, prompt_token_ids=None, finished=index == len(pieces) - 1)
            if message is None:
                continue
            out += [("reasoning", message.reasoning)] if message.reasoning else []
            out += [("content", message.content)] if message.content else []
            for delta in message.tool_calls or []:
                out += [("call name", delta.function.name)] if delta.function.name else []
                out += [("arguments", delta.function.arguments)] if delta.function.arguments else []
        return out
    fmt = detect_served_format(tokenizer).format
    split, stream = ReasoningSplit(fmt), ReplyStream(fmt, reasoning_taken=True, deltas=deltas)
    named: set[int] = set()  # indices whose name went out (the vLLM parser keeps this as prev_tool_call_arr)
    for index, piece in enumerate(pieces):
        steps = []
        if not split.ended:  # the reasoning parser first; at its end, the text after it goes on in one piece
            reasoning = split.feed(piece)
            out += [("reasoning", reasoning)] if reasoning else []
            piece = split.content if split.ended else None
        if piece is not None:
            steps.append(stream.feed(piece))
        if index == len(pieces) - 1:
            steps.append(stream.close())
        for content, calls in steps:
            out += [("content", content)] if content else []
            out += _client_view(calls, named)
    return out


def _client_view(calls, named: set[int]) -> list[tuple[str, str]]:
    # What the vLLM parser sends for the core's calls: pieces of an open call, then whole calls.
    out, finishing = [], False
    for item in calls:
        if isinstance(item, ArgumentsDelta):  # a piece of a call still being written
            out += [("call name", item.name)] if item.index not in named else []
            named.add(item.index)
            out += [("arguments", item.text)] if item.text else []
            finishing = item.final
        elif finishing:  # the call whose last piece just went out
            finishing = False
        else:
            call, _ = item
            out += [("call name", call.name), ("arguments", json.dumps(call.arguments, ensure_ascii=False))]
    return out
