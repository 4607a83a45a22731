"""The package's stop for hostile templates: a forked child with a deadline and a memory cap.

Jinja's sandbox refuses attribute escapes but bounds neither time nor
memory (tests/test_hostile_templates.py). These tests show that the
package's path for templates from strangers (``probe_template(...,
deadline=)`` and ``python -m templatestudio check``) stops a runaway loop
and a memory bomb within the deadline, keeps Jinja's own refusals with
their types, and changes nothing for ordinary templates.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from jinja2.exceptions import SecurityError, TemplateSyntaxError

from templatestudio import sandbox
from templatestudio.detect import detect_format
from templatestudio.families import FAMILIES, GEMMA4, LLAMA31
from templatestudio.formats import FORMATS
from templatestudio.probe import TemplateProbeError, _probe, _probe_sandboxed, probe_template
from templatestudio.render import render
from templatestudio.sandbox import (
    SandboxedError,
    SandboxUnavailable,
    TemplateResourceError,
    TemplateTimeout,
    run_sandboxed,
)
from templatestudio.templates import ChatTemplate, load_chat_templates
from templatestudio.template_errors import advice_for
from test_check_cli import HERMES_TEMPLATE  # the same small Hermes template `check` is tested on

ROOT = Path(__file__).resolve().parent.parent
DEADLINE = 2.0
# Forking, then killing and reaping the child, takes milliseconds even on a
# loaded two-core machine: a stop later than half the deadline again is a bug.
OVERRUN = 0.5
SMALL_MEMORY = 256 * 2**20


def stopped_in_time(elapsed: float, deadline: float = DEADLINE) -> bool:
    """Stopped no earlier than the deadline and no later than 50% past it."""
    return deadline <= elapsed <= deadline * (1 + OVERRUN)


def finished_in_time(elapsed: float, deadline: float = DEADLINE) -> bool:
    """Stopped (by something other than the clock) within the deadline's allowance."""
    return elapsed <= deadline * (1 + OVERRUN)


def test_the_time_checks_fail_past_half_the_deadline_again():
    # What the deadline tests below assert, shown to be able to fail.
    assert stopped_in_time(DEADLINE) and stopped_in_time(DEADLINE * 1.5)
    assert not stopped_in_time(DEADLINE * 1.5 + 0.01)
    assert not stopped_in_time(DEADLINE - 0.01)  # killed early is wrong too
    assert finished_in_time(0.1) and not finished_in_time(DEADLINE * 1.5 + 0.01)


NESTED_LOOPS = (
    "{% for i in range(100000) %}{% for j in range(100000) %}{% for k in range(100000) %}"
    "{% endfor %}{% endfor %}{% endfor %}never"
)
# One allocation far above any cap, and a string that doubles until it hits one.
MEMORY_BOMBS = {
    "one huge repetition": "{{ ('x' * 10**10)|length }}",
    "doubling string": (
        "{% set ns = namespace(s='x') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}"
        "{% endfor %}{{ ns.s|length }}"
    ),
}
ESCAPE = "{{ lipsum.__globals__.os.popen('id').read() }}"
CONVERSATION = [{"role": "user", "content": "What is one euro in yen?"}]


def timed(action):
    started = time.monotonic()
    result = action()
    return result, time.monotonic() - started


def render_source(source: str) -> str:
    return ChatTemplate("hostile", source).render(CONVERSATION)


# --- run_sandboxed --------------------------------------------------------------------------


def test_a_runaway_loop_is_killed_at_the_deadline():
    started = time.monotonic()
    with pytest.raises(TemplateTimeout) as stopped:
        run_sandboxed(functools.partial(render_source, NESTED_LOOPS), name="loops", deadline=DEADLINE)
    assert stopped_in_time(time.monotonic() - started)
    assert str(stopped.value) == (
        "loops: the template did not finish rendering within the 2 s deadline (its render was killed)"
    )
    assert (stopped.value.template, stopped.value.seconds) == ("loops", DEADLINE)
    assert isinstance(stopped.value, ValueError)


@pytest.mark.parametrize("source", MEMORY_BOMBS.values(), ids=MEMORY_BOMBS.keys())
def test_a_memory_bomb_fails_under_the_memory_cap(source):
    started = time.monotonic()
    with pytest.raises(TemplateResourceError) as stopped:
        bomb = functools.partial(render_source, source)
        run_sandboxed(bomb, name="bomb", deadline=DEADLINE, memory_limit=SMALL_MEMORY)
    assert finished_in_time(time.monotonic() - started)
    assert str(stopped.value) == (
        "bomb: the template's render was stopped: it ran out of memory under the 256 MiB memory limit"
    )
    assert isinstance(stopped.value, ValueError)


def test_the_memory_cap_leaves_an_ordinary_render_room():
    assert run_sandboxed(lambda: len("x" * 10**6), memory_limit=SMALL_MEMORY) == 10**6


