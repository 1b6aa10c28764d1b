"""The self-contained HTML report (Phase 7): one file, inline CSS and JS, no other address.

Everything from the report data is escaped; the page's Content-Security-Policy
allows only its own inline style and script (by hash) and no request at all,
so even text that slipped through could neither run nor fetch anything. The
page reads fully without JavaScript and prints cleanly; JavaScript only adds
the "Export user response" button, whose download is byte-for-byte what
:func:`okstra_core.workflows.user_response.render_sidecar` writes for the same
answers: Python pre-renders the sidecar header (one per candidate in
comparison mode) and the per-item prompts into the page, and the script
assembles the body with the same normalisation.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from html import escape
from typing import Any

from .. import layout
from ..digests import sha256_bytes
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
from ..resources import read_template
from ..sidecar import format_sidecar
from ..workflows import user_response as ur
from .labels import convergence_facts, html_lang, labels_for
from .markdown import assessment_json
from .templating import fill

Report = FinalReportV3 | FinalReportV2
TEMPLATE = "reports/final-report.template.html"
STYLE = "reports/final-report.css"
SCRIPT = "reports/final-report.js"
NO_SCRIPT = "'none'"


def h(text: object) -> str:
    """Text from the data as HTML text or attribute value (an absent field is empty)."""
    return escape("" if text is None else str(text), quote=True)


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(style: str, script: str | None) -> str:
    """No requests anywhere; only this page's own style and script, pinned by hash."""
    return (
        "default-src 'none'; "
        f"style-src {_csp_hash(style)}; "
        f"script-src {_csp_hash(script) if script is not None else NO_SCRIPT}; "
        "img-src data:; form-action 'none'; base-uri 'none'"
    )


