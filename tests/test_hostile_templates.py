"""Chat templates are code written by strangers: what happens when one is hostile.

Every render in this package goes through ``tokenizer.apply_chat_template``,
which compiles the template in jinja2's ``ImmutableSandboxedEnvironment``
(transformers.utils.chat_template_utils._cached_compile_jinja_template).
These tests render hostile templates through ``templatestudio.render.render``
(and through ``templatestudio.probe``, which ``check`` runs on .jinja files) and
pin down exactly what stops each attack:

- Attribute escapes (``__class__``, ``__globals__``, ``__subclasses__``,
  ``__init__``) and mutating methods (``append``, ``pop``, ``update``): the
  sandbox turns the attribute into an undefined value that renders as
  nothing, and raises ``jinja2.exceptions.SecurityError`` the moment the
  template uses it (reads an attribute of it, calls it, indexes it).
  Nothing Python-internal ever reaches the output.
- ``range(10**9)``: refused by the sandbox's ``safe_range``
  (``OverflowError`` above ``jinja2.sandbox.MAX_RANGE`` = 100,000 items).
- Unbounded recursion (a macro calling itself): stopped by Python's own
  recursion limit (``RecursionError``), not by the sandbox.
- Nested loops, each within MAX_RANGE (100,000**3 iterations): the sandbox
  does NOT stop them, and transformers has no render deadline. The
  package's probe (and so ``check``) takes ``deadline=`` and then renders
  in ``templatestudio.sandbox``, which kills the child at the deadline.
  ``render_with_deadline`` below shows what does stop it: rendering in a
  child process that is killed when the deadline passes. A child process is
  the only reliable stop: a thread cannot be killed, and ``signal.alarm``
  only works in the main thread and cannot interrupt one long C call (a huge
  string repetition), while a process can be killed and given a memory cap.
- Memory bombs (``'x' * 10**10``): the sandbox intercepts no binary operator
  (``intercepted_binops`` is empty), so the allocation is attempted; under
  the child's address-space cap it fails with ``MemoryError``.
"""

from __future__ import annotations

import copy
import multiprocessing
import resource
import time

import jinja2.sandbox
import pytest
from jinja2.exceptions import SecurityError, TemplateError

from templatestudio.detect import detect_format
from templatestudio.probe import TemplateProbeError, probe_template
from templatestudio.render import render

CONVERSATION = [{"role": "user", "content": "What is one euro in yen?"}]


@pytest.fixture(scope="module")
def hostile_tokenizer(qwen3):
    """A shallow copy of Qwen3's tokenizer whose chat template each test replaces."""
    return copy.copy(qwen3)


def render_template(tokenizer, source: str) -> str:
    tokenizer.chat_template = source
    return render(tokenizer, CONVERSATION, add_generation_prompt=False)


# Each escape is wrapped in START ... END so the test sees what, if anything,
# the expression itself rendered to.
RENDERED_EMPTY = {
    "str __class__": "{{ ''.__class__ }}",
    "function __globals__": "{{ raise_exception.__globals__ }}",
    "strftime_now __globals__": "{{ strftime_now.__globals__ }}",
    "attr filter __class__": "{{ messages|attr('__class__') }}",
    "attr filter chain": "{{ 'x'|attr('__class__')|attr('__mro__') }}",
    "str.format field escape": "{{ '{0.__class__}'.format(messages) }}",
}

REFUSED = {
    "__subclasses__ via __mro__": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "__globals__ then os": "{{ raise_exception.__globals__['os'] }}",
    "lipsum popen": "{{ lipsum.__globals__.os.popen('id').read() }}",
    "cycler __init__ globals": "{{ cycler.__init__.__globals__.os }}",
    "self __init__ globals": "{{ self.__init__.__globals__ }}",
    "namespace __init__ globals": "{{ namespace.__init__.__globals__ }}",
    "message list __class__ name": "{{ messages.__class__.__name__ }}",
    "attr filter then mro": "{{ (messages|attr('__class__')).__mro__ }}",
    "tools __class__ __base__": "{{ tools.__class__.__base__ }}",
    "messages.append": "{{ messages.append({'role': 'system', 'content': 'pwned'}) }}",
    "messages.pop": "{{ messages.pop() }}",
    "dict.update": "{{ messages[0].update({'content': 'pwned'}) }}",
}


@pytest.mark.parametrize("source", RENDERED_EMPTY.values(), ids=RENDERED_EMPTY.keys())
def test_an_unsafe_attribute_renders_as_nothing(hostile_tokenizer, source):
    assert render_template(hostile_tokenizer, f"START{source}END") == "STARTEND"


@pytest.mark.parametrize("source", REFUSED.values(), ids=REFUSED.keys())
def test_using_an_unsafe_attribute_raises_security_error(hostile_tokenizer, source):
    with pytest.raises(SecurityError, match="is unsafe"):
        render_template(hostile_tokenizer, source)


def test_a_refused_mutation_leaves_the_conversation_untouched(hostile_tokenizer):
    conversation = copy.deepcopy(CONVERSATION)
    hostile_tokenizer.chat_template = "{{ messages.pop() }}"
    with pytest.raises(SecurityError):
        render(hostile_tokenizer, conversation, add_generation_prompt=False)
    assert conversation == CONVERSATION


