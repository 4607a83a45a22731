"""Run a learner's answer on cases and print what passed.

``check(title, answer, cases)`` calls ``answer(*case.args)`` for every case and
compares the result with ``case.expected`` (``==`` unless the case brings its
own ``same``). It prints one line when every case passes, and otherwise the
first failing case: what went in, what was expected, what came back (or the
exception raised, as ``TypeName: message``). It returns whether all passed and
never raises: an unfinished exercise must not stop Run All.

``check_value(title, given, expected)`` is the same for an answer that is a
value (a count, a format name) rather than a function.

Not handled: answers that loop forever (no deadline is set) and answers with
side effects the next case sees (each case is called in turn, in order).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Case", "check", "check_value", "leaving_input_alone"]


@dataclass(frozen=True)
class Case:
    """One input for an answer, and what it must give back."""

    label: str
    args: tuple
    expected: Any
    # How to compare when == is not the question (a float, a set of calls).
    same: Callable[[Any, Any], bool] | None = field(default=None, compare=False)


def _outcome(answer: Callable, case: Case) -> tuple[bool, str]:
    try:
        got = answer(*case.args)
    except Exception as error:  # the learner's exception is the answer shown
        return False, f"{type(error).__name__}: {error}"
    same = case.same or (lambda a, b: a == b)
    return same(got, case.expected), repr(got)


def check(title: str, answer: Callable, cases: Sequence[Case]) -> bool:
    """Print how many of ``cases`` ``answer`` gets right, and the first it gets wrong."""
    passed = 0
    first_failure = None
    for case in cases:
        ok, shown = _outcome(answer, case)
        if ok:
            passed += 1
        elif first_failure is None:
            first_failure = (case, shown)
    if first_failure is None:
        print(f"{title}: all {len(cases)} cases pass.")
        return True
    case, shown = first_failure
    print(f"{title}: {passed} of {len(cases)} cases pass. First failing case: {case.label}")
    print(f"  input:    {', '.join(repr(arg) for arg in case.args)}")
    print(f"  expected: {case.expected!r}")
    print(f"  got:      {shown}")
    return False


def leaving_input_alone(answer: Callable) -> Callable:
    """answer, called on a copy of its one argument; "changed its input" when it changed the copy.

    For exercises whose answer must return a new value and leave what it was
    given as it was (a conversation, a message): the change is the answer the
    checker shows, as a string, so it fails any case.
    """

    def called(given):
        copied = copy.deepcopy(given)
        got = answer(copied)
        return "changed its input" if copied != given else got

    return called


def check_value(title: str, given: Any, expected: Any) -> bool:
    """Print whether ``given`` is the expected value (without showing it, unless right)."""
    if given == expected:
        print(f"{title}: right, {given!r}.")
        return True
    print(f"{title}: not yet ({given!r} is not the answer).")
    return False
