"""The file vLLM loads with ``--tool-parser-plugin PATH``: importing it registers ``templatestudio`` twice.

Once as a tool parser (``--tool-call-parser templatestudio``), once as a
reasoning parser (``--reasoning-parser templatestudio``); the same path may
also be given to ``--reasoning-parser-plugin``.

vLLM imports a plugin path as a module named after the file's stem, so this
file cannot be called ``vllm.py`` (that name would replace vLLM itself in
``sys.modules``); the parser lives in ``templatestudio.integrations.vllm``.
"""

from templatestudio.integrations.vllm import TemplateStudioToolParser  # noqa: F401 - registers the parser
from templatestudio.integrations.vllm_reasoning import TemplateStudioReasoningParser  # noqa: F401 - and this one
