"""Shared pieces of the reliability tests: slim project copies, an idempotent writer, and store validation."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path

from okstra_core import layout, reading, writes
from okstra_core.check import run_check
from okstra_core.models import DOC_KINDS_BY_NAME
from okstra_core.models.run import ErrorRecord, WorkerDispatch
from okstra_core.models.sidecars import DesignPrepInputHeader, DesignPrepRequestHeader, UserResponseHeader
from okstra_core.store import Project
from okstra_core.workflows import (
    convergence,
    design_prep,
    direction,
    invocations,
    migrate,
    prompts,
    teamstate,
    user_response_export,
)
from okstra_core.workflows.common import Clock

RETRY = "demo-shop:payments:retry-policy"
REFUND = "demo-shop:payments:refund-ledger"
ROUNDING = "demo-shop:payments:currency-rounding"
LATENCY = "demo-shop:search:query-latency"
CI = "demo-shop:platform:ci-speedup"

TASKS = (".okstra/tasks/payments", ".okstra/tasks/search/query-latency", ".okstra/tasks/platform/ci-speedup")
AN = ".okstra/tasks/payments/retry-policy/runs/analysis"
TEAM_STATE = f"{AN}/state/team-state-analysis-002.json"
ERRORS_LOG = f"{AN}/logs/errors-analysis-002.jsonl"
WORK = f"{AN}/state/convergence-work-analysis-001.json"
FINAL = f"{AN}/state/convergence-analysis-001.json"
PLAN = ".okstra/tasks/payments/retry-policy/runs/implementation-planning"
REQUEST = f"{PLAN}/design-prep-requests/design-prep-request-002-PREP-001.md"
ROUNDING_SD = ".okstra/tasks/payments/currency-rounding/instruction-set/selected-direction.json"
REFUND_REPORT = ".okstra/tasks/payments/refund-ledger/runs/analysis/reports/final-report-analysis-001.data.json"
CI_PROMPT = (
    ".okstra/tasks/platform/ci-speedup/runs/implementation/stage-1/prompts/"
    "codex-executor-worker-prompt-implementation-001.md"
)
CI_MANIFEST = (
    ".okstra/tasks/platform/ci-speedup/runs/implementation/stage-1/manifests/run-manifest-implementation-001.json"
)

#: One fixed moment: every retry of the writer computes the very same bytes.
FIXED = Clock(start=dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC), step=dt.timedelta(0))


def slim_copy(demo: Path, target: Path, tasks: tuple[str, ...] = TASKS) -> Path:
    """The demo's store with only the tasks these tests touch (faster to copy and check)."""
    (target / ".okstra").mkdir(parents=True)
    for name in ("project.json", "discovery", "agent-invocations"):
        src = demo / ".okstra" / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, target / ".okstra" / name)
    for rel in tasks:
        shutil.copytree(demo / rel, target / rel, symlinks=True)
    return target


def prepare_pending_work(root: Path) -> None:
    """Leave work for the writer: each step of :func:`writer` has something to do."""
    (root / REQUEST).unlink()
    (root / ROUNDING_SD).unlink()
    (root / (CI_PROMPT + ".meta.json")).unlink()
    (root / WORK).write_bytes(b'{"schemaVersion": "1.2", "queue": [')
    (root / FINAL).write_bytes(b'{"schemaVersion": "1.1"}\n')


def _task(root: Path, key: str):  # type: ignore[no-untyped-def]
    task = Project(root).find_task(key)
    assert task is not None
    return task