def test_jinja_refusals_come_back_with_their_own_type():
    with pytest.raises(SecurityError, match="^access to attribute '__globals__' of 'function' object"):
        run_sandboxed(functools.partial(render_source, ESCAPE), deadline=30)
    with pytest.raises(OverflowError, match="MAX_RANGE"):
        run_sandboxed(functools.partial(render_source, "{{ range(10**9)|length }}"), deadline=30)
    with pytest.raises(TemplateSyntaxError) as syntax:
        run_sandboxed(functools.partial(render_source, "{% if %}"), deadline=30)
    assert str(syntax.value) == "Expected an expression, got 'end of statement block'"
    assert syntax.value.lineno == 1
    assert syntax.value.__notes__ == ["(raised in the sandboxed render of template)"]


def test_an_error_that_cannot_be_pickled_back_keeps_its_type_name_and_message():
    def refuse():
        # Its __init__ takes two arguments, so the default pickle cannot rebuild it.
        raise TemplateProbeError("odd", "it refuses")

    with pytest.raises(SandboxedError) as error:
        run_sandboxed(refuse, deadline=30)
    assert (error.value.type_name, error.value.message) == (
        "TemplateProbeError",
        "odd: the template cannot render the probe conversation: it refuses",
    )
    assert str(error.value) == (
        "TemplateProbeError: odd: the template cannot render the probe conversation: it refuses"
    )


def test_a_result_that_cannot_be_pickled_is_a_type_error():
    with pytest.raises(TypeError, match=r"^t: the render's result cannot be pickled back from the child \("):
        run_sandboxed(lambda: (lambda: None), name="t", deadline=30)


def test_a_child_that_dies_without_an_answer_is_a_resource_error():
    with pytest.raises(TemplateResourceError, match=r"its process died without an answer \(exit code 3\)$"):
        run_sandboxed(lambda: os._exit(3), deadline=30)
    with pytest.raises(TemplateResourceError, match=r"\(killed by SIGKILL\)$"):
        run_sandboxed(lambda: os.kill(os.getpid(), 9), deadline=30)


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"deadline": 0}, "deadline must be a positive number of seconds, at most 1,000,000, got 0"),
        ({"deadline": float("nan")}, "deadline must be a positive number of seconds, at most 1,000,000, got nan"),
        ({"deadline": float("inf")}, "deadline must be a positive number of seconds, at most 1,000,000, got inf"),
        ({"deadline": 10**7}, "deadline must be a positive number of seconds, at most 1,000,000, got 10000000"),
        ({"memory_limit": -1}, "memory_limit must be positive (bytes) or None, got -1"),
        ({"memory_limit": 0}, "memory_limit must be positive (bytes) or None, got 0"),
    ],
)
def test_limits_must_be_positive(limits, message):
    with pytest.raises(ValueError, match=f"^{message.replace('(', '[(]').replace(')', '[)]')}$"):
        run_sandboxed(lambda: None, **limits)


def test_without_fork_it_warns_and_runs_in_process(monkeypatch):
    monkeypatch.setattr(sandbox, "FORK_AVAILABLE", False)
    ran_here = []
    with pytest.warns(SandboxUnavailable, match="^x: this platform cannot fork, so the template renders"):
        assert run_sandboxed(lambda: ran_here.append(1) or "done", name="x") == "done"
    assert ran_here == [1]


def test_a_normal_render_is_the_same_with_and_without_the_sandbox(qwen3):
    tokenizer = copy.copy(qwen3)
    expected = render(tokenizer, CONVERSATION)
    assert run_sandboxed(functools.partial(render, tokenizer, CONVERSATION), deadline=30) == expected
    assert "<|im_start|>user\nWhat is one euro in yen?<|im_end|>" in expected


# --- probe_template(..., deadline=) ---------------------------------------------------------


def test_the_probe_reports_a_runaway_loop_as_stopped():
    probe, elapsed = timed(lambda: probe_template(ChatTemplate("loops", NESTED_LOOPS), deadline=DEADLINE))
    assert stopped_in_time(elapsed)
    assert probe.stopped
    assert (probe.format, probe.renders_tools, probe.call_survives) == (None, False, False)
    assert probe.error == (
        "TemplateTimeout: loops: the template did not finish rendering within the 2 s deadline "
        "(its render was killed)"
    )
    assert probe.reason == f"template error: {probe.error} — {advice_for(probe.errors)}"


@pytest.mark.parametrize("source", MEMORY_BOMBS.values(), ids=MEMORY_BOMBS.keys())
def test_the_probe_reports_a_memory_bomb_as_stopped(source):
    probe, elapsed = timed(
        lambda: probe_template(ChatTemplate("bomb", source), deadline=DEADLINE, memory_limit=SMALL_MEMORY)
    )
    assert finished_in_time(elapsed)
    assert probe.stopped
    assert probe.error == (
        "TemplateResourceError: bomb: the template's render was stopped: "
        "it ran out of memory under the 256 MiB memory limit"
    )


def test_only_finished_probes_are_cached():
    _probe_sandboxed.cache_clear()
    assert probe_template(ChatTemplate("loops", NESTED_LOOPS), deadline=0.5).stopped
    assert _probe_sandboxed.cache_info().currsize == 0  # a later call with a longer deadline retries
    probe_template(HERMES_TEMPLATE, deadline=30)
    assert _probe_sandboxed.cache_info().currsize == 1


