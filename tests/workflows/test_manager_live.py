"""A manager task's children read live (:mod:`okstra_core.workflows.manager_live`), and the demo of many
projects (``okstra demo --projects``) that holds one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from okstra_core import layout
from okstra_core.demo.projects import BILLING_DIR, HOME_DIR, MANAGER_ID, MANAGER_TASK, MOBILE_DIR, SHOP_DIR
from okstra_core.manager_home import list_managers
from okstra_core.store import Project
from okstra_core.workflows.inbox import read_inbox
from okstra_core.workflows.manager_live import LiveTask, live_task, sync_command
from okstra_core.workflows.tasks import update_task_manifest

from .helpers import okstra


def _live(base: Path) -> LiveTask:
    (manager,) = list_managers(base / HOME_DIR)
    (task,) = manager.tasks()
    return live_task(manager, task)


def test_the_demo_writes_three_projects_and_their_manager(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = okstra(capsys, "demo", "--projects", tmp_path / "many")
    base = (tmp_path / "many").resolve()
    assert result.code == 0 and f"export OKSTRA_HOME={base / HOME_DIR}" in result.out
    assert sorted(p.name for p in base.iterdir()) == sorted([HOME_DIR, SHOP_DIR, BILLING_DIR, MOBILE_DIR])
    assert not layout.demo_home(base / SHOP_DIR).exists(), "the shop has no manager home of its own"
    for folder in (SHOP_DIR, BILLING_DIR, MOBILE_DIR):
        inbox = read_inbox(Project(base / folder))
        assert inbox.complete and inbox.items, f"decisions wait in {folder}"
    check = okstra(capsys, "check", base / BILLING_DIR, "--home", base / HOME_DIR, "--no-cache")
    assert check.code == 0, check.out


def test_the_demo_refuses_a_folder_that_is_not_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "f").write_text("")
    assert okstra(capsys, "demo", "--projects", tmp_path / "x").code == 1
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == ["f"]


def test_children_live_in_three_projects_and_billings_snapshot_is_stale(many_root: Path) -> None:
    live = _live(many_root)
    assert live.task_key == MANAGER_TASK and live.problems == []
    assert [(c.project_id, c.read) for c in live.children] == [("demo-shop", True), ("billing", True), ("mobile", True)]
    roots = {c.project_root for c in live.children}
    assert roots == {many_root / SHOP_DIR, many_root / BILLING_DIR, many_root / MOBILE_DIR}
    stale = {c.project_id: c.stale for c in live.children}
    assert stale["demo-shop"] == [] and stale["mobile"] == []
    assert stale["billing"] == [
        "the snapshot says currentStatus 'in-progress', the project says 'completed'",
        "the snapshot says latestRunStatus 'in-progress', the project says 'completed'",
    ]
    billing = live.children[1]
    assert billing.refresh == sync_command(MANAGER_ID, MANAGER_TASK)
    assert billing.refresh == "okstra manager task sync --manager platform platform:launch:checkout-revamp"
    assert [c.refresh for c in live.children] == [None, billing.refresh, None]


def test_each_child_carries_what_its_project_says_now(many_root: Path) -> None:
    for child in _live(many_root).children:
        assert child.project_root is not None and child.task_key is not None
        project = Project(child.project_root)
        task = project.find_task(child.task_key)
        assert task is not None
        manifest = task.manifest
        assert not isinstance(manifest, Exception) and manifest.workflow is not None  # type: ignore[union-attr]
        assert (child.current_status, child.phase) == (manifest.current_status, manifest.workflow.current_phase)  # type: ignore[union-attr]
        waiting = [d for d in read_inbox(project).items if d.task == child.task_key]
        assert child.waiting == waiting and waiting, "each child has a decision waiting"
        doc = child.to_json()
        assert doc["live"]["waiting"] == [d.to_json() for d in waiting]


def test_a_change_in_the_child_project_makes_its_snapshot_stale(fresh_many: Path) -> None:
    root = fresh_many / MOBILE_DIR
    task = Project(root).find_task("mobile:app:offline-cart")
    assert task is not None

    def cancel(manifest):  # type: ignore[no-untyped-def]
        manifest.current_status = "cancelled"
        return manifest

    update_task_manifest(root, task.root, cancel)
    mobile = _live(fresh_many).children[2]
    assert mobile.stale == ["the snapshot says currentStatus 'completed', the project says 'cancelled'"]
    assert mobile.refresh is not None


@pytest.mark.parametrize("case", ["unregistered", "root-gone", "task-gone", "unknown-task"])
def test_a_child_that_cannot_be_read_says_why_and_is_never_stale(fresh_many: Path, case: str) -> None:
    import shutil

    projects_file = fresh_many / HOME_DIR / layout.MANAGERS_DIR / MANAGER_ID / layout.MANAGER_PROJECTS
    if case == "unregistered":
        doc = json.loads(projects_file.read_text(encoding="utf-8"))
        doc["projects"] = [p for p in doc["projects"] if p["projectId"] != "mobile"]
        projects_file.write_text(json.dumps(doc), encoding="utf-8")
        reason = "project 'mobile' is not registered with this manager"
    elif case == "root-gone":
        shutil.rmtree(fresh_many / MOBILE_DIR)
        reason = f"{fresh_many / MOBILE_DIR}: the root does not exist"
    elif case == "unknown-task":
        children = (
            projects_file.parent / layout.MANAGER_TASK_GROUPS / "launch" / "checkout-revamp" / layout.MANAGER_CHILDREN
        )
        children.write_text(
            children.read_text(encoding="utf-8").replace("offline-cart", "no-such-task"), encoding="utf-8"
        )
        reason = f"{fresh_many / MOBILE_DIR}: no task 'mobile:app:no-such-task' in this project"
    else:
        shutil.rmtree(layout.tasks_dir(fresh_many / MOBILE_DIR) / "app" / "offline-cart")
        # The catalog still names the task: its manifest is what is missing.
        gone = layout.task_manifest_path(layout.tasks_dir(fresh_many / MOBILE_DIR) / "app" / "offline-cart")
        reason = f"{gone}: file is missing"
    mobile = _live(fresh_many).children[2]
    assert (mobile.read, mobile.problem, mobile.stale, mobile.refresh) == (False, reason, [], None)
    assert mobile.to_json()["live"] is None


def test_an_unreadable_children_file_is_one_problem(fresh_many: Path) -> None:
    (manager,) = list_managers(fresh_many / HOME_DIR)
    (task,) = manager.tasks()
    (task.folder / layout.MANAGER_CHILDREN).write_text("{", encoding="utf-8")
    live = live_task(manager, task)
    assert live.children == [] and len(live.problems) == 1
    assert live.problems[0].startswith(str(task.folder / layout.MANAGER_CHILDREN))
