"""Llama 3 JSON's schema rule reads the same whole and streamed: a schema-shaped object is text wherever it stands.

``{"name": …, "parameters": {"type": "object", "properties": {…}}}`` is a model
echoing a tool's schema, not a call (the format's docstring, its near miss
and wire limit). It is judged by the one object alone, so a run of written
calls (``canonical_runs``, whole text) and a stream (one region at a time)
must agree. Generated: seeded runs of schema-shaped and call objects, with
every separator a run allows, the last one whole or cut, read whole and
streamed in seeded chunkings, strict or not.
"""

from __future__ import annotations

import json
import random

import pytest

from templatestudio.calls import UnparsedToolCall
from templatestudio.engine import Machine, read_events
from templatestudio.events import TextDelta, ToolCallEvent, merge_deltas
from templatestudio.formats import FORMATS
from templatestudio.stream import ToolCallStream

LLAMA = FORMATS["llama3-json"]
SEPARATORS = ("", " ", "; ", "\n", ";\n")


def outcome(read) -> tuple:
    try:
        return ("events", read())
    except UnparsedToolCall as error:
        return ("raises", str(error))


def streamed(pieces: list[str], strict: bool) -> list:
    stream = ToolCallStream(LLAMA, strict=strict)
    events = [event for piece in pieces for event in stream.feed(piece)]
    return merge_deltas(events + stream.close())


def an_object(rng: random.Random) -> tuple[str, bool]:
    """(written object, whether it is schema-shaped)."""
    name = rng.choice(["f", "get_rate", "g2"])
    key = rng.choice(["parameters", "arguments"])
    if rng.random() < 0.5:
        properties = rng.choice([{}, {"a": {"type": "string"}}, {"x": 1}])
        arguments = {"type": "object", "properties": properties}
        if rng.random() < 0.3:
            arguments["required"] = list(properties)
        schema = True
    else:
        arguments = rng.choice([{}, {"a": 1}, {"q": "x y", "n": [1, 2]}, {"type": "object"}, {"properties": {}}])
        schema = False
    return json.dumps({"name": name, key: arguments}), schema


def a_run(rng: random.Random) -> str:
    objects = [an_object(rng)[0] for _ in range(rng.randint(2, 5))]
    separator = rng.choice(SEPARATORS)
    text = rng.choice(["", "", "Here: "]) + separator.join(objects)
    if rng.random() < 0.25:
        text = text[: rng.randint(len(text) - len(objects[-1]) + 1, len(text) - 1)]  # the last object cut
    return text


def chunkings(text: str, rng: random.Random) -> list[list[str]]:
    found = [list(text), [text[:1], text[1:]]]
    for _ in range(3):
        points = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 6))))
        found.append([text[a:b] for a, b in zip([0, *points], [*points, len(text)])])
    return found


def test_the_reported_run():
    text = '{"name": "f", "parameters": {"type": "object", "properties": {}}}{"name": "g", "parameters": {}}'
    for strict in (True, False):
        whole = read_events(text, LLAMA, strict=strict)
        assert whole[0] == TextDelta('{"name": "f", "parameters": {"type": "object", "properties": {}}}')
        assert [event.call.name for event in whole if isinstance(event, ToolCallEvent)] == ["g"]
        for pieces in (["{", text[1:]], list(text)):
            assert streamed(pieces, strict) == whole


@pytest.mark.parametrize("seed", range(40))
def test_runs_read_the_same_whole_streamed_and_call_by_call(seed):
    rng = random.Random(seed)
    for _ in range(5):
        text = a_run(rng)
        for strict in (True, False):
            whole = outcome(lambda: read_events(text, LLAMA, strict=strict))
            machine = Machine(LLAMA, runs=False, strict=strict)
            assert outcome(lambda: merge_deltas(machine.feed(text) + machine.close())) == whole, text
            for pieces in chunkings(text, rng):
                assert outcome(lambda: streamed(pieces, strict)) == whole, (text, pieces)
            if whole[0] == "events":  # no schema-shaped object became a call
                for event in whole[1]:
                    if isinstance(event, ToolCallEvent):
                        assert not (event.call.arguments.get("type") == "object"
                                    and isinstance(event.call.arguments.get("properties"), dict)), text
