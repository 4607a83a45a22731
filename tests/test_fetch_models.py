"""fetch_models.py: tokenizer files only, a report from the cache, one clear line when offline."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from huggingface_hub import constants

import fetch_models
from families import FAMILIES, GEMMA4
from templatestudio.families import LLAMA31

ROOT = Path(__file__).resolve().parent.parent
COURSE_IDS = [*FAMILIES.values(), GEMMA4, LLAMA31]


def test_model_ids_are_the_four_table_families_in_table_order_then_llama_31():
    assert fetch_models.model_ids() == [
        "Qwen/Qwen3-0.6B",
        "NousResearch/Meta-Llama-3-8B-Instruct",
        "unsloth/gemma-3-1b-it",
        "google/gemma-4-E2B-it",
        LLAMA31,  # written once, in templatestudio.families (tests/test_families.py)
    ]


def test_only_tokenizer_files_are_requested():
    assert "tokenizer_config.json" in fetch_models.TOKENIZER_FILES
    weights = re.compile(r"\.(safetensors|bin|pt|gguf)$")
    assert not [name for name in fetch_models.TOKENIZER_FILES if weights.search(name) or "*" in name]


def test_fetch_tokenizer_returns_the_cached_folder():
    folder = Path(fetch_models.fetch_tokenizer(FAMILIES["qwen3"]))
    assert (folder / "tokenizer_config.json").is_file()
    assert not list(folder.glob("*.safetensors"))


def test_prints_one_line_per_model_from_the_cache(tokenizers, monkeypatch, capsys):
    import templatestudio.render

    by_repo = {tokenizer.name_or_path: tokenizer for tokenizer in tokenizers.values()}
    by_repo[LLAMA31] = templatestudio.render.load_tokenizer(LLAMA31)
    # the session already loaded every tokenizer with load_tokenizer; reuse them
    monkeypatch.setattr(templatestudio.render, "load_tokenizer", by_repo.__getitem__)
    assert fetch_models.main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{model_id} template: {len(by_repo[model_id].chat_template)} chars" for model_id in COURSE_IDS]
    # the three faithful templates have the course's lengths; Gemma 4's depends on the source
    assert lines[:3] == [
        "Qwen/Qwen3-0.6B template: 4168 chars",
        "NousResearch/Meta-Llama-3-8B-Instruct template: 389 chars",
        "unsloth/gemma-3-1b-it template: 1532 chars",
    ]


def run_offline(hf_home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE")}
    env.update(HF_HOME=str(hf_home), HF_HUB_OFFLINE="1", TRANSFORMERS_NO_ADVISORY_WARNINGS="1")
    return subprocess.run(
        [sys.executable, "fetch_models.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_offline_with_an_empty_cache_names_the_first_repo(tmp_path):
    result = run_offline(tmp_path)
    assert result.returncode != 0
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "Qwen/Qwen3-0.6B is not in the Hugging Face cache and the Hub is offline; "
        "run fetch_models.py once with network access (HF_HUB_OFFLINE unset)"
    ]


def test_offline_with_a_partial_cache_names_the_missing_repo(tmp_path):
    qwen3_entry = Path(constants.HF_HUB_CACHE) / "models--Qwen--Qwen3-0.6B"
    if not qwen3_entry.is_dir():
        pytest.skip(f"the Qwen3 tokenizer is not in {constants.HF_HUB_CACHE}; run fetch_models.py first")
    (tmp_path / "hub").mkdir()
    (tmp_path / "hub" / qwen3_entry.name).symlink_to(qwen3_entry)
    result = run_offline(tmp_path)
    assert result.returncode != 0
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("NousResearch/Meta-Llama-3-8B-Instruct is not in the Hugging Face cache")
