"""The CanIToolCall conformance table for templatestudio, beside the engines' published figures.

Runs the suite's own runner (``canitoolcall.runner.run``) with the adapter in
``tests/conformance/adapter.py``, which reads each fixture through
templatestudio's production reader and stream, and prints pass / soft pass /
fail / error / unsupported per model family and overall. ``make conformance``
runs it with the offline Hugging Face cache.

``--layer plugin`` replays the same fixtures one layer up, through
templatestudio's vLLM tool parser inside vLLM's own parser machinery
(``tests/conformance/plugin_adapter.py``); the suite's worker then runs under
``.venv-vllm``'s interpreter (``make vllm``), the runner wherever this runs.
``make conformance-plugin`` runs it.

    python conformance.py                      # every fixture, the suite's default strategies
    python conformance.py --layer plugin       # the vLLM plugin layer (needs .venv-vllm)
    python conformance.py --family glm --failures
    python conformance.py --strategy one --strategy token --json results.json
    python conformance.py --layer plugin --summary tests/vllm/fixtures/conformance_plugin.json

``--summary`` writes the counts alone (``summary_of``): what notebook 24 charts
for the plugin layer, which it cannot run (vLLM is not in the course's
environment). ``table`` and ``chart`` take a run or such a summary.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from canitoolcall.chunking import parse_strategies
from canitoolcall.results import RunResults, Status
from canitoolcall.runner import RunConfig, run

ROOT = Path(__file__).resolve().parent
# layer -> (the suite's adapter spec, the interpreter its worker runs under; None: this one)
LAYERS = {
    "reader": ("tests.conformance.adapter:TemplatestudioAdapter", None),
    "plugin": ("tests.conformance.plugin_adapter:PluginAdapter", ROOT / ".venv-vllm" / "bin" / "python"),
}
COLUMNS = ("pass", "soft_pass", "fail", "error", "unsupported")
# The adapters' engine names (their ``name`` class attribute), to say which layer a run measured;
# plugin_adapter imports vLLM, so the names are written here, and the tests check them.
ENGINE_LAYERS = {"templatestudio": "reader", "templatestudio-vllm-plugin": "plugin"}

# The engines' figures as published in the canitoolcall 0.1.1 README ("What we
# found", snapshot 2026-09-25): (version, fixtures, pass, soft pass, fail, unsupported).
PUBLISHED = (
    ("vLLM", "0.30.0", 469, 268, 86, 115, 0),
    ("llama.cpp", "a25c9865", 469, 278, 46, 114, 31),
    ("SGLang", "0.5.20", 469, 189, 62, 197, 21),
    ("Ollama", "7af39318", 469, 224, 10, 27, 208),
    ("HF transformers", "5.17.0", 469, 33, 7, 8, 421),
)
PUBLISHED_SOURCE = "canitoolcall 0.1.1 README (PyPI), table 'What we found', snapshot 2026-09-25"


def summary_of(results: RunResults) -> dict:
    """The run's counts and what they were measured with, as plain JSON values.

    layer, strategies, the canitoolcall and templatestudio versions, vLLM's
    version where the engine reported one (the plugin layer), and
    ``results.summary()``'s ``by_family`` and ``totals``. Nothing per case:
    ``--json`` writes the whole run. A run of an adapter not in
    ``ENGINE_LAYERS`` raises ValueError.
    """
    if results.engine.name not in ENGINE_LAYERS:
        raise ValueError(f"a run of engine {results.engine.name!r}: "
                         f"no layer of conformance.py ({sorted(ENGINE_LAYERS)})")
    counts = results.summary()
    summary = {
        "layer": ENGINE_LAYERS[results.engine.name],
        "strategies": list(results.run.strategies),
        "canitoolcall": results.canitoolcall_version,
        "templatestudio": results.engine.version,
        "by_family": counts["by_family"],
        "totals": counts["totals"],
    }
    if "vllm" in results.engine.details:
        summary["vllm"] = str(results.engine.details["vllm"])
    return summary


def write_summary(summary: dict, path: Path) -> None:
    """summary as JSON at path: sorted keys, indent 1, a final newline (the folder must exist)."""
    path.write_text(json.dumps(summary, sort_keys=True, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def counts_of(results: RunResults | dict) -> dict:
    """The summary of a run, or a summary itself (one ``summary_of`` wrote, or loaded from its JSON).

    A dict without ``by_family`` and ``totals`` raises ValueError; one whose
    counts lack a column of COLUMNS raises KeyError in the callers, naming it.
    """
    if isinstance(results, RunResults):
        return summary_of(results)
    missing = [key for key in ("by_family", "totals") if key not in results]
    if missing:
        raise ValueError(f"not a conformance summary: no {' and no '.join(missing)} (keys: {sorted(results)})")
    return results


def table(results: RunResults | dict) -> str:
    """Counts per family and overall, from a run or its summary."""
    summary = counts_of(results)
    rows = [("family", *COLUMNS, "total")]
    for family, counts in summary["by_family"].items():
        rows.append((family, *(str(counts[c]) for c in COLUMNS), str(sum(counts.values()))))
    totals = summary["totals"]
    rows.append(("overall", *(str(totals[c]) for c in COLUMNS), str(sum(totals.values()))))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.insert(-1, lines[1])
    return "\n".join(lines)


def published() -> str:
    lines = [f"Engines, as published ({PUBLISHED_SOURCE}):"]
    for name, version, total, ok, soft, fail, unsupported in PUBLISHED:
        lines.append(f"  {name:<16} {version:<9} pass={ok:<4} soft_pass={soft:<4} fail={fail:<4} "
                     f"unsupported={unsupported:<4} of {total}")
    return "\n".join(lines)


def failures(results: RunResults) -> str:
    """One line a case that is not a pass: id, status, and the first failing check's detail."""
    lines = []
    for case in results.cases:
        if case.status in (Status.PASS,):
            continue
        if case.status is Status.UNSUPPORTED:
            lines.append(f"{case.fixture_id}  unsupported  {case.reason}")
            continue
        if case.harness_error:
            lines.append(f"{case.fixture_id}  error  {case.harness_error.splitlines()[0]}")
            continue
        worst = [c for c in case.checks if c.status is case.status]
        first = worst[0] if worst else None
        where = f"{first.check}@{first.strategy}: {first.detail}" if first else ""
        lines.append(f"{case.fixture_id}  {case.status.value}  {where}")
    return "\n".join(lines)


