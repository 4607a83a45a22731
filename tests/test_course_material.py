"""The course's exercise checkers and pictures keep their promises.

Exercises (``exercises/``): every checker must reject an answer that is not
written yet (a stub raising ``NotImplementedError``, or ``None`` for an answer
that is a value) without raising itself, since an unfinished exercise must not
stop Run All. That every checker accepts a right answer is shown by the
solutions notebooks, which nbval runs with the rest of the course.

Pictures (``charts/``): each has a text form (what nbval compares) that is the
same on every call and names every count, and an SVG form that is well-formed
XML.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import pkgutil
import re
import xml.etree.ElementTree as ElementTree

import pytest

import exercises
from charts.bars import StackedBars
from charts.heatmap import Heatmap
from charts.timeline import stream_timeline
from templatestudio import ToolCallStream, get_format

MODULES = [
    importlib.import_module(f"exercises.{info.name}")
    for info in pkgutil.iter_modules(exercises.__path__)
    if info.name != "checking"
]
CHECKERS = [
    pytest.param(function, id=f"{module.__name__}.{name}")
    for module in MODULES
    for name, function in inspect.getmembers(module, inspect.isfunction)
    if name.startswith("check_") and function.__module__ == module.__name__
]
# The pass verdicts of exercises.checking.check and check_value.
PASSED = re.compile(r": all \d+ cases pass\.|: right, ")
# What a learner picks before predicting: a model in the offline cache, a template of their own.
LEARNER_CHOICES = {
    "model_id": "Qwen/Qwen3-0.6B",
    "template": "{% for m in messages %}{{ m.content }}{% endfor %}",
}


def unwritten(*args, **kwargs):
    raise NotImplementedError("your answer here")


def test_every_exercise_module_has_checkers():
    assert MODULES and all(any(p.id.startswith(m.__name__ + ".") for p in CHECKERS) for m in MODULES)


@pytest.mark.parametrize("checker", CHECKERS)
def test_a_checker_rejects_an_unwritten_answer_without_raising(checker):
    parameters = list(inspect.signature(checker).parameters)
    # The answer is the last parameter; any before it are the learner's choice of model or template.
    arguments = [LEARNER_CHOICES[name] for name in parameters[:-1]] + [unwritten]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        verdict = checker(*arguments)
    text = printed.getvalue()
    assert text.strip(), "a checker must print its verdict"
    assert verdict is not True
    assert not PASSED.search(text), text


def test_a_heatmap_prints_every_count_the_same_way_each_time_and_draws_valid_svg():
    pairs = [("hermes", "hermes")] * 3 + [("hermes", "none"), ("mistral", "mistral")]
    heatmap = Heatmap.of_pairs(pairs, title="label × found")
    assert str(heatmap) == str(Heatmap.of_pairs(reversed(pairs), title="label × found"))
    assert heatmap.count("hermes", "hermes") == 3 and heatmap.count("mistral", "none") == 0
    assert "3" in str(heatmap) and "·" in str(heatmap)
    ElementTree.fromstring(heatmap._repr_svg_())


def test_a_heatmap_escapes_labels_in_its_svg():
    heatmap = Heatmap({("<tool_call>", "a & b"): 1})
    root = ElementTree.fromstring(heatmap._repr_svg_())
    texts = {element.text for element in root.iter() if element.text}
    assert "<tool_call>" in texts and "a & b" in texts


def test_stacked_bars_name_every_count_and_draw_valid_svg():
    bars = StackedBars(
        [("qwen3", [("reader", {"pass": 50, "fail": 2})]), ("glm", [("reader", {"pass": 51})])],
        [("pass", "pass", "#2b8a3e"), ("fail", "fail", "#c92a2a")],
        title="conformance",
    )
    assert all(number in str(bars) for number in ("50", "51"))
    assert str(bars) == str(bars)
    ElementTree.fromstring(bars._repr_svg_())


def test_a_stream_timeline_shows_the_screen_never_a_marker_and_draws_valid_svg():
    reply = 'Let me check.\n<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>'
    chunks = [reply[i : i + 4] for i in range(0, len(reply), 4)]
    timeline = stream_timeline(ToolCallStream(get_format("hermes")), chunks, "hermes")
    text = timeline.text()
    assert text == stream_timeline(ToolCallStream(get_format("hermes")), chunks, "hermes").text()
    assert "Let me check." in text
    assert all("<tool_call>" not in row.screen for row in timeline.rows)
    ElementTree.fromstring(timeline._repr_svg_())
