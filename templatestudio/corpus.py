"""The fixture corpus of published chat templates, read in place.

The corpus (87 templates in ../shared/corpus today with provenance and rendered labels) is
not ours to redistribute, so the project never holds a copy, only its list
(``corpus_list.json``: repository, path, commit and sha256 of each file).
It lives wherever the ``TEMPLATESTUDIO_CORPUS`` environment variable points,
else in ``../shared/corpus`` beside the repository when that folder holds
templates, else in the user cache (``$XDG_CACHE_HOME/templatestudio/corpus``,
by default ``~/.cache/templatestudio/corpus``), where
``python -m templatestudio corpus fetch`` downloads and verifies it
(``templatestudio.corpus_fetch``). Code that needs it checks
``corpus_available()`` and says in one line when it is absent.

Expected layout: ``templates/*.jinja``, ``labels.json`` (name -> format,
renders_tools, call_survives, ...) and ``sources.json`` (a list of
provenance records with a ``name`` key).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from templatestudio.formats import FORMATS
from templatestudio.probe import TemplateProbe, probe_template
from templatestudio.templates import ChatTemplate

__all__ = [
    "CORPUS_ENV",
    "CorpusMissing",
    "MALFORMED_RENDERINGS",
    "ScanRow",
    "SUPPORTED_LABELS",
    "corpus_available",
    "corpus_dir",
    "corpus_templates",
    "label_key",
    "load_labels",
    "load_sources",
    "missing_message",
    "scan",
]

CORPUS_ENV = "TEMPLATESTUDIO_CORPUS"
FETCH_COMMAND = "python -m templatestudio corpus fetch"
REPO_ROOT = Path(__file__).resolve().parent.parent
# The corpus labels each registered format claims (Format.corpus_labels);
# every other label ("none", "error", an "other:<name>" nobody reads yet)
# must probe as no format. One label may cover several formats
# ("other:deepseek" is V3, V3.1 and V3.2's DSML): a format then claims
# "LABEL#TAG", TAG being the label's variant up to its first ":" (see label_key).
LABEL_FORMATS = {label: fmt.name for fmt in FORMATS.values() for label in fmt.corpus_labels}
SUPPORTED_LABELS = tuple(LABEL_FORMATS)
# Labelled with a supported format, but the template's own rendering of a
# call is malformed (its labels.json quirks say how), so no parser can read
# the call back and detection must say None rather than guess.
MALFORMED_RENDERINGS = {
    "tool_chat_template_gemma3_pythonic": "no separator between keyword arguments",
    "tool_chat_template_llama3.2_pythonic": "pythonic string values are not quoted",
}


class CorpusMissing(FileNotFoundError):
    """The corpus folder, or a file it should hold, is not there."""


def _user_cache() -> Path:
    """Where ``corpus fetch`` puts the corpus for a learner with no shared folder."""
    cache = os.environ.get("XDG_CACHE_HOME")
    base = Path(cache) if cache and Path(cache).is_absolute() else Path.home() / ".cache"
    return base / "templatestudio" / "corpus"


def corpus_dir() -> Path:
    """``$TEMPLATESTUDIO_CORPUS``; else ``../shared/corpus`` next to the repository root when it holds
    templates; else the user cache, ``$XDG_CACHE_HOME/templatestudio/corpus`` (``~/.cache/...``)."""
    configured = os.environ.get(CORPUS_ENV)
    if configured:
        return Path(configured)
    shared = REPO_ROOT.parent / "shared" / "corpus"
    return shared if (shared / "templates").is_dir() else _user_cache()


def corpus_available() -> bool:
    return (corpus_dir() / "templates").is_dir()


def missing_message() -> str:
    """The one line shown wherever the corpus is absent."""
    return (
        f"template corpus not found at {corpus_dir()} "
        f"(run `{FETCH_COMMAND}` to download it there, "
        f"or set {CORPUS_ENV} to a folder holding templates/*.jinja)"
    )


def label_key(record: dict) -> str | None:
    """The claim a labels.json record answers to: "FORMAT#TAG" when a format claims its variant, else FORMAT."""
    label = record.get("format")
    tag = str(record.get("variant") or "").partition(":")[0].strip()
    return f"{label}#{tag}" if tag and f"{label}#{tag}" in LABEL_FORMATS else label


def _require() -> Path:
    if not corpus_available():
        raise CorpusMissing(missing_message())
    return corpus_dir()


def corpus_templates() -> list[Path]:
    """Every template file, sorted by name."""
    return sorted((_require() / "templates").glob("*.jinja"))


def _read_json(name: str):
    path = _require() / name
    if not path.is_file():
        raise CorpusMissing(f"{path} is missing from the template corpus")
    return json.loads(path.read_text(encoding="utf-8"))


def load_labels() -> dict[str, dict]:
    """labels.json: template name -> its rendered label."""
    return _read_json("labels.json")


def load_sources() -> dict[str, dict]:
    """sources.json keyed by template name (repository, path, commit, origin, ...)."""
    return {record["name"]: record for record in _read_json("sources.json")}


@dataclass(frozen=True)
class ScanRow:
    """One template of a scan: what the probe found and, when labelled, what the label says."""

    name: str
    probe: TemplateProbe
    label: str | None  # the label's format, or "FORMAT#TAG" when a format claims its variant (label_key)

    @property
    def found(self) -> str:
        """The format name, "none", or "error" (the label vocabulary)."""
        if self.probe.error is not None:
            return "error"
        return self.probe.format.name if self.probe.format else "none"

    @property
    def expected(self) -> str | None:
        """The format detection should find: the label's, when supported and well rendered."""
        if self.label in LABEL_FORMATS and self.name not in MALFORMED_RENDERINGS:
            return LABEL_FORMATS[self.label]
        return None

    @property
    def agrees(self) -> bool | None:
        """Detection found the expected format, or no format where none is expected; None when unlabelled."""
        if self.label is None:
            return None
        if self.expected is None:
            return self.probe.format is None
        return self.found == self.expected


def scan(
    paths: list[Path] | None = None,
    labels: dict[str, dict] | None = None,
    *,
    deadline: float | None = None,
) -> tuple[list[ScanRow], float]:
    """Probe every template (the corpus by default); rows and the seconds it took.

    deadline (seconds) probes each template in a sandboxed child process
    (``templatestudio.sandbox``), for folders of templates you did not write.

    Probes of the same template are cached in-process, so the time is the
    first scan's only when nothing was probed before.
    """
    if paths is None:
        paths = corpus_templates()
        labels = load_labels() if labels is None else labels
    labels = labels or {}
    started = time.perf_counter()
    rows = []
    for path in paths:
        template = ChatTemplate.from_file(path)
        label = label_key(labels.get(template.name, {}))
        rows.append(ScanRow(template.name, probe_template(template, deadline=deadline), label))
    return rows, time.perf_counter() - started
