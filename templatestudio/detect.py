"""Choosing the format that reads a model's calls: from its chat template, by probing.

``detect_format`` probes a template (``templatestudio.probe``) and returns
the registered format that alone reads the probe call back.
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

from templatestudio.calls import NoToolCallFormat
from templatestudio.formats import FORMATS, Format, get_format
from templatestudio.probe import TemplateProbe, TemplateProbeError, probe_template
from templatestudio.sandbox import DEFAULT_DEADLINE, DEFAULT_MEMORY_LIMIT

__all__ = ["AmbiguousFormat", "NoToolCallFormat", "detect_format", "resolve_format"]


class AmbiguousFormat(NoToolCallFormat):
    """Two or more formats read the template's call back: the package will not pick one."""


def _checked(probe: TemplateProbe) -> Format | None:
    if probe.error is not None:
        raise TemplateProbeError(probe.name, probe.error)
    if probe.ambiguous:
        raise AmbiguousFormat(f"{probe.name}: {probe.reason}; name the format explicitly")
    return probe.format


def detect_format(
    source, *, deadline: float | None = DEFAULT_DEADLINE, memory_limit: int | None = DEFAULT_MEMORY_LIMIT
) -> Format | None:
    """The registered format the template writes calls in, or None.

    None when the template renders no tools, drops the assistant's call, or
    writes it in a grammar no reader reads back exactly. Raises
    TemplateProbeError when the template fails on every probe shape (or the
    sandbox stopped it), AmbiguousFormat when several formats read it back.
    """
    return _checked(probe_template(source, deadline=deadline, memory_limit=memory_limit))


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
    if found is None:
        raise NoToolCallFormat(f"{probe.name}: no tool-call format found in its chat template ({probe.reason})")
    return found
