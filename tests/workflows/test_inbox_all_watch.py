"""``okstra inbox --all --watch --json``: every project followed, each change naming its project."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from okstra_core import layout
from okstra_core.demo.projects import BILLING_DIR, HOME_DIR, MOBILE_DIR
from okstra_core.store import Project
from okstra_core.workflows.tasks import update_task_manifest

from .test_inbox_watch import LINE_TIMEOUT, OKSTRA, Watch


@pytest.mark.parametrize("mode", ["events", "poll"])
def test_watch_all_follows_every_project(fresh_many: Path, tmp_path: Path, mode: str) -> None:
    env = {**os.environ, "OKSTRA_WATCH": mode}
    argv = [OKSTRA, "inbox", "--all", "--home", str(fresh_many / HOME_DIR), "--watch", "--json"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    watch = Watch(proc)
    try:
        (snapshot,) = watch.events(1)
        assert snapshot["event"] == "snapshot" and snapshot["all"] is True
        assert [p["project"] for p in snapshot["projects"]] == ["demo-shop", "billing", "mobile"]
        late_fees = [i for i in snapshot["items"] if i["task"] == "billing:invoices:late-fees"]
        assert [i["kind"] for i in late_fees] == ["approval"]

        billing = fresh_many / BILLING_DIR
        task = Project(billing).find_task("billing:invoices:late-fees")
        assert task is not None

        def approve(manifest):  # type: ignore[no-untyped-def]
            assert manifest.workflow is not None
            manifest.workflow.awaiting_approval = False
            return manifest

        update_task_manifest(billing, task.root, approve)
        (removed,) = watch.events(1)
        assert removed == {"version": 1, "event": "removed", "item": late_fees[0]}

        away = tmp_path / "away"
        (fresh_many / MOBILE_DIR).rename(away)
        (gone,) = watch.events(1)
        assert {k: gone[k] for k in ("event", "project", "read")} == {
            "event": "project",
            "project": "mobile",
            "read": False,
        }
        assert gone["problem"].startswith(str(fresh_many / MOBILE_DIR))
        away.rename(fresh_many / MOBILE_DIR)
        (back,) = watch.events(1)
        assert {k: back[k] for k in ("event", "project", "read", "problem")} == {
            "event": "project",
            "project": "mobile",
            "read": True,
            "problem": None,
        }
        assert watch.stop() == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=LINE_TIMEOUT)
    assert "watching 3 projects" in "".join(watch.errors)


def test_watch_all_names_a_broken_root_once(fresh_many: Path, tmp_path: Path) -> None:
    path = fresh_many / HOME_DIR / layout.MANAGERS_DIR / "platform" / layout.MANAGER_PROJECTS
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["projects"].append({"projectId": "gone", "projectRoot": str(tmp_path / "gone")})
    path.write_text(json.dumps(doc), encoding="utf-8")
    argv = [OKSTRA, "inbox", "--all", "--home", str(fresh_many / HOME_DIR), "--watch", "--json"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    watch = Watch(proc)
    try:
        (snapshot,) = watch.events(1)
        gone = snapshot["projects"][-1]
        assert (gone["project"], gone["read"], gone["problem"]) == (
            "gone",
            False,
            f"{tmp_path / 'gone'}: the root does not exist",
        )
        assert watch.stop() == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=LINE_TIMEOUT)
    errors = "".join(watch.errors).splitlines()
    assert errors.count(f"okstra inbox: project 'gone' ({tmp_path / 'gone'}): the root does not exist") == 1
