"""llama.cpp's chat parser and templatestudio's reader, on the same templates and the same replies.

    bench/llamacpp/build.sh      # once: builds the harness (minutes; LLAMACPP_DIR says where)
    .venv/bin/python bench/llamacpp/compare.py [--corpus DIR] [--harness PATH] [--json OUT]
                                               [--only NAMES] [--no-prompt]

For every corpus template the reply is the call turn the template itself
writes for the probe call (``probe_template(...).wire``); templates whose
probe renders no call are listed and skipped. Both sides are given the
probe tool, the prompt that reply continues (the probe question rendered
with a generation prompt), and read the reply:

- ours: ``detect_format`` on the template text, then ``read_tool_calls``
  (``ours`` below, the one place to change what our side does);
- llama.cpp: the harness (``harness.cpp``), which applies the template the
  way llama-server does for one request and parses the reply with the
  parser that step built. When the server's enable_thinking gives a
  generation prompt that is not the end of the probe's prompt, the harness
  tries the other value, so the reply continues the prompt it was written
  after; the row's notes say so.

``--no-prompt`` gives neither side the prompt: ours reads with no prefix,
llama.cpp keeps the server's enable_thinking.

Each side gets a verdict: "right" is exactly one call with the probe's
name and arguments; "wrong" is any other call list, or no call while the
probe's name came back as text (content or reasoning); "none" is an error,
no format, or no call with nothing leaked (the reason says when the call's
text vanished without an error). Before comparing arguments, a value a
side returns as a string is typed by the probe tool's schema (``typed``),
the same rule on both sides, because XML-style formats write every value
as text.

Not handled: streaming (both sides read the whole reply at once), replies
other than the template's own rendering of the probe call (which some
templates write with Python spellings, True/None/single quotes, or leave
inside a reasoning block the prompt opened: the notes flag the latter),
and templates that need a model's vocabulary (the harness loads no model,
so bos/eos are empty on both sides). Exit status 0 whatever the verdicts;
2 when the harness is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_LLAMACPP_DIR = Path(os.environ.get("LLAMACPP_DIR", Path.home() / ".cache" / "templatestudio-llamacpp"))
DEFAULT_HARNESS = DEFAULT_LLAMACPP_DIR / "build-harness" / "llamacpp-chat-harness"
SILENT = "no call, no error, and the call's text is gone"


@dataclass
class Side:
    """What one side read: calls as (name, arguments) with arguments a dict, or why there are none."""

    calls: list[tuple[str, object]] = field(default_factory=list)
    content: str = ""
    reasoning: str = ""
    error: str | None = None  # the side's refusal or failure, one line


def ours(template_text: str, reply: str, tools: list[dict], prompt: str | None, derived_only: bool = False) -> Side:
    """templatestudio's reading of reply: the template's detected format, then the production reader.

    The tools go to the reader as a request's would, so formats whose
    values are text are typed by their schema (``read_tool_calls(tools=)``);
    prompt, the text the reply continues, tells it whether the reply starts
    inside a reasoning block (``prefix=``), as llama.cpp's generation prompt
    tells llama.cpp.
    """
    import templatestudio as ts
    from templatestudio.derive import derive_format

    try:
        # derived_only: the shape from the template alone, as llama.cpp's auto-parser works; else the
        # registered format the probe finds, and the derived one where none reads the call.
        fmt = derive_format(template_text) if derived_only else ts.detect_format(template_text)
        if fmt is None:
            return Side(error="no format detected")
        read = ts.read_tool_calls(reply, fmt, tools=tools, prefix=prompt)
    except (ts.UnparsedToolCall, ts.NoToolCallFormat, ts.TemplateProbeError) as error:
        return Side(error=f"{type(error).__name__}: {error}")
    except Exception as error:  # noqa: BLE001 - a bench row, not a crash of the whole table
        return Side(error=f"unexpected {type(error).__name__}: {error}")
    return Side([(call.name, call.arguments) for call in read.calls], read.content, read.reasoning)


def run_harness(harness: Path, jobs: list[dict], timeout: float = 120.0) -> list[dict]:
    """One answer per job from the harness, fed as JSON lines.

    A job that kills or hangs the harness gets an error answer naming how,
    and the harness is started again on the jobs after it.
    """
    answers: list[dict] = []
    while len(answers) < len(jobs):
        rest = jobs[len(answers):]
        text = "".join(json.dumps(job) + "\n" for job in rest)
        try:
            done = subprocess.run([str(harness)], input=text, capture_output=True, text=True, timeout=timeout)
            out, why = done.stdout, f"harness exited with {done.returncode}: {done.stderr.strip()[-200:]}"
        except subprocess.TimeoutExpired as stopped:
            out, why = (stopped.stdout or b"").decode(errors="replace"), f"harness timed out after {timeout:.0f} s"
        got = [json.loads(line) for line in out.splitlines() if line.strip()]
        answers += got[: len(rest)]
        if len(got) < len(rest):  # the job after the last answer stopped it
            answers.append({"calls": [], "content": "", "reasoning": "", "error": why, "stage": "crash"})
    return answers


def llama(answer: dict) -> Side:
    """A harness answer as a Side; a call whose arguments are not JSON text keeps them as that text."""
    if answer.get("error"):
        return Side(error=f"{answer.get('stage')}: {answer['error']}")
    calls = []
    for call in answer["calls"]:
        try:
            arguments = json.loads(call["arguments"])
        except ValueError:
            arguments = call["arguments"]
        calls.append((call["name"], arguments))
    return Side(calls, answer.get("content") or "", answer.get("reasoning") or "")


def typed(arguments: object, schema: dict) -> object:
    """arguments with each top-level string value typed by its property's schema.

    A property typed "string" keeps its text, except "null" when the schema
    also allows null (a list type, or "nullable"); any other declared type
    parses the text with json.loads and keeps the text when that fails or
    gives a type the schema does not declare. Nested values, anyOf/oneOf
    and $ref are not looked at.
    """
    if not isinstance(arguments, dict):
        return arguments
    kinds = {"integer": int, "number": (int, float), "boolean": bool, "null": type(None), "array": list,
             "object": dict}
    out = {}
    for key, value in arguments.items():
        prop = schema.get("properties", {}).get(key, {})
        declared = prop.get("type", [])
        declared = [declared] if isinstance(declared, str) else list(declared)
        declared += ["null"] if prop.get("nullable") else []
        if isinstance(value, str) and value == "null" and "null" in declared:
            value = None
        elif isinstance(value, str) and any(kind in kinds for kind in declared) and "string" not in declared:
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = value
            fits = any(isinstance(parsed, kinds[kind]) for kind in declared if kind in kinds)
            value = parsed if fits and not (isinstance(parsed, bool) and "boolean" not in declared) else value
        out[key] = value
    return out


def verdict(side: Side, name: str, arguments: dict, schema: dict) -> tuple[str, str]:
    """("right" | "wrong" | "none", a short reason; empty for right)."""
    if len(side.calls) == 1:
        got_name, got_arguments = side.calls[0]
        if got_name != name:
            return "wrong", f"called {got_name!r}"
        got = typed(got_arguments, schema)
        if got == arguments and json.dumps(got, sort_keys=True) == json.dumps(arguments, sort_keys=True):
            return "right", ""
        return "wrong", "arguments differ: " + _difference(got, arguments)
    if side.calls:
        return "wrong", f"{len(side.calls)} calls: {[call[0] for call in side.calls]}"
    leaked = [part for part, text in (("content", side.content), ("reasoning", side.reasoning)) if name in text]
    if leaked:
        return "wrong", f"no call, the call's markup came back as {' and '.join(leaked)}"
    if side.error:
        return "none", side.error
    return "none", SILENT if not side.content.strip() else "no call"


def _difference(got: object, want: dict) -> str:
    if not isinstance(got, dict):
        return f"not an object: {str(got)[:60]!r}"
    keys = sorted(set(got) | set(want))
    same = lambda a, b: json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)  # noqa: E731
    diffs = [f"{key}={got.get(key, '<missing>')!r} (want {want.get(key, '<absent>')!r})" for key in keys
             if not same(got.get(key, "<missing>"), want.get(key, "<absent>"))]
    return "; ".join(diffs[:3]) + (f"; +{len(diffs) - 3} more" if len(diffs) > 3 else "")


def _short(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, help="corpus folder (default: $TEMPLATESTUDIO_CORPUS)")
    parser.add_argument("--harness", type=Path, default=DEFAULT_HARNESS, help=f"default: {DEFAULT_HARNESS}")
    parser.add_argument("--json", type=Path, help="also write the table as JSON here")
    parser.add_argument("--only", help="comma-separated template names (file stems)")
    parser.add_argument("--no-prompt", action="store_true",
                        help="give neither side the probe's prompt: ours reads without prefix, llama.cpp keeps "
                             "the server's enable_thinking")
    parser.add_argument("--derived-only", action="store_true",
                        help="ours reads with the format derived from the template alone (templatestudio.derive), "
                             "never a registered module")
    parser.add_argument("--width", type=int, default=70, help="reason column width; 0 = no cut")
    args = parser.parse_args(argv)
    if args.corpus:
        os.environ["TEMPLATESTUDIO_CORPUS"] = str(args.corpus)
    if not args.harness.is_file():
        print(f"no harness at {args.harness}: run bench/llamacpp/build.sh (or pass --harness)", file=sys.stderr)
        return 2

    import templatestudio as ts
    from templatestudio.corpus import corpus_templates
    from templatestudio.probe_call import PROBE_ARGUMENTS, PROBE_NAME, PROBE_QUESTION, PROBE_TOOL
    from templatestudio.templates import ChatTemplate

    tools, schema = [PROBE_TOOL], PROBE_TOOL["function"]["parameters"]
    only = set(args.only.split(",")) if args.only else None
    paths = [path for path in corpus_templates() if only is None or path.stem in only]
    rows, skipped = [], []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        probe = ts.probe_template(ChatTemplate(path.stem, text))
        if probe.call_survives and probe.wire:
            rows.append({"template": path.stem, "text": text, "reply": probe.wire,
                         "prompt": None if args.no_prompt else
                         _prompt(ChatTemplate(path.stem, text), tools if probe.with_tools else None)})
        else:
            skipped.append((path.stem, probe.reason))

    jobs = [{"template": row["text"], "tools": tools, "reply": row["reply"], "messages": [PROBE_QUESTION],
             "prompt": row["prompt"]} for row in rows]
    answers = run_harness(args.harness, jobs)
    table = []
    for row, answer in zip(rows, answers):
        sides = {"ours": ours(row["text"], row["reply"], tools, row["prompt"], args.derived_only),
                 "llama.cpp": llama(answer)}
        cells = {}
        for side_name, side in sides.items():
            result, reason = verdict(side, PROBE_NAME, PROBE_ARGUMENTS, schema)
            cells[side_name] = {"verdict": result, "reason": reason}
        table.append({"template": row["template"], **cells, "notes": _notes(row, answer, args.no_prompt),
                      "reply": row["reply"], "llama.cpp answer": answer})

    _print(table, skipped, len(paths), args.width)
    if args.json:
        record = {"templates": len(paths), "compared": len(table), "renders_no_call": dict(skipped),
                  "totals": _totals(table), "rows": table}
        args.json.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


def _notes(row: dict, answer: dict, no_prompt: bool) -> list[str]:
    """What makes a row's comparison less than like for like."""
    notes = []
    if row["prompt"] is None and not no_prompt:
        notes.append("the probe prompt did not render here: neither side was given it")
    if answer.get("prompt_matches") is False:
        notes.append("llama.cpp's generation prompt is not the end of the probe's prompt")
    if "enable_thinking" in answer and answer["enable_thinking"] != answer.get("server_enable_thinking"):
        notes.append(f"llama.cpp ran with enable_thinking={str(answer['enable_thinking']).lower()} "
                     "(not the server's default) to match the probe's prompt")
    start, ends = (answer.get("thinking_start_tag") or "").strip(), answer.get("thinking_end_tags") or []
    if start and (answer.get("generation_prompt") or "").rstrip().endswith(start) \
            and not any(end and end in row["reply"] for end in ends):
        notes.append(f"the prompt opens reasoning ({start}) and the reply never closes it")
    return notes


