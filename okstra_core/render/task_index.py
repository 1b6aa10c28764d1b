"""``task-index.md``: the quick human summary of a task, from ``task-manifest.json``.

Rendered from ``templates/project-docs/task-index.template.md``. Its headings,
field labels and ``## Notes`` footnote are English literals whatever the
task's ``reportLanguage`` says (the contract's task-index rule); only values
from the manifest vary. ``tests/contract/test_docs_runtime_contract.py``
holds the renderer to that.
"""

from __future__ import annotations

from ..models.task import TaskManifest, Workflow
from .markdown import code, inline
from .templating import fill_template

TEMPLATE = "project-docs/task-index.template.md"
NONE = "(none)"


def _path(value: str | None) -> str:
    return code(value) if value else NONE


def _text(value: str | None) -> str:
    return inline(value) if value and value.strip() else NONE


def next_phase_text(manifest: TaskManifest) -> str:
    """``<phase>`` with its status and rationale; a Phase 7 correction is said so."""
    wf = manifest.workflow
    nxt = wf.next_recommended_phase if wf is not None else None
    if nxt is None:
        return NONE
    text = f"{code(nxt.phase) if nxt.phase else NONE} (status: {code(nxt.status)})"
    if nxt.rationale.strip():
        text += f": {inline(nxt.rationale)}"
    correction = wf.next_recommended_phase_correction if wf is not None else None
    if correction is not None:
        authored = correction.authored
        authored_text = f"authored: {code(authored.phase or NONE)}, status {code(authored.status)}"
        text += f"; corrected by Phase 7 validation ({authored_text})"
    return text


def _fix_cycles(manifest: TaskManifest) -> str:
    fc = manifest.fix_cycles
    if fc is None or fc.count == 0:
        return "0"
    text = str(fc.count)
    if fc.open_cycle_id:
        text += f" (open: {code(fc.open_cycle_id)})"
    return text


def render_task_index(manifest: TaskManifest) -> str:
    """The text of ``task-index.md`` for *manifest*. Deterministic."""
    wf = manifest.workflow or Workflow()
    text = fill_template(
        TEMPLATE,
        {
            "task_key": code(manifest.task_key),
            "title": _text(manifest.title),
            "task_type": code(manifest.task_type) if manifest.task_type else NONE,
            "work_category": code(manifest.work_category) if manifest.work_category else NONE,
            "current_status": code(manifest.current_status) if manifest.current_status else NONE,
            "latest_run_status": code(manifest.latest_run_status) if manifest.latest_run_status else NONE,
            "current_phase": code(wf.current_phase) if wf.current_phase else NONE,
            "current_phase_state": code(wf.current_phase_state) if wf.current_phase_state else NONE,
            "next_recommended_phase": next_phase_text(manifest),
            "fix_cycles": _fix_cycles(manifest),
            "reference_expectations": _path(manifest.reference_expectations_path),
            "latest_run": _path(manifest.latest_run_path),
            "latest_report": _path(manifest.latest_report_record_path),
            "resume_command": _path(manifest.latest_resume_command_path),
        },
    )
    return text.rstrip("\n") + "\n"
