"""Which formats a machine guards against: the formats whose calls it sees as leaks in its reply.

A machine reading for one format watches the openers of that format first,
then those of every format it guards against, so that a call written in
another format is seen as a leak instead of passing as text. The guard is a
parameter of the machine (``guard=``); by default it is the registry as it
is when the machine is made (``templatestudio.formats.FORMATS``). When the
machine's format addresses every call by its own framing
(``WireShape.addressed``: harmony's ``to=functions.NAME`` header), the text
of a message body is content, and the default guard leaves out the formats
whose calls open on plain text (``{``, ``[``, a code fence, a bare word:
``opens_on_plain_text``); a guard given explicitly is watched as given.
"""

from __future__ import annotations

import functools

from templatestudio.formats import FORMATS
from templatestudio.wire.base import MARKUP, Format


@functools.lru_cache(maxsize=None)  # asked for every format each time a harmony machine is made
def opens_on_plain_text(fmt: Format) -> bool:
    """Whether some call of fmt opens on plain text: an opener whose literal holds no markup token."""
    return any(MARKUP.search(opener.literal) is None for opener in fmt.openers)


def guard_of(guard: tuple[Format, ...] | None, own: Format | None = None) -> tuple[Format, ...]:
    """The formats a machine for own guards against: those given (TypeError for anything else), or by default
    the registry as it is now, less the formats whose calls open on plain text when own's calls are addressed
    (a message body is content: prose's JSON or Python is not a call there). Other addressed formats stay:
    their plain-text literal (``to=``) opens a call only in their own header, its tokens around it."""
    if own is not None and not isinstance(own, Format):
        raise TypeError(f"a machine reads one Format (None: a survey), got {type(own).__name__} {own!r}: "
                        "look a format's name up with templatestudio.get_format")
    if guard is None:
        registry = tuple(FORMATS.values())
        if own is not None and own.wire is not None and own.wire.addressed:
            return _addressed_guard(own, registry)
        return registry
    guard = tuple(guard)
    for item in guard:
        if not isinstance(item, Format):
            raise TypeError(f"a guard is a tuple of Format, got {type(item).__name__} {item!r} in it")
    return guard


@functools.lru_cache(maxsize=64)  # a machine is made per reply: the registry is asked once per (format, registry)
def _addressed_guard(own: Format, registry: tuple[Format, ...]) -> tuple[Format, ...]:
    return tuple(fmt for fmt in registry
                 if fmt is own or not opens_on_plain_text(fmt) or (fmt.wire is not None and fmt.wire.addressed))


__all__ = ["guard_of", "opens_on_plain_text"]
