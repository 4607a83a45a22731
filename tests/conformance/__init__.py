"""The CanIToolCall conformance suite, run through templatestudio's production reader and stream.

``adapter`` holds the suite's adapter for templatestudio; ``tests/test_canitoolcall.py``
runs it under pytest and ``conformance.py`` prints the suite's table.
``plugin_adapter`` replays the same fixtures through templatestudio's vLLM tool
parser inside vLLM's parser machinery (it imports vLLM: ``.venv-vllm`` only);
``tests/vllm/test_canitoolcall_plugin.py`` and ``conformance.py --layer plugin``
run it.
"""
