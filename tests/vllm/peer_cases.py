"""vLLM's tool-parser test replies read by vLLM's parser and by the format that answers for it (issue 23).

Runs in vLLM's environment. ``tests/vllm_cases.harvest`` gives the replies
of vLLM's own tests (an unpacked source release, read in place); each reply
is compared for every parser name its test file exercises that some format
declares in ``Format.vllm_parser``, when the reply holds one of that
format's markers (a reply without one is plain text to both sides, and most
harvested strings are not replies at all). ``outcome`` reads one reply both
ways, whole; ``verdict`` names how the two answers relate.

vLLM's answer is its installed parser's (the environment's vLLM, which may
be an older release than the tests: a name it lacks is "no vLLM parser
here"). The parser gets Qwen3's tokenizer with the format's literals added
as special tokens (vLLM's DeepSeek, Kimi and other parsers look their
control tokens up in the vocabulary) and a request with no tools, so
neither side types values by a schema.

Not compared: streaming (vLLM's streaming answers depend on token
boundaries and ids its tests feed from the models' own tokenizers, which
are not cached here), ids, and content whitespace (vLLM strips or keeps it
per parser; the reader takes the template's layout out).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from templatestudio import UnparsedToolCall, read_tool_calls
from templatestudio.formats import FORMATS
from templatestudio.wire.base import Format
from vllm_cases import Case, harvest

TOKENIZER = "Qwen/Qwen3-0.6B"

# How the two answers relate. The first two are agreement.
SAME = "same calls and content"
SAME_CALLS = "same calls, content differs"
WE_REFUSE = "we raise, vLLM reads calls"
WE_REFUSE_TEXT = "we raise, vLLM returns the text"
WE_READ = "we read calls, vLLM reads none"
WE_CUT = "we report the reply cut inside a call, vLLM reads it as a call"
OTHER_CALLS = "different calls"
RAW = "we return markup as text"  # never allowed: the rule
DOC_PROSE = "a docstring: we keep its prose, vLLM reads a call"  # a marker named in documentation
VLLM_ERROR = "vLLM's parser raised"


def answering_formats() -> dict[str, Format]:
    """Each vLLM name a format declares -> that format."""
    return {name: fmt for fmt in FORMATS.values() for name in fmt.vllm_parser}


def literals(fmt: Format) -> list[str]:
    """The format's markers, closers and reasoning delimiters: the tokens vLLM's parsers look up.

    Only literals with no whitespace at either end: a special token of
    whitespace would change how every text is cut into tokens.
    """
    found = list(fmt.markers) + list(fmt.closers)
    for pair in fmt.reasoning or ():
        found.extend(pair)
    return [item for item in dict.fromkeys(found) if item and item == item.strip()]


def pairs(root: Path) -> list[tuple[Case, str, Format]]:
    """(case, vLLM name, format) for every harvested reply holding one of the format's markers."""
    formats = answering_formats()
    found = []
    for case in harvest(root):
        for name in case.parsers:
            fmt = formats.get(name)
            if fmt is not None and any(marker in case.text for marker in fmt.markers):
                found.append((case, name, fmt))
    return found


@dataclass(frozen=True)
class Answer:
    """What one side made of a reply: its calls as (name, arguments) JSON text, its content; or an error."""

    calls: tuple[tuple[str, str], ...] = ()
    content: str = ""
    error: str | None = None
    cut: bool = False  # ours only: the reply ended inside a call (Reply.cut)


def ours(text: str, fmt: Format) -> Answer:
    try:
        reply = read_tool_calls(text, fmt)
    except UnparsedToolCall as error:
        return Answer(error=f"UnparsedToolCall: {error}")
    calls = tuple((call.name, json.dumps(call.arguments, sort_keys=True)) for call in reply.calls)
    return Answer(calls, reply.content, cut=reply.cut is not None)


class Vllm:
    """vLLM's parsers by name, each with a tokenizer that holds its format's literals."""

    def __init__(self) -> None:
        from transformers import AutoTokenizer
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
        from vllm.tool_parsers import ToolParserManager

        logging.getLogger("vllm").setLevel(logging.CRITICAL)  # it logs every parse error it swallows
        self._manager = ToolParserManager
        self._load = AutoTokenizer.from_pretrained
        self._tokenizers: dict[str, object] = {}
        self._request = ChatCompletionRequest(messages=[{"role": "user", "content": "x"}], model="peer")

    def tokenizer(self, fmt: Format):
        """Qwen3's tokenizer with fmt's literals added (one per format: another's would change the cuts)."""
        if fmt.name not in self._tokenizers:
            tokenizer = self._load(TOKENIZER)
            missing = [item for item in literals(fmt) if item not in tokenizer.get_vocab()]
            if missing:
                tokenizer.add_special_tokens({"additional_special_tokens": missing}, replace_extra_special_tokens=False)
            self._tokenizers[fmt.name] = tokenizer
        return self._tokenizers[fmt.name]

    def answer(self, text: str, name: str, fmt: Format) -> Answer | None:
        """vLLM's answer; None when this vLLM has no parser of that name."""
        try:
            make = self._manager.get_tool_parser(name)
        except KeyError:
            return None
        try:
            result = make(self.tokenizer(fmt)).extract_tool_calls(text, self._request)
            calls = []
            for call in result.tool_calls if result.tools_called else ():
                arguments = json.loads(call.function.arguments) if call.function.arguments else {}
                calls.append((call.function.name, json.dumps(arguments, sort_keys=True)))
        except Exception as error:  # noqa: BLE001 - a peer that fails is an answer too
            return Answer(error=f"{type(error).__name__}: {str(error)[:160]}")
        return Answer(tuple(calls), result.content or "")


