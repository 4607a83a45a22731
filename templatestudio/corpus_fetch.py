"""Download the template corpus from its public sources: ``python -m templatestudio corpus fetch``.

The project holds the corpus's list, never its templates: ``corpus_list.json``
beside this module names each template's repository, path and commit (a
commit, never a branch), the sha256 and size of its bytes, its origin and the
labels ``labels.json`` gives it. ``fetch_corpus`` downloads each file from
``{base_url}/{repo}/{commit}/{path}`` (``https://raw.githubusercontent.com`` by
default), checks its size and sha256 against the list, and writes the layout
``templatestudio.corpus`` reads: ``templates/NAME.jinja``, ``labels.json`` and
``sources.json``, plus ``response_templates/`` and ``response_sources.json``.

Every file is written atomically (a temporary file in the same folder,
renamed once verified), so a failed or mismatched download never stands where
a template should; a file already there with the listed hash is not fetched
again, and one with another hash is replaced (or removed, when its download
fails). ``labels.json`` and ``sources.json`` are written only once every
template is in place (and removed when one is missing), so a half-fetched
folder does not pass for a corpus.

Response templates are Python dict literals inside a source file (TRL's
``chat_template_utils.py``, transformers' and vLLM's tests); the listed sha256
is that of the JSON the literal dumps to (``json.dumps(value, indent=2)`` and a
newline). The fetch reads the literal with ``ast.literal_eval``, which
evaluates no code; a template the source builds with code is listed under
``response_templates_not_fetched`` with the reason.
"""

from __future__ import annotations

import ast
import hashlib
import http.client
import json
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "BASE_URL_ENV",
    "DEFAULT_BASE_URL",
    "DEFAULT_JOBS",
    "DEFAULT_TIMEOUT",
    "FetchReport",
    "Outcome",
    "fetch_corpus",
    "list_from",
    "load_list",
    "raw_url",
    "response_template_json",
]

LIST_PATH = Path(__file__).with_name("corpus_list.json")
DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
BASE_URL_ENV = "TEMPLATESTUDIO_CORPUS_BASE_URL"
DEFAULT_JOBS = 8
DEFAULT_TIMEOUT = 30.0
# A response template's source file is a whole Python module; nothing listed comes near this.
MAX_SOURCE_BYTES = 16 * 2**20
TEMPLATE_FIELDS = ("name", "repo", "path", "commit", "sha256", "bytes", "origin")
RESPONSE_FIELDS = ("name", "file", "repo", "path", "commit", "variable", "sha256", "bytes", "kind")
# What names a response template's source and content (the shared folder's records count chars, not bytes).
IDENTITY = ("name", "file", "repo", "path", "commit", "variable", "sha256")
USER_AGENT = "templatestudio-corpus-fetch"


def load_list(path: Path | None = None) -> dict:
    """The project's corpus list (``corpus_list.json``): ``templates`` and ``response_templates`` records."""
    return json.loads(Path(path or LIST_PATH).read_text(encoding="utf-8"))


def raw_url(base_url: str, record: dict) -> str:
    """Where a listed file is published: ``{base_url}/{repo}/{commit}/{path}``."""
    path = urllib.parse.quote(record["path"], safe="/")
    return f"{base_url.rstrip('/')}/{record['repo']}/{record['commit']}/{path}"


def response_template_json(value) -> bytes:
    """The bytes a response template's dict is stored as (its listed sha256 is theirs)."""
    return (json.dumps(value, indent=2) + "\n").encode("utf-8")


def literal_assigned(source: bytes, variable: str):
    """The value of the last ``variable = <literal>`` in a Python source, read without running it."""
    tree = ast.parse(source)
    found = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(target, ast.Name) and target.id == variable for target in targets):
            if found is None or value.lineno >= found.lineno:
                found = value
    if found is None:
        raise LookupError(f"no assignment to {variable} in the source")
    return ast.literal_eval(found)


def list_from(folder: Path) -> dict:
    """The corpus list for a corpus folder (how ``corpus_list.json`` is made from ``../shared/corpus``).

    Sources only: repository, path, commit, sha256, size and origin of each
    template, with its labels; for each response template its source, the
    variable holding it, and the sha256 and size of its JSON. No template text.
    """
    folder = Path(folder)
    labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
    sources = json.loads((folder / "sources.json").read_text(encoding="utf-8"))
    templates = [
        {**{key: record[key] for key in TEMPLATE_FIELDS}, "labels": labels[record["name"]]}
        for record in sources
    ]
    responses, not_fetched = [], []
    response_path = folder / "response_sources.json"
    for record in json.loads(response_path.read_text(encoding="utf-8")) if response_path.is_file() else []:
        if not all(record.get(key) for key in ("repo", "path", "commit", "sha256", "variable")):
            continue
        if record.get("derived_from"):
            not_fetched.append({
                "name": record["name"],
                "sha256": record["sha256"],
                "reason": f"built by Python code in {record['repo']}/{record['path']}, not a literal: "
                          + record["derived_from"],
            })
            continue
        data = (folder / record["file"]).read_bytes()
        responses.append({**{key: record[key] for key in RESPONSE_FIELDS if key != "bytes"}, "bytes": len(data)})
    return {
        "about": (
            "The template corpus's public sources: each file is published at "
            "https://raw.githubusercontent.com/{repo}/{commit}/{path}; `python -m templatestudio corpus fetch` "
            "downloads and verifies them. The project holds this list, never the templates."
        ),
        "templates": templates,
        "response_templates": responses,
        "response_templates_not_fetched": not_fetched,
    }