def test_the_sandbox_refuses_a_range_above_its_limit(hostile_tokenizer):
    assert jinja2.sandbox.MAX_RANGE == 100_000
    with pytest.raises(OverflowError, match="MAX_RANGE"):
        render_template(hostile_tokenizer, "{% for i in range(10**9) %}x{% endfor %}")
    assert render_template(hostile_tokenizer, "{{ range(100000)|length }}") == "100000"


def test_recursion_is_stopped_by_pythons_limit_not_the_sandbox(hostile_tokenizer):
    with pytest.raises(RecursionError):
        render_template(hostile_tokenizer, "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}")


def test_raise_exception_is_the_one_way_a_template_raises_on_purpose(hostile_tokenizer):
    with pytest.raises(TemplateError, match="^refused$"):
        render_template(hostile_tokenizer, "{{ raise_exception('refused') }}")


def test_detect_reports_a_hostile_template_as_its_error_without_running_it():
    probe = probe_template("{{ lipsum.__globals__.os.popen('id').read() }}")
    assert probe.format is None
    assert probe.error.startswith("SecurityError: access to attribute '__globals__'")


# --- what the sandbox does not stop ---------------------------------------------------------


def _child_run(action, memory_cap, connection):
    if memory_cap is not None:
        # The child inherited the parent's address space (torch maps a lot of it),
        # so the cap is what is mapped now plus memory_cap bytes.
        with open("/proc/self/status") as status:
            mapped_kb = next(int(line.split()[1]) for line in status if line.startswith("VmSize:"))
        limit = mapped_kb * 1024 + memory_cap
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        connection.send(("rendered", action()))
    except BaseException as error:  # noqa: BLE001 - report whatever stopped the render
        connection.send(("raised", f"{type(error).__name__}: {error}"))


def run_with_deadline(action, seconds: float, memory_cap: int | None = None):
    """Run action() in a forked child; ("killed", elapsed) when it outlives the deadline.

    Returns ("rendered", result), ("raised", "Type: message") or ("killed", seconds).
    Fork, so the child starts with everything already imported and loaded.
    """
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_child_run, args=(action, memory_cap, sender))
    started = time.perf_counter()
    child.start()
    sender.close()
    if receiver.poll(seconds):
        outcome = receiver.recv()
        child.join()
        return outcome
    child.kill()
    child.join()
    return "killed", time.perf_counter() - started


def render_with_deadline(tokenizer, source: str, seconds: float, memory_cap: int | None = None):
    return run_with_deadline(lambda: render_template(tokenizer, source), seconds, memory_cap)


NESTED_LOOPS = (
    "{% for i in range(100000) %}{% for j in range(100000) %}{% for k in range(100000) %}"
    "{% endfor %}{% endfor %}{% endfor %}never"
)


def test_the_sandbox_allows_nested_loops_within_its_range_limit(hostile_tokenizer):
    """A million iterations render: each range is under MAX_RANGE, and nothing counts the product."""
    million = "{% for i in range(1000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}done"
    assert render_template(hostile_tokenizer, million) == "done"


def test_nested_huge_loops_run_until_killed(hostile_tokenizer):
    """10**15 iterations are not refused; only killing the rendering process stops them."""
    status, elapsed = render_with_deadline(hostile_tokenizer, NESTED_LOOPS, seconds=1.5)
    assert status == "killed"
    assert 1.5 <= elapsed < 10


def test_the_package_probe_stops_a_looping_template_at_its_deadline():
    """``check`` probes untrusted templates with a deadline (templatestudio.sandbox)."""
    assert probe_template(NESTED_LOOPS, deadline=1.5).stopped


def test_detect_format_is_sandboxed_by_default_so_a_bomb_is_its_error_not_the_callers():
    """Text from strangers: detect_format's default path caps memory, so the caller never sees MemoryError."""
    with pytest.raises(TemplateProbeError) as stopped:
        detect_format("{{ ('x' * 10**10)|length }}")
    assert stopped.value.template_error == (
        "TemplateResourceError: template: the template's render was stopped: "
        "it ran out of memory under the 2 GiB memory limit"
    )


def test_the_deadline_wrapper_returns_ordinary_renders_and_errors(hostile_tokenizer):
    assert render_with_deadline(hostile_tokenizer, "plain", seconds=30) == ("rendered", "plain")
    status, message = render_with_deadline(hostile_tokenizer, "{{ messages.pop() }}", seconds=30)
    assert (status, message.split(":")[0]) == ("raised", "SecurityError")


def test_a_memory_bomb_is_not_intercepted_but_fails_under_a_memory_cap(hostile_tokenizer):
    assert "*" not in jinja2.sandbox.ImmutableSandboxedEnvironment.intercepted_binops
    outcome = render_with_deadline(
        hostile_tokenizer, "{{ ('x' * 10**10)|length }}", seconds=30, memory_cap=512 * 2**20
    )
    assert outcome == ("raised", "MemoryError: ")
