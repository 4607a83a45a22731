"""The chat template a vLLM server renders with: its ``--chat-template`` override, else the tokenizer's.

vLLM (0.32 and 0.33) builds a tool or reasoning parser from the tokenizer
and hands it requests; the server's ``--chat-template`` override reaches
neither. Probing the tokenizer's own template would then read replies in
a format the served prompts never asked for. So the plugin takes the
override where the operator wrote it:

- the server's command line, ``--chat-template VALUE`` or
  ``--chat-template=VALUE`` (vLLM also takes ``--chat_template``), VALUE
  resolved by vLLM's own ``load_chat_template`` (a file's path, or the
  template itself), exactly as the server resolves it;
- else ``TEMPLATESTUDIO_CHAT_TEMPLATE`` (same meaning), for a server
  started from Python, whose command line is not vLLM's.

Both given and naming different templates is an error at start-up
(``ServedTemplateConflict``): the plugin would read in one format what the
server renders with another. A request's own ``chat_template`` still wins
for that request (``served_detect.request_served_format``).

Not handled: an override given only in a ``--config`` YAML file (set
``TEMPLATESTUDIO_CHAT_TEMPLATE`` to the same value).
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from vllm.renderers.chat_utils import load_chat_template

from templatestudio.integrations.served_detect import TemplateView
from templatestudio.integrations.served_log import logger

__all__ = ["CHAT_TEMPLATE_VARIABLE", "ServedTemplate", "ServedTemplateConflict", "served_template",
           "served_tokenizer"]

CHAT_TEMPLATE_VARIABLE = "TEMPLATESTUDIO_CHAT_TEMPLATE"
_FLAG = "--chat-template"


class ServedTemplateConflict(ValueError):
    """The command line and ``TEMPLATESTUDIO_CHAT_TEMPLATE`` name different templates."""


@dataclass(frozen=True)
class ServedTemplate:
    """An override's text and where the operator wrote it (for the start-up line)."""

    text: str
    where: str


def _flag_value(argv: Sequence[str]) -> str | None:
    """VALUE of the last ``--chat-template`` on a command line (vLLM's parser keeps the last too)."""
    # vLLM's parser takes underscores for dashes in option names; spell them its way first.
    spelled = []
    for arg in argv:
        name, equals, value = arg.partition("=")
        spelled.append(name.replace("_", "-") + equals + value if name.startswith("--") else arg)
    # allow_abbrev=False: --chat-template-content-format is another option, not this one.
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument(_FLAG)
    known, _ = parser.parse_known_args(spelled)
    return known.chat_template


def served_template(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> ServedTemplate | None:
    """The override the server renders with (see the module docstring), None when there is none.

    argv and environ default to this process's; vLLM's ``load_chat_template``
    raises for a value that names a file it cannot read.
    """
    argv = sys.argv[1:] if argv is None else argv
    environ = os.environ if environ is None else environ
    return _resolved(tuple(argv), environ.get(CHAT_TEMPLATE_VARIABLE) or None)


@functools.lru_cache(maxsize=8)
def _resolved(argv: tuple[str, ...], variable: str | None) -> ServedTemplate | None:
    # Both parsers are built once per request and choice: the command line is parsed and the
    # template loaded once per process (per command line and variable), not per request.
    flag = _flag_value(argv)
    from_flag = load_chat_template(flag) if flag else None
    from_variable = load_chat_template(variable) if variable else None
    if from_flag and from_variable and from_flag != from_variable:
        raise ServedTemplateConflict(
            f"templatestudio: {_FLAG} {flag!r} and {CHAT_TEMPLATE_VARIABLE}={variable!r} are different "
            "templates; the plugin must probe the one the server renders with: give one, or the same in both")
    if from_flag:
        return ServedTemplate(from_flag, f"the server's {_FLAG} ({_named(flag, from_flag)})")
    if from_variable:
        return ServedTemplate(from_variable, f"{CHAT_TEMPLATE_VARIABLE} ({_named(variable, from_variable)})")
    return None


def served_tokenizer(tokenizer, argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None):
    """tokenizer as the server renders with it: a ``TemplateView`` of the override, else tokenizer itself."""
    served = served_template(argv, environ)
    if served is None or served.text == getattr(tokenizer, "chat_template", None):
        return tokenizer
    logger.debug("templatestudio: probing %s, not the tokenizer's own template", served.where)
    return TemplateView(tokenizer, served.text, where=served.where)


def _named(value: str, text: str) -> str:
    """A file's path as given; a template written in the value itself by its length."""
    return value if text != value else f"a template given inline, {len(text):,} characters"