def _prompt(template, tools: list[dict] | None) -> str | None:
    """The prompt the probe's call turn continues: the probe question, the tools, a generation prompt."""
    from templatestudio.probe_call import PROBE_QUESTION, template_variables

    try:
        return template.render([PROBE_QUESTION], tools=tools, add_generation_prompt=True, **template_variables(tools))
    except Exception:  # noqa: BLE001 - the probe rendered it; None only if this render differs
        return None


def _totals(table: list[dict]) -> dict:
    return {side: {kind: sum(row[side]["verdict"] == kind for row in table) for kind in ("right", "wrong", "none")}
            for side in ("ours", "llama.cpp")}


def _print(table: list[dict], skipped: list[tuple[str, str]], total: int, width: int) -> None:
    cut = (lambda text: _short(text, width)) if width else (lambda text: " ".join(text.split()))
    name_width = max([len(row["template"]) for row in table] + [8])
    print(f"{'template':<{name_width}}  {'ours':<6} {'llama.cpp':<9}  reasons (non-right cells)")
    for row in table:
        reasons = [f"{side}: {cut(row[side]['reason'])}" for side in ("ours", "llama.cpp") if row[side]["reason"]]
        reasons += [f"note: {cut(note)}" for note in row["notes"]]
        print(f"{row['template']:<{name_width}}  {row['ours']['verdict']:<6} {row['llama.cpp']['verdict']:<9}  "
              + ("\n" + " " * (name_width + 19)).join(reasons))
    print(f"\nrenders no call ({len(skipped)} of {total}, skipped):")
    for name, reason in skipped:
        print(f"  {name}: {cut(reason)}")
    print(f"\n{len(table)} of {total} templates render a call")
    print(f"{'':<10} {'right':>5} {'wrong':>5} {'none':>5}  of")
    for side, counts in _totals(table).items():
        print(f"{side:<10} {counts['right']:>5} {counts['wrong']:>5} {counts['none']:>5}  {len(table)}")
    silent = {side: sum(row[side]["reason"] == SILENT for row in table) for side in ("ours", "llama.cpp")}
    print(f"none with the call's text gone and no error: {silent}; rows with a note: "
          f"{sum(bool(row['notes']) for row in table)}")


if __name__ == "__main__":
    sys.exit(main())
