"""``python -m templatestudio corpus fetch``: the corpus from its listed public sources, verified.

No test here touches the network. A threaded ``http.server`` on 127.0.0.1
serves files under the raw.githubusercontent.com layout
(``/{repo}/{commit}/{path}``); the command is pointed at it with
``--base-url``. The mirror of the whole corpus is built from
``../shared/corpus`` (those tests need it, like the corpus scan); the
mechanics (a corrupted file, a 404, a timeout, a re-run) are also tested on a
small made-up list that needs nothing but this file.

The list the project commits (``templatestudio/corpus_list.json``) must say
what ``../shared/corpus`` says, name for name, hash for hash, label for label,
so the two cannot drift apart.
"""

from __future__ import annotations

import gc
import hashlib
import http.server
import json
import re
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

from templatestudio import corpus, corpus_download, corpus_fetch, corpus_list
from templatestudio.__main__ import main
from templatestudio.corpus_download import literal_assigned
from templatestudio.corpus_fetch import FetchReport, fetch_corpus
from templatestudio.corpus_list import list_from, load_list, raw_url, response_template_json

needs_corpus = pytest.mark.usefixtures("needs_corpus")
HEX40 = re.compile(r"[0-9a-f]{40}")


# --- a local mirror of raw.githubusercontent.com ---------------------------------------------