def measure(layer: str = "reader", *, families=(), ids=(), strategies=(), jobs: int = 1) -> RunResults:
    """The suite's own run of every chosen fixture through one layer (what ``main`` prints)."""
    adapter, python = LAYERS[layer]
    if python is not None and not python.exists():
        raise FileNotFoundError(f"the {layer} layer runs under {python}: build it with `make vllm`")
    config = RunConfig(
        engine=adapter,
        python=python,
        families=list(families),
        ids=list(ids),
        strategies=parse_strategies(list(strategies)),
        jobs=jobs,
        env={"PYTHONPATH": str(ROOT)},
        include_observed="failures",
    )
    return run(config)


# One character per share of the fixtures in a bar: pass, soft pass, fail or error, unsupported.
BAR_MARKS = (("pass", "█"), ("soft_pass", "▓"), ("fail", "░"), ("error", "░"), ("unsupported", "·"))


def bar(counts: dict[str, int], width: int = 50) -> str:
    """A stacked bar of counts, width characters for all the fixtures (each part rounded, at least one if any)."""
    total = sum(counts.get(column, 0) for column, _ in BAR_MARKS) or 1
    return "".join(mark * (max(1, round(width * counts.get(column, 0) / total)) if counts.get(column, 0) else 0)
                   for column, mark in BAR_MARKS)


def chart(results: RunResults | dict, label: str = "templatestudio") -> str:
    """Stacked bars: each family, then this run (or summary) overall beside each engine's published figures."""
    summary = counts_of(results)
    lines = [f"{'█ pass  ▓ soft pass  ░ fail or error  · unsupported':>70}"]
    for family, counts in summary["by_family"].items():
        lines.append(f"{family:<16} {bar(counts, 40):<42} {counts['pass']:>3}/{sum(counts.values())}")
    lines.append("")
    totals = summary["totals"]
    lines.append(f"{label:<16} {bar(totals):<52} {totals['pass']:>3}/{sum(totals.values())}")
    for name, _version, total, ok, soft, fail, unsupported in PUBLISHED:
        counts = {"pass": ok, "soft_pass": soft, "fail": fail, "unsupported": unsupported}
        lines.append(f"{name:<16} {bar(counts):<52} {ok:>3}/{total}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layer", choices=sorted(LAYERS), default="reader",
                        help="reader: read_tool_calls / ToolCallStream (default); plugin: the vLLM tool parser")
    parser.add_argument("--family", action="append", default=[], help="restrict to a family (repeatable)")
    parser.add_argument("--id", action="append", default=[], help="fixture id pattern (fnmatch, repeatable)")
    parser.add_argument("--strategy", action="append", default=[],
                        help="chunking strategy (repeatable; default: the suite's defaults)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--failures", action="store_true", help="list every case that is not a pass")
    parser.add_argument("--json", type=Path, help="also write the suite's results JSON here")
    parser.add_argument("--summary", type=Path, help="also write the counts alone here (summary_of; notebook 24)")
    args = parser.parse_args(argv)
    # before the run, which takes minutes: a summary with nowhere to go would be lost
    if args.summary and not args.summary.parent.is_dir():
        parser.error(f"--summary {args.summary}: no folder {args.summary.parent}")

    try:
        results = measure(args.layer, families=args.family, ids=args.id, strategies=args.strategy, jobs=args.jobs)
    except FileNotFoundError as missing:
        parser.error(str(missing))
    print(f"templatestudio {results.engine.version} ({args.layer} layer) through CanIToolCall "
          f"(strategies: {', '.join(results.run.strategies)})")
    print(table(results))
    print()
    print(published())
    if args.failures:
        print()
        print(failures(results))
    if args.json:
        results.write(args.json)
    if args.summary:
        write_summary(summary_of(results), args.summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
