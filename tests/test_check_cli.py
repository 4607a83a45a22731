"""``python -m templatestudio check``: a repo id, a folder, a .jinja file, --json."""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from huggingface_hub import hf_hub_download
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from templatestudio.__main__ import build_parser, deadline_seconds, main, memory_mib
from templatestudio.families import LLAMA31
from templatestudio.sandbox import MAX_DEADLINE, check_limits, run_sandboxed
from templatestudio.template_errors import advice_for

HERMES_TEMPLATE = (
    "{%- if tools %}<|tools|>{% for tool in tools %}{{ tool.function.name }} {% endfor %}<|end|>{% endif -%}"
    "{%- for message in messages -%}<|{{ message.role }}|>"
    "{%- if message.tool_calls -%}{%- for call in message.tool_calls -%}"
    '<tool_call>{"name": "{{ call.function.name }}", '
    '"arguments": {{ call.function.arguments | tojson }}}</tool_call>'
    "{%- endfor -%}{%- else -%}{{ message.content }}{%- endif -%}<|end|>{%- endfor -%}"
    "{%- if add_generation_prompt %}<|assistant|>{% endif -%}"
)
PLAIN_TEMPLATE = (
    "{%- for message in messages -%}<|{{ message.role }}|>{{ message.content }}<|end|>{%- endfor -%}"
    "{%- if add_generation_prompt %}<|assistant|>{% endif -%}"
)


