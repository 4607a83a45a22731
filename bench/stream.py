"""Streaming cost: ToolCallStream against transformers' ResponseParser and a naive re-parser.

A reply of 4K, 16K and 64K characters (prose with a tool call after every
paragraph, in the format's wire shape) is fed in 4-character chunks to:

- ``ToolCallStream(fmt)``: this package's stream (feed, then close);
- transformers' ``ResponseParser`` with the format's response template
  (what ``tokenizer.get_response_parser(...)`` returns; built directly here
  so no tokenizer is needed);
- a naive stream that appends each chunk to a buffer and re-parses the
  whole buffer with the format's parser every time.

Formats: hermes, qwen-xml and gemma4, whose calls may sit between
paragraphs. (Mistral writes calls only at the end of a reply, and its
response template reads everything after [TOOL_CALLS] as one JSON list, so
this interleaved reply is not a Mistral reply.)

Each prints its total time (best of --runs, cheap runs repeated for a
second; a run longer than a second is not repeated) and the growth factor from 4K
to 64K characters: 16 means cost linear in the reply's length, 256 means
quadratic. All three must find the same calls; the script checks it.

Run from the repository root: python bench/stream.py [--runs N] [--formats hermes gemma4 ...]
"""

from __future__ import annotations

import argparse

from transformers.utils.chat_parsing import ResponseParser

from templatestudio.formats import FORMATS
from timing import best_seconds  # bench/timing.py, beside this script
from templatestudio.stream import ToolCallEvent, ToolCallStream

SIZES = (4_000, 16_000, 64_000)
CHUNK = 4
PARAGRAPH = (
    "Exchange rates moved a little overnight; the euro is steady against the yen "
    "and the dollar. Let me check the latest figure for you before answering. "
)
CALLS = {
    "hermes": '<tool_call>\n{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "JPY"}}\n</tool_call>',
    "qwen-xml": (
        "<tool_call>\n<function=get_exchange_rate>\n<parameter=base>\nEUR\n</parameter>\n"
        "<parameter=quote>\nJPY\n</parameter>\n</function>\n</tool_call>"
    ),
    "gemma4": '<|tool_call>call:get_exchange_rate{base:<|"|>EUR<|"|>,quote:<|"|>JPY<|"|>}<tool_call|>',
}


def reply(fmt: str, size: int) -> tuple[str, int]:
    unit = PARAGRAPH + CALLS[fmt] + "\n"
    count = size // len(unit)
    text = unit * count
    return text + PARAGRAPH[: size - len(text)], count


def chunks(text: str) -> list[str]:
    return [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]


def ours(fmt: str, pieces: list[str]) -> int:
    stream = ToolCallStream(fmt)
    events = [event for piece in pieces for event in stream.feed(piece)] + stream.close()
    return sum(isinstance(event, ToolCallEvent) for event in events)


def transformers_stream(fmt: str, pieces: list[str]) -> int:
    parser = ResponseParser(FORMATS[fmt].response_template, prefix="")
    for piece in pieces:
        parser.feed(piece)
    message, _ = parser.finalize()
    return len(message.get("tool_calls", []))


def naive(fmt: str, pieces: list[str]) -> int:
    parse, buffer, calls = FORMATS[fmt].parser.parse, "", []
    for piece in pieces:
        buffer += piece
        calls = parse(buffer)  # everything so far, every time
    return len(calls)


STREAMS = {"ToolCallStream": ours, "transformers ResponseParser": transformers_stream, "naive re-parse": naive}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--formats", nargs="+", default=list(CALLS), choices=list(CALLS))
    args = parser.parse_args()
    print(f"total seconds to stream a reply in {CHUNK}-character chunks, best of {args.runs}")
    header = f"{'format':<9} {'stream':<28}" + "".join(f"{f'{n // 1000}K chars':>12}" for n in SIZES) + f"{'4K->64K':>10}"
    print(header)
    print("-" * len(header))
    for fmt in args.formats:
        for label, run in STREAMS.items():
            times = []
            for size in SIZES:
                text, expected = reply(fmt, size)
                pieces = chunks(text)
                found = run(fmt, pieces)
                if found != expected:
                    raise SystemExit(f"{label} found {found} calls in the {fmt} reply, expected {expected}")
                times.append(best_seconds(lambda: run(fmt, pieces), runs=args.runs, budget=1.0))
            cells = "".join(f"{seconds:>11.3f}s" for seconds in times)
            print(f"{fmt:<9} {label:<28}{cells}{times[-1] / times[0]:>9.1f}x")


if __name__ == "__main__":
    main()
