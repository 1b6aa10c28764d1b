"""The Markdown reading copy of a final report (schema 3.0 and historical 2.0).

Rendered through ``templates/reports/final-report-v2.template.md``: the
template fixes the layout, this module renders each section. Narrative fields
(summary, finding detail, goals, questions) are Markdown written by the report
writer and are kept as they are; short fields (titles, ids, paths) are folded
onto one line, and table cells have ``|`` escaped. Same model, same text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar

from .. import layout
from ..models.report import (
    ClarificationItem,
    ConvergenceSummary,
    FinalReportV2,
    FinalReportV3,
    Finding,
    ImplementationPlan,
    ImplementationResults,
    OptionCandidates,
    VerificationVerdict,
)
from ..workflows.user_response import one_line
from .labels import convergence_facts, labels_for
from .templating import fill_template

Report = FinalReportV3 | FinalReportV2
TEMPLATE = "reports/final-report-v2.template.md"


_HTML_START = re.compile(r"<(?=[A-Za-z/!?])")
#: False while rendering for a viewer that shows no HTML at all (see :func:`render_markdown`).
_NEUTRALISE_HTML: ContextVar[bool] = ContextVar("neutralise_html", default=True)


def no_html(text: str) -> str:
    """Report data never becomes raw HTML in the reading copy: a ``<`` that would open a tag or comment is
    written as ``&lt;`` (it reads the same once rendered); ``a < b`` is left alone."""
    if not _NEUTRALISE_HTML.get():
        return text
    return _HTML_START.sub("&lt;", text)


def inline(text: str | None) -> str:
    """A short field on one line (an absent field is empty); raw HTML is neutralised."""
    return no_html(one_line(text or ""))


def cell(text: str | None) -> str:
    """A table cell: one line, ``|`` escaped."""
    return inline(text).replace("|", "\\|") or " "


def code(value: str | None) -> str:
    """An inline code span that survives backticks inside *value* (an absent value is a dash)."""
    if value is None:
        return "—"
    text = one_line(value)  # inside a code span nothing is HTML
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fenced(text: str, info: str = "") -> str:
    """A fenced code block longer than any backtick run inside *text*."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def bullets(items: Iterable[str]) -> str:
    return "\n".join(f"- {inline(item)}" for item in items)


def table(header: list[str], rows: Sequence[Sequence[str | None]]) -> str:
    out = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def block(text: str | None) -> str:
    """Narrative Markdown as written, without surrounding blank lines (an absent field is empty)."""
    return no_html((text or "").strip("\n"))


def _details(report: Report, lab: dict[str, str]) -> str:
    rows: list[tuple[str, str]] = [
        (lab["task_key"], code(report.task_key)),
        (lab["task_type"], code(report.task_type)),
        (lab["schema_version"], report.schema_version),
    ]
    if report.report_language:
        rows.append((lab["report_language"], code(report.report_language)))
    if report.generated_at:
        rows.append((lab["generated_at"], inline(report.generated_at)))
    if report.run_date_time_segment:
        rows.append((lab["run_segment"], code(report.run_date_time_segment)))
    if report.selected_direction_ref:
        rows.append((lab["selected_direction"], code(report.selected_direction_ref)))
    return "\n".join(f"- **{label}:** {value}" for label, value in rows)


def _findings(findings: list[Finding], lab: dict[str, str]) -> str:
    out = [f"## {lab['findings']}"]
    if not findings:
        out.append(lab["no_findings"])
    for f in findings:
        out.append(f"### {inline(f.finding_id)} · {inline(f.title)}")
        out.append(f"**{lab['severity']}:** {code(f.severity)}")
        if (f.detail or "").strip():
            out.append(block(f.detail))
        if f.evidence:
            out.append(f"**{lab['evidence']}:**\n\n" + bullets(f.evidence))
    return "\n\n".join(out)


def _options(oc: OptionCandidates, lab: dict[str, str]) -> str:
    head = [f"**{lab['mode']}:** {code(oc.mode)}"]
    if oc.recommendation:
        head.append(f"**{lab['recommended']}:** {code(oc.recommendation)}")
    out = [f"## {lab['options']}", "  \n".join(head)]
    if oc.preselected:
        p = oc.preselected
        out.append(
            f"**{lab['preselected']}:** {code(p.option_id)} · {lab['confirmed_by']}: {inline(p.confirmed_by)}"
            f" · {lab['confirmed_at']}: {inline(p.confirmed_at)}"
        )
    out.append(
        table(
            [lab["id"], lab["title"], lab["risk"]],
            [
                [c.option_id + (" ★" if c.option_id == oc.recommendation else ""), c.title, c.risk]
                for c in oc.candidates
            ],
        )
    )
    for c in oc.candidates:
        out.append(f"### {inline(c.option_id)} · {inline(c.title)}")
        out.append(f"**{lab['risk']}:** {code(c.risk)}")
        if (c.summary or "").strip():
            out.append(block(c.summary))
        if c.pros:
            out.append(f"**{lab['pros']}:**\n\n" + bullets(c.pros))
        if c.cons:
            out.append(f"**{lab['cons']}:**\n\n" + bullets(c.cons))
    return "\n\n".join(out)


