"""``python -m templatestudio check``: a repo id, a folder, a .jinja file, --json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from huggingface_hub import hf_hub_download

from templatestudio.__main__ import main

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
    model = tmp_path / "Llama-3.1-8B-Instruct"
    model.mkdir()
    config = Path(hf_hub_download("unsloth/Llama-3.1-8B-Instruct", "tokenizer_config.json"))
    (model / "tokenizer_config.json").write_text(config.read_text(encoding="utf-8"))
    assert main(["check", str(model)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "Llama-3.1-8B-Instruct True   True   llama3-json  llama3-json parser"
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
        },
        {
            "template": "unsloth/gemma-3-1b-it",
            "renders_tools": False,
            "call_survives": False,
            "format": None,
            "parse_with": "none: renders no tools",
            "text_values": [],
            "error": None,
        },
    ]


def test_check_reports_a_template_error(tmp_path, capsys):
    (tmp_path / "refuses.jinja").write_text("{{ raise_exception('no conversations, please') }}")
    assert main(["check", "--json", str(tmp_path / "refuses.jinja")]) == 0
    (row,) = json.loads(capsys.readouterr().out)["templates"]
    assert row["parse_with"] == "none: the template errors"
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