def test_check_a_repo_id_from_the_cache(capsys):
    assert main(["check", "Qwen/Qwen3-0.6B", "google/gemma-4-E2B-it"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "template              tools  call   format       parse with",
        "Qwen/Qwen3-0.6B       True   True   hermes       hermes parser",
        "google/gemma-4-E2B-it True   True   gemma4       response template",
    ]


def test_check_a_jinja_file_and_a_folder_of_them(tmp_path, capsys):
    (tmp_path / "hermes_mini.jinja").write_text(HERMES_TEMPLATE)
    (tmp_path / "plain.jinja").write_text(PLAIN_TEMPLATE)
    assert main(["check", str(tmp_path / "hermes_mini.jinja")]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "hermes_mini True   True   hermes       hermes parser"
    )
    assert main(["check", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "hermes_mini True   True   hermes       hermes parser",
        "plain       False  False  -            none: renders no tools",
    ]


def test_check_a_model_folder(tmp_path, capsys):
    # A downloaded model folder: its tokenizer config, no vocabulary.
    model = tmp_path / LLAMA31.split("/")[1]
    model.mkdir()
    config = Path(hf_hub_download(LLAMA31, "tokenizer_config.json"))
    (model / "tokenizer_config.json").write_text(config.read_text(encoding="utf-8"))
    assert main(["check", str(model)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        f"{model.name} True   True   llama3-json  llama3-json parser"
    )


def test_check_json_output(tmp_path, capsys):
    (tmp_path / "hermes_mini.jinja").write_text(HERMES_TEMPLATE)
    assert main(["check", "--json", str(tmp_path / "hermes_mini.jinja"), "unsloth/gemma-3-1b-it"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["failures"] == []
    assert report["templates"] == [
        {
            "template": "hermes_mini",
            "renders_tools": True,
            "call_survives": True,
            "format": "hermes",
            "parse_with": "hermes parser",
            "text_values": [],
            "error": None,
            "declaration": None,
        },
        {
            "template": "unsloth/gemma-3-1b-it",
            "renders_tools": False,
            "call_survives": False,
            "format": None,
            "parse_with": "none: renders no tools",
            "text_values": [],
            "error": None,
            "declaration": None,
        },
    ]


def test_check_reports_a_template_error(tmp_path, capsys):
    (tmp_path / "refuses.jinja").write_text("{{ raise_exception('no conversations, please') }}")
    assert main(["check", "--json", str(tmp_path / "refuses.jinja")]) == 0
    (row,) = json.loads(capsys.readouterr().out)["templates"]
    assert row["parse_with"] == f"none: template error: {row['error']} — {advice_for((row['error'],))}"
    assert row["error"] == "TemplateError: no conversations, please"


def test_check_a_target_that_cannot_be_loaded_fails(tmp_path, capsys):
    (tmp_path / "hermes_mini.jinja").write_text(HERMES_TEMPLATE)
    status = main(["check", str(tmp_path / "hermes_mini.jinja"), "nobody/no-such-model"])
    captured = capsys.readouterr()
    assert status == 1
    assert "hermes_mini" in captured.out
    assert captured.err.startswith("nobody/no-such-model: cannot load a chat template (")


def test_check_without_targets_runs_the_course_families():
    env = {**os.environ, "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "templatestudio", "check"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert result.stdout.splitlines() == [
        "template                              tools  call   format       parse with",
        "Qwen/Qwen3-0.6B                       True   True   hermes       hermes parser",
        "NousResearch/Meta-Llama-3-8B-Instruct False  False  -            none: renders no tools",
        "unsloth/gemma-3-1b-it                 False  False  -            none: renders no tools",
        "google/gemma-4-E2B-it                 True   True   gemma4       response template",
    ]


# --- bad option values: one argparse line and exit status 2, never a traceback -------------

BAD_NUMBERS = [
    "inf", "-inf", "Infinity", "nan", "NaN", "0", "-0", "-1", "-1e-9", "", " ", "abc", "1_0",
    "١٠", "0x10", "1e400", "1,5", "1e999999",
]
BAD_DEADLINES = [*BAD_NUMBERS, "1e7", str(MAX_DEADLINE + 1)]
BAD_MEMORY = [*BAD_NUMBERS, "1e-9", "0.5", "1e30", str(2**40 + 1)]


def check_usage_error(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(["check", *argv])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    *_, last = err.strip().splitlines()
    return last


@pytest.mark.parametrize("value", BAD_DEADLINES)
def test_a_bad_deadline_is_one_argparse_error(capsys, value):
    line = check_usage_error(capsys, f"--deadline={value}", "Qwen/Qwen3-0.6B")
    assert line == (
        "python -m templatestudio check: error: argument --deadline: "
        f"must be a number of seconds above 0 and at most 1,000,000, got {value!r}"
    )


@pytest.mark.parametrize("value", BAD_MEMORY)
def test_a_bad_memory_limit_is_one_argparse_error(capsys, value):
    line = check_usage_error(capsys, f"--memory-limit={value}", "Qwen/Qwen3-0.6B")
    assert line == (
        "python -m templatestudio check: error: argument --memory-limit: "
        f"must be a number of MiB at least 1 and at most 1,099,511,627,776, got {value!r}"
    )


def test_a_bad_value_written_as_a_separate_argument_is_refused_too(capsys):
    assert check_usage_error(capsys, "--deadline", "inf", "x").endswith("got 'inf'")
    assert "expected one argument" in check_usage_error(capsys, "--deadline", "-inf", "x")


@settings(max_examples=300)
@given(st.one_of(st.text(max_size=12), st.floats().map(repr), st.integers().map(str)))
def test_option_values_are_in_range_or_refused_in_one_line(text):
    for parse, low, high in [(deadline_seconds, 0, MAX_DEADLINE), (memory_mib, 1, 2**40)]:
        try:
            value = parse(text)
        except argparse.ArgumentTypeError as error:
            assert "\n" not in str(error) and str(error).endswith(f"got {text!r}")
            continue
        assert math.isfinite(value) and low <= value <= high and (value > 0)
        assert float(text) == value  # what was written, not a reading of it


def test_good_option_values_are_taken():
    args = build_parser().parse_args(["check", "--deadline", "0.5", "--memory-limit", "1", "x"])
    assert (args.deadline, args.memory_limit) == (0.5, 1.0)
    args = build_parser().parse_args(["check", "--deadline", " 1e6 ", "--memory-limit", "1099511627776"])
    assert (args.deadline, args.memory_limit) == (1e6, 2.0**40)


def test_the_sandbox_refuses_limits_it_cannot_honour():
    # The CLI's bounds are the sandbox's own.
    for deadline in (float("inf"), float("nan"), 0, -1, MAX_DEADLINE * 2):
        with pytest.raises(ValueError, match="^deadline must be a positive number of seconds"):
            check_limits(deadline, None)
    with pytest.raises(TypeError, match="^deadline must be a number of seconds, got str"):
        check_limits("10", None)
    with pytest.raises(TypeError, match="^memory_limit must be an int"):
        check_limits(1.0, 1e30)
    check_limits(MAX_DEADLINE, 2**100)  # a cap above the kernel's is lowered to its maximum


def test_a_memory_cap_above_what_the_kernel_takes_still_runs():
    assert run_sandboxed(lambda: "ran", deadline=30, memory_limit=2**100) == "ran"


# --- bad targets: one clear line each on stderr, exit status 1 ------------------------------

SYNTAX_ERRORS = ["{% if %}", "{{ }", "{% for x in %}{% endfor %}", "{% endif %}", "{{ messages[ }}", "{% set %}"]


def bad_file(draw_kind: str, data: bytes, tmp_path: Path) -> tuple[Path, str]:
    """A file of one bad kind, and the reason check must give for it."""
    path = tmp_path / f"{draw_kind}.jinja"
    path.write_bytes(data)
    return path, {
        "empty": f"{path}: the file is empty",
        "whitespace": f"{path}: the file is empty but for whitespace",
        "nul": f"{path}: holds NUL bytes at offset {data.find(0)}: a binary file, not a template",
    }.get(draw_kind, "")


def run_targets(capsys, *targets: str) -> tuple[int, list[str], list[str]]:
    status = main(["check", *targets])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return status, captured.out.splitlines(), captured.err.splitlines()


# capsys is read (and so emptied) once per example.
PER_EXAMPLE_CAPSYS = {"suppress_health_check": [HealthCheck.function_scoped_fixture]}


@settings(max_examples=40, **PER_EXAMPLE_CAPSYS)
@given(
    kind=st.sampled_from(["empty", "whitespace", "nul"]),
    text=st.text(alphabet=" \t\r\n", min_size=1, max_size=5),
    data=st.binary(max_size=40),
    at=st.integers(0, 40),
)
def test_an_empty_or_binary_file_is_one_line_and_a_failure(tmp_path_factory, capsys, kind, text, data, at):
    tmp_path = tmp_path_factory.mktemp("bad")
    content = {"empty": b"", "whitespace": text.encode(), "nul": data[:at] + b"\0" + data[at:]}[kind]
    path, reason = bad_file(kind, content, tmp_path)
    (tmp_path / "hermes_mini.jinja").write_text(HERMES_TEMPLATE)
    status, out, err = run_targets(capsys, str(path), str(tmp_path / "hermes_mini.jinja"))
    assert status == 1 and err == [reason]
    assert out[1] == "hermes_mini True   True   hermes       hermes parser"  # the rest is still checked


@settings(max_examples=40, **PER_EXAMPLE_CAPSYS)
@given(data=st.binary(min_size=1, max_size=40).filter(lambda b: b"\0" not in b))
def test_a_file_that_is_not_utf8_is_one_line_and_a_failure(tmp_path_factory, capsys, data):
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        offset = error.start
    else:
        data, offset = data + b"\xff", len(data)  # make it undecodable
    path = tmp_path_factory.mktemp("bad") / "latin.jinja"
    path.write_bytes(data)
    status, _, err = run_targets(capsys, str(path))
    assert status == 1 and err == [f"{path}: not UTF-8 text (byte 0x{data[offset]:02x} at offset {offset})"]


@pytest.mark.parametrize("source", SYNTAX_ERRORS)
def test_a_jinja_syntax_error_is_one_line_and_a_failure(tmp_path, capsys, source):
    (tmp_path / "broken.jinja").write_text(source)
    status, out, err = run_targets(capsys, str(tmp_path / "broken.jinja"))
    assert status == 1
    assert out[1].startswith("broken ") and out[1].endswith("not valid Jinja; fix its source at the line the message names")
    (line,) = err
    assert line.startswith("broken: not a Jinja template (syntax error: ") and line.endswith(")")


@pytest.mark.parametrize(
    "target", ["./nope.jinja", "nope.jinja", "/no/such/folder", "../no/such", "a/b/c", "with space", "~/x.json"]
)
def test_a_missing_local_path_says_so(tmp_path, capsys, target):
    status, out, err = run_targets(capsys, target)
    assert (status, out, err) == (1, [], [f"no such file or directory: {target}"])


def test_a_folder_without_templates_and_an_unreadable_file(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    folder = tmp_path / "odd"
    (folder / "sub.jinja").mkdir(parents=True)  # a folder where a template file should be
    status, out, err = run_targets(capsys, str(empty), str(folder))
    assert status == 1 and out == []
    assert err == [
        f"{empty}: no tokenizer_config.json or .jinja files in this folder",
        f"{folder / 'sub.jinja'}: cannot be read (Is a directory)",
    ]


@pytest.mark.parametrize(
    "config,reason",
    [
        ("{", "not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"),
        ("[1]", "must hold a JSON object, got list"),
        ("[" * 100_000, "not valid JSON (nested too deeply to read)"),
    ],
)
def test_a_broken_tokenizer_config_is_one_line(tmp_path, capsys, config, reason):
    model = tmp_path / "model"
    model.mkdir()
    (model / "tokenizer_config.json").write_text(config)
    status, out, err = run_targets(capsys, str(model))
    assert (status, out, err) == (1, [], [f"{model / 'tokenizer_config.json'}: {reason}"])


def test_an_empty_chat_template_in_a_config_is_one_line(tmp_path, capsys):
    model = tmp_path / "model"
    model.mkdir()
    (model / "tokenizer_config.json").write_text(json.dumps({"chat_template": "  "}))
    status, _, err = run_targets(capsys, str(model))
    assert (status, err) == (1, ["model: its chat template is empty"])


# Bad members a folder of templates may hold, and the line each gets.
def _bad_member(kind: str, path: Path) -> str:
    if kind == "empty":
        path.write_bytes(b"")
        return f"{path}: the file is empty"
    if kind == "binary":
        path.write_bytes(b"\x00\x01")
        return f"{path}: holds NUL bytes at offset 0: a binary file, not a template"
    if kind == "folder":
        path.mkdir()
        return f"{path}: cannot be read (Is a directory)"
    if kind == "loop":
        path.symlink_to(path)
        return f"{path}: cannot be read (Too many levels of symbolic links)"
    if kind == "fifo":
        os.mkfifo(path)
        return f"{path}: not a regular file (a pipe, socket or device)"
    path.symlink_to(path.parent / "nowhere")  # dangling
    return f"{path}: a symbolic link to {path.parent / 'nowhere'}, which does not exist"


@settings(max_examples=25, deadline=None, **PER_EXAMPLE_CAPSYS)
@given(st.lists(st.sampled_from(["good", "plain", "empty", "binary", "folder", "dangling", "loop", "fifo"]), min_size=1,
                max_size=6))
def test_each_file_of_a_folder_is_checked_alone(tmp_path_factory, capsys, members):
    # One bad file in a folder of templates used to end the folder's check with its one line.
    folder = tmp_path_factory.mktemp("templates")
    rows, lines = [], []
    for index, kind in enumerate(members):
        path = folder / f"t{index}.jinja"
        if kind in ("good", "plain"):
            path.write_text(HERMES_TEMPLATE if kind == "good" else PLAIN_TEMPLATE)
            rows.append(f"t{index}")
        else:
            lines.append(_bad_member(kind, path))
    status, out, err = run_targets(capsys, str(folder))
    assert status == (1 if lines else 0)
    assert err == lines
    assert [line.split()[0] for line in out[1:]] == rows
    for line, (index, kind) in zip(lines, [(i, k) for i, k in enumerate(members) if k not in ("good", "plain")]):
        if kind != "folder":  # (named alone, a folder is a target of its own kind)
            # Named alone, each bad file gets the same line.
            assert run_targets(capsys, str(folder / f"t{index}.jinja")) == (1, [], [line]), kind


def test_a_response_template_does_not_hide_an_error_or_count_when_empty(tmp_path, capsys):
    model = tmp_path / "model"
    model.mkdir()
    config = {"chat_template": "{{ raise_exception('no tools for you') }}", "response_template": {"type": "object"}}
    (model / "tokenizer_config.json").write_text(json.dumps(config))
    status, out, _ = run_targets(capsys, str(model))
    assert status == 0 and out[1].startswith("model    False  False  -            none: template error: TemplateError: no "
                                             "tools for you — ")
    for empty in ("", {}, [], None):
        (model / "tokenizer_config.json").write_text(json.dumps({"chat_template": HERMES_TEMPLATE,
                                                                 "response_template": empty}))
        assert run_targets(capsys, str(model))[1][1] == "model    True   True   hermes       hermes parser"


def test_the_current_folder_is_named_by_itself_and_an_empty_target_is_refused(tmp_path, capsys, monkeypatch):
    model = tmp_path / "my-model"
    model.mkdir()
    (model / "chat_template.jinja").write_text(HERMES_TEMPLATE)
    monkeypatch.chdir(model)
    for target in (".", "./", str(model) + "/"):
        assert run_targets(capsys, target)[1][1] == "my-model True   True   hermes       hermes parser"
    assert run_targets(capsys, "") == (1, [], ["an empty target names no file, folder or Hub repo (use . for this folder)"])


@pytest.mark.parametrize("chat_template,line", [
    (["{{ x }}"], "its chat_template list holds entries that are not {name, template} objects"),
    ([{"name": "rag", "template": "{{ x }}"}], "its chat_template list names ['rag'], neither 'tool_use' nor 'default'"),
    ({"default": "{{ x }}"}, "its chat_template is a JSON object, not a template string or a list of named templates"),
    (7, "its chat_template is a JSON number, not a template string or a list of named templates"),
    (True, "its chat_template is a JSON boolean, not a template string or a list of named templates"),
])
def test_a_chat_template_of_another_shape_is_one_line(tmp_path, capsys, chat_template, line):
    model = tmp_path / "model"
    model.mkdir()
    (model / "tokenizer_config.json").write_text(json.dumps({"chat_template": chat_template}))
    assert run_targets(capsys, str(model)) == (1, [], [f"model: {line}"])


def test_a_tokenizer_config_under_another_name_is_read_as_a_config(tmp_path, capsys):
    (tmp_path / "qwen-like.json").write_text(json.dumps({"chat_template": HERMES_TEMPLATE, "eos_token": "<|end|>"}))
    assert run_targets(capsys, str(tmp_path / "qwen-like.json"))[1][1] == "qwen-like True   True   hermes       hermes parser"