def json_for_script(value: Any) -> str:
    """JSON safe inside a ``<script type="application/json">`` element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def badge(value: str | None, text: str | None = None) -> str:
    if value is None:
        value, text = "none", "—"
    cls = "".join(ch if ch.isalnum() or ch == "-" else "-" for ch in value.lower())
    return f'<span class="badge b-{h(cls)}">{h(text if text is not None else value)}</span>'


def prose(text: str | None) -> str:
    """Narrative text, shown as written (line breaks kept, nothing interpreted); absent: nothing."""
    text = text or ""
    return f'<div class="prose">{h(text.strip(chr(10)))}</div>' if text.strip() else ""


def ul(items: list[str], cls: str = "") -> str:
    if not items:
        return ""
    attr = f' class="{cls}"' if cls else ""
    return f"<ul{attr}>" + "".join(f"<li>{h(i)}</li>" for i in items) + "</ul>"


def dl(rows: list[tuple[str, str]], cls: str = "details") -> str:
    """A definition list; values are already HTML."""
    return f'<dl class="{cls}">' + "".join(f"<dt>{h(k)}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def table(header: list[str], rows: list[list[str]]) -> str:
    """A table; cells are already HTML."""
    head = "".join(f"<th>{h(c)}</th>" for c in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _details(report: Report, lab: dict[str, str], report_rel: str, sha: str) -> str:
    rows = [
        (lab["task_key"], f"<code>{h(report.task_key)}</code>"),
        (lab["task_type"], f"<code>{h(report.task_type)}</code>"),
        (lab["schema_version"], h(report.schema_version)),
    ]
    if report.report_language:
        rows.append((lab["report_language"], f"<code>{h(report.report_language)}</code>"))
    if report.generated_at:
        rows.append((lab["generated_at"], h(report.generated_at)))
    if report.run_date_time_segment:
        rows.append((lab["run_segment"], f"<code>{h(report.run_date_time_segment)}</code>"))
    if report.selected_direction_ref:
        rows.append((lab["selected_direction"], f"<code>{h(report.selected_direction_ref)}</code>"))
    rows.append((lab["source_data"], f"<code>{h(report_rel)}</code>"))
    rows.append((lab["source_sha256"], f'<code id="source-data-sha256">{h(sha)}</code>'))
    return dl(rows)


def _section(section_id: str, heading: str, inner: str) -> str:
    return f'<section id="{section_id}">\n<h2>{h(heading)}</h2>\n{inner}\n</section>'


def _findings(findings: list[Finding], lab: dict[str, str], comparison: bool) -> str:
    if not findings:
        return _section("findings", lab["findings"], f'<p class="muted">{h(lab["no_findings"])}</p>')
    cards = []
    for f in findings:
        evidence = ""
        if f.evidence:
            evidence = f'<p class="muted">{h(lab["evidence"])}</p>' + ul(f.evidence)
        cards.append(
            f'<article class="card finding" id="{h(f.finding_id)}">'
            f"<h3>{h(f.finding_id)} · {h(f.title)} {badge(f.severity)}</h3>"
            f"{prose(f.detail)}{evidence}</article>"
        )
    return _section("findings", lab["findings"], "\n".join(cards))


def _options(oc: OptionCandidates, lab: dict[str, str], comparison: bool) -> str:
    rows = [(lab["mode"], f"<code>{h(oc.mode)}</code>")]
    if oc.recommendation:
        rows.append((lab["recommended"], f"<code>{h(oc.recommendation)}</code>"))
    if oc.preselected:
        p = oc.preselected
        rows.append(
            (
                lab["preselected"],
                f"<code>{h(p.option_id)}</code> · {h(lab['confirmed_by'])}: "
                f"{h(p.confirmed_by)} · {h(lab['confirmed_at'])}: {h(p.confirmed_at)}",
            )
        )
    cards = []
    for c in oc.candidates:
        recommended = c.option_id == oc.recommendation
        flag = " " + badge("recommended", lab["recommended"]) if recommended else ""
        pros = f'<p class="muted">{h(lab["pros"])}</p>' + ul(c.pros) if c.pros else ""
        cons = f'<p class="muted">{h(lab["cons"])}</p>' + ul(c.cons) if c.cons else ""
        choice = ""
        if comparison:
            choice = (
                f'<label class="choice"><input type="radio" name="selected-option" form="user-response" '
                f'value="{h(c.option_id)}" id="choose-{h(c.option_id)}"> {h(lab["choose"])}</label>'
            )
        cards.append(
            f'<article class="card option{" recommended" if recommended else ""}" id="{h(c.option_id)}">'
            f"<h3>{h(c.option_id)} · {h(c.title)}{flag}</h3>"
            f"<p>{h(lab['risk'])}: {badge(c.risk)}</p>{prose(c.summary)}{pros}{cons}{choice}</article>"
        )
    return _section("options", lab["options"], dl(rows) + '\n<div class="cards">\n' + "\n".join(cards) + "\n</div>")


def _plan(plan: ImplementationPlan, lab: dict[str, str], comparison: bool) -> str:
    parts = []
    for s in plan.stages:
        tasks = f'<p class="muted">{h(lab["tasks"])}</p>' + ul(s.tasks) if s.tasks else ""
        goal = f'<p class="muted">{h(lab["goal"])}</p>{prose(s.goal)}' if (s.goal or "").strip() else ""
        parts.append(
            f'<article class="card stage" id="stage-{s.stage}">'
            f'<h3><span class="stage-no">{h(lab["stage"])} {s.stage}</span>{h(s.title)}</h3>{goal}{tasks}</article>'
        )
    if plan.design_items:
        parts.append(f"<h3>{h(lab['design_items'])}</h3>")
        parts.append(
            table(
                [lab["id"], lab["title"], lab["status"]],
                [
                    [f'<a href="#{h(d.prep_id)}">{h(d.prep_id)}</a>', h(d.title), badge(d.status)]
                    for d in plan.design_items
                ],
            )
        )
        for d in plan.design_items:
            body = ""
            if (d.question or "").strip():
                body += f'<p class="muted">{h(lab["question"])}</p>{prose(d.question)}'
            if d.fields:
                body += f"<p>{h(lab['fields'])}: " + ", ".join(f"<code>{h(x)}</code>" for x in d.fields) + "</p>"
            if d.assessment is not None:
                summary = f"<summary>{h(lab['assessment'])}</summary>"
                body += f"<details>{summary}<pre>{h(assessment_json(d.assessment))}</pre></details>"
            else:
                body += f'<p class="muted">{h(lab["legacy_unassessed"])}</p>'
            parts.append(
                f'<article class="card design-item" id="{h(d.prep_id)}">'
                f"<h3>{h(d.prep_id)} · {h(d.title)} {badge(d.status)}</h3>{body}</article>"
            )
    return _section("plan", lab["plan"], "\n".join(parts))


def _results(res: ImplementationResults, lab: dict[str, str], comparison: bool) -> str:
    parts = [dl([(lab["stage"], str(res.stage)), (lab["outcome"], badge(res.outcome))])]
    if res.changes:
        parts.append(f"<h3>{h(lab['changes'])}</h3>")
        parts.append(
            table([lab["path"], lab["change"]], [[f"<code>{h(c.path)}</code>", h(c.summary)] for c in res.changes])
        )
    if res.checks:
        parts.append(f"<h3>{h(lab['checks'])}</h3>")
        parts.append(table([lab["check"], lab["result"]], [[h(c.name), badge(c.result)] for c in res.checks]))
    return _section("results", lab["results"], "\n".join(parts))


def _verdict(v: VerificationVerdict, lab: dict[str, str], comparison: bool) -> str:
    parts = [f'<p class="card verdict">{h(lab["verdict_short"])}: {badge(v.verdict)}</p>']
    if v.criteria:
        parts.append(f"<h3>{h(lab['criteria'])}</h3>")
        parts.append(
            table(
                [lab["criterion"], lab["result"], lab["evidence"]],
                [[h(c.criterion), badge(c.result), h(c.evidence)] for c in v.criteria],
            )
        )
    return _section("verdict", lab["verdict"], "\n".join(parts))


_DELIVERABLES: dict[str, Callable[..., str]] = {
    layout.ANALYSIS: _findings,
    layout.OPTION_SELECTION: _options,
    layout.IMPLEMENTATION_PLANNING: _plan,
    layout.IMPLEMENTATION: _results,
    layout.FINAL_VERIFICATION: _verdict,
}


def _convergence(conv: ConvergenceSummary | None, lab: dict[str, str]) -> str:
    if conv is None:
        return ""
    rows = [
        (
            lab[key],
            (badge(str(value)) if key == "terminal_state" else f"<code>{h(str(value))}</code>")
            if is_code
            else str(value),
        )
        for key, value, is_code in convergence_facts(conv)
    ]
    return _section("convergence", lab["convergence"], dl(rows))


def _item(item: ClarificationItem, lab: dict[str, str]) -> str:
    field_id = f"answer-{item.item_id}"
    context = f'<p class="muted">{h(lab["context"])}</p>{prose(item.context)}' if (item.context or "").strip() else ""
    suggestions = ""
    if item.options:
        lis = "".join(
            f'<li>{h(o)} <button type="button" class="suggest" hidden data-target="{field_id}" '
            f'data-value="{h(o)}">{h(lab["use_suggestion"])}</button></li>'
            for o in item.options
        )
        suggestions = f'<p class="muted">{h(lab["suggested"])}</p><ul class="suggestions">{lis}</ul>'
    return (
        f'<fieldset class="clarification" id="{item.item_id}"><legend>{item.item_id}</legend>'
        f"{prose(item.question)}{context}{suggestions}"
        f'<label for="{field_id}">{h(lab["answer"])}</label>'
        f'<textarea id="{field_id}" name="{field_id}" rows="4"></textarea></fieldset>'
    )


def _response(report: Report, lab: dict[str, str], file_name: str) -> str:
    comparison = ur.sidecar_mode(report) == "comparison"
    if not comparison and not report.clarification_items:
        return ""
    heading = lab["clarifications"] if report.clarification_items else lab["user_response"]
    items = "\n".join(_item(item, lab) for item in report.clarification_items)
    controls = (
        '<div class="export no-print">'
        f'<button type="button" id="export-button" hidden>{h(lab["export"])}</button>'
        f'<p class="muted">{h(lab["export_hint"].format(file=file_name))}</p>'
        '<p id="export-status" role="status"></p>'
        f"<noscript><p>{h(lab['noscript'])}</p></noscript></div>"
    )
    return _section("user-response-section", heading, f'<form id="user-response">\n{items}\n{controls}\n</form>')


def sidecar_name(report_stem: str) -> str:
    """``user-response-<task-type>-<seq>.md`` for ``final-report-<task-type>-<seq>``."""
    return "user-response-" + report_stem.removeprefix("final-report-") + ".md"


def export_config(report: Report, sha: str, report_rel: str, report_stem: str, lab: dict[str, str]) -> dict[str, Any]:
    """What the Export script needs: pre-rendered headers and item prompts (see module docstring)."""
    inp = ur.ExportInput(report, report_rel, report_stem, sha)
    mode = ur.sidecar_mode(report)
    if mode == "comparison":
        oc = report.option_candidates
        assert oc is not None
        options: list[str | None] = [c.option_id for c in oc.candidates]
    else:
        options = [None]
    headers = {opt or "": format_sidecar(ur.header_for(inp, opt).dump(), "") for opt in options}
    file_name = sidecar_name(report_stem)
    return {
        "fileName": file_name,
        "mode": mode,
        "headers": headers,
        "titleLine": f"# User response: {report_stem}",
        "items": [{"id": i.item_id, "quote": f"> {ur.one_line(i.question or '')}"} for i in report.clarification_items],
        "messages": {"chooseFirst": lab["choose_first"], "exported": lab["exported"].format(file=file_name)},
    }


def render_html(report: Report, data_bytes: bytes, report_rel: str, report_stem: str) -> str:
    """The HTML report of *report*, rendered from the exact *data_bytes* at *report_rel*.

    Deterministic: the same inputs give the same text.
    """
    lab = labels_for(report.report_language)
    sha = sha256_bytes(data_bytes)
    style = read_template(STYLE)
    comparison = ur.sidecar_mode(report) == "comparison"
    kind = report.kind()
    render = _DELIVERABLES.get(kind) if kind is not None else None
    deliverable = render(report.deliverable(), lab, comparison) if render is not None else ""
    response = _response(report, lab, sidecar_name(report_stem))
    # Only a page with something to answer carries data for the Export script, and the script.
    script: str | None = None
    scripts = ""
    if response:
        script = read_template(SCRIPT)
        cfg = export_config(report, sha, report_rel, report_stem, lab)
        scripts = (
            f'<script type="application/json" id="okstra-export-data">{json_for_script(cfg)}</script>\n'
            f"<script>{script}</script>"
        )
    values = {
        "lang": html_lang(report.report_language),
        "csp": h(content_security_policy(style, script)),
        "report_rel": h(report_rel),
        "source_sha256": sha,
        "title": h(report.title),
        "style": style,
        "task_type": h(report.task_type),
        "task_type_label": h(report.task_type),
        "details": _details(report, lab, report_rel, sha),
        "summary_heading": h(lab["summary"]),
        "summary": prose(report.summary),
        "deliverable": deliverable,
        "convergence": _convergence(report.convergence, lab),
        "response": response,
        "scripts": scripts,
    }
    return fill(read_template(TEMPLATE), values, name=TEMPLATE)
