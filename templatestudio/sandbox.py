"""Run a template render in a child process that is killed at a deadline.

Jinja's sandbox (which transformers renders every chat template in) refuses
attribute escapes and ranges above 100,000 items, but it counts neither
time nor memory: three nested ``range(100000)`` loops run for days, and
``'x' * 10**10`` tries to allocate ten gigabytes. Neither transformers nor
jinja2 has a render deadline, and a thread cannot be killed, so the only
reliable stop is a process: ``run_sandboxed`` forks a child that runs the
callable under an address-space cap and is killed when the deadline passes.

What you get back is the callable's return value (it must be picklable, as
it crosses a pipe), or one of:

- ``TemplateTimeout``: the child outlived the deadline and was killed.
- ``TemplateResourceError``: the child ran out of its memory allowance
  (``MemoryError``) or died without answering (killed by a signal, such as
  the kernel's out-of-memory killer).
- The child's own exception, re-raised with its type (``SecurityError``,
  ``TemplateError``, ``OverflowError``, ``RecursionError``, ...) when it
  survives a pickle round trip; otherwise ``SandboxedError`` carrying the
  original type name and message.
- ``TypeError`` when the callable returned something that cannot be pickled.

Forking costs a few milliseconds (the child starts with everything the
parent has imported and loaded, so nothing is re-imported or re-sent).

Not handled:

- Platforms without ``fork`` (Windows): ``run_sandboxed`` warns with
  ``SandboxUnavailable`` and runs the callable in-process, with no deadline
  and no memory cap. ``spawn`` is not used because it would re-import the
  package and pickle the callable for every template.
- The memory cap is ``RLIMIT_AS`` measured from the child's size at fork
  time, read from ``/proc/self/status``; where that file or ``RLIMIT_AS`` is
  missing (macOS), only the deadline applies.
- Threads: the child holds only the thread that forked it. A callable that
  needs a lock another parent thread held at fork time can hang, and is
  then reported as a timeout. Rendering Jinja takes no such lock.
- Side effects of the callable happen in the child and are lost: caches it
  fills, attributes it sets.
- Output the callable prints goes to the inherited stdout/stderr as is.
"""

from __future__ import annotations

import math
import multiprocessing
import numbers
import pickle
import signal
import sys
import time
import warnings
from typing import Any, Callable

try:
    import resource
except ImportError:  # Windows
    resource = None

__all__ = [
    "DEFAULT_DEADLINE",
    "DEFAULT_MEMORY_LIMIT",
    "FORK_AVAILABLE",
    "MAX_DEADLINE",
    "check_limits",
    "SandboxUnavailable",
    "SandboxedError",
    "TemplateResourceError",
    "TemplateTimeout",
    "run_sandboxed",
]

DEFAULT_DEADLINE = 10.0  # seconds; real templates render in milliseconds
DEFAULT_MEMORY_LIMIT = 2 * 2**30  # bytes the child may map beyond what it inherited
# A render that needs days is a hang; longer waits also overflow the clock the pipe polls with.
MAX_DEADLINE = 10**6  # seconds, about eleven days
# The largest address-space cap the kernel takes (a signed 64-bit rlim_t).
_MAX_RLIMIT = 2**63 - 1
FORK_AVAILABLE = "fork" in multiprocessing.get_all_start_methods()


class TemplateTimeout(ValueError):
    """The render outlived its deadline; its process was killed."""

    def __init__(self, template: str, seconds: float) -> None:
        self.template, self.seconds = template, seconds
        super().__init__(
            f"{template}: the template did not finish rendering within the {seconds:g} s deadline "
            "(its render was killed)"
        )

    def __reduce__(self):
        return type(self), (self.template, self.seconds)


class TemplateResourceError(ValueError):
    """The render exhausted its memory allowance, or its process died without an answer."""

    def __init__(self, template: str, limit: str) -> None:
        self.template, self.limit = template, limit
        super().__init__(f"{template}: the template's render was stopped: {limit}")

    def __reduce__(self):
        return type(self), (self.template, self.limit)


class SandboxedError(ValueError):
    """An exception from the child that could not cross back with its own type."""

    def __init__(self, type_name: str, message: str) -> None:
        self.type_name, self.message = type_name, message
        super().__init__(f"{type_name}: {message}")

    def __reduce__(self):
        return type(self), (self.type_name, self.message)


class SandboxUnavailable(RuntimeWarning):
    """No fork on this platform: the render runs in-process, without deadline or memory cap."""


