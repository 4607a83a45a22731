"""Shared fixtures: tokenizers from the Hugging Face cache, the template corpus.

Tests load tokenizers exactly as users do, with
``AutoTokenizer.from_pretrained(repo_id)``. CI and offline machines seed the
cache first (``make test`` does it from ``../shared/hub``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

from families import FAMILIES, GEMMA4  # noqa: E402

ALL_FAMILIES = {**FAMILIES, "gemma4": GEMMA4}


@pytest.fixture(scope="session")
def tokenizers():
    """Every course family's tokenizer, keyed by family name, loaded once."""
    from templatestudio.render import load_tokenizer

    return {family: load_tokenizer(model_id) for family, model_id in ALL_FAMILIES.items()}


@pytest.fixture(scope="session")
def qwen3(tokenizers):
    return tokenizers["qwen3"]


@pytest.fixture(scope="session")
def gemma4(tokenizers):
    return tokenizers["gemma4"]
