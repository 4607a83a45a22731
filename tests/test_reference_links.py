"""Reference links name the versions the course is pinned to and tested with.

Every URL in the notebooks' markdown cells and in README.md (code spans and
fences included: a command that fetches a moving file is as stale as a link) is
checked by host, without the network:

* ``huggingface.co/docs/transformers/...`` carries ``/v<pin>/`` right after
  ``transformers``, the pin read from constraints/course.txt (``transformers==``);
* ``docs.vllm.ai/...`` (and the old ``vllm.readthedocs.io``) names a release of a
  series the vLLM plugin is tested on, ``v0.32.x`` or ``v0.33.x``, read from the
  Makefile (``VLLM_SPEC``, ``VLLM_SDIST_VERSION``): never ``latest``, ``stable``
  or an older release;
* a GitHub link to a file or folder (``blob/``, ``tree/``, ``raw/``, ``blame/``,
  raw.githubusercontent.com) is at a commit (7 to 40 hex digits) or a tag
  (``v0.33.0``, ``0.1.1``, llama.cpp's ``b6543``), never a branch (``main``, ``master``);
* a Hugging Face Hub file link (``huggingface.co/ORG/REPO/blob|resolve|raw|tree/REF``)
  is at a commit or a tag, for the same reason;
* a PyPI project link names a version (``pypi.org/project/NAME/VERSION/``).

URL patterns with ``{placeholders}`` are not links. Links to a repository's front page, an issue, a pull request, a commit or a
release are not files and are not checked here; neither are other sites' docs
(their versioning differs per site).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
README = ROOT / "README.md"

URL = re.compile(r"https?://[^\s<>()\[\]`\"'|\\]+")
TRAILING = ".,;:!?*_"


def pinned_transformers() -> str:
    text = (ROOT / "constraints" / "course.txt").read_text(encoding="utf-8")
    match = re.search(r"^transformers==(\S+)\s*$", text, re.MULTILINE)
    assert match, "constraints/course.txt pins no transformers version"
    return match.group(1)


def vllm_series_tested() -> set[str]:
    """The vLLM release series ("0.32", "0.33") the Makefile installs and reads the source of."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    versions = re.findall(r"^VLLM_SPEC\s*\?=\s*vllm(?:-cpu)?==(\S+)", text, re.MULTILINE)
    versions += re.findall(r"^VLLM_SDIST_VERSION\s*\?=\s*(\S+)", text, re.MULTILINE)
    assert versions, "the Makefile names no vLLM version (VLLM_SPEC, VLLM_SDIST_VERSION)"
    return {".".join(version.split(".")[:2]) for version in versions}


SHA = re.compile(r"^[0-9a-f]{7,40}$")
TAG = re.compile(r"^(?:v?\d+(?:\.\d+)*(?:[-.+_]?[A-Za-z0-9]+)*|b\d+)$")


def pinned_ref(ref: str) -> bool:
    """A commit or a tag, not a branch."""
    return bool(SHA.match(ref) or TAG.match(ref))


def urls(text: str) -> list[str]:
    return [match.group(0).rstrip(TRAILING) for match in URL.finditer(text)]


def problem(url: str, transformers_pin: str, vllm_series: set[str]) -> str | None:
    """Why url does not name a pinned version, or None when it does (or is not checked)."""
    match = re.match(r"https?://([^/]+)(/[^?#]*)?", url)
    if not match or "{" in url:
        return None  # not a link, or a URL pattern with {placeholders}
    host, path = match.group(1).lower(), match.group(2) or "/"
    parts = [part for part in path.split("/") if part]
    if host in ("huggingface.co", "www.huggingface.co") and parts[:2] == ["docs", "transformers"]:
        version = parts[2] if len(parts) > 2 else ""
        if version != f"v{transformers_pin}":
            return f"transformers docs not at the pinned /v{transformers_pin}/ (found /{version}/)"
        return None
    if host in ("huggingface.co", "www.huggingface.co") and len(parts) >= 4 and parts[0] not in (
        "docs", "datasets", "spaces", "blog", "papers", "learn", "api", "collections"
    ) and parts[2] in ("blob", "resolve", "raw", "tree"):
        if not pinned_ref(parts[3]):
            return f"Hub file at the branch {parts[3]!r}, not at a commit or tag"
        return None
    if host == "docs.vllm.ai" or host.endswith("vllm.readthedocs.io"):
        named = [part for part in parts if re.match(r"^v?\d+\.\d+(\.\w+)*$", part) or part in ("latest", "stable")]
        version = named[0] if named else ""
        series = ".".join(version.lstrip("v").split(".")[:2])
        if series not in vllm_series:
            wanted = " or ".join(f"v{s}.x" for s in sorted(vllm_series))
            return f"vLLM docs at {version or 'no version'!r}, not a tested release ({wanted})"
        return None
    if host in ("github.com", "www.github.com") and len(parts) >= 4 and parts[2] in ("blob", "tree", "raw", "blame", "edit"):
        if not pinned_ref(parts[3]):
            return f"GitHub file at the branch {parts[3]!r}, not at a tag or commit"
        return None
    if host == "raw.githubusercontent.com" and len(parts) >= 3:
        ref = parts[2]
        if ref == "refs" and len(parts) >= 5:
            ref = parts[4] if parts[3] == "tags" else parts[3] + "/" + parts[4]
        if not pinned_ref(ref):
            return f"GitHub raw file at the branch {ref!r}, not at a tag or commit"
        return None
    if host in ("pypi.org", "www.pypi.org") and parts[:1] == ["project"]:
        if len(parts) < 3:
            return "PyPI project page without a version (pypi.org/project/NAME/VERSION/)"
        return None
    if host == "pypi.python.org" and parts[:1] == ["pypi"] and len(parts) < 3:
        return "PyPI project page without a version"
    return None


