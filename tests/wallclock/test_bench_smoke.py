"""The benchmark at CI size: each ratio goal of issue 16 must hold within 2x.

A ratio of two wall-clock measurements: it runs in ``make bench-smoke``
(``TEMPLATESTUDIO_WALLCLOCK=1``, see ``tests/wallclock/conftest.py``), a CI
step of its own after ``make test`` that retries a failed run, never in
``make test``.

``bench/measure.py`` runs at ``SMOKE`` sizes (seconds, no vLLM, no corpus
scan) and every goal that is a ratio between two measurements of the same
run is judged with 2x slack: a speed-up goal of 2x must measure at least
1x, a growth limit of 4.4x at most 8.8x. Absolute rates (MB/s, the corpus
scan's seconds) depend on the machine and are judged only by ``make bench``.

A goal the readers miss even with the slack is not loosened: it is listed in
``NOT_MET`` and its test is a strict xfail, so it shows in every run and
turns into a failure the day it is met (then delete its entry). Every goal
is a plain test at this stop: the streams against ResponseParser, once at
the edge of the slack, measure about 2x now, twice what the slack needs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import measure  # noqa: E402

SLACK = 2.0
# Goals missed even with 2x slack, steadily (smoke sizes, repeated runs, 2 cores at load 2-7;
# bench/RESULTS.md has the full-size run). Strict: each fails the run the day it is met.
NOT_MET: dict[tuple[str, str], str] = {
    # (goal, format) -> why; none at this stop: every ratio holds within the slack at smoke sizes.
}


PLANNED = measure.planned_ratio_goals(measure.SMOKE)


def _marks(key: tuple[str, str]) -> list:
    return [pytest.mark.xfail(strict=True, reason=NOT_MET[key])] if key in NOT_MET else []


@pytest.fixture(scope="module")
def smoke() -> dict[tuple[str, str], measure.Goal]:
    results = measure.run_all(measure.SMOKE, vllm_python=None, corpus_scan=False)
    for table, rows in results.tables.items():
        assert all(row.get("ours ok", "yes") == "yes" for row in rows), (table, rows)  # our readers are never wrong
    return {(goal.what, goal.format): goal for goal in results.goals if goal.ratio}


def test_every_planned_goal_was_measured(smoke):
    assert set(smoke) == set(PLANNED)
    assert set(NOT_MET) <= set(PLANNED)  # no stale entry


@pytest.mark.parametrize(
    "key",
    [pytest.param(key, id=f"{key[1]}: {key[0]}", marks=_marks(key)) for key in PLANNED],
)
def test_ratio_goal_holds_within_twice_its_slack(smoke, key):
    goal = smoke[key]
    bound = goal.target / SLACK if goal.higher_is_better else goal.target * SLACK
    sign = ">=" if goal.higher_is_better else "<="
    assert goal.met(SLACK), f"{goal.format}: {goal.what} measured {goal.measured:.2f}, needs {sign} {bound:g}"