def assessment_json(assessment: object) -> str:
    """An assessment as stable, readable JSON (key order as stored)."""
    return json.dumps(assessment, indent=2, ensure_ascii=False)


def _plan(plan: ImplementationPlan, lab: dict[str, str]) -> str:
    out = [f"## {lab['plan']}"]
    for s in plan.stages:
        out.append(f"### {lab['stage']} {s.stage} · {inline(s.title)}")
        if (s.goal or "").strip():
            out.append(f"**{lab['goal']}:** {block(s.goal)}")
        if s.tasks:
            out.append(f"**{lab['tasks']}:**\n\n" + bullets(s.tasks))
    if plan.design_items:
        out.append(f"### {lab['design_items']}")
        out.append(
            table([lab["id"], lab["title"], lab["status"]], [[d.prep_id, d.title, d.status] for d in plan.design_items])
        )
        for d in plan.design_items:
            out.append(f"#### {inline(d.prep_id)} · {inline(d.title)}")
            out.append(f"**{lab['status']}:** {code(d.status)}")
            if (d.question or "").strip():
                out.append(f"**{lab['question']}:** {block(d.question)}")
            if d.fields:
                out.append(f"**{lab['fields']}:** " + ", ".join(code(f) for f in d.fields))
            if d.assessment is not None:
                out.append(f"**{lab['assessment']}:**\n\n" + fenced(assessment_json(d.assessment), "json"))
            else:
                out.append(f"_{lab['legacy_unassessed']}_")
    return "\n\n".join(out)


def _results(res: ImplementationResults, lab: dict[str, str]) -> str:
    out = [f"## {lab['results']}", f"**{lab['stage']}:** {res.stage}  \n**{lab['outcome']}:** {code(res.outcome)}"]
    if res.changes:
        out.append(f"### {lab['changes']}")
        out.append(table([lab["path"], lab["change"]], [[c.path, c.summary] for c in res.changes]))
    if res.checks:
        out.append(f"### {lab['checks']}")
        out.append(table([lab["check"], lab["result"]], [[c.name, c.result] for c in res.checks]))
    return "\n\n".join(out)


def _verdict(v: VerificationVerdict, lab: dict[str, str]) -> str:
    out = [f"## {lab['verdict']}", f"**{lab['verdict_short']}:** {code(v.verdict)}"]
    if v.criteria:
        out.append(f"### {lab['criteria']}")
        out.append(
            table(
                [lab["criterion"], lab["result"], lab["evidence"]],
                [[c.criterion, c.result, c.evidence] for c in v.criteria],
            )
        )
    return "\n\n".join(out)


_DELIVERABLES: dict[str, Callable[..., str]] = {
    layout.ANALYSIS: _findings,
    layout.OPTION_SELECTION: _options,
    layout.IMPLEMENTATION_PLANNING: _plan,
    layout.IMPLEMENTATION: _results,
    layout.FINAL_VERIFICATION: _verdict,
}


def render_deliverable(report: Report, lab: dict[str, str]) -> str:
    """The section of the one deliverable the report's task type carries."""
    kind = report.kind()
    render = _DELIVERABLES.get(kind) if kind is not None else None
    return render(report.deliverable(), lab) if render is not None else ""


def _convergence(conv: ConvergenceSummary | None, lab: dict[str, str]) -> str:
    if conv is None:
        return ""
    rows = [(lab[key], code(str(value)) if is_code else str(value)) for key, value, is_code in convergence_facts(conv)]
    return f"## {lab['convergence']}\n\n" + "\n".join(f"- **{k}:** {v}" for k, v in rows)


def _clarifications(items: list[ClarificationItem], lab: dict[str, str]) -> str:
    if not items:
        return ""
    out = [f"## {lab['clarifications']}"]
    for item in items:
        out.append(f"### {item.item_id}")
        out.append(block(item.question))
        if (item.context or "").strip():
            out.append(f"**{lab['context']}:** {block(item.context)}")
        if item.options:
            out.append(f"**{lab['suggested']}:**\n\n" + bullets(item.options))
    return "\n\n".join(out)


def render_markdown(report: Report, *, neutralise_html: bool = True) -> str:
    """The reading copy of *report*. Deterministic: the same model gives the same text.

    With *neutralise_html* (the reading copy), a ``<`` of report data that
    would open a tag is written ``&lt;``; that reads as ``<`` in prose, but a
    code span or block shows it as written. A viewer that treats all HTML as
    text (the workbench's Markdown view parses with HTML off) passes False
    and gets every ``<`` as the data has it.
    """
    token = _NEUTRALISE_HTML.set(neutralise_html)
    try:
        return _render(report)
    finally:
        _NEUTRALISE_HTML.reset(token)


def _render(report: Report) -> str:
    lab = labels_for(report.report_language)
    text = fill_template(
        TEMPLATE,
        {
            "title": inline(report.title),
            "details": _details(report, lab),
            "summary_heading": lab["summary"],
            "summary": block(report.summary) or "—",
            "deliverable": render_deliverable(report, lab),
            "convergence": _convergence(report.convergence, lab),
            "clarifications": _clarifications(report.clarification_items, lab),
        },
    )
    return text.rstrip("\n") + "\n"