@dataclass(frozen=True)
class Outcome:
    """One listed file: ``fetched`` (downloaded and verified), ``present`` (already there) or ``failed``."""

    name: str
    kind: str  # "template" or "response template"
    status: str
    reason: str = ""


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


class _Failed(Exception):
    """A download or check failed; the message is the reason the summary line gives."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _download(url: str, *, limit: int, timeout: float) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    # A fresh opener: the proxy settings (*_proxy, no_proxy) are read now, not once per process.
    opener = urllib.request.build_opener()
    try:
        with opener.open(request, timeout=timeout) as response:
            data = response.read(limit + 1)
    except urllib.error.HTTPError as error:
        raise _Failed(f"HTTP {error.code}") from None
    except TimeoutError:
        raise _Failed(f"timed out after {timeout:g} s") from None
    except urllib.error.URLError as error:
        reason = error.reason
        if isinstance(reason, TimeoutError):
            raise _Failed(f"timed out after {timeout:g} s") from None
        raise _Failed(f"cannot connect: {reason}") from None
    except (OSError, http.client.HTTPException) as error:  # a reset connection, a body cut short
        raise _Failed(f"download broken: {type(error).__name__}") from None
    if len(data) > limit:
        raise _Failed(f"more than {limit} bytes")
    return data


def _verify(data: bytes, record: dict) -> None:
    if len(data) != record["bytes"]:
        raise _Failed(f"size mismatch: {len(data)} bytes, expected {record['bytes']}")
    if _sha256(data) != record["sha256"]:
        raise _Failed("sha256 mismatch")


def _write_atomically(path: Path, data: bytes) -> None:
    """Write through a temporary file in the same folder and rename it over path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _present(path: Path, record: dict) -> bool:
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return len(data) == record["bytes"] and _sha256(data) == record["sha256"]


def _safe_name(name: str) -> str:
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"the corpus list names a file {name!r}, which is not a plain file name")
    return name


def _response_target(dest: Path, record: dict) -> Path:
    relative = Path(record["file"])
    if relative.is_absolute() or ".." in relative.parts or relative.parts[0] != "response_templates":
        raise ValueError(f"the corpus list puts {record['name']} at {record['file']}, outside response_templates/")
    return dest / relative


def _land(target: Path, record: dict, kind: str, produce) -> Outcome:
    """produce() the file's bytes, check them against record and write them to target; what happened.

    produce raises _Failed (a download or a reading that went wrong); then,
    as for a check that fails, nothing stays at target: a file with another
    hash is no corpus file either.
    """
    try:
        data = produce()
        _verify(data, record)
        _write_atomically(target, data)
    except _Failed as failure:
        target.unlink(missing_ok=True)
        return Outcome(record["name"], kind, "failed", str(failure))
    except OSError as error:
        return Outcome(record["name"], kind, "failed", f"cannot write: {error}")
    return Outcome(record["name"], kind, "fetched")


def _fetch_template(dest: Path, record: dict, base_url: str, timeout: float) -> Outcome:
    target = dest / "templates" / f"{_safe_name(record['name'])}.jinja"
    if _present(target, record):
        return Outcome(record["name"], "template", "present")
    return _land(target, record, "template",
                 lambda: _download(raw_url(base_url, record), limit=record["bytes"], timeout=timeout))


def _literal_json(source: bytes, variable: str) -> bytes:
    """The stored bytes of the response template a source file assigns to variable."""
    try:
        value = literal_assigned(source, variable)
    except (SyntaxError, ValueError, LookupError, TypeError) as error:
        raise _Failed(f"{variable} not readable as a literal: {type(error).__name__}") from None
    return response_template_json(value)


def _fetch_responses(dest: Path, records: list[dict], base_url: str, timeout: float) -> list[Outcome]:
    """The response templates one source file holds: downloaded once, each literal read and checked."""
    outcomes, missing = [], []
    for record in records:
        target = _response_target(dest, record)
        if _present(target, record):
            outcomes.append(Outcome(record["name"], "response template", "present"))
        else:
            missing.append((record, target))
    if not missing:
        return outcomes
    try:
        source = _download(raw_url(base_url, records[0]), limit=MAX_SOURCE_BYTES, timeout=timeout)
    except _Failed as failure:
        source_failure = failure
    else:
        source_failure = None

    def produce(record: dict) -> bytes:
        if source_failure is not None:  # every template of the file fails with its download
            raise source_failure
        return _literal_json(source, record["variable"])

    for record, target in missing:
        outcomes.append(_land(target, record, "response template", lambda: produce(record)))
    return outcomes


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
        _write_atomically(path, _json_bytes(value))


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
        template_runs = [pool.submit(_fetch_template, dest, record, base_url, timeout) for record in templates]
        response_runs = [
            pool.submit(_fetch_responses, dest, group, base_url, timeout) for group in by_source.values()
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