def writer(root: Path) -> None:
    """A deterministic run of every workflow; each step is idempotent, so a killed run can simply start again."""
    ts = root / TEAM_STATE
    for k in range(4):
        teamstate.upsert_worker_dispatch(
            root,
            ts,
            WorkerDispatch.model_validate(
                {
                    "dispatchId": f"d-crash-{k}",
                    "workerId": "claude-analyser",
                    "dispatchedAt": "2026-12-01T12:00:00Z",
                    "participantRef": "participant:claude-analyser",
                    "roleExecutionRef": "role:analysis:2",
                    "invocationRef": "invocation:crash",
                    "attempt": 1,
                    "executionLabel": "crash",
                }
            ),
        )
    log = root / ERRORS_LOG
    for k in range(3):
        present = log.exists() and f'"code":"crash-{k}"' in log.read_text()
        if not present:  # check-then-append is safe here: one writer at a time
            writes.append_jsonl(
                root, log, ErrorRecord(at="2026-12-01T12:00:00Z", worker_id="w", code=f"crash-{k}", message="m").dump()
            )
    design_prep.materialize(root, _task(root, RETRY))
    inputs = root / PLAN / "design-prep-inputs"
    if not any("confirmed-by: crash-writer" in p.read_text() for p in inputs.glob("*.md")):
        design_prep.confirm(
            root,
            _task(root, RETRY),
            "PREP-001",
            "## format\n\nULID\n\n## rationale\n\nsortable\n",
            confirmed_by="crash-writer",
            clock=FIXED,
        )
    direction.planning_prepare(root, _task(root, ROUNDING), FIXED)
    user_response_export.export(
        root, _task(root, REFUND), root / REFUND_REPORT, {"CQ-001": "All of them.", "CQ-002": "gateway"}, clock=FIXED
    )
    user_response_export.attach_clarification(root, _task(root, REFUND))
    prompts.publish_prompt(
        root,
        root / CI_MANIFEST,
        "assign-02-codex-executor",
        (root / CI_PROMPT).read_text(),
        duty_id="executor",
        instruction_rel=".okstra/tasks/platform/ci-speedup/instruction-set/analysis-packet.md",
        clock=FIXED,
    )
    invocations.start(root, "code-review", "crash-review", "Review.\n", "# Prompt\n", FIXED)
    invocations.complete(root, "code-review", "crash-review", "fine", FIXED)
    migrate.migrate_task(root, _task(root, LATENCY))
    convergence.seed_work(root, root / AN, "analysis", 1, restart_from_round0=True, clock=FIXED)


def is_private(name: str) -> bool:
    return name.startswith(".") or name.endswith(layout.LOCK_SUFFIX)


def visible_files(root: Path) -> dict[str, bytes]:
    """What readers see: every file outside private names (temp files, locks, claims, reservations)."""
    out: dict[str, bytes] = {}
    for dirpath, dirs, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirs[:] = [d for d in dirs if not is_private(d) or d == ".okstra"]
        for name in files:
            if not is_private(name):
                with open(os.path.join(dirpath, name), "rb") as fh:
                    out[os.path.normpath(os.path.join(rel, name))] = fh.read()
    return out


_SIDECARS = {
    "user-responses": UserResponseHeader,
    "design-prep-inputs": DesignPrepInputHeader,
    "design-prep-requests": DesignPrepRequestHeader,
}


def unparseable(root: Path) -> list[str]:
    """Visible JSON, JSONL and sidecar files that do not parse (a partial file would be one)."""
    bad = []
    for rel, data in visible_files(root).items():
        path = root / rel
        if rel.endswith(".jsonl"):
            doc = (
                reading.parse_jsonl(path, data.decode(), DOC_KINDS_BY_NAME["errors-log"].model)
                if "errors-" in rel
                else None
            )
            text = data.decode()
            if (doc is not None and doc.errors) or (text and not text.endswith("\n")):
                bad.append(rel)
            elif doc is None:
                try:
                    [json.loads(line) for line in text.splitlines()]
                except ValueError:
                    bad.append(rel)
        elif rel.endswith(".json"):
            try:
                json.loads(data)
            except ValueError:
                if rel not in (WORK, FINAL):  # the scenario's deliberately invalid convergence state
                    bad.append(rel)
        elif (
            path.parent.name in _SIDECARS
            and rel.endswith(".md")
            and isinstance(
                reading.parse_sidecar_text(path, data.decode(), _SIDECARS[path.parent.name]), reading.LoadError
            )
        ):
            bad.append(rel)
    return bad


def error_findings(root: Path) -> set[tuple[str, str, str]]:
    return {
        (f.rule, f.path, f.message) for f in run_check(root, home=root / ".no-home").findings if f.severity == "error"
    }
