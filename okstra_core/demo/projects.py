"""The demo of "all your projects": three projects and a manager home that registers them.

``generate_projects(DIR)`` writes, through the same write path as the
single-project demo:

* ``DIR/shop/``: the single-project demo's tasks (project ``demo-shop``,
  seven decisions waiting), without its own manager home;
* ``DIR/billing/`` (project ``billing``) and ``DIR/mobile/`` (project
  ``mobile``): two small projects, each with an analysis whose clarification
  questions wait for answers and a task awaiting approval;
* ``DIR/okstra-home/``: the manager home (use it as ``OKSTRA_HOME``), with
  the manager ``platform`` registering the three projects and the task
  ``platform:launch:checkout-revamp`` whose children live in the three
  projects. Its snapshots of ``demo-shop`` and ``mobile`` say what those
  projects record; the snapshot of ``billing`` is stale (taken before the
  analysis ended), so the live view names it with the command that refreshes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import layout, reading, writes
from ..errors import WriteRefused
from ..models import manager as mm
from ..progress import Progress
from ..store import Project
from ..times import iso
from ..workflows import manager
from ..workflows.tasks import TaskSpec, create_task
from .content import ANALYSERS, PROJECT_ID, WRITER
from .runs import close, close_awaiting_approval, team_run, write_report, write_task_index
from .schedule import DemoClock, on, slot

#: The folders ``generate_projects`` writes in its target.
HOME_DIR = "okstra-home"
SHOP_DIR = "shop"
BILLING_DIR = "billing"
MOBILE_DIR = "mobile"
MANAGER_ID = "platform"
MANAGER_TASK = "platform:launch:checkout-revamp"


def generate_projects(target: Path | str, progress: Progress | None = None) -> Path:
    """Write the three demo projects and their manager home into *target* (missing or empty); return it.

    *progress*, when given, is called with ``(tasks written, tasks)`` as the shop's tasks are written (most of
    the time it takes).
    """
    from . import generate

    base = Path(target)
    if base.exists() and any(base.iterdir()):
        raise WriteRefused(base, "demo target exists and is not empty")
    writes.ensure_root(base)
    base = base.resolve()
    generate(base / SHOP_DIR, manager=False, progress=progress)
    clock = DemoClock(on(20, "09:00"))
    for folder, small in ((BILLING_DIR, BILLING), (MOBILE_DIR, MOBILE)):
        _small_project(base / folder, small, clock)
    _manager_home(base, clock)
    return base


@dataclass(frozen=True)
class _Small:
    """What one small project holds: an analysis with questions for a person, and a task awaiting approval."""

    project_id: str
    group: str
    task: str
    title: str
    brief: str
    summary: str
    finding: dict[str, Any]
    questions: list[dict[str, Any]]
    approval_task: str
    approval_title: str
    approval_brief: str

    @property
    def child_key(self) -> str:
        return layout.task_key_text(self.project_id, self.group, self.task)


def _small_project(root: Path, small: _Small, clock: DemoClock) -> None:
    writes.ensure_root(root)
    writes.ensure_dir(root, layout.okstra_dir(root))
    spec = TaskSpec(small.project_id, small.group, small.task, "analysis", "investigation", small.title, small.brief)
    troot = create_task(root, spec, clock, point=False)
    run = team_run(root, troot, "analysis", [ANALYSERS[0], WRITER], clock, rich_team=False, slot=slot(20, "10:00", 30))
    findings = {"analysisFindings": [small.finding]}
    rep = write_report(run, small.title, small.summary, findings, clarification=small.questions, clock=clock)
    close(run, rep, clock, next_phase="analysis", next_status="blocked", rationale="waiting for clarification answers")
    spec = TaskSpec(
        small.project_id,
        small.group,
        small.approval_task,
        "analysis",
        "bugfix",
        small.approval_title,
        small.approval_brief,
    )
    troot = create_task(root, spec, clock, point=False)
    run = team_run(root, troot, "analysis", [ANALYSERS[1], WRITER], clock, rich_team=False, slot=slot(20, "14:00", 25))
    rep = write_report(run, small.approval_title, "Findings ready.", {"analysisFindings": [small.finding]}, clock=clock)
    close_awaiting_approval(run, rep, clock)
    for ref in Project(root).task_refs:
        write_task_index(root, ref.root)


def _manager_home(base: Path, clock: DemoClock) -> None:
    home = base / HOME_DIR
    manager.create_manager(home, MANAGER_ID, "Platform launch", clock)
    for name, project_id, role in (
        (SHOP_DIR, PROJECT_ID, "lead"),
        (BILLING_DIR, BILLING.project_id, "member"),
        (MOBILE_DIR, MOBILE.project_id, "member"),
    ):
        manager.register_project(home, MANAGER_ID, project_id, base / name, role=role, clock=clock)
    children = [
        (PROJECT_ID, "demo-shop:checkout:fraud-rules"),
        (BILLING.project_id, BILLING.child_key),
        (MOBILE.project_id, MOBILE.child_key),
    ]
    folder = manager.create_manager_task(
        home,
        MANAGER_ID,
        MANAGER_TASK,
        "Checkout revamp",
        ["choose where fraud rules run", "settle invoice rounding", "cart works offline"],
        [
            mm.ChildAssignment(project_id=p, child_task_id=k.rsplit(":", 1)[1], child_task_key=k, status="assigned")
            for p, k in children
        ],
        clock,
    )
    snapshots = {p: _snapshot_now(base, p, k, clock) for p, k in children}
    # Taken before billing's analysis ended: the live view shows it stale.
    snapshots[BILLING.project_id] = mm.ProjectSnapshot(
        task_key=children[1][1],
        current_status="in-progress",
        latest_run_status="in-progress",
        synced_at=iso(on(20, "09:30")),
    )
    manager.write_snapshots(home, folder, snapshots)
    manager.add_event(home, folder, "task-created", {"children": len(children)}, clock)
    manager.add_directive(home, folder, "shared", "The three changes ship together, behind one flag.", clock=clock)


def _snapshot_now(base: Path, project_id: str, key: str, clock: DemoClock) -> mm.ProjectSnapshot:
    folder = {PROJECT_ID: SHOP_DIR, BILLING.project_id: BILLING_DIR, MOBILE.project_id: MOBILE_DIR}[project_id]
    task = Project(base / folder).find_task(key)
    manifest = None if task is None else task.manifest
    if manifest is None or isinstance(manifest, reading.LoadError):
        raise WriteRefused(base / folder, f"the demo task {key} was not written")
    return mm.ProjectSnapshot(
        task_key=key,
        current_status=manifest.current_status,
        latest_run_status=manifest.latest_run_status,
        synced_at=iso(clock.now()),
    )


BILLING = _Small(
    project_id="billing",
    group="invoices",
    task="invoice-rounding",
    title="Invoice totals off by a cent",
    brief="Some invoices total one cent more than their lines.",
    summary="Lines are rounded before they are summed; finance must say which total is right.",
    finding={
        "findingId": "F-001",
        "title": "Lines rounded before the sum",
        "severity": "medium",
        "detail": "Each line is rounded to cents, then the lines are added.",
        "evidence": ["billing/invoice.py:88"],
    },
    questions=[
        {
            "itemId": "CQ-001",
            "question": "Which total is binding: the sum of rounded lines or the rounded sum?",
            "context": "F-001: 2% of last month's invoices differ by one cent.",
            "options": ["sum of rounded lines", "rounded sum"],
        }
    ],
    approval_task="late-fees",
    approval_title="Late fees charged twice",
    approval_brief="A retry of the nightly job charges the late fee again.",
)

MOBILE = _Small(
    project_id="mobile",
    group="app",
    task="offline-cart",
    title="Cart lost when offline",
    brief="Items added to the cart on a train vanish when the app comes back online.",
    summary="The cart is kept in memory only; two questions on what to keep.",
    finding={
        "findingId": "F-001",
        "title": "Cart kept in memory only",
        "severity": "high",
        "detail": "The cart store is never written to disk, so a restart empties it.",
        "evidence": ["app/cart/store.ts:12"],
    },
    questions=[
        {
            "itemId": "CQ-001",
            "question": "How long should an offline cart be kept?",
            "context": "F-001: prices may change meanwhile.",
            "options": ["one day", "one week"],
        },
        {"itemId": "CQ-002", "question": "Should a kept cart show old prices or new ones?", "context": "F-001."},
    ],
    approval_task="push-badges",
    approval_title="Badge count stays after reading",
    approval_brief="The app icon keeps its badge after every message is read.",
)
