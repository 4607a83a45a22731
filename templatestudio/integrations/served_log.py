"""The serving integrations' one logger.

A child of vLLM's logger (``vllm.templatestudio``), so that inside a vLLM
server the plugin's lines land in the server log in vLLM's format and at
its level; outside vLLM it is an ordinary logger. Every module of
``templatestudio.integrations`` logs through this object.
"""

from __future__ import annotations

import logging

__all__ = ["logger"]

logger = logging.getLogger("vllm.templatestudio")
