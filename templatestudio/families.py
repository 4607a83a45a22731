"""The model families the course uses, each declared once, with what the course shows for it.

Five families: the tutorial's three (its family table, notebook 12), Gemma 4
(the one family that ships a response template, brought in when the course
reaches parsing) and Llama 3.1 (the course's extensions: a second JSON call
format, and a template that refuses two calls in one turn). Everything
else (the top-level ``families.py`` of the course, the CLI, the tests)
takes its families from here.

Llama 3, Llama 3.1 and Gemma 3 are ungated copies (``copy_of``) whose
templates equal the official, gated ones. The probe columns (``renders_tools``,
``call_survives``, ``response_template``, ``call_format``) are what the
course's probes find for each template; tests/test_course_families.py
checks them against the tokenizers, so they cannot drift.

The family table's tool and question live in ``templatestudio.rates``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "COURSE_FAMILIES",
    "FAMILIES",
    "Family",
    "GEMMA4",
    "LLAMA31",
    "TABLE_FAMILIES",
    "family",
]


@dataclass(frozen=True)
class Family:
    """One family as the course shows it.

    name is the course's key ("qwen3"); repo_id the Hugging Face repository
    its tokenizer comes from. introduced says where the course brings it
    in. renders_tools / call_survives / response_template are the family
    table's columns; call_format is the registered wire format its calls
    are read in (``templatestudio.formats``), None when it makes no calls.
    """

    name: str
    repo_id: str
    introduced: Literal["tutorial", "parsing", "extensions"]
    renders_tools: bool
    call_survives: bool
    response_template: bool
    call_format: str | None
    copy_of: str | None = None


COURSE_FAMILIES: tuple[Family, ...] = (
    Family("qwen3", "Qwen/Qwen3-0.6B", "tutorial", True, True, False, "hermes"),
    Family(
        "llama3", "NousResearch/Meta-Llama-3-8B-Instruct", "tutorial", False, False, False, None,
        copy_of="meta-llama/Meta-Llama-3-8B-Instruct",
    ),
    Family(
        "gemma3", "unsloth/gemma-3-1b-it", "tutorial", False, False, False, None,
        copy_of="google/gemma-3-1b-it",
    ),
    Family("gemma4", "google/gemma-4-E2B-it", "parsing", True, True, True, "gemma4"),
    Family(
        "llama3.1", "unsloth/Llama-3.1-8B-Instruct", "extensions", True, True, False, "llama3-json",
        copy_of="meta-llama/Llama-3.1-8B-Instruct",
    ),
)
_BY_NAME = {declared.name: declared for declared in COURSE_FAMILIES}


def family(name: str) -> Family:
    """The family the course calls name; KeyError listing the names otherwise."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no course family {name!r}; the families are {', '.join(_BY_NAME)}") from None


# The tutorial's names (re-exported by the course's top-level families.py).
FAMILIES = {f.name: f.repo_id for f in COURSE_FAMILIES if f.introduced == "tutorial"}
GEMMA4 = family("gemma4").repo_id
LLAMA31 = family("llama3.1").repo_id
# The rows of the family table (notebook 12, ``python -m templatestudio table``) in its order.
TABLE_FAMILIES = {**FAMILIES, "gemma4": GEMMA4}
