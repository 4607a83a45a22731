"""Download the template corpus from its public sources: ``python -m templatestudio corpus fetch``.

``fetch_corpus`` downloads each file the corpus list names
(``corpus_list``) from ``{base_url}/{repo}/{commit}/{path}``
(``https://raw.githubusercontent.com`` by default), checks its size and
sha256 against the list (``corpus_download``), and writes the layout
``templatestudio.corpus`` reads: ``templates/NAME.jinja``, ``labels.json`` and
``sources.json``, plus ``response_templates/`` and ``response_sources.json``.

``labels.json`` and ``sources.json`` are written only once every
template is in place (and removed when one is missing), so a half-fetched
folder does not pass for a corpus.

Not handled here: what the list holds and how it is made (``corpus_list``),
and how one file is downloaded, checked and written (``corpus_download``).
"""

from __future__ import annotations

import json
import os
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from templatestudio.corpus_download import Outcome, fetch_responses, fetch_template, write_atomically
from templatestudio.corpus_list import IDENTITY, TEMPLATE_FIELDS, load_list, raw_url

__all__ = [
    "BASE_URL_ENV",
    "DEFAULT_BASE_URL",
    "DEFAULT_JOBS",
    "DEFAULT_TIMEOUT",
    "FetchReport",
    "fetch_corpus",
]

DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
BASE_URL_ENV = "TEMPLATESTUDIO_CORPUS_BASE_URL"
DEFAULT_JOBS = 8
DEFAULT_TIMEOUT = 30.0


@dataclass
class FetchReport:
    dest: Path
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def failed(self) -> list[Outcome]:
        return [outcome for outcome in self.outcomes if outcome.status == "failed"]

    @property
    def ok(self) -> bool:
        return not self.failed

    def _counts(self, kind: str) -> tuple[int, int]:
        mine = [outcome for outcome in self.outcomes if outcome.kind == kind]
        return sum(outcome.status != "failed" for outcome in mine), len(mine)

    def line(self) -> str:
        """The one line the command ends with: everything fetched, or what failed and why."""
        (t_ok, t_all), (r_ok, r_all) = self._counts("template"), self._counts("response template")
        if self.ok:
            downloaded = sum(outcome.status == "fetched" for outcome in self.outcomes)
            return (
                f"corpus: {t_all} templates and {r_all} response templates fetched into {self.dest} "
                f"({downloaded} downloaded, {len(self.outcomes) - downloaded} already there)"
            )
        failures = ", ".join(f"{outcome.name} ({outcome.reason})" for outcome in self.failed)
        return (
            f"corpus: {t_ok} of {t_all} templates and {r_ok} of {r_all} response templates fetched "
            f"into {self.dest}; failed: {failures}"
        )


def _json_bytes(value) -> bytes:
    return (json.dumps(value, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def _agrees(path: Path, ours, same: tuple[str, ...]) -> bool:
    """Whether the JSON at path already says what ours says.

    same: for a list of records, the keys that must agree name by name; a
    folder's richer records, such as ../shared/corpus's (more keys, or a
    response template the list cannot fetch), are kept as they are.
    Empty: the whole value must be equal.
    """
    try:
        theirs = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not same:
        return theirs == ours
    try:
        theirs = {record["name"]: record for record in theirs}
    except (TypeError, KeyError):
        return False
    return all(
        record["name"] in theirs and theirs[record["name"]].get(key) == record[key]
        for record in ours for key in same
    )


def _write_json(path: Path, value, *, same: tuple[str, ...] = ()) -> None:
    if not _agrees(path, value, same):
        write_atomically(path, _json_bytes(value))


def fetch_corpus(
    dest: Path | str,
    *,
    base_url: str | None = None,
    jobs: int = DEFAULT_JOBS,
    timeout: float = DEFAULT_TIMEOUT,
    corpus_list: dict | None = None,
) -> FetchReport:
    """Download every listed template and response template into dest, verified; what happened to each.

    base_url defaults to ``$TEMPLATESTUDIO_CORPUS_BASE_URL``, else
    ``https://raw.githubusercontent.com``; a mirror must keep its
    ``/{repo}/{commit}/{path}`` layout. Each request times out after
    timeout seconds; jobs downloads run at once.
    """
    dest = Path(dest).expanduser()
    base_url = base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
    if urllib.parse.urlsplit(base_url).scheme not in ("http", "https"):
        raise ValueError(f"the base URL must start with http:// or https://, got {base_url!r}")
    listed = load_list() if corpus_list is None else corpus_list
    templates, responses = listed["templates"], listed.get("response_templates", [])
    by_source: dict[str, list[dict]] = {}
    for record in responses:
        by_source.setdefault(raw_url(base_url, record), []).append(record)
    report = FetchReport(dest)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        template_runs = [pool.submit(fetch_template, dest, record, base_url, timeout) for record in templates]
        response_runs = [
            pool.submit(fetch_responses, dest, group, base_url, timeout) for group in by_source.values()
        ]
        report.outcomes += [run.result() for run in template_runs]
        found = {outcome.name: outcome for run in response_runs for outcome in run.result()}
        report.outcomes += [found[record["name"]] for record in responses]
    if all(outcome.status != "failed" for outcome in report.outcomes if outcome.kind == "template"):
        _write_json(dest / "labels.json", {record["name"]: record["labels"] for record in templates})
        sources = [{key: record[key] for key in TEMPLATE_FIELDS} for record in templates]
        _write_json(dest / "sources.json", sources, same=TEMPLATE_FIELDS)
    else:  # a template is missing: the folder must not pass for the corpus (load_labels says so)
        for name in ("labels.json", "sources.json"):
            (dest / name).unlink(missing_ok=True)
    if responses and all(outcome.status != "failed" for outcome in report.outcomes if outcome.kind != "template"):
        _write_json(dest / "response_sources.json", responses, same=IDENTITY)
    return report