class Mirror:
    """A threaded HTTP server on 127.0.0.1 serving ``files`` (URL path -> bytes); 404 for anything else."""

    def __init__(self, files: dict[str, bytes]):
        self.files = dict(files)
        self.requests: list[str] = []
        self.slow: set[str] = set()  # paths answered only after SLOW seconds
        self.short: set[str] = set()  # paths whose body stops before its Content-Length
        mirror = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                mirror.requests.append(self.path)
                if self.path in mirror.slow:
                    time.sleep(SLOW)
                data = mirror.files.get(self.path)
                if data is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2] if self.path in mirror.short else data)
                if self.path in mirror.short:
                    self.close_connection = True

            def log_message(self, *args):  # keep the test output clean
                pass

        class Server(http.server.ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                # A client that gave up (a timeout test) leaves its handler writing to a closed
                # socket, maybe after its test ended: socketserver would print that traceback to
                # stderr, into whichever test captures stderr then. Kept here instead.
                mirror.errors.append(sys.exc_info()[1])

        self.errors: list[BaseException] = []
        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def path_of(self, record: dict) -> str:
        return raw_url(self.base_url, record)[len(self.base_url):]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


SLOW = 2.0


def python_source(records: list[dict], values: dict[str, object]) -> bytes:
    """A made-up Python module assigning each response template's dict to its variable."""
    lines = ['"""Response templates."""', "", "def unrelated():", "    return {'built': 'by code'}", ""]
    lines += [f"{record['variable']} = {values[record['name']]!r}" for record in records]
    return ("\n".join(lines) + "\n").encode("utf-8")


def mirror_files(listed: dict, template_bytes, response_values, base: str = "") -> dict[str, bytes]:
    """URL path -> bytes for every listed file, from the given template bytes and response dicts."""
    files = {}
    for record in listed["templates"]:
        files[raw_url(base, record)] = template_bytes(record)
    groups: dict[str, list[dict]] = {}
    for record in listed.get("response_templates", []):
        groups.setdefault(raw_url(base, record), []).append(record)
    for path, records in groups.items():
        files[path] = python_source(records, {record["name"]: response_values(record) for record in records})
    return files


# --- a small made-up corpus: the mechanics, with nothing else needed ----------------------------

TOY_TEMPLATES = {
    "alpha": b"{% for message in messages %}{{ message.content }}{% endfor %}\n",
    "beta": "{{ bos_token }}{# caf\u00e9 #}{{ messages[0].content }}".encode("utf-8"),
}
TOY_RESPONSES = {"toy-response": {"defaults": {"role": "assistant"}, "fields": {"content": {"content": "text"}}}}
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def toy_list() -> dict:
    templates = [
        {
            "name": name, "repo": "example/models", "path": f"templates/{name}.jinja", "commit": COMMIT,
            "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data), "origin": "made up",
            "labels": {"format": "none", "renders_tools": False, "call_survives": False},
        }
        for name, data in TOY_TEMPLATES.items()
    ]
    responses = [
        {
            "name": name, "file": f"response_templates/{name}.json", "repo": "example/parsers",
            "path": "parsers/templates.py", "commit": COMMIT, "variable": "toy_template",
            "sha256": hashlib.sha256(response_template_json(value)).hexdigest(),
            "bytes": len(response_template_json(value)), "kind": "response_template",
        }
        for name, value in TOY_RESPONSES.items()
    ]
    return {"templates": templates, "response_templates": responses, "response_templates_not_fetched": []}


@pytest.fixture(autouse=True)
def no_proxy_for_the_mirror(monkeypatch):
    # A machine with http_proxy set must still reach the mirror on 127.0.0.1 directly.
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(name, "127.0.0.1,localhost")


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The made-up list (also as the package's list, for the CLI) and a mirror serving it."""
    listed = toy_list()
    list_path = tmp_path / "corpus_list.json"
    list_path.write_text(json.dumps(listed), encoding="utf-8")
    monkeypatch.setattr(corpus_list, "LIST_PATH", list_path)
    files = mirror_files(listed, lambda r: TOY_TEMPLATES[r["name"]], lambda r: TOY_RESPONSES[r["name"]])
    mirror = Mirror(files)
    yield listed, mirror
    mirror.close()


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.rglob("*") if path.name.endswith(".part"))


def test_a_toy_corpus_is_fetched_verified_and_readable_by_the_corpus_module(toy, tmp_path, monkeypatch):
    listed, mirror = toy
    dest = tmp_path / "corpus"
    report = fetch_corpus(dest, base_url=mirror.base_url, corpus_list=listed)
    assert report.ok and [o.status for o in report.outcomes] == ["fetched"] * 3
    assert report.line() == (
        f"corpus: 2 templates and 1 response templates fetched into {dest} (3 downloaded, 0 already there)"
    )
    for name, data in TOY_TEMPLATES.items():
        assert (dest / "templates" / f"{name}.jinja").read_bytes() == data
    assert json.loads((dest / "response_templates" / "toy-response.json").read_text()) == TOY_RESPONSES["toy-response"]
    monkeypatch.setenv(corpus.CORPUS_ENV, str(dest))
    assert [path.stem for path in corpus.corpus_templates()] == ["alpha", "beta"]
    assert corpus.load_labels() == {record["name"]: record["labels"] for record in listed["templates"]}
    assert corpus.load_sources()["beta"]["sha256"] == listed["templates"][1]["sha256"]
    assert leftovers(dest) == []


def test_a_corrupted_file_is_named_and_nothing_is_written_for_it(toy, tmp_path):
    listed, mirror = toy
    path = mirror.path_of(listed["templates"][0])
    mirror.files[path] = mirror.files[path].replace(b"message", b"massage")  # same size, other bytes
    dest = tmp_path / "corpus"
    report = fetch_corpus(dest, base_url=mirror.base_url, corpus_list=listed)
    assert not report.ok
    assert report.line() == (
        f"corpus: 1 of 2 templates and 1 of 1 response templates fetched into {dest}; "
        "failed: alpha (sha256 mismatch)"
    )
    assert not (dest / "templates" / "alpha.jinja").exists()
    assert (dest / "templates" / "beta.jinja").read_bytes() == TOY_TEMPLATES["beta"]
    # a half-fetched folder must not pass for a corpus: no labels, no sources until every template is in
    assert not (dest / "labels.json").exists() and not (dest / "sources.json").exists()
    assert leftovers(dest) == []


def test_a_file_of_another_size_and_a_404_are_named_with_their_reasons(toy, tmp_path):
    listed, mirror = toy
    mirror.files[mirror.path_of(listed["templates"][0])] += b"appended"
    del mirror.files[mirror.path_of(listed["templates"][1])]
    report = fetch_corpus(tmp_path / "corpus", base_url=mirror.base_url, corpus_list=listed)
    reasons = {o.name: o.reason for o in report.failed}
    assert reasons == {"alpha": f"more than {len(TOY_TEMPLATES['alpha'])} bytes", "beta": "HTTP 404"}
    assert not (tmp_path / "corpus" / "templates").exists() or not any((tmp_path / "corpus" / "templates").iterdir())


def test_a_response_template_that_does_not_hash_right_fails_alone(toy, tmp_path):
    listed, mirror = toy
    path = mirror.path_of(listed["response_templates"][0])
    mirror.files[path] = mirror.files[path].replace(b"assistant", b"assistent")
    dest = tmp_path / "corpus"
    report = fetch_corpus(dest, base_url=mirror.base_url, corpus_list=listed)
    assert [(o.name, o.reason) for o in report.failed] == [("toy-response", "sha256 mismatch")]
    assert not (dest / "response_templates" / "toy-response.json").exists()
    assert (dest / "labels.json").is_file()  # the templates are all there
    assert not (dest / "response_sources.json").exists()


def test_a_rerun_requests_nothing_already_there_and_replaces_a_wrong_file(toy, tmp_path):
    listed, mirror = toy
    dest = tmp_path / "corpus"
    assert fetch_corpus(dest, base_url=mirror.base_url, corpus_list=listed).ok
    mirror.requests.clear()
    again = fetch_corpus(dest, base_url=mirror.base_url, corpus_list=listed)
    assert again.ok and {o.status for o in again.outcomes} == {"present"} and mirror.requests == []
    assert again.line().endswith("(0 downloaded, 3 already there)")
    (dest / "templates" / "beta.jinja").write_bytes(b"edited by hand")
    third = fetch_corpus(dest, base_url=mirror.base_url, corpus_list=listed)
    assert [o.name for o in third.outcomes if o.status == "fetched"] == ["beta"]
    assert (dest / "templates" / "beta.jinja").read_bytes() == TOY_TEMPLATES["beta"]
    # a wrong file whose download fails is removed, not left standing as a template
    (dest / "templates" / "beta.jinja").write_bytes(b"edited by hand")
    del mirror.files[mirror.path_of(listed["templates"][1])]
    fourth = fetch_corpus(dest, base_url=mirror.base_url, corpus_list=listed)
    assert [(o.name, o.reason) for o in fourth.failed] == [("beta", "HTTP 404")]
    assert not (dest / "templates" / "beta.jinja").exists()
    assert not (dest / "labels.json").exists()  # so load_labels says the corpus is incomplete


def test_a_body_cut_short_is_a_named_failure(toy, tmp_path):
    listed, mirror = toy
    path = mirror.path_of(listed["templates"][0])
    mirror.short.add(path)
    report = fetch_corpus(tmp_path / "corpus", base_url=mirror.base_url, corpus_list=listed)
    ((name, reason),) = [(o.name, o.reason) for o in report.failed]
    half = len(TOY_TEMPLATES["alpha"]) // 2
    assert name == "alpha" and reason in {
        "download broken: IncompleteRead", f"size mismatch: {half} bytes, expected {2 * half + 1}"
    }
    assert not (tmp_path / "corpus" / "templates" / "alpha.jinja").exists()


def test_a_slow_server_times_out_with_a_named_failure(toy, tmp_path):
    listed, mirror = toy
    mirror.slow.add(mirror.path_of(listed["templates"][0]))
    report = fetch_corpus(tmp_path / "corpus", base_url=mirror.base_url, corpus_list=listed, timeout=0.3)
    assert [(o.name, o.reason) for o in report.failed] == [("alpha", "timed out after 0.3 s")]
    assert not (tmp_path / "corpus" / "templates" / "alpha.jinja").exists()


def test_nothing_listed_is_fetched_by_branch_and_each_request_names_the_commit(toy, tmp_path):
    listed, mirror = toy
    fetch_corpus(tmp_path / "corpus", base_url=mirror.base_url, corpus_list=listed)
    assert sorted(set(mirror.requests)) == sorted(mirror.files)
    assert all(f"/{COMMIT}/" in request for request in mirror.requests)


# --- the command line ---------------------------------------------------------------------------


def test_the_command_ends_with_one_line_and_status_zero(toy, tmp_path, capsys):
    _, mirror = toy
    dest = tmp_path / "corpus"
    assert main(["corpus", "fetch", "--dest", str(dest), "--base-url", mirror.base_url, "--jobs", "2"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"corpus: 2 templates and 1 response templates fetched into {dest} (3 downloaded, 0 already there)"
    ]
    assert err == ""


def test_a_failure_is_one_line_on_stderr_and_status_one(toy, tmp_path, capsys):
    listed, mirror = toy
    del mirror.files[mirror.path_of(listed["templates"][1])]
    dest = tmp_path / "corpus"
    assert main(["corpus", "fetch", "--dest", str(dest), "--base-url", mirror.base_url]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        f"corpus: 1 of 2 templates and 1 of 1 response templates fetched into {dest}; failed: beta (HTTP 404)"
    ]


def test_the_default_destination_is_where_the_corpus_module_looks(toy, tmp_path, monkeypatch, capsys):
    _, mirror = toy
    monkeypatch.setenv(corpus.CORPUS_ENV, str(tmp_path / "configured"))
    monkeypatch.setenv(corpus_fetch.BASE_URL_ENV, mirror.base_url)  # the base URL from the environment
    assert main(["corpus", "fetch"]) == 0
    assert str(tmp_path / "configured") in capsys.readouterr().out
    assert corpus.corpus_available() and len(corpus.corpus_templates()) == 2


@pytest.mark.parametrize("argv", [["--jobs", "0"], ["--jobs", "1.5"], ["--timeout", "inf"], ["--timeout", "0"]])
def test_bad_option_values_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["corpus", "fetch", *argv])
    assert stop.value.code == 2
    assert "error: argument" in capsys.readouterr().err


def test_a_base_url_that_is_not_http_is_one_line(tmp_path, capsys):
    assert main(["corpus", "fetch", "--dest", str(tmp_path), "--base-url", "file:///etc"]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"corpus: nothing fetched into {tmp_path}: the base URL must start with http")


# --- where the corpus is looked for -------------------------------------------------------------


def test_without_the_variable_or_a_shared_corpus_the_user_cache_is_the_corpus(tmp_path, monkeypatch):
    monkeypatch.delenv(corpus.CORPUS_ENV, raising=False)
    monkeypatch.setattr(corpus, "REPO_ROOT", tmp_path / "repo")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert corpus.corpus_dir() == tmp_path / "cache" / "templatestudio" / "corpus"
    message = corpus.missing_message()
    assert "\n" not in message and "python -m templatestudio corpus fetch" in message
    assert str(tmp_path / "cache" / "templatestudio" / "corpus") in message
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert corpus.corpus_dir() == tmp_path / "home" / ".cache" / "templatestudio" / "corpus"
    # a shared corpus beside the repository (CI's) still wins, as before
    (tmp_path / "shared" / "corpus" / "templates").mkdir(parents=True)
    assert corpus.corpus_dir() == tmp_path / "shared" / "corpus"


# --- reading a response template out of its Python source ---------------------------------------


def test_a_literal_is_read_without_running_the_source_and_code_is_refused():
    source = b"x = {'a': 1}\nimport os\nx = {'a': [1, 2], 'b': r'\\s*'}\ny = make()\n"
    assert literal_assigned(source, "x") == {"a": [1, 2], "b": "\\s*"}  # the last assignment wins
    with pytest.raises(ValueError):
        literal_assigned(source, "y")
    with pytest.raises(LookupError):
        literal_assigned(source, "z")


class _Cycle:
    """Garbage that only a collection frees, with a finalizer that runs Python code (a thread switch)."""

    def __init__(self):
        self.me = self

    def __del__(self):
        sum(range(20))


def test_literals_are_read_on_many_threads_at_once():
    # fetch_corpus reads the source files of response templates on several threads. CPython 3.11
    # counts the depth of the AST it builds in one place per interpreter, so a thread switch inside
    # a parse (a collection running a finalizer) used to raise SystemError in another thread's parse.
    # Frequent collections and switches make that switch likely on every parse.
    source = ("x = " + "{'a': " * 30 + "1" + "}" * 30 + "\n").encode() * 100
    interval, thresholds = sys.getswitchinterval(), gc.get_threshold()
    failures = []

    def read_many():
        for _ in range(15):
            for _ in range(50):
                _Cycle()
            try:
                literal_assigned(source, "x")
            except SystemError as error:
                failures.append(str(error))

    sys.setswitchinterval(1e-6)
    gc.set_threshold(50, 1, 1)
    try:
        threads = [threading.Thread(target=read_many) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
        gc.set_threshold(*thresholds)
    assert failures == []


# --- the project's list and ../shared/corpus ----------------------------------------------------


def test_the_list_names_commits_and_hashes_and_holds_no_template_text():
    listed = load_list()
    for record in listed["templates"]:
        assert set(record) == {*corpus_list.TEMPLATE_FIELDS, "labels"}, record["name"]
        assert HEX40.fullmatch(record["commit"]), f"{record['name']}: a commit, never a branch"
        assert re.fullmatch(r"[0-9a-f]{64}", record["sha256"]) and record["bytes"] > 0
        assert "/" not in record["name"] and not record["name"].startswith(".")
    for record in listed["response_templates"]:
        assert set(record) == set(corpus_list.RESPONSE_FIELDS), record["name"]
        assert HEX40.fullmatch(record["commit"]) and record["file"].startswith("response_templates/")
    names = [record["name"] for record in listed["templates"] + listed["response_templates"]]
    assert len(names) == len(set(names))


@needs_corpus
def test_the_list_agrees_with_the_shared_corpus():
    shared, listed = corpus.corpus_dir(), load_list()
    labels, sources = corpus.load_labels(), corpus.load_sources()
    assert [record["name"] for record in listed["templates"]] == list(sources)
    assert {record["name"] for record in listed["templates"]} == set(labels)
    for record in listed["templates"]:
        source = sources[record["name"]]
        assert {key: source[key] for key in corpus_list.TEMPLATE_FIELDS} == {
            key: record[key] for key in corpus_list.TEMPLATE_FIELDS
        }, record["name"]
        assert record["labels"] == labels[record["name"]], record["name"]
        assert hashlib.sha256((shared / "templates" / f"{record['name']}.jinja").read_bytes()).hexdigest() == record["sha256"]
    responses = {r["name"]: r for r in json.loads((shared / "response_sources.json").read_text(encoding="utf-8"))}
    listed_responses = listed["response_templates"] + listed["response_templates_not_fetched"]
    assert {record["name"] for record in listed_responses} == set(responses)
    for record in listed_responses:
        assert record["sha256"] == responses[record["name"]]["sha256"], record["name"]
    for record in listed["response_templates"]:
        for key in corpus_list.IDENTITY:
            assert record[key] == responses[record["name"]][key], (record["name"], key)
    # the list is exactly what list_from makes of the shared folder: regenerate it, never edit it by hand
    assert list_from(shared) == listed


@pytest.fixture
def shared_mirror():
    shared, listed = corpus.corpus_dir(), load_list()
    files = mirror_files(
        listed,
        lambda record: (shared / "templates" / f"{record['name']}.jinja").read_bytes(),
        lambda record: json.loads((shared / record["file"]).read_text(encoding="utf-8")),
    )
    mirror = Mirror(files)
    yield shared, listed, mirror
    mirror.close()


@needs_corpus
def test_the_whole_corpus_fetched_from_a_mirror_equals_the_shared_one(shared_mirror, tmp_path, monkeypatch):
    shared, listed, mirror = shared_mirror
    dest = tmp_path / "corpus"
    report = fetch_corpus(dest, base_url=mirror.base_url, jobs=4)
    assert report.ok, report.line()
    count = len(listed["templates"])
    assert report.line().startswith(f"corpus: {count} templates and {len(listed['response_templates'])} response")
    for record in listed["templates"]:
        name = f"{record['name']}.jinja"
        assert (dest / "templates" / name).read_bytes() == (shared / "templates" / name).read_bytes()
    for record in listed["response_templates"]:
        assert (dest / record["file"]).read_bytes() == (shared / record["file"]).read_bytes()
    shared_labels, shared_sources = corpus.load_labels(), corpus.load_sources()
    monkeypatch.setenv(corpus.CORPUS_ENV, str(dest))
    assert [path.name for path in corpus.corpus_templates()] == sorted(
        path.name for path in (shared / "templates").glob("*.jinja")
    )
    assert corpus.load_labels() == shared_labels
    assert {name: record["origin"] for name, record in corpus.load_sources().items()} == {
        name: record["origin"] for name, record in shared_sources.items()
    }
    mirror.requests.clear()
    again = fetch_corpus(dest, base_url=mirror.base_url)
    assert again.ok and mirror.requests == [] and again.line().endswith(f"(0 downloaded, {len(again.outcomes)} already there)")


@needs_corpus
def test_fetching_into_a_copy_of_the_shared_corpus_changes_nothing(shared_mirror, tmp_path):
    # The default destination is corpus_dir(), which in CI is ../shared/corpus: a fetch there must
    # find everything present and leave its richer sources.json and response_sources.json alone.
    # (Checked on a copy: the shared folder itself is never written by a test.)
    shared, _, mirror = shared_mirror
    copy = tmp_path / "shared-copy"
    shutil.copytree(shared, copy)
    before = {path: (path.stat().st_mtime_ns, path.read_bytes()) for path in copy.rglob("*") if path.is_file()}
    report = fetch_corpus(copy, base_url=mirror.base_url)
    assert report.ok and mirror.requests == []
    assert {path: (path.stat().st_mtime_ns, path.read_bytes()) for path in copy.rglob("*") if path.is_file()} == before


def test_the_report_line_counts_each_kind():
    report = FetchReport(Path("/x"), [
        corpus_download.Outcome("a", "template", "fetched"),
        corpus_download.Outcome("b", "template", "failed", "HTTP 404"),
        corpus_download.Outcome("c", "response template", "present"),
    ])
    assert report.line() == "corpus: 1 of 2 templates and 1 of 1 response templates fetched into /x; failed: b (HTTP 404)"


def test_the_list_ships_in_the_wheel():
    # tests/test_packaging.py builds the wheel; here only the setting that puts the list in it.
    import tomllib

    config = tomllib.loads((Path(corpus_fetch.__file__).parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert "corpus_list.json" in config["tool"]["setuptools"]["package-data"]["templatestudio"]
    assert corpus_list.LIST_PATH.parent == Path(corpus_list.__file__).parent
