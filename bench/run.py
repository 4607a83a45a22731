"""The benchmark: every table of issue 16, with transformers and vLLM measured in the same run.

    python bench/run.py            # print the tables (make bench)
    python bench/run.py --write    # also the round trip's counts, and rewrite bench/RESULTS.md
    python bench/run.py --only floods,growth   # some sections' tables and goals (measure.SECTIONS)

Workloads come from the format registry (bench/workloads.py), measurements
and goals from bench/measure.py. vLLM's parsers run under the vLLM
environment's interpreter (``.venv-vllm/bin/python``, or ``--vllm-python``)
when it exists; the tables say "vLLM not installed" otherwise. Times are in
milliseconds unless a column says otherwise; MB = 10^6 characters. The
machine's core count and load average are printed before and after, because
other work on a shared machine inflates absolute times: compare columns of
the same run.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:0] = [str(BENCH), str(ROOT)]

import measure  # noqa: E402

DEFAULT_VLLM = ROOT / ".venv-vllm" / "bin" / "python"


def _git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT, timeout=30).stdout.strip()
    except OSError:
        return "?"


def machine() -> list[str]:
    import json as _json
    import transformers

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else "?"
    dirty = " (with uncommitted changes)" if _git("status", "--porcelain", "--untracked-files=no") else ""
    return [
        f"commit {_git('rev-parse', '--short', 'HEAD')}{dirty}, {time.strftime('%Y-%m-%d %H:%M %Z')}",
        f"machine: {os.cpu_count()} cores (nproc), {cpu}; Python {platform.python_version()}, "
        f"transformers {transformers.__version__}, json {_json.__version__}",
        f"load average at start: {_load()}",
    ]


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def _ms(seconds) -> str:
    return "-" if seconds is None else f"{1000 * seconds:,.1f}"


def _rate(megabytes: float, seconds) -> str:
    return "-" if not seconds else f"{megabytes / seconds:,.1f}"


def _times(a, b) -> str:
    return "-" if not a or not b else f"{a / b:,.1f}x"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = ["| " + " | ".join(str(cell).ljust(width) for cell, width in zip(header, widths)) + " |",
             "|" + "|".join("-" * (width + 2) for width in widths) + "|"]
    lines += ["| " + " | ".join(str(cell).ljust(width) for cell, width in zip(row, widths)) + " |" for row in rows]
    return lines


def render(results: measure.Results, sizes: measure.Sizes) -> list[str]:
    out: list[str] = [*(f"- {note}" for note in results.notes), ""]
    t = results.tables
    out += [f"### One call with a {sizes.big / 1e6:g} MB string argument (ms; MB/s; ours vs peers)", ""]
    out += table(["format", "ours", "MB/s", "json.loads on the arguments", "ours / json.loads speed",
                  "transformers", "vs transformers", "vLLM", "vs vLLM", "agree (ours, transformers, vLLM)"],
                 [[r["format"], _ms(r["ours"]), _rate(r["MB"], r["ours"]), _ms(r["json.loads"]),
                   f"{r['json.loads'] / r['ours']:.0%}", _ms(r.get("transformers")), _times(r.get("transformers"), r["ours"]),
                   _ms(r["vllm"]), _times(r["vllm"], r["ours"]),
                   f"{r['ours ok']}, {r.get('transformers ok', '-')}, {r['vllm ok']}"] for r in t.get("one call with a big string argument", [])])
    out += code_table(t, sizes)
    out += ["", f"### A reply of small calls, about {sizes.small / 1e6:g} MB (MB/s)", ""]
    out += table(["format", "calls", "joined by", "ours MB/s", "transformers MB/s", "vLLM MB/s",
                  "agree (ours, transformers, vLLM)"],
                 [[r["format"], f"{r['calls']:,}", r["joined by"], _rate(r["MB"], r["ours"]),
                   _rate(r["MB"], r.get("transformers")), _rate(r["MB"], r["vllm"]),
                   f"{r['ours ok']}, {r.get('transformers ok', '-')}, {r['vllm ok']}"] for r in t.get("a reply of small calls", [])])
    out += ["", f"### Streaming {sizes.stream // 1000} KB of small calls in 4-character chunks (ms)", ""]
    out += table(["format", "ToolCallStream", "ResponseParser", "vs ResponseParser", "vLLM streaming", "vs vLLM",
                  "agree (ours, transformers, vLLM)"],
                 [[r["format"], _ms(r["ours"]), _ms(r.get("transformers")), _times(r.get("transformers"), r["ours"]),
                   _ms(r["vllm"]), _times(r["vllm"], r["ours"]),
                   f"{r['ours ok']}, {r.get('transformers ok', '-')}, {r['vllm ok']}"] for r in t.get("stream in 4-character chunks", [])])
    out += ["", "### ToolCallStream growth when the reply grows 4x (ms; linear is 4x)", ""]
    out += table(["format", "workload", "chunk", "sizes", "small", "large", "growth"],
                 [[r["format"], r["workload"], r["chunk"], f"{r['sizes'][0] // 1000}K -> {r['sizes'][1] // 1000}K",
                   _ms(r["low"]), _ms(r["high"]), f"{r['growth']:.2f}x"] for r in t.get("growth", [])])
    if t.get("fixed cost of one feed"):
        out += ["", "### Fixed cost of one feed call (µs per 1-character chunk of prose)", ""]
        out += table(["format", "feeds", "ToolCallStream µs", "ResponseParser µs"],
                     [[r["format"], f"{r['feeds']:,}", f"{r['ours us']:.2f}",
                       f"{r['transformers us']:.2f}" if "transformers us" in r else "-"]
                      for r in t["fixed cost of one feed"]])
    if t.get("check over the corpus"):
        out += ["", "### `check` over the whole corpus, sandboxed", ""]
        out += ["Choosing a format in process, per template: the first scan compiles each template "
                "(transformers' Jinja compile, which a server pays once at its first request anyway); the "
                "second, probes cleared and templates compiled, is the probe alone.", ""]
        out += ["The last column is transformers' own first render of one user turn per template (each "
                "compiled anew): the least that choosing by rendering the template can cost.", ""]
        out += table(["templates", "wrong", "deadline", "corpus.scan in process", "python -m templatestudio check DIR",
                      "choosing: first ms/template", "choosing: compiled ms/template",
                      "transformers' first render ms/template"],
                     [[r["templates"], r["wrong"], f"{r['deadline']:g} s", f"{r['scan s']:.2f} s",
                       f"{r['cli s']:.2f} s (exit {r['cli exit']})", f"{r['in process ms/template']:.2f}",
                       f"{r['again ms/template']:.2f}", f"{r['first render ms/template']:.2f}"]
                      for r in t["check over the corpus"]])
    out += ["", "### Goals of issue 16", ""]
    out += ["A big call's ceiling is the peer's time over the time `json`'s C decoder takes on the arguments "
            "where they stand in the reply (`raw_decode` at their offset): no reader that decodes the value "
            "from the reply can be faster than that against this peer. Choosing a format's ceiling is the "
            "other way round, a least cost: transformers' first render of each template.", ""]
    out += table(["goal", "format", "measured", "goal", "met", "ceiling"],
                 [[g.what, g.format, f"{g.measured:,.2f}", ("≥ " if g.higher_is_better else "≤ ") + f"{g.target:g}",
                   "yes" if g.met() else "NO", "-" if g.ceiling is None else f"{g.ceiling:,.2f}"]
                  for g in results.goals])
    missed = [g for g in results.goals if not g.met()]
    out += ["", f"{len(results.goals) - len(missed)} of {len(results.goals)} goals met."]
    beyond = [g for g in missed if g.ceiling is not None
              and (g.ceiling < g.target if g.higher_is_better else g.ceiling > g.target)]
    if beyond:
        out += [f"{len(beyond)} of the missed goals ask for more than their ceiling: "
                + ", ".join(f"{g.format} vs {g.what.rsplit(' ', 1)[-1]} ({g.measured:.2f} of at most {g.ceiling:.2f})"
                            if g.higher_is_better else
                            f"{g.what} ({g.measured:.2f}; transformers' first render alone: {g.ceiling:.2f})"
                            for g in beyond) + "."]
    return out


def code_table(t: dict, sizes: measure.Sizes) -> list[str]:
    """Issue 23's table: one call of source code, read whole and streamed, against json.loads."""
    out = ["", f"### One call with a {sizes.big / 1e6:g} MB string argument of source code "
           f"(ms; the stream in {measure.CODE_CHUNK // 1024} KB chunks)", ""]
    return out + table(["format", "read whole", "streamed", "json.loads on the arguments", "read / json.loads speed",
                        "streamed / json.loads speed", "agree (read, streamed)"],
                       [[r["format"], _ms(r["read"]), _ms(r["stream"]), _ms(r["json.loads"]),
                         f"{r['json.loads'] / r['read']:.0%}", f"{r['json.loads'] / r['stream']:.0%}",
                         f"{r['ours ok']}, {r['stream ok']}"]
                        for r in t.get("one call with a big string argument of code", [])])


