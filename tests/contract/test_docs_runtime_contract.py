"""The task-index contract: ``task-index.md`` is an English-literal artifact.

Its headings, field labels and ``## Notes`` footnote ship as English literals
from ``templates/project-docs/task-index.template.md`` whatever the task's
``reportLanguage`` says; only values taken from the manifest vary. The fields
are the ones the storage contract's "Task index contract" lists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from okstra_core import layout, reading
from okstra_core.cli import main
from okstra_core.models.task import TaskManifest
from okstra_core.render import render_task_index
from okstra_core.render.templating import placeholders
from okstra_core.resources import read_template

TEMPLATE = "project-docs/task-index.template.md"

#: The contract's task-index contents, in its words, each with the label that shows it.
CONTRACT_FIELDS = {
    "task key": "Task key",
    "current task type": "Current task type",
    "work category": "Work category",
    "current task status": "Current task status",
    "latest run status": "Latest run status",
    "current phase": "Current phase",
    "current phase state": "Current phase state",
    "next recommended phase": "Next recommended phase",
    "reference expectations": "Reference expectations",
    "latest run": "Latest run",
    "latest report": "Latest report",
    "resume command": "Resume command",
}
HEADINGS = ["# Task Index", "## Task", "## Workflow", "## Paths", "## Notes"]
NOTES_SENTENCE = (
    "This document is only a quick summary and is not the source of truth. "
    "Always use `task-manifest.json` when checking canonical metadata."
)
LABEL_LINE = re.compile(r"^- ([A-Z][A-Za-z ]+): ")


RUN = ".okstra/tasks/checkout/chk-42/runs/implementation/stage-2"


def _manifest(language: str | None, **values: str) -> TaskManifest:
    doc = {
        "schemaVersion": "1.0",
        "projectId": "shop",
        "taskGroup": "checkout",
        "taskId": "CHK-42",
        "taskKey": "shop:checkout:CHK-42",
        "projectRoot": "/srv/shop",
        "taskType": "implementation",
        "workCategory": "bugfix",
        "title": values.get("title", "Checkout retries"),
        "currentStatus": "in-progress",
        "taskRootPath": ".okstra/tasks/checkout/chk-42",
        "instructionSetPath": ".okstra/tasks/checkout/chk-42/instruction-set",
        "referenceExpectationsPath": ".okstra/tasks/checkout/chk-42/instruction-set/reference-expectations.md",
        "runsPath": ".okstra/tasks/checkout/chk-42/runs",
        "historyTimelinePath": ".okstra/tasks/checkout/chk-42/history/timeline.json",
        "latestRunPath": ".okstra/tasks/checkout/chk-42/runs/implementation/stage-2",
        "latestRunStatus": "completed",
        "latestReportRecordPath": RUN + "/reports/final-report-implementation-001.data.json",
        "latestResumeCommandPath": RUN + "/sessions/claude-resume-implementation-001.sh",
        "workflow": {
            "currentPhase": "implementation",
            "currentPhaseState": "completed",
            "nextRecommendedPhase": {
                "phase": "final-verification",
                "status": "ready",
                "rationale": values.get("rationale", "all stages passed"),
            },
        },
    }
    if language is not None:
        doc["reportLanguage"] = language
    return TaskManifest.model_validate(doc)


def _structure(text: str) -> list[str]:
    """Headings, labels and notes: every line with the manifest's values cut out."""
    out = []
    for line in text.split("\n"):
        match = LABEL_LINE.match(line)
        out.append(f"- {match.group(1)}:" if match else line)
    return out


def _literal_text(template: str) -> str:
    return re.sub(r"\{\{\s*[a-z_]+\s*\}\}", "", template)


def test_template_literals_are_english_ascii() -> None:
    template = read_template(TEMPLATE)
    assert _literal_text(template).isascii()
    lines = template.split("\n")
    assert [line for line in lines if line.startswith("#")] == HEADINGS
    assert lines.index("## Notes") > max(i for i, line in enumerate(lines) if "{{" in line)
    assert f"- {NOTES_SENTENCE}" in lines


def test_template_shows_every_contract_field() -> None:
    template = read_template(TEMPLATE)
    labels = {m.group(1) for line in template.split("\n") if (m := LABEL_LINE.match(line))}
    missing = {field for field, label in CONTRACT_FIELDS.items() if label not in labels}
    assert not missing, f"task-index template lacks contract fields: {sorted(missing)}"
    assert set(placeholders(template)) >= {
        "task_key",
        "task_type",
        "work_category",
        "current_status",
        "latest_run_status",
        "current_phase",
        "current_phase_state",
        "next_recommended_phase",
        "reference_expectations",
        "latest_run",
        "latest_report",
        "resume_command",
    }


@pytest.mark.parametrize("language", ["ko", "ja", "de-DE", "korean", None])
def test_report_language_does_not_change_the_document(language: str | None) -> None:
    english = render_task_index(_manifest("en"))
    assert render_task_index(_manifest(language)) == english
    assert english.isascii()


def test_localised_values_keep_english_labels_and_notes() -> None:
    text = render_task_index(_manifest("ko", title="결제 재시도 정책", rationale="모든 단계 통과"))
    assert "결제 재시도 정책" in text and "모든 단계 통과" in text
    assert _structure(text) == _structure(render_task_index(_manifest("en")))
    assert "\n## Notes\n" in text and NOTES_SENTENCE in text
    non_ascii = [line for line in text.split("\n") if not line.isascii()]
    assert all(LABEL_LINE.match(line) for line in non_ascii), non_ascii


def test_every_demo_task_index_is_english_literal(demo_root: Path, tmp_path: Path) -> None:
    roots = sorted(p.parent for p in demo_root.glob(".okstra/tasks/*/*/task-manifest.json"))
    assert roots
    reference = _structure(render_task_index(_manifest("en")))
    for root in roots:
        manifest = reading.load_model(layout.task_manifest_path(root), TaskManifest)
        assert isinstance(manifest, TaskManifest), manifest
        text = render_task_index(manifest)
        assert _structure(text) == reference, root
        out = tmp_path / f"{root.name}-task-index.md"
        assert main(["render-task-index", str(root), "-o", str(out)]) == 0
        assert out.read_text(encoding="utf-8") == text
        assert main(["render-task-index", str(root), "-o", str(out)]) == 0  # identical bytes: fine