def _mapped_bytes() -> int | None:
    """The process's current address-space size (VmSize), or None where /proc is missing."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _cap_address_space(memory_limit: int) -> None:
    # The child inherited the parent's mappings (transformers, maybe torch:
    # gigabytes of address space), so an absolute cap could leave it no room
    # at all; the allowance is counted on top of what is already mapped.
    mapped = _mapped_bytes()
    if resource is None or not hasattr(resource, "RLIMIT_AS") or mapped is None:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = min(mapped + memory_limit, _MAX_RLIMIT)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _crossable(error: BaseException) -> tuple[BaseException, dict]:
    """error and its attributes if they survive a pickle round trip intact, else a SandboxedError.

    The attributes travel beside the exception because some exceptions
    pickle only their arguments: jinja2's TemplateSyntaxError would lose the
    flag that keeps its location out of its message.
    """
    if isinstance(error, Exception):
        try:
            state = dict(vars(error))
            copy = pickle.loads(pickle.dumps(error))
            vars(copy).update(pickle.loads(pickle.dumps(state)))
        except Exception:  # noqa: BLE001 - any pickling failure means "send a description"
            copy = None
        if type(copy) is type(error) and str(copy) == str(error):
            return error, state
    return SandboxedError(type(error).__name__, str(error)), {}


def _child(action: Callable[[], Any], memory_limit: int | None, connection) -> None:
    try:
        if memory_limit is not None:
            _cap_address_space(memory_limit)
        result = action()
    except MemoryError:
        message = ("out of memory", None)
    except BaseException as error:  # noqa: BLE001 - whatever stopped the render goes to the parent
        message = ("raised", _crossable(error))
    else:
        message = _pickled(result)
    try:
        connection.send(message)
    except MemoryError:
        # Not even room to send: the parent sees a silent exit.
        pass
    finally:
        connection.close()


def _pickled(result: Any) -> tuple[str, Any]:
    # Pickled here, not by send(), so an unpicklable result is told apart
    # from an error of the render itself.
    try:
        return "returned", pickle.dumps(result)
    except MemoryError:
        return "out of memory", None
    except Exception as error:  # noqa: BLE001 - pickle raises several types for the same problem
        return "unpicklable", f"{type(error).__name__}: {error}"


def _exit(child) -> str:
    if child.exitcode is not None and child.exitcode < 0:
        return f"killed by {signal.Signals(-child.exitcode).name}"
    return f"exit code {child.exitcode}"


def _size(limit: int) -> str:
    return f"{limit / 2**30:g} GiB" if limit >= 2**30 else f"{limit / 2**20:g} MiB"


def check_limits(deadline: object, memory_limit: object) -> None:
    """Raise ValueError (TypeError for a non-number) unless run_sandboxed can honour both limits.

    deadline: a real number of seconds, above 0 and at most MAX_DEADLINE
    (infinity and NaN are refused: "no deadline" is not this module's job).
    memory_limit: None, or a whole number of bytes above 0; caps above what
    the kernel can set are lowered to its maximum.
    """
    if isinstance(deadline, bool) or not isinstance(deadline, numbers.Real):
        raise TypeError(f"deadline must be a number of seconds, got {type(deadline).__name__}")
    if not (deadline > 0 and math.isfinite(deadline) and deadline <= MAX_DEADLINE):
        raise ValueError(
            f"deadline must be a positive number of seconds, at most {MAX_DEADLINE:,}, got {deadline!r}"
        )
    if memory_limit is None:
        return
    if isinstance(memory_limit, bool) or not isinstance(memory_limit, numbers.Integral):
        kind = type(memory_limit).__name__
        raise TypeError(f"memory_limit must be an int (bytes) or None, got {kind}")
    if not memory_limit > 0:
        raise ValueError(f"memory_limit must be positive (bytes) or None, got {memory_limit!r}")


def run_sandboxed(
    action: Callable[[], Any],
    *,
    name: str = "template",
    deadline: float = DEFAULT_DEADLINE,
    memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
) -> Any:
    """Call action() in a forked child; its result, or why it was stopped.

    name is what the errors call the template. deadline is wall-clock
    seconds from the fork. memory_limit is the bytes of address space the
    child may add to what it inherited (None: no cap). Limits that cannot
    be honoured raise before anything runs (``check_limits``). Raises
    TemplateTimeout, TemplateResourceError, the child's own exception, or
    SandboxedError (see the module docstring).
    """
    check_limits(deadline, memory_limit)
    if not FORK_AVAILABLE:
        warnings.warn(
            f"{name}: this platform cannot fork, so the template renders in-process "
            "with no deadline and no memory cap",
            SandboxUnavailable,
            stacklevel=2,
        )
        return action()
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(action, memory_limit, sender), daemon=True)
    # The child flushes its copy of these buffers when it exits: flush them
    # now so pending output is not written twice.
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    started = time.monotonic()
    child.start()
    sender.close()  # only the child writes; its exit then reads as EOF here
    try:
        answered = receiver.poll(max(0.0, deadline - (time.monotonic() - started)))
        if not answered:
            child.kill()
            raise TemplateTimeout(name, deadline)
        try:
            kind, payload = receiver.recv()
        except EOFError:
            child.join()
            died = f"its process died without an answer ({_exit(child)})"
            raise TemplateResourceError(name, died) from None
    finally:
        receiver.close()
        child.join()
    if kind == "returned":
        return pickle.loads(payload)
    if kind == "out of memory":
        under = "" if memory_limit is None else f" under the {_size(memory_limit)} memory limit"
        raise TemplateResourceError(name, f"it ran out of memory{under}")
    if kind == "unpicklable":
        raise TypeError(f"{name}: the render's result cannot be pickled back from the child ({payload})")
    error, state = payload
    vars(error).update(state)
    error.add_note(f"(raised in the sandboxed render of {name})")
    raise error
