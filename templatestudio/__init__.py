"""templatestudio: tool calling through a model's own Hugging Face chat template.

The course in ``notebooks/`` builds this package one step at a time:

- ``messages``  the input contract every render checks first;
- ``render``    apply_chat_template with tools, plus the comparison helpers;
- ``tools``     tool schemas, call/result builders, probes and the way out.
"""

__version__ = "0.1.0"