# --- the classifier on made-up links ----------------------------------------

GOOD = [
    "https://huggingface.co/docs/transformers/v{pin}/en/chat_templating",
    "https://docs.vllm.ai/en/v0.33.0/features/tool_calling.html",
    "https://docs.vllm.ai/en/v0.32.1/api/vllm/tool_parsers/",
    "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/tool_parsers/hermes_tool_parser.py",
    "https://github.com/ggml-org/llama.cpp/blob/b6543/models/templates/x.jinja",
    "https://github.com/huggingface/transformers/blob/0123456789abcdef0123456789abcdef01234567/src/x.py",
    "https://raw.githubusercontent.com/o/r/3f2a9c1/path/file.jinja",
    "https://github.com/vllm-project/vllm/issues/22975",
    "https://github.com/vllm-project/vllm/pull/47878",
    "https://github.com/NousResearch/Hermes-Function-Calling",
    "https://huggingface.co/Qwen/Qwen3-0.6B",
    "https://huggingface.co/Qwen/Qwen3-0.6B/blob/c1899de289a04d12100db370d81485cdf75e47ca/tokenizer_config.json",
    "https://pypi.org/project/canitoolcall/0.1.1/",
]
BAD = [
    "https://huggingface.co/docs/transformers/chat_extras",
    "https://huggingface.co/docs/transformers/main/en/chat_response_parsing",
    "https://huggingface.co/docs/transformers/v5.10.2/en/chat_templating",
    "https://huggingface.co/docs/transformers/en/chat_templating",
    "https://docs.vllm.ai/en/latest/features/tool_calling/",
    "https://docs.vllm.ai/en/stable/api/vllm/",
    "https://docs.vllm.ai/en/v0.22.1/api/vllm/",
    "https://docs.vllm.ai/projects/recipes/en/stable/",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/utils/chat_template_utils.py",
    "https://github.com/o/r/tree/master/docs",
    "https://raw.githubusercontent.com/o/r/main/file.jinja",
    "https://raw.githubusercontent.com/o/r/refs/heads/main/file.jinja",
    "https://huggingface.co/Qwen/Qwen3-0.6B/blob/main/tokenizer_config.json",
    "https://pypi.org/project/canitoolcall/",
]


def test_the_pins_are_read_from_the_project():
    assert re.fullmatch(r"\d+\.\d+(\.\d+)?", pinned_transformers())
    assert vllm_series_tested() and all(re.fullmatch(r"\d+\.\d+", s) for s in vllm_series_tested())


def test_the_classifier_on_made_up_links():
    # Fixed pins here, so that these cases test the rules, not today's Makefile.
    pin, series = "5.22.1", {"0.32", "0.33"}
    for url in GOOD:
        url = url.format(pin=pin)
        assert problem(url, pin, series) is None, url
    for url in BAD:
        assert problem(url, pin, series) is not None, url


def test_url_patterns_are_not_links():
    assert problem("https://raw.githubusercontent.com/{repo}/{commit}/{path}", "5.22.1", {"0.33"}) is None


def test_urls_are_cut_where_markdown_ends_them():
    text = "see [the docs](https://docs.vllm.ai/en/v0.33.0/x.html), or <https://pypi.org/project/a/1.0/>."
    assert urls(text) == ["https://docs.vllm.ai/en/v0.33.0/x.html", "https://pypi.org/project/a/1.0/"]


# --- the course's links --------------------------------------------------------


def markdown_of(path: Path) -> list[tuple[str, str]]:
    """(where, text) for each markdown cell of a notebook, or the README's lines."""
    if path.suffix == ".md":
        return [(f"line {number}", line) for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]
    notebook = nbformat.read(path, as_version=4)
    return [(f"cell {index}", cell.source) for index, cell in enumerate(notebook.cells) if cell.cell_type == "markdown"]


def stale_links(path: Path) -> list[str]:
    pin, series = pinned_transformers(), vllm_series_tested()
    found = []
    for where, text in markdown_of(path):
        for url in urls(text):
            why = problem(url, pin, series)
            if why:
                found.append(f"{where}: {url}\n    {why}")
    return found


SOURCES = [*NOTEBOOKS, README]


@pytest.mark.parametrize("path", SOURCES, ids=[path.name for path in SOURCES])
def test_reference_links_name_the_pinned_versions(path):
    stale = stale_links(path)
    assert not stale, f"{path.name}: {len(stale)} link(s) not at a pinned version:\n" + "\n".join(stale)
