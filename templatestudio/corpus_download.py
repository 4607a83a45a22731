"""Fetching one listed file into a corpus folder: download it, check it against the list, write it.

``fetch_template`` downloads a template from where the list says it is
published (``corpus_list.raw_url``) and checks its size and sha256;
``fetch_responses`` downloads a response template's source file once and
reads each listed template out of it. Each gives an ``Outcome``:
``fetched``, ``present`` (already there with the listed hash, so not
fetched again) or ``failed`` with the reason.

Every file is written atomically (``write_atomically``: a temporary file in
the same folder, renamed once verified), so a failed or mismatched download
never stands where a template should; a file already there with another
hash is replaced (or removed, when its download fails).

A response template is read out of its source with ``literal_assigned``
(``ast.literal_eval``), which evaluates no code.

Not handled here: which files to fetch, how many at once, and the
``labels.json`` and ``sources.json`` that make a folder a corpus
(``corpus_fetch``).
"""

from __future__ import annotations

import ast
import hashlib
import http.client
import os
import tempfile
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from templatestudio.corpus_list import raw_url, response_template_json

__all__ = ["Outcome", "fetch_responses", "fetch_template", "literal_assigned", "write_atomically"]

# A response template's source file is a whole Python module; nothing listed comes near this.
MAX_SOURCE_BYTES = 16 * 2**20
USER_AGENT = "templatestudio-corpus-fetch"


@dataclass(frozen=True)
class Outcome:
    """One listed file: ``fetched`` (downloaded and verified), ``present`` (already there) or ``failed``."""

    name: str
    kind: str  # "template" or "response template"
    status: str
    reason: str = ""


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


def write_atomically(path: Path, data: bytes) -> None:
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
        write_atomically(target, data)
    except _Failed as failure:
        target.unlink(missing_ok=True)
        return Outcome(record["name"], kind, "failed", str(failure))
    except OSError as error:
        return Outcome(record["name"], kind, "failed", f"cannot write: {error}")
    return Outcome(record["name"], kind, "fetched")


def fetch_template(dest: Path, record: dict, base_url: str, timeout: float) -> Outcome:
    target = dest / "templates" / f"{_safe_name(record['name'])}.jinja"
    if _present(target, record):
        return Outcome(record["name"], "template", "present")
    return _land(target, record, "template",
                 lambda: _download(raw_url(base_url, record), limit=record["bytes"], timeout=timeout))


# CPython 3.11 keeps the depth counter of the AST it builds for ``ast.parse`` in one place per
# interpreter. A thread switch inside that build (a collection running a finalizer is enough) lets
# two parses move the one counter, and the second raises "SystemError: AST constructor recursion
# depth mismatch" (python/cpython gh-106905). fetch_corpus reads source files on several threads,
# so the parses take turns.
_AST_BUILDING = threading.Lock()


def literal_assigned(source: bytes, variable: str):
    """The value of the last ``variable = <literal>`` in a Python source, read without running it.

    Safe to call from many threads at once: the parse is serialized (see ``_AST_BUILDING``).
    """
    with _AST_BUILDING:
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


def _literal_json(source: bytes, variable: str) -> bytes:
    """The stored bytes of the response template a source file assigns to variable."""
    try:
        value = literal_assigned(source, variable)
    except (SyntaxError, ValueError, LookupError, TypeError) as error:
        raise _Failed(f"{variable} not readable as a literal: {type(error).__name__}") from None
    return response_template_json(value)


def fetch_responses(dest: Path, records: list[dict], base_url: str, timeout: float) -> list[Outcome]:
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