def test_a_security_error_is_still_the_templates_own_error():
    sandboxed = probe_template(ESCAPE, deadline=30)
    assert not sandboxed.stopped
    assert sandboxed.error.startswith("SecurityError: access to attribute '__globals__'")
    assert sandboxed == probe_template(ESCAPE)


@pytest.mark.parametrize("target", [FAMILIES["qwen3"], GEMMA4, LLAMA31])
def test_a_sandboxed_probe_equals_the_in_process_probe(target):
    (template,) = load_chat_templates(target)
    _probe.cache_clear()
    _probe_sandboxed.cache_clear()
    sandboxed = probe_template(template, deadline=30)
    assert _probe.cache_info().currsize == 0  # it really ran in the child
    assert sandboxed == probe_template(template)
    assert sandboxed.format is not None
    assert sandboxed.format is FORMATS[sandboxed.format.name]  # the registry's object, not a copy


def test_detect_format_sends_template_text_to_the_sandbox_by_default():
    # Text from strangers: the default path is the child process with a deadline.
    _probe.cache_clear()
    _probe_sandboxed.cache_clear()
    assert detect_format(HERMES_TEMPLATE) is FORMATS["hermes"]
    assert _probe.cache_info().currsize == 0 and _probe_sandboxed.cache_info().currsize == 1
    with pytest.raises(TemplateProbeError, match="TemplateTimeout: template: the template did not finish") as caught:
        started = time.monotonic()
        detect_format(NESTED_LOOPS, deadline=DEADLINE)
    assert stopped_in_time(time.monotonic() - started)
    assert caught.value.template_name == "template"


# --- python -m templatestudio check ---------------------------------------------------------


def run_check(*arguments: str) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "templatestudio", "check", *arguments],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    return result, time.monotonic() - started


def test_check_stops_a_looping_template_file_and_fails(tmp_path):
    (tmp_path / "loops.jinja").write_text(NESTED_LOOPS)
    result, elapsed = run_check("--deadline", "2", str(tmp_path / "loops.jinja"))
    # Interpreter start and imports take about a second; the probe itself is cut at 2 s.
    assert elapsed < 15
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "template tools  call   format       parse with",
        "loops    False  False  -            none: stopped by the sandbox",
    ]
    assert result.stderr == (
        "loops: the template did not finish rendering within the 2 s deadline (its render was killed)\n"
    )


def test_check_stops_a_memory_bomb_in_a_folder_and_reports_the_rest(tmp_path):
    (tmp_path / "bomb.jinja").write_text(MEMORY_BOMBS["doubling string"])
    (tmp_path / "escape.jinja").write_text(ESCAPE)
    (tmp_path / "hermes_mini.jinja").write_text(HERMES_TEMPLATE)
    result, elapsed = run_check("--json", "--deadline", "2", "--memory-limit", "256", str(tmp_path))
    assert elapsed < 15
    assert result.returncode == 1
    report = json.loads(result.stdout)
    rows = {row["template"]: row for row in report["templates"]}
    assert rows["bomb"]["parse_with"] == "none: stopped by the sandbox"
    assert rows["bomb"]["error"] == (
        "TemplateResourceError: bomb: the template's render was stopped: "
        "it ran out of memory under the 256 MiB memory limit"
    )
    assert rows["escape"]["parse_with"] == f"none: template error: {rows['escape']['error']} — {advice_for((rows['escape']['error'],))}"
    assert rows["escape"]["error"].startswith("SecurityError: access to attribute '__globals__'")
    assert (rows["hermes_mini"]["format"], rows["hermes_mini"]["parse_with"]) == ("hermes", "hermes parser")
    assert report["failures"] == [
        "bomb: the template's render was stopped: it ran out of memory under the 256 MiB memory limit"
    ]


def test_check_refuses_a_limit_that_is_not_positive(tmp_path):
    result, _ = run_check("--deadline", "0", "Qwen/Qwen3-0.6B")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "python -m templatestudio check: error: argument --deadline: "
        "must be a number of seconds above 0 and at most 1,000,000, got '0'"
    )


def test_a_sandboxed_probe_forks_after_the_renderer_and_reading_tables_are_loaded():
    # A child that imports transformers' renderer and builds the readers'
    # tables itself pays about a second per template and loses them at exit:
    # the corpus check took a minute instead of seconds. A fresh interpreter,
    # so that nothing another test imported hides it.
    code = "\n".join([
        "import sys",
        "from templatestudio import probe, watch_tables",
        "from templatestudio.formats import FORMATS",
        "seen = {}",
        "real = probe.run_sandboxed",
        "def spy(fn, **kw):",
        "    seen['renderer'] = 'transformers.utils.chat_template_utils' in sys.modules",
        "    seen['tables'] = watch_tables.tables.cache_info().currsize",
        "    return real(fn, **kw)",
        "probe.run_sandboxed = spy",
        "probe.probe_template(\"{{ messages[0]['content'] }}\", deadline=10)",
        "print(seen['renderer'], seen['tables'] >= len(FORMATS))",
    ])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]