def verdict(mine: Answer, theirs: Answer, fmt: Format, docstring: bool = False) -> str:
    """How our answer relates to vLLM's (the constants above).

    docstring: the text is a test's docstring (``Case.docstring``), which no
    test feeds a parser; our keeping it as text is then prose, not markup.
    """
    if theirs.error is not None:
        return VLLM_ERROR
    if mine.error is not None:
        return WE_REFUSE if theirs.calls else WE_REFUSE_TEXT
    if not mine.calls and any(marker in mine.content for marker in fmt.markers) and theirs.calls:
        return DOC_PROSE if docstring else RAW
    if mine.cut and theirs.calls[: len(mine.calls)] == mine.calls and len(theirs.calls) > len(mine.calls):
        return WE_CUT
    if mine.calls == theirs.calls:
        return SAME if mine.content.strip() == theirs.content.strip() else SAME_CALLS
    if not theirs.calls:
        return WE_READ
    return OTHER_CALLS


# --- the recorded verdicts: every case that is not SAME, each with its reason -------------------

FIXTURE = Path(__file__).parent / "fixtures" / "vllm_case_verdicts.json"
UNREVIEWED = "UNREVIEWED"


def compare(root: Path, vllm: Vllm | None = None) -> tuple[dict[str, str], list[str]]:
    """Every case's verdict by ``KEY|vLLM name`` (SAME included), and the names this vLLM lacks."""
    vllm = vllm or Vllm()
    found: dict[str, str] = {}
    absent: list[str] = []
    for case, name, fmt in pairs(root):
        theirs = vllm.answer(case.text, name, fmt)
        if theirs is None:
            absent.append(name)
            continue
        found[f"{case.key}|{name}"] = verdict(ours(case.text, fmt), theirs, fmt, case.docstring)
    return found, sorted(set(absent))


def load() -> dict:
    """The fixture: {"reasons": {id: text}, "cases": {KEY|name: {"verdict", "reason"}}}."""
    return json.loads(FIXTURE.read_text())


def record(found: dict[str, str]) -> dict:
    """The fixture updated to found: reasons kept where a case's verdict held, UNREVIEWED elsewhere."""
    old = load() if FIXTURE.exists() else {"reasons": {}, "cases": {}}
    cases = {}
    for key, seen in sorted(found.items()):
        if seen == SAME:
            continue
        before = old["cases"].get(key)
        reason = before["reason"] if before and before["verdict"] == seen else UNREVIEWED
        cases[key] = {"verdict": seen, "reason": reason}
    return {"reasons": old["reasons"], "cases": cases}


def table(fixture: dict) -> str:
    """The README's disagreement table: one row per vLLM name, verdict and reason, with its count."""
    rows: dict[tuple[str, str, str], int] = {}
    for key, entry in fixture["cases"].items():
        name = key.rsplit("|", 1)[1]
        row = (name, entry["verdict"], entry["reason"])
        rows[row] = rows.get(row, 0) + 1
    lines = ["| vLLM parser | cases | how the answers differ | who is right, and why |", "|---|---|---|---|"]
    for (name, seen, reason), count in sorted(rows.items()):
        lines.append(f"| {name} | {count} | {seen} | {fixture['reasons'].get(reason, reason)} |")
    return "\n".join(lines)


def main() -> None:
    import argparse
    import os

    parser = argparse.ArgumentParser(description="vLLM's tool-parser test replies, read by vLLM and by us")
    parser.add_argument("--sdist", default=os.environ.get("TEMPLATESTUDIO_VLLM_SDIST", ".vllm-sdist/vllm-0.33.0"))
    parser.add_argument("--record", action="store_true", help="rewrite the fixture (new verdicts UNREVIEWED)")
    parser.add_argument("--table", action="store_true", help="print the README's table from the fixture")
    parser.add_argument("--show", metavar="NAME", help="print every case of this vLLM name that is not SAME")
    args = parser.parse_args()
    if args.table:
        print(table(load()))
        return
    if args.show:
        vllm = Vllm()
        for case, name, fmt in pairs(Path(args.sdist)):
            if name != args.show:
                continue
            mine, theirs = ours(case.text, fmt), vllm.answer(case.text, name, fmt)
            if theirs is not None and verdict(mine, theirs, fmt, case.docstring) != SAME:
                print(f"== {case.key}|{name}: {verdict(mine, theirs, fmt, case.docstring)}\n{case.text!r}\n  ours: {mine}\n  vLLM: {theirs}")
        return
    found, absent = compare(Path(args.sdist))
    fixture = record(found)
    if args.record:
        FIXTURE.parent.mkdir(exist_ok=True)
        FIXTURE.write_text(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")
    counts: dict[str, int] = {}
    for seen in found.values():
        counts[seen] = counts.get(seen, 0) + 1
    print(json.dumps({"cases": len(found), "verdicts": counts, "not in this vLLM": absent,
                      "unreviewed": sum(entry["reason"] == UNREVIEWED for entry in fixture["cases"].values())},
                     indent=1))


if __name__ == "__main__":
    main()
