"""What a template's render error means and what the user can do about it.

The probe records each error a template raised as ``"TypeName: message"``
(one per distinct error when call shapes fail differently:
``TemplateProbe.errors``), as text, because it may come back from a
sandboxed child process. ``advice_for(errors)`` looks each one up in
``KNOWN_ERRORS``, a table of the error kinds Jinja and
transformers' sandbox raise, keyed by the exception's type name and a
pattern on its message, and says in one line what the error means and
what to do. An error of a kind the table does not hold still gets a line
saying where to look, never just "the template errors".

Not per-format knowledge: the kinds are Jinja's and the sandbox's, the same
for every template.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["KNOWN_ERRORS", "ErrorKind", "advice_for", "error_part", "kind_of"]

# Methods that change the object they are called on; transformers renders
# templates in Jinja's immutable sandbox, which refuses every one of them.
_MUTATORS = "append|extend|insert|pop|popitem|remove|clear|sort|reverse|update|setdefault|add|discard"


@dataclass(frozen=True)
class ErrorKind:
    """One kind of render error: the exception's type name, a pattern on its message, the advice.

    advice is formatted with the pattern's named groups.
    """

    exception: str
    pattern: re.Pattern
    advice: str

    def advise(self, exception: str, message: str) -> str | None:
        if exception != self.exception:
            return None
        found = self.pattern.search(message)
        return None if found is None else self.advice.format(**found.groupdict())


def _kind(exception: str, pattern: str, advice: str) -> ErrorKind:
    return ErrorKind(exception, re.compile(pattern), advice)


KNOWN_ERRORS: tuple[ErrorKind, ...] = (
    _kind("SecurityError", rf"access to attribute '(?P<method>{_MUTATORS})' of '(?P<kind>\w+)' object is unsafe",
          "the template mutates a {kind} ({kind}.{method}), which transformers' sandboxed Jinja forbids; use a "
          "template revision that builds a new {kind} instead (with + or a namespace()), or render it outside the "
          "sandbox (a mutable sandbox) if you trust its source"),
    _kind("SecurityError", r"access to attribute '(?P<name>[^']+)' of '(?P<kind>[^']+)' object is unsafe",
          "the template reaches for {kind}.{name}, which transformers' sandbox blocks because it leads outside "
          "the template; do not render it without the sandbox unless you trust its source"),
    _kind("UndefinedError", r"'(?P<name>\w+)' is undefined",
          "the template reads a variable {name!r} that apply_chat_template does not pass; pass {name}=... as a "
          "keyword argument (extra keywords reach the template), or use a template that reads messages and tools"),
    _kind("UndefinedError", r"'dict object' has no attribute '(?P<key>[^']+)'",
          "the template reads the key {key!r} from a message or tool schema that lacks it; add {key!r} where the "
          "template expects it, or use a revision that checks for it first"),
    _kind("UndefinedError", r"(?:str object|None) has no element \d+",
          "the template indexes a string or None as a list: it most likely expects each message's content as a "
          "list of typed parts ([{{'type': 'text', 'text': ...}}]), as vision models' templates do; pass it so"),
    _kind("UndefinedError", r"",
          "the template reads something the conversation does not hold; its message names what"),
    _kind("TypeError", r"can only concatenate str \(not \"(?P<kind>\w+)\"\) to str",
          "the template joins a {kind} to text, so it needs string message content; pass content as a string"),
    _kind("TypeError", r"Object of type (?P<kind>\w+) is not JSON serializable",
          "the template hands a {kind} to tojson, which cannot write it; use a revision that converts it first "
          "(for example with | list), or render without the value it comes from"),
    _kind("TemplateRuntimeError", r"No filter named '(?P<name>[^']+)'",
          "the template uses the Jinja filter {name!r}, which transformers does not define; use a revision "
          "without it, or give the value in the form that does not need it"),
    _kind("TemplateAssertionError", r"No (?P<what>filter|test) named '(?P<name>[^']+)'",
          "the template uses the Jinja {what} {name!r}, which transformers does not define; use a revision without it"),
    _kind("TemplateSyntaxError", r"", "the template is not valid Jinja; fix its source at the line the message names"),
    _kind("TemplateError", r"",
          "the template refuses the conversation on purpose (raise_exception); give it the conversation its "
          "message asks for"),
    _kind("TemplateTimeout", r"",
          "the render did not end within the deadline: a template that loops without end cannot be used; if it "
          "is only slow, give it a longer deadline (check --deadline)"),
    _kind("TemplateResourceError", r"",
          "the render ran out of memory under the limit: a template that allocates without bound cannot be "
          "used; if it is only large, give it more (check --memory-limit)"),
    _kind("OverflowError", r"The sandbox blocks ranges larger than MAX_RANGE \((?P<limit>\d+)\)",
          "the template builds a range longer than transformers' sandbox allows ({limit} items); use a revision "
          "that loops over the data itself, not over a long range"),
    _kind("RecursionError", r"",
          "the template recurses without end (a macro that calls itself); use a revision without the loop"),
)


_PART = re.compile(r"(?P<exception>\w+): (?P<message>.*)", re.S)


def error_part(error: str) -> tuple[str, str]:
    """(exception type name, message) of one error as the probe records it ("TypeName: message").

    The message is everything after the first ": ", whatever it holds (a
    template's own ``raise_exception('user / assistant only')`` included).
    """
    found = _PART.fullmatch(error)
    return (found.group("exception"), found.group("message")) if found else ("", error)


def kind_of(exception: str, message: str) -> tuple[ErrorKind, str] | None:
    """The first known kind this error is, with its advice; None for a kind the table does not hold."""
    for kind in KNOWN_ERRORS:
        advice = kind.advise(exception, message)
        if advice is not None:
            return kind, advice
    return None


def advice_for(errors: tuple[str, ...] | list[str]) -> str:
    """One line of advice for a probe's errors (``TemplateProbe.errors``), one clause per distinct kind."""
    if isinstance(errors, str):
        raise TypeError("advice_for takes the probe's errors, a sequence of 'TypeName: message' texts, not one text")
    advice = []
    for exception, message in map(error_part, errors):
        known = kind_of(exception, message)
        line = known[1] if known else (
            f"the template raised {exception or 'an error'} on every call shape the probe tries; "
            "its message says what it expects of the conversation")
        if line not in advice:
            advice.append(line)
    return "; ".join(advice)
