"""``import templatestudio`` gives what a program needs, each idea under one name.

The names are the ones the package docstring lists; each is the very
object its module defines (no wrapper, no copy), no two names are the same
object, and the retired synonyms are gone from every module.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import templatestudio
from import_graph import modules

FACE = {
    "reading": ["read_tool_calls", "Reply", "CutToolCall", "split_reasoning"],
    "streaming": ["ToolCallStream", "read_events", "merge_deltas", "Event", "TextDelta", "ReasoningDelta",
                  "ToolCallEvent", "ParsedToolCall", "ArgumentStream", "ArgumentsDelta", "ArgumentsWithdrawn"],
    "choosing a format": ["detect_format", "resolve_format", "probe_template", "TemplateProbe", "CallShape",
                          "get_format", "FORMATS", "Format"],
    "running calls": ["dispatch", "ToolOutcome", "Tool", "run_tool_loop", "ToolLoopLimit", "tools_in_system_prompt"],
    "errors": ["UnparsedToolCall", "StreamedCallChanged", "NoToolCallFormat", "AmbiguousFormat", "UnknownFormat", "TemplateProbeError",
               "InvalidConversation"],
}
RETIRED = {"parse_events", "split_thinking", "spans_of"}


def test_the_face_is_exactly_the_listed_names():
    listed = {name for names in FACE.values() for name in names}
    assert set(templatestudio.__all__) - {"__version__"} == listed
    for name in listed:
        assert name in templatestudio.__doc__, f"{name} is exported but the package docstring does not list it"


def test_each_name_is_its_modules_own_object_and_no_two_names_share_one():
    seen = {}
    for name in templatestudio.__all__:
        if name == "__version__":
            continue
        value = getattr(templatestudio, name)
        if name not in {"FORMATS", "Tool", "Event"}:  # a dict and two type aliases have no home module
            home = importlib.import_module(value.__module__)
            assert getattr(home, name) is value, f"{name} is not {value.__module__}.{name}"
        assert id(value) not in seen, f"{name} and {seen.get(id(value))} are one object under two names"
        seen[id(value)] = name
    assert callable(templatestudio.dispatch)  # the function, though a module has that name too


def test_the_errors_are_exceptions_and_the_ambiguous_one_is_a_no_format():
    for name in FACE["errors"]:
        assert issubclass(getattr(templatestudio, name), Exception), name
    assert issubclass(templatestudio.AmbiguousFormat, templatestudio.NoToolCallFormat)


def test_no_module_keeps_a_retired_name():
    found = []
    for name in modules():
        if name.startswith("templatestudio.integrations.vllm"):
            continue  # imports vLLM; its source is checked by the line below instead
        module = importlib.import_module(name)
        found += [f"{name}.{retired}" for retired in RETIRED if hasattr(module, retired)]
    assert found == []
    for path in modules().values():
        text = path.read_text(encoding="utf-8")
        assert not any(f"def {retired}(" in text for retired in RETIRED), path


def test_importing_the_package_does_not_import_torch():
    code = "import sys, templatestudio; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_a_machine_given_a_name_instead_of_a_format_says_how_to_get_one():
    """read_events and Machine take a Format; a name (or anything else) is a TypeError naming get_format."""
    from templatestudio import get_format, read_events
    from templatestudio.engine import Machine

    for wrong in ("hermes", 3, object()):
        with pytest.raises(TypeError, match="get_format"):
            read_events("text", wrong)
        with pytest.raises(TypeError, match="get_format"):
            Machine(wrong)
    assert read_events("text", get_format("hermes"))  # the name, looked up, reads
