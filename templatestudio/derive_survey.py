"""Derivation over the corpus, per registered format: the leave-one-out report of issue 25.

For every corpus template whose call a registered format reads back, the
shape is derived from the template alone and its format must read the
template's own probe call back exactly (``derive`` checks more: every
round-trip call, the writer). Derivation never consults the registry, so
each row already holds its format out: the report is what a model family
would get had its module never been written. ``expressible`` says whether
the registered declaration is free of hand-written parts (the language can
say it); the goal counts those rows.

Not handled: templates no registered format reads (they are listed, not
counted), and agreement on a format's hand-written samples (the tests hold
that a derived format never reads one as other calls than the module does).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from templatestudio.corpus import corpus_templates
from templatestudio.derive import derive
from templatestudio.probe import probe_template
from templatestudio.templates import ChatTemplate

__all__ = ["SurveyRow", "derivation_chart", "derivation_survey", "format_survey"]


@dataclass(frozen=True)
class SurveyRow:
    template: str
    registered: str | None  # the registered format that reads the template's call, if any
    expressible: bool  # the registered declaration has no hand-written part
    derived: bool
    reason: str  # why nothing was derived ("" when derived)


def derivation_survey() -> list[SurveyRow]:
    """One row per corpus template whose call survives its own render."""
    rows = []
    for path in corpus_templates():
        template = ChatTemplate(path.stem, path.read_text(encoding="utf-8"))
        probe = probe_template(template)
        if not probe.call_survives:
            continue
        found = derive(template)
        fmt = probe.format
        expressible = fmt is not None and fmt.wire is not None and not fmt.wire.hand_written
        rows.append(SurveyRow(template.name, fmt.name if fmt else None, expressible, found.wire is not None,
                              found.refused or ""))
    return rows


def format_survey(rows: list[SurveyRow]) -> str:
    """Per registered format: derived / templates, and the reasons of the rest; then the totals."""
    by_format: dict[str, list[SurveyRow]] = defaultdict(list)
    for row in rows:
        by_format[row.registered or "(no registered format)"].append(row)
    lines = [f"{'format':<22} {'derived':>8}  reasons for the rest"]
    for name in sorted(by_format, key=lambda item: (-len(by_format[item]), item)):
        group = by_format[name]
        done = sum(row.derived for row in group)
        reasons = sorted({row.reason.split(":")[0] if len(row.reason) > 90 else row.reason
                          for row in group if not row.derived})
        marker = "" if not group[0].registered or group[0].expressible else " *"
        lines.append(f"{name + marker:<22} {done:>3} / {len(group):<3} " + ("; ".join(reasons) or "-"))
    counted = [row for row in rows if row.registered and row.expressible]
    read = [row for row in rows if row.registered]
    lines.append("")
    lines.append(f"derived: {sum(r.derived for r in counted)} of {len(counted)} templates whose registered format "
                 f"the declaration language expresses ({sum(r.derived for r in read)} of {len(read)} read by any "
                 "registered format); * = the module declares hand-written parts")
    return "\n".join(lines)


def derivation_chart(rows: list[SurveyRow], width: int = 24) -> str:
    """One bar per registered format: █ a template derived, ░ one refused (as wide as the largest group allows)."""
    by_format: dict[str, list[SurveyRow]] = defaultdict(list)
    for row in rows:
        if row.registered:
            by_format[row.registered].append(row)
    unit = max(1, width // max(len(group) for group in by_format.values()))
    lines = [f"{'█ derived  ░ refused':>{22 + width}}"]
    for name in sorted(by_format, key=lambda item: (-len(by_format[item]), item)):
        group = by_format[name]
        done = sum(row.derived for row in group)
        bar = "█" * unit * done + "░" * unit * (len(group) - done)
        lines.append(f"{name:<20}  {bar:<{width}}  {done}/{len(group)}")
    return "\n".join(lines)
