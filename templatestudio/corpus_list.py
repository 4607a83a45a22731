"""The corpus list: where each template of the corpus is published, and what its bytes must be.

The project holds the corpus's list, never its templates: ``corpus_list.json``
beside this module names each template's repository, path and commit (a
commit, never a branch), the sha256 and size of its bytes, its origin and the
labels ``labels.json`` gives it. ``load_list`` reads it, ``raw_url`` says
where a listed file is published (``{base_url}/{repo}/{commit}/{path}``), and
``list_from`` makes the list from a corpus folder (``../shared/corpus``).

Response templates are Python dict literals inside a source file (TRL's
``chat_template_utils.py``, transformers' and vLLM's tests); the listed sha256
is that of the JSON the literal dumps to (``response_template_json``:
``json.dumps(value, indent=2)`` and a newline). A template the source builds
with code is listed under ``response_templates_not_fetched`` with the reason.

Not handled here: downloading and checking the files (``corpus_download``),
and writing a corpus folder (``corpus_fetch``).
"""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

__all__ = [
    "IDENTITY",
    "LIST_PATH",
    "RESPONSE_FIELDS",
    "TEMPLATE_FIELDS",
    "list_from",
    "load_list",
    "raw_url",
    "response_template_json",
]

LIST_PATH = Path(__file__).with_name("corpus_list.json")
TEMPLATE_FIELDS = ("name", "repo", "path", "commit", "sha256", "bytes", "origin")
RESPONSE_FIELDS = ("name", "file", "repo", "path", "commit", "variable", "sha256", "bytes", "kind")
# What names a response template's source and content (the shared folder's records count chars, not bytes).
IDENTITY = ("name", "file", "repo", "path", "commit", "variable", "sha256")


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
