"""Bare JSON calls, with no token before them: the openings that keep their formats apart.

Three formats write a call as JSON standing alone in the reply: Llama 3's
``{"name", "parameters"}`` (``llama3_json``), Phi-4-mini's
``{"name", "arguments"}`` (``phi4_mini``) and xLAM's list
``[{"name", "arguments"}, …]`` (``xlam``). The engine lets every format's
opening pattern decide at a literal, and takes the reader's own format
first when several match; so the two object formats, which share the
literal ``{``, get openings decided by the key that carries the arguments:

- ``"parameters"``, ``"arguments"`` (or ``"type"``) first, or ``"name": "…",``
  then one of them: Llama 3's (its reader takes ``arguments`` as vLLM and
  SGLang do, though Meta writes ``parameters``);
- ``"arguments"`` first, or ``"name": "…",`` then ``"arguments"``: Phi-4-mini's.

So an ``arguments`` object opens a call of both: a Llama 3 machine reads
it (its own openers are tried first, ``templatestudio.openings``), a
Phi-4-mini machine too, and any other machine's guard names the first of
the two in the registry's order. A ``parameters`` object is Llama 3's
alone: a Phi-4-mini machine raises on it as another format's call.
An object whose ``name`` is followed by any other key opens no call at
all (it is data, ``{"name": "Ada", "age": 36}``). xLAM's list opens at
``[`` and needs the same ``arguments`` keys in its first object; the whole
list is one region, so the objects inside it are never read on their own,
and a list read by the two object formats is another format's call.

Not handled: a name written with escapes the opening pattern cannot see
past (any JSON escape is allowed; the string must end on the same line).
"""

from __future__ import annotations

from templatestudio.wire.base import SPACES, Pattern
from templatestudio.resumable_match import chars, either, literal, run, sequence

# A JSON string: escapes pass over the next character, so \" does not end it.
JSON_STRING = sequence(literal('"'), run(either(chars(r'[^"\\\n]'), sequence(literal("\\"), chars(r"[^\n]")))), literal('"'))
# '"name": "…",' and the whitespace JSON allows around it.
NAME_FIRST = sequence(literal('"name"'), SPACES, literal(":"), SPACES, JSON_STRING, SPACES, literal(","), SPACES)


def object_opening(*, first: tuple[str, ...], after_name: tuple[str, ...]) -> Pattern:
    """``{`` then a key of first, or the name and then a key of after_name, then ``:``."""
    keys = [literal(key) for key in first] + [sequence(NAME_FIRST, either(*(literal(key) for key in after_name)))]
    return sequence(literal("{"), SPACES, either(*keys), SPACES, literal(":"))


LLAMA3_OPENING = object_opening(first=('"parameters"', '"arguments"', '"type"', "'name'", "'parameters'"),
                                after_name=('"parameters"', '"arguments"', '"type"'))
ARGUMENTS_OPENING = object_opening(first=('"arguments"',), after_name=('"arguments"',))
