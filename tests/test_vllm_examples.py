"""vLLM's example chat templates are detected as the format that answers for their parser (issue 23).

vLLM 0.33's source release ships ``examples/tool_chat_template_*.jinja``
for the models its parsers serve; ``make test`` unpacks them beside its
tool-parser tests (TEMPLATESTUDIO_VLLM_SDIST, read in place). For some of
the wires added from vLLM's documentation (Apertus, Granite 20B FC, Muse
Glimmer) they are the only published templates at hand: the corpus has
none. Each template here is probed like any template from a stranger, and
the format found must be the one EXPECTED names, which is also the format
whose ``vllm_parser`` holds the parser vLLM pairs with that template.

Not pinned: the examples no format is detected from (``glm4``,
``gemma3_pythonic``, ``llama3.2_pythonic``, ``mistral_parallel``,
``toolace``); the corpus's own copies of the pythonic ones are scanned by
tests/test_corpus_scan.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from templatestudio.detect import detect_format
from templatestudio.formats import FORMATS

SDIST = os.environ.get("TEMPLATESTUDIO_VLLM_SDIST", "")
EXAMPLES = Path(SDIST) / "examples"

# example template (its file name's tail) -> (the vLLM parser vLLM's docs pair it with, the format detected)
EXPECTED = {
    "apertus.jinja": ("apertus", "apertus"),
    "deepseekr1.jinja": ("deepseek_v3", "deepseek-v3"),
    "deepseekv3.jinja": ("deepseek_v3", "deepseek-v3"),
    "deepseekv31.jinja": ("deepseek_v31", "deepseek-v3.1"),
    "functiongemma.jinja": ("functiongemma", "functiongemma"),
    "gemma4.jinja": ("gemma4", "gemma4"),
    "granite.jinja": ("granite", "granite"),
    "granite_20b_fc.jinja": ("granite-20b-fc", "granite-20b-fc"),
    "hermes.jinja": ("hermes", "hermes"),
    "hunyuan_a13b.jinja": ("hunyuan_a13b", "apriel"),
    "internlm2_tool.jinja": ("internlm", "internlm2"),
    "llama3.1_json.jinja": ("llama3_json", "llama3-json"),
    "llama4_json.jinja": ("llama4_json", "llama3-json"),
    "llama4_pythonic.jinja": ("llama4_pythonic", "pythonic"),
    "mistral.jinja": ("mistral", "mistral"),
    "muse_glimmer.jinja": ("muse_glimmer", "muse-atem"),
    "phi4_mini.jinja": ("phi4_mini_json", "phi4-mini"),
    "qwen3coder.jinja": ("qwen3_coder", "qwen-xml"),
    "xlam_llama.jinja": ("xlam", "xlam"),
    "xlam_qwen.jinja": ("xlam", "xlam"),
}


@pytest.mark.parametrize("example", sorted(EXPECTED))
def test_a_vllm_example_template_is_detected_as_the_format_of_its_parser(example):
    path = EXAMPLES / f"tool_chat_template_{example}"
    if not path.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{path}: not found (make vllm-sdist unpacks vLLM's examples)")
        pytest.skip("set TEMPLATESTUDIO_VLLM_SDIST to an unpacked vLLM 0.33 source release")
    parser, name = EXPECTED[example]
    found = detect_format(path.read_text(encoding="utf-8"))
    assert found is not None and found.name == name
    assert parser in FORMATS[name].vllm_parser
