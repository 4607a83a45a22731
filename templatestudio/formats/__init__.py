"""The registry of tool-call wire formats, one module per format.

Each module defines ``FORMAT``, a ``templatestudio.wire.base.Format``
holding everything the package knows about that wire shape. Adding a format
means writing its module and naming it in ``_MODULES``; the registry test
(``tests/test_registry.py``) fails when a format lacks any part.
"""

from __future__ import annotations

from templatestudio.formats import fenced_json, gemma4, hermes, llama3_json, mistral, pythonic, qwen_xml
from templatestudio.formats import deepseek_dsml, deepseek_v3, deepseek_v31, kimi_k2
from templatestudio.formats import deepseek_v4, deepseek_v41
from templatestudio.formats import kimi_k3
from templatestudio.formats import apertus, granite_20b_fc, olmo3, step3
from templatestudio.formats import plamo3
from templatestudio.formats import inkling
from templatestudio.formats import command_r7b, glm_xml, granite, harmony, minimax_xml, seed_oss
from templatestudio.formats import apriel, command_r_plus, firefunction_v2, functionary_v31, gigachat
from templatestudio.formats import functiongemma, internlm2, phi4_mini, solar_open, xlam
from templatestudio.formats import hy_v3, hy_v4, k2_horizon, longcat
from templatestudio.formats import dots, minicpm5, minimax_m3, muse_atem
from templatestudio.wire.base import Format

_MODULES = (hermes, fenced_json, qwen_xml, llama3_json, mistral, gemma4, pythonic,
            deepseek_v3, deepseek_v31, deepseek_dsml, kimi_k2,
            glm_xml, harmony, minimax_xml, seed_oss, command_r7b, granite,
            apriel, command_r_plus, gigachat, functionary_v31, firefunction_v2,
            solar_open, functiongemma, internlm2, phi4_mini, xlam)
_MODULES += (deepseek_v4, deepseek_v41)
_MODULES += (kimi_k3,)
_MODULES += (apertus, granite_20b_fc, olmo3, step3)
_MODULES += (plamo3,)
_MODULES += (inkling,)
_MODULES += (longcat, hy_v3, hy_v4, k2_horizon)
_MODULES += (dots, minicpm5, minimax_m3, muse_atem)

FORMATS: dict[str, Format] = {module.FORMAT.name: module.FORMAT for module in _MODULES}


class UnknownFormat(ValueError):
    """A format name the registry does not hold."""


def get_format(name: str) -> Format:
    """The registered format called name; UnknownFormat lists the known names."""
    try:
        return FORMATS[name]
    except KeyError:
        known = ", ".join(FORMATS)
        raise UnknownFormat(f"unknown tool-call format {name!r}; known formats: {known}") from None


__all__ = ["FORMATS", "Format", "UnknownFormat", "get_format"]
