"""fetch_models.py --weights when the Hub is offline and the weights are not cached.

The test builds its own Hugging Face cache holding the course's tokenizer
files and no weights (links into the session's cache), forces offline mode,
and checks the one-line error and the exit status. It never downloads.
"""

from __future__ import annotations

from pathlib import Path

import huggingface_hub.constants as hub_constants
import pytest

import fetch_models
from templatestudio.families import LLAMA31


def cache_without_weights(source: Path, target: Path) -> None:
    """Mirror source's repos into target as links, leaving out *.safetensors."""
    for repo in source.glob("models--*"):
        for path in repo.rglob("*"):
            if path.is_dir() or path.suffix == ".safetensors" or "blobs" in path.parts:
                continue
            link = target / path.relative_to(source)
            link.parent.mkdir(parents=True, exist_ok=True)
            if path.parent.name == "refs":
                link.write_text(path.read_text())
            else:
                link.symlink_to(path.resolve())


@pytest.fixture
def offline_cache_without_weights(tmp_path, monkeypatch):
    source = Path(hub_constants.HF_HUB_CACHE)
    if not any(source.glob("models--Qwen--Qwen3-0.6B")):
        raise AssertionError(f"the Qwen3 tokenizer is not in {source}; run fetch_models.py first")
    cache_without_weights(source, tmp_path)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    return tmp_path


def test_weights_offline_and_uncached_fail_with_one_clear_line(
    offline_cache_without_weights, tokenizers, monkeypatch, capsys
):
    import templatestudio.render

    # The session already loaded every tokenizer; the report reuses them.
    by_repo = {tokenizer.name_or_path: tokenizer for tokenizer in tokenizers.values()}
    by_repo[LLAMA31] = templatestudio.render.load_tokenizer(LLAMA31)
    monkeypatch.setattr(templatestudio.render, "load_tokenizer", by_repo.__getitem__)
    assert fetch_models.main(["--weights"]) == 1
    out, err = capsys.readouterr()
    # The tokenizers were found, so the usual report comes first.
    assert "Qwen/Qwen3-0.6B template: 4168 chars" in out
    assert err == (
        "Qwen/Qwen3-0.6B weights are not in the Hugging Face cache and the Hub is offline; "
        "run fetch_models.py --weights once with network access (HF_HUB_OFFLINE unset)\n"
    )

