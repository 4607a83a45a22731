"""tests/wallclock holds the checks that read a clock, and runs as its own step.

A wall-clock bound or ratio measures the machine as much as the code: a
second test run beside it stretches the clock, never the work. The default
run (``make test``, a plain ``pytest``) proves linearity by counted work
(``chars_examined``, characters decoded) and skips collecting this folder;
``make bench-smoke`` runs it with ``TEMPLATESTUDIO_WALLCLOCK=1``, after
``make test`` in CI (``.ci/run``), and retries a failed run before it fails.
"""

from __future__ import annotations

import os

if os.environ.get("TEMPLATESTUDIO_WALLCLOCK") != "1":
    # The default run: these read the clock and run as their own step.
    collect_ignore_glob = ["test_*.py"]
