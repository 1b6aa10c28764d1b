"""Store documents are changed through their models: unknown keys survive, the bytes are those a
plain edit of the JSON gives, an invalid result is refused, and a misspelt field is a type error."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from okstra_core import layout
from okstra_core.digests import pretty_json
from okstra_core.errors import ValidationFailed
from okstra_core.models import task as tm
from okstra_core.workflows.tasks import lower_ready_pointer, update_task_manifest

from .helpers import RETRY

REPO = Path(__file__).resolve().parents[2]
NOW = "2026-12-24T10:00:00Z"
NEXT = tm.NextRecommendedPhase(phase="final-verification", status="ready", rationale="stages done")
OUTCOME = {"implementation": "all stages verified"}
#: Keys no model names, at the top and inside ``workflow``, with values of every JSON kind.
UNKNOWN = {"reviewNotes": {"by": "ops", "marks": [1, 2.5, None, True], "note": "ünïcode"}, "legacyFlag": False}
UNKNOWN_IN_WORKFLOW = {"gate": "manual", "checks": ["a", "b"]}


def _task_roots(root: Path) -> list[Path]:
    return sorted(p for p in layout.tasks_dir(root).glob("*/*") if layout.task_manifest_path(p).is_file())


def _retry_root(root: Path) -> Path:
    key = layout.TaskKey.parse(RETRY)
    return layout.task_root(root, key.task_group, key.task_id)


def _dict_close(m: dict[str, Any], status: str, task_type: str) -> dict[str, Any]:
    """How a run's close edited the manifest when writers got the JSON dict."""
    m["currentStatus"] = status
    m["latestRunStatus"] = status
    m["latestReportRecordPath"] = "reports/final.data.json"
    wf = m["workflow"]
    wf["currentPhaseState"] = status
    wf.setdefault("phaseStates", {})[task_type] = status
    if status == "completed":
        wf["lastCompletedPhase"] = task_type
        wf["lastSafeCheckpoint"] = "manifests/run-manifest.json"
    pointer = wf.get("nextRecommendedPhase")
    if isinstance(pointer, dict) and pointer.get("status") == "ready":
        pointer["status"] = "pending"
    wf["nextRecommendedPhase"] = NEXT.dump()
    wf.pop("nextRecommendedPhaseCorrection", None)
    wf["awaitingApproval"] = False
    m["phaseOutcome"] = {**(m.get("phaseOutcome") or {}), **OUTCOME}
    m["updatedAt"] = NOW
    return m


def _typed_close(status: str, task_type: str) -> Any:
    def edit(m: tm.TaskManifest) -> tm.TaskManifest:
        m.current_status = status
        m.latest_run_status = status
        m.latest_report_record_path = "reports/final.data.json"
        wf = m.workflow = m.workflow or tm.Workflow()
        wf.current_phase_state = status
        wf.phase_states[task_type] = status
        if status == "completed":
            wf.last_completed_phase = task_type
            wf.last_safe_checkpoint = "manifests/run-manifest.json"
        lower_ready_pointer(wf)
        wf.next_recommended_phase = NEXT
        wf.next_recommended_phase_correction = None
        wf.awaiting_approval = False
        m.phase_outcome = {**(m.phase_outcome or {}), **OUTCOME}
        m.updated_at = NOW
        return m

    return edit


@pytest.mark.parametrize("status", ["completed", "error"])
@pytest.mark.parametrize("unknown", [False, True], ids=["as-written", "with-unknown-keys"])
def test_update_bytes_match_the_dict_edit(fresh_demo: Path, status: str, unknown: bool) -> None:
    roots = _task_roots(fresh_demo)
    assert len(roots) >= 10
    for task_root in roots:
        path = layout.task_manifest_path(task_root)
        value = json.loads(path.read_bytes())
        if unknown:
            value.update(UNKNOWN)
            value["workflow"].update(UNKNOWN_IN_WORKFLOW)
            path.write_bytes(pretty_json(value))
        task_type = value["taskType"]
        expected = pretty_json(tm.TaskManifest.model_validate(_dict_close(value, status, task_type)).dump())
        returned = update_task_manifest(fresh_demo, task_root, _typed_close(status, task_type))
        assert path.read_bytes() == expected, path
        assert pretty_json(returned.dump()) == expected


def test_unknown_keys_survive_an_update(fresh_demo: Path) -> None:
    root = _retry_root(fresh_demo)
    path = layout.task_manifest_path(root)
    value = json.loads(path.read_bytes())
    value.update(UNKNOWN)
    value["workflow"].update(UNKNOWN_IN_WORKFLOW)
    value["fixCycles"]["note"] = {"kept": True}
    path.write_bytes(pretty_json(value))

    def edit(m: tm.TaskManifest) -> tm.TaskManifest:
        m.latest_run_status = "in-progress"
        return m

    update_task_manifest(fresh_demo, root, edit)
    after = json.loads(path.read_bytes())
    assert after["latestRunStatus"] == "in-progress"
    for key, kept in UNKNOWN.items():
        assert after[key] == kept
    for key, kept in UNKNOWN_IN_WORKFLOW.items():
        assert after["workflow"][key] == kept
    assert after["fixCycles"]["note"] == {"kept": True}
    assert {k: v for k, v in after.items() if k != "latestRunStatus"} == {
        k: v for k, v in value.items() if k != "latestRunStatus"
    }


def test_an_invalid_new_manifest_is_refused_before_writing(fresh_demo: Path) -> None:
    root = _retry_root(fresh_demo)
    path = layout.task_manifest_path(root)
    before = path.read_bytes()

    def edit(m: tm.TaskManifest) -> tm.TaskManifest:
        m.task_key = "not a task key"  # assignments are not checked as they are made
        return m

    with pytest.raises(ValidationFailed, match="does not match TaskManifest"):
        update_task_manifest(fresh_demo, root, edit)
    assert path.read_bytes() == before


def test_an_invalid_current_manifest_is_refused_not_replaced(fresh_demo: Path) -> None:
    root = _retry_root(fresh_demo)
    path = layout.task_manifest_path(root)
    path.write_bytes(b'{"taskKey": 3}\n')
    with pytest.raises(ValidationFailed, match="does not match TaskManifest"):
        update_task_manifest(fresh_demo, root, lambda m: m)
    assert path.read_bytes() == b'{"taskKey": 3}\n'


def test_a_misspelt_field_is_a_type_error(tmp_path: Path) -> None:
    """mypy (strict, with the pydantic plugin, as ``make check`` runs it) refuses an unknown attribute.

    At run time the models accept any attribute (they keep unknown keys), so the type check is the guard.
    """
    example = tmp_path / "edit.py"
    example.write_text(
        textwrap.dedent(
            """\
            from okstra_core.models import task as tm


            def good(m: tm.TaskManifest) -> tm.TaskManifest:
                m.latest_run_status = "completed"
                return m


            def bad(m: tm.TaskManifest) -> tm.TaskManifest:
                m.latest_run_statsu = "completed"
                return m
            """
        )
    )
    config = str(REPO / "pyproject.toml")
    # In a process of its own: mypy raises the interpreter's recursion limit for good.
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", config, "--cache-dir", str(tmp_path / "cache"), str(example)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert len(errors) == 1, out
    assert f"{example}:10: error:" in errors[0]
    assert '"TaskManifest" has no attribute "latest_run_statsu"' in errors[0]
