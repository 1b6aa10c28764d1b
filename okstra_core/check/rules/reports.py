"""Final report data: version, deliverable and identity (via the models), and the reading copy."""

from __future__ import annotations

import os
from pathlib import Path

from ... import names
from ..catalog import STALE_READING_COPY
from .documents import load_report
from .scope import RunScope, TaskScope


def check_run(scope: TaskScope, run: RunScope) -> None:
    """Report data is validated by :mod:`.documents`; here the reading copy is compared with a fresh render."""
    unit = scope.unit
    # Path texts, not Path objects: this runs for every artifact of every run dir.
    present = {a.entry.text for a in run.artifacts}
    for art in run.of_kind("final-report-data"):
        report = load_report(unit, art)
        if report is None or art.name.seq_text is None:
            continue
        md_name = names.report_stem(art.entry.name) + ".md"
        md_text = os.path.join(os.path.dirname(art.entry.text), md_name)
        if md_text not in present:
            continue
        md = Path(md_text)
        text = unit.text(md_text)
        if text is None:
            continue
        from ...render.markdown import render_markdown

        fresh = render_markdown(report)
        if text != fresh:
            line = _first_difference(text, fresh)
            unit.report(
                STALE_READING_COPY,
                md,
                f"reading copy differs from a fresh render of {art.entry.name} (first difference at line {line})",
                line,
            )


def _first_difference(a: str, b: str) -> int:
    for number, (x, y) in enumerate(zip(a.split("\n"), b.split("\n"), strict=False), start=1):
        if x != y:
            return number
    return min(a.count("\n"), b.count("\n")) + 1
