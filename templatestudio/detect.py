"""Choosing the format that reads a model's calls: from its chat template, by probing.

``detect_format`` probes a template (``templatestudio.probe``) and returns
the registered format that alone reads the probe call back; where none
does, the format derived from the template itself, when it round-trips
(``templatestudio.derive``; ``Format.derived_from`` marks it).
``resolve_format`` turns whatever a caller holds (a ``Format``, a format
name, a tokenizer, a ``ChatTemplate``) into a ``Format``, by that one rule.
The reader (``read_tool_calls``, ``split_reasoning``) calls it for every
caller that reads replies, and the vLLM plugin through ``detect_format``
once per server; the stream and the engine below take the ``Format`` it
gives and resolve nothing.

Templates from strangers are probed in a sandboxed child process with a
deadline and a memory cap by default (``templatestudio.sandbox``); pass
``deadline=None`` for the in-process path, which is faster and suits
templates you trust (a tokenizer you loaded yourself), but bounds neither
time nor memory.
"""

from __future__ import annotations

import functools

from templatestudio.calls import NoToolCallFormat
from templatestudio.derive import DerivedShape, derive, derived_format
from templatestudio.formats import FORMATS, Format, get_format
from templatestudio.probe import TemplateProbe, TemplateProbeError, as_template, probe_template
from templatestudio.sandbox import (
    DEFAULT_DEADLINE, DEFAULT_MEMORY_LIMIT, TemplateResourceError, TemplateTimeout, run_sandboxed,
)
from templatestudio.templates import ChatTemplate

__all__ = ["AmbiguousFormat", "NoToolCallFormat", "derived_shape", "detect_format", "resolve_format"]


class AmbiguousFormat(NoToolCallFormat):
    """Two or more formats read the template's call back: the package will not pick one."""


def _checked(probe: TemplateProbe) -> Format | None:
    if probe.error is not None:
        raise TemplateProbeError(probe.name, probe.error)
    if probe.ambiguous:
        raise AmbiguousFormat(f"{probe.name}: {probe.reason}; name the format explicitly")
    return probe.format


def detect_format(
    source, *, deadline: float | None = DEFAULT_DEADLINE, memory_limit: int | None = DEFAULT_MEMORY_LIMIT,
    derive: bool = True,
) -> Format | None:
    """The registered format the template writes calls in; else the one derived from it; else None.

    When no registered format reads the template's call back, the shape is
    derived from the template (``templatestudio.derive``, in the same
    sandbox as the probe) and used only if it round-trips; the Format it
    gives says so (``Format.derived_from``). ``derive=False`` keeps to the
    registered formats. None when the template renders no tools, drops the
    assistant's call, or writes it in a grammar neither a registered reader
    nor a derived one reads back exactly (``derived_shape`` says why).
    Raises TemplateProbeError when the template fails on every probe shape
    or the sandbox stopped the probe or the derivation (each gets the
    deadline), AmbiguousFormat when several formats read it back.
    """
    probe = probe_template(source, deadline=deadline, memory_limit=memory_limit)
    found = _checked(probe)
    if found is not None or not derive or not probe.call_survives:
        return found
    shape, found = derived_shape(source, deadline=deadline, memory_limit=memory_limit)
    if shape.stopped is not None:
        raise TemplateProbeError(probe.name, shape.stopped)
    return found


def derived_shape(
    source, *, deadline: float | None = DEFAULT_DEADLINE, memory_limit: int | None = DEFAULT_MEMORY_LIMIT
) -> tuple[DerivedShape, Format | None]:
    """The template's derived shape (or why there is none) and its Format, sandboxed with a deadline.

    The same template gives the same Format object each time (formats
    compare by identity).
    """
    return _derived(as_template(source), deadline, memory_limit)


@functools.lru_cache(maxsize=256)
def _derived(
    template: ChatTemplate, deadline: float | None, memory_limit: int | None
) -> tuple[DerivedShape, Format | None]:
    if deadline is None:
        shape = derive(template)
    else:
        try:
            shape = run_sandboxed(functools.partial(derive, template), name=template.name, deadline=deadline,
                                  memory_limit=memory_limit)
        except (TemplateTimeout, TemplateResourceError) as stop:
            shape = DerivedShape(template.name, None, stopped=f"{type(stop).__name__}: {stop}")
    return shape, (derived_format(shape.wire, shape.template) if shape.wire is not None else None)


def resolve_format(source, *, deadline: float | None = DEFAULT_DEADLINE) -> Format:
    """A Format from a Format, a registered name, a tokenizer or a template; never None.

    A template that writes no known format raises NoToolCallFormat naming
    the model and the reason.
    """
    if isinstance(source, Format):
        return source
    if isinstance(source, str) and source in FORMATS:
        return FORMATS[source]
    if isinstance(source, str) and "{" not in source:
        return get_format(source)  # a name, but not a registered one: UnknownFormat lists them
    probe = probe_template(source, deadline=deadline)
    found = _checked(probe)
    if found is not None:
        return found
    reason = probe.reason
    if probe.call_survives:
        shape, found = derived_shape(source, deadline=deadline)
        if found is not None:
            return found
        if shape.stopped is not None:
            raise TemplateProbeError(probe.name, shape.stopped)
        reason += f"; none derived: {shape.refused}"
    raise NoToolCallFormat(f"{probe.name}: no tool-call format found in its chat template ({reason})")
