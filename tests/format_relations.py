"""Which registered format's declaration reads another's calls: the tests' statement of the one overlap."""

from __future__ import annotations

from templatestudio.wire.base import Format


def covers(other: Format, fmt: Format) -> bool:
    """Whether other's declaration reads every call fmt's does: both bare JSON objects opening at the
    same literal, under the same name key, and fmt's argument keys all among other's (Llama 3 reads
    Phi-4-mini's ``{"name", "arguments"}`` as vLLM and SGLang do)."""
    mine, theirs = fmt.wire, other.wire
    return (mine is not None and theirs is not None and not mine.call.open and not theirs.call.open
            and mine.call.marker == theirs.call.marker and mine.name == theirs.name
            and hasattr(mine.arguments, "keys") and hasattr(theirs.arguments, "keys")
            and not mine.arguments.listed and not theirs.arguments.listed
            and set(mine.arguments.keys) <= set(theirs.arguments.keys))
