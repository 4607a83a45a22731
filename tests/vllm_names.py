"""vLLM's tool-parser names against the formats that answer for them (issue 23).

Every name vLLM registers must be declared by exactly one format's
``Format.vllm_parser``, or be listed in ``NO_FORMAT`` with the reason none
reads it. ``problems`` says what breaks that rule; the tests hand it the
names of an installed vLLM (tests/vllm/test_vllm_names.py) or of an unpacked
source release (tests/test_vllm_names.py). Not handled: whether vLLM's
parser for a declared name reads the same calls as the format; the
format's samples (tests/test_vllm_aliases.py) stand for that here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from templatestudio.formats import FORMATS

# The names no format answers for, each with why. A name that a format comes
# to declare must leave this table: problems() reports it as stale.
NO_FORMAT: dict[str, str] = {
    "hf": ("transformers response templates, not one wire: the reader already runs a model's own "
           "response template through parse_response"),
    "mimo": ("qwen-xml's tags with values kept verbatim: MiMo writes <parameter=K>VALUE</parameter> compact and "
             "means every newline at a value's edges, where qwen-xml takes one on each side as the template's "
             "layout; the same text means two values, so no second format can read it apart from qwen-xml"),
    "beam": ("harmony's framing (to=NAME<|channel|>analysis <|constrain|>xml<|message|>) around "
             "<rfl:parameter name=K> values: it needs harmony's multi-message regions scanning XML, not written "
             "yet; today harmony's reader raises on a Beam call (its content type is xml), so none is lost"),
}


def declared() -> dict[str, list[str]]:
    """Each vLLM name any format declares -> the names of the formats declaring it."""
    owners: dict[str, list[str]] = {}
    for fmt in FORMATS.values():
        for name in fmt.vllm_parser:
            owners.setdefault(name, []).append(fmt.name)
    return owners


def problems(registered: Iterable[str], owners: dict[str, list[str]] | None = None,
             no_format: dict[str, str] | None = None) -> list[str]:
    """What breaks the rule for the registry's names, one sentence each; [] when nothing does.

    owners defaults to ``declared()``, no_format to ``NO_FORMAT``. A table
    entry the registry lacks is not a problem (the table covers more than
    one vLLM release); a declared name the registry lacks is (a misspelt
    alias would otherwise go unseen).
    """
    owners = declared() if owners is None else owners
    no_format = NO_FORMAT if no_format is None else no_format
    registered = set(registered)
    found = []
    for name in sorted(registered):
        formats = owners.get(name, [])
        if len(formats) > 1:
            found.append(f"{name!r} is declared by more than one format: {', '.join(formats)}")
        elif not formats and name not in no_format:
            found.append(f"{name!r} maps to no format and NO_FORMAT does not say why")
    for name in sorted(set(owners) & set(no_format)):
        found.append(f"{name!r} is declared by {', '.join(owners[name])} but still listed in NO_FORMAT (stale)")
    for name in sorted(set(owners) - registered):
        found.append(f"{name!r} is declared by {', '.join(owners[name])} but the registry has no such parser")
    return found


def sdist_names(root: Path) -> list[str]:
    """The tool-parser names a vLLM source tree registers, read from vllm/tool_parsers/__init__.py.

    vLLM registers its parsers lazily from one literal dict in that file;
    this reads the dict's keys without importing vLLM. ValueError when the
    file holds no such dict (a release that registers another way).
    """
    source = (root / "vllm" / "tool_parsers" / "__init__.py").read_text()
    for node in ast.parse(source).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and getattr(node.targets[0], "id", None) == "_TOOL_PARSERS_TO_REGISTER"):
            return sorted(ast.literal_eval(node.value))
    raise ValueError(f"{root}: vllm/tool_parsers/__init__.py has no _TOOL_PARSERS_TO_REGISTER dict")