def round_trip_counts() -> list[str]:
    """The round-trip property test's per-outcome counts (tests/test_roundtrip_property.py, -s)."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_roundtrip_property.py", "-k", "survive", "-s", "-q",
         "-p", "no:cacheprovider"], capture_output=True, text=True, cwd=ROOT, timeout=3600)
    lines, keep = [], False
    for line in done.stdout.splitlines():
        line = re.sub(r"^\.+", "", line)
        if line.startswith("round trip "):
            keep = True
            lines.append(line)
        elif keep and line.startswith("  "):
            lines.append(line)
        else:
            keep = False
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-200:]
    return lines + [f"pytest: {summary}"]


HEADER = """# Benchmark results

Written by `python bench/run.py --write` (`make bench` prints the same tables without writing). Every
figure below comes from that one run: the peers were measured in the same process (vLLM's parsers in its own
environment's interpreter, started by the script), on the same inputs, and every peer's calls were compared
with the calls written. "WRONG" says how a reader's calls differed. The machine is shared, so absolute times
move with its load; compare columns of the same run.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="also run the round trip and rewrite bench/RESULTS.md")
    parser.add_argument("--smoke", action="store_true", help="the CI-sized run (seconds): small inputs, no vLLM")
    parser.add_argument("--vllm-python", default=str(DEFAULT_VLLM), help="the vLLM environment's interpreter")
    parser.add_argument("--no-vllm", action="store_true")
    parser.add_argument("--no-check", action="store_true", help="skip the corpus scan")
    parser.add_argument("--only", help=f"run only these sections, comma-separated ({', '.join(measure.SECTIONS)}); "
                                       "their tables and goals are printed, and --write is refused")
    args = parser.parse_args(argv)
    only = None if args.only is None else frozenset(item.strip() for item in args.only.split(",") if item.strip())
    if only is not None and args.write:
        parser.error("--write rewrites every table of bench/RESULTS.md: it needs the whole run, not --only")
    sizes = measure.SMOKE if args.smoke else measure.FULL
    head = machine()
    print("\n".join(head), flush=True)
    vllm = None if (args.no_vllm or args.smoke) else args.vllm_python
    try:
        results = measure.run_all(sizes, vllm, corpus_scan=not (args.no_check or args.smoke), only=only)
    except ValueError as error:
        parser.error(str(error))
    body = render(results, sizes) + ["", f"load average at the end: {_load()}"]
    print("\n".join(body), flush=True)
    if args.write:
        counts = round_trip_counts()
        print("\n".join(counts))
        text = [HEADER, *(f"- {line}" for line in head), "", *body, "", "## Round trip through the real templates", "",
                "`pytest tests/test_roundtrip_property.py -k survive -s` in the same run: each generated turn goes "
                "through one template of its format; per-outcome counts (a template turn is one turn through one "
                "template).", "", "```", *counts, "```", ""]
        (BENCH / "RESULTS.md").write_text("\n".join(text), encoding="utf-8")
        print(f"wrote {BENCH / 'RESULTS.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
