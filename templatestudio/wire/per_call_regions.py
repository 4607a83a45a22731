"""A section of calls read one call per region: the openers and reader of DeepSeek V3's and V3.1's shape.

For a declared shape whose calls stand in a section that a call may also
open without (``wire.shape.Section(alone=True)``), each call between its
own tokens: a call opens with the section token (then whitespace and the
call token) or with the call token alone, then ``head``, the pattern that
tells this format's calls from another's after the same tokens (none when
no other format shares them). Each region ends past the call's closer, or
past the section closer when only whitespace stands between them
(``sections.CallThenCloser``), so a reply cut between two calls gives the
calls before the cut whole. The format reads the body of one call
(``read_call``, as for ``sections.read_section``).

Not handled: a section whose calls must be read together (Kimi K2's, read
by ``sections.read_section`` in one region); text between two calls of a
section (it comes back as text, between regions).
"""

from __future__ import annotations

from collections.abc import Callable

from templatestudio.calls import CallSpan
from templatestudio.resumable_match import Pattern, literal
from templatestudio.wire.base import SPACES, Found, Opener, opener_pattern
from templatestudio.wire.sections import CallReader, CallThenCloser, read_one_call

RegionReader = Callable[[str, Opener, Found | None], list[CallSpan]]


def per_call_regions(
    wire, head: Pattern | None, read_call: CallReader
) -> tuple[tuple[Opener, Opener], RegionReader]:
    """(openers, read_region) of wire (a ``WireShape`` with a section), reading one call per region.

    Prose naming the section token stays text: only the call token (and
    head, when given) after it opens a call.
    """
    section, call = wire.section, wire.call
    after = (head,) if head is not None else ()
    openers = (
        Opener(section.open, opener_pattern(section.open, SPACES, literal(call.open), *after),
               lambda: CallThenCloser(len(section.open), call.close, section.close)),
        Opener(call.open, opener_pattern(call.open, *after),
               lambda: CallThenCloser(len(call.open), call.close, section.close)),
    )

    def read_region(region: str, opener: Opener, found: Found | None) -> list[CallSpan]:
        return read_one_call(region, opener.literal, section.open, section.close, call.open, read_call, found)

    return openers, read_region
