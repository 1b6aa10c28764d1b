"""Containment on reads: a folder inside .okstra/ that is a symlink leading outside is never followed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from okstra_core import reading, writes
from okstra_core.cli import main
from okstra_core.errors import LoadError, WriteRefused

CR = "demo-shop:payments:currency-rounding"
RP = "demo-shop:payments:retry-policy"


def _swap_for_outside_link(folder: Path, outside: Path) -> None:
    """Move *folder* out of the store and leave a symlink to it in its place."""
    shutil.move(folder, outside)
    folder.symlink_to(outside)


def test_read_through_a_symlinked_folder_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".okstra").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.json").write_text("{}", encoding="utf-8")
    (root / ".okstra" / "linked").symlink_to(outside)
    got = reading.read_bytes(root / ".okstra" / "linked" / "a.json", root=root)
    assert isinstance(got, LoadError)
    assert "symlink leading outside" in got.reason
    # Inside the root a symlinked folder is fine.
    (root / ".okstra" / "real").mkdir()
    (root / ".okstra" / "real" / "b.json").write_text("{}", encoding="utf-8")
    (root / ".okstra" / "alias").symlink_to(root / ".okstra" / "real")
    assert reading.read_bytes(root / ".okstra" / "alias" / "b.json", root=root) == b"{}"


def test_verify_completion_does_not_print_a_body_stored_outside(
    fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = fresh_demo / ".okstra/agent-invocations/code-review"
    _swap_for_outside_link(folder, tmp_path / "outside")
    code = main(
        [
            "agent-prompt",
            "verify-completion",
            str(fresh_demo),
            "--purpose",
            "code-review",
            "--id",
            "review-retry-policy-branch",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 1
    assert out == ""
    assert "symlink leading outside" in err and len(err.strip().splitlines()) == 1


def test_planning_prepare_refuses_a_report_stored_outside(
    fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = fresh_demo / ".okstra/tasks/payments/currency-rounding"
    (task / "instruction-set/selected-direction.json").unlink()
    _swap_for_outside_link(task / "runs/option-selection/reports", tmp_path / "outside")
    code = main(["planning", "prepare", str(fresh_demo), "--task", CR])
    err = capsys.readouterr().err
    assert code == 1
    assert "symlink leading outside" in err
    assert not (task / "instruction-set/selected-direction.json").exists()


def test_design_prep_resolve_grants_no_authority_to_inputs_stored_outside(
    fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = fresh_demo / ".okstra/tasks/payments/retry-policy/runs/implementation-planning/design-prep-inputs"
    assert main(["design-prep", "resolve", str(fresh_demo), "--task", RP]) == 0
    before = capsys.readouterr().out
    assert "design-prep-inputs/design-prep-input-" in before, "the demo has authoritative inputs"
    names = sorted(p.name for p in inputs.iterdir() if p.name.startswith("design-prep-input-"))
    _swap_for_outside_link(inputs, tmp_path / "outside")
    # Inputs it cannot trust are skipped with a warning, like duplicates and stale fingerprints: exit 0.
    assert main(["design-prep", "resolve", str(fresh_demo), "--task", RP]) == 0
    after = capsys.readouterr().out
    authoritative = [line for line in after.splitlines() if line.startswith("PREP-") and "design-prep-input-" in line]
    assert authoritative == []
    reason = "(a folder on its path is a symlink leading outside the project root)"
    assert sorted(line.split()[1] for line in after.splitlines() if line.endswith(reason)) == names
    assert main(["design-prep", "resolve", str(fresh_demo), "--task", RP, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["error"] is None
    assert all(i["authoritative"] is None for i in doc["items"]), doc["items"]


def test_append_jsonl_refuses_a_hard_linked_target(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b'{"keep":1}\n{"torn"')
    os.link(outside, root / "log.jsonl")
    with pytest.raises(WriteRefused, match="hard link"):
        writes.append_jsonl(root, "log.jsonl", {"a": 1})
    assert outside.read_bytes() == b'{"keep":1}\n{"torn"'


SECRET = "outside-secret-title"


def _manager_home(tmp_path: Path) -> tuple[Path, Path]:
    """A manager home with one manager and one task (and a child-context file); returns (home, task folder)."""
    from okstra_core.workflows import manager as wm

    home = tmp_path / "home"
    wm.create_manager(home, "m1", "Manager one")
    task = wm.create_manager_task(home, "m1", "mgr:group:task-1", "Task one", ["step"], [])
    wm.write_child_context(home, task, "proj", "child-1", "# context\n")
    return home, task


def _assert_refused(got: object) -> None:
    assert isinstance(got, LoadError), got
    assert "symlink" in got.reason and ("outside" in got.reason or "escapes" in got.reason)
    assert got.reason.endswith("the manager home"), got.reason
    assert len(str(got).splitlines()) == 1
    assert SECRET not in str(got)


def test_manager_reads_refuse_a_manager_folder_linked_outside(tmp_path: Path) -> None:
    from okstra_core.manager_home import list_managers

    home, _task = _manager_home(tmp_path)
    folder = home / "managers/m1"
    info = folder / "manager.json"
    info.write_text(info.read_text(encoding="utf-8").replace("Manager one", SECRET), encoding="utf-8")
    _swap_for_outside_link(folder, tmp_path / "outside")
    (manager,) = list_managers(home)
    _assert_refused(manager.info())
    _assert_refused(manager.projects())
    (task,) = manager.tasks()
    _assert_refused(task.manifest())
    _assert_refused(task.events())


def test_manager_reads_refuse_a_task_group_folder_linked_outside(tmp_path: Path) -> None:
    from okstra_core.manager_home import list_managers

    home, task_folder = _manager_home(tmp_path)
    manifest = task_folder / "manifest.json"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace("Task one", SECRET), encoding="utf-8")
    _swap_for_outside_link(task_folder.parent, tmp_path / "outside")
    (manager,) = list_managers(home)
    assert not isinstance(manager.info(), LoadError)  # the manager's own files stay readable
    (task,) = manager.tasks()
    _assert_refused(task.manifest())
    _assert_refused(task.children())
    _assert_refused(task.events())
    (context,) = task.child_contexts()
    _assert_refused(task.read_child_context(context))


def test_manager_reads_refuse_a_file_linked_outside(tmp_path: Path) -> None:
    from okstra_core.manager_home import list_managers

    home, task_folder = _manager_home(tmp_path)
    outside = tmp_path / "outside.json"
    outside.write_text('{"schemaVersion": "1.0", "managerId": "m1", "title": "' + SECRET + '"}', encoding="utf-8")
    info = home / "managers/m1/manager.json"
    info.unlink()
    info.symlink_to(outside)
    (context,) = (task_folder / "child-context").iterdir()
    context.unlink()
    context.symlink_to(outside)
    (manager,) = list_managers(home)
    _assert_refused(manager.info())
    (task,) = manager.tasks()
    _assert_refused(task.read_child_context(context))
    # A home reached through a symlink of its own is still the home: its files read.
    alias = tmp_path / "alias-home"
    alias.symlink_to(home)
    (through_alias,) = list_managers(alias)
    assert not isinstance(through_alias.projects(), LoadError)


def test_manager_home_write_refusal_names_the_manager_home(tmp_path: Path) -> None:
    from okstra_core.workflows import manager as wm

    home, _task = _manager_home(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    _swap_for_outside_link(home / "managers/m1", tmp_path / "outside")
    before = sorted(p.name for p in (tmp_path / "outside").iterdir())
    with pytest.raises(WriteRefused) as refused:
        wm.register_project(home, "m1", "proj", project)
    line = refused.value.line(project)
    assert line == f"managers/m1/projects.json: resolves outside the manager home {home}".replace(
        "managers/", f"{home}/managers/", 1
    ), line
    assert "project root" not in line and len(line.splitlines()) == 1
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == before


def test_preparing_a_run_makes_no_folder_through_a_runs_folder_linked_outside(fresh_demo: Path, tmp_path: Path) -> None:
    from okstra_core.errors import PathEscape
    from okstra_core.workflows.tasks import WorkerSpec, prepare_run

    task = fresh_demo / ".okstra/tasks/search/stale-cache"
    outside = tmp_path / "outside"
    _swap_for_outside_link(task / "runs", outside)
    before = sorted(p.relative_to(outside).as_posix() for p in outside.rglob("*"))
    with pytest.raises(PathEscape, match="outside the project root"):
        prepare_run(
            fresh_demo,
            task,
            "implementation",
            stage=1,
            workers=[WorkerSpec("codex-executor", "executor", "codex", "m")],
        )
    assert sorted(p.relative_to(outside).as_posix() for p in outside.rglob("*")) == before
