"""The one timing rule the benchmark scripts share."""

from __future__ import annotations

import gc
import time


def best_seconds(action, *, runs: int = 3, budget: float = 0.5, cap: int | None = None) -> float:
    """Best single-run time of action over at least runs runs.

    Cheap actions are repeated until about budget seconds are spent (at most
    cap runs when cap is given); a run that alone takes longer than budget
    is not repeated. The garbage collector is off while timing, as timeit
    does, so a collection triggered by earlier work is not charged to a run.
    """
    best, spent, count = float("inf"), 0.0, 0
    enabled = gc.isenabled()
    gc.disable()
    try:
        while count < runs or (spent < budget and (cap is None or count < cap)):
            started = time.perf_counter()
            action()
            elapsed = time.perf_counter() - started
            best, spent, count = min(best, elapsed), spent + elapsed, count + 1
            if elapsed > budget:
                break
    finally:
        if enabled:
            gc.enable()
    return best
