"""A folder the inbox cannot list is never taken for an empty one: it is counted, named, and the exit is 1.

The listing is made to fail in a way root obeys: ``os.listdir``, which the read
side's one listing (``okstra_core.reading.list_folder``) calls, raises
PermissionError for the chosen folders. One more test makes real folders
``chmod 000`` and runs ``okstra inbox`` in a process that cannot override
permissions (as root: without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, through
``setpriv``); it is skipped only where no such process can be had.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from okstra_core import layout, reading
from okstra_core.store import Project
from okstra_core.workflows.inbox import read_inbox

from .helpers import okstra

TASKS = ".okstra/tasks"
SAVED_CARDS = f"{TASKS}/checkout/saved-cards"  # two design-prep decisions, both under runs/
TAX_EXPORT = f"{TASKS}/checkout/tax-export"  # one clarification
DEMO_DECISIONS = 7


def _deny(monkeypatch: pytest.MonkeyPatch, root: Path, *folders: str) -> None:
    """Listing any of *folders* (project-relative) raises PermissionError, for root too."""
    denied = {str(root / f) for f in folders}
    real = os.listdir

    def listdir(path: Any = ".") -> list[str]:
        if os.fspath(path) in denied:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)


def test_the_listing_helper_names_what_it_cannot_list(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _deny(monkeypatch, fresh_demo, TASKS)
    listed = reading.list_folder(fresh_demo / TASKS)
    assert isinstance(listed, reading.LoadError)
    assert listed.reason == "cannot list folder: Permission denied"
    assert reading.list_folder(fresh_demo / "missing") == []
    assert reading.list_folder(fresh_demo / TASKS / "checkout") == sorted(os.listdir(fresh_demo / TASKS / "checkout"))


def test_a_readable_demo_is_complete(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inbox = read_inbox(Project(fresh_demo))
    assert inbox.complete and inbox.unlisted == [] and len(inbox.items) == DEMO_DECISIONS
    assert okstra(capsys, "inbox", fresh_demo).code == 0


def test_an_unlistable_tasks_folder(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _deny(monkeypatch, fresh_demo, TASKS)
    inbox = read_inbox(Project(fresh_demo))
    assert not inbox.complete
    assert (inbox.unlisted, inbox.unlisted_reasons) == (
        [f"{TASKS}/"],
        {f"{TASKS}/": "cannot list folder: Permission denied"},
    )
    result = okstra(capsys, "inbox", fresh_demo)
    assert result.code == 1
    assert result.err == f"okstra inbox: cannot list {TASKS}/: Permission denied\n"
    assert result.out.splitlines()[-1] == f"1 folder could not be listed; run okstra check {fresh_demo}"
    doc = json.loads(okstra(capsys, "inbox", fresh_demo, "--json").out)
    assert (doc["unreadable"], doc["unreadablePaths"]) == (1, [f"{TASKS}/"])


def test_an_unlistable_tasks_folder_with_nothing_else_to_show(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without a catalog the tasks are found by listing only: never "nothing is waiting for you"."""
    layout.task_catalog_path(fresh_demo).unlink()
    _deny(monkeypatch, fresh_demo, TASKS)
    result = okstra(capsys, "inbox", fresh_demo)
    assert result.code == 1
    assert result.out == (
        f"nothing is waiting in what could be read\n1 folder could not be listed; run okstra check {fresh_demo}\n"
    )
    result = okstra(capsys, "inbox", fresh_demo, "--json")
    doc = json.loads(result.out)
    assert result.code == 1 and doc["items"] == [] and doc["unreadable"] == 1


def test_an_unlistable_task_folder(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _deny(monkeypatch, fresh_demo, TAX_EXPORT)
    inbox = read_inbox(Project(fresh_demo))
    assert inbox.unlisted == [f"{TAX_EXPORT}/"]
    result = okstra(capsys, "inbox", fresh_demo, "--json")
    assert result.code == 1 and f"cannot list {TAX_EXPORT}/" in result.err
    assert json.loads(result.out)["unreadablePaths"] == [f"{TAX_EXPORT}/"]


def test_an_unlistable_runs_folder_drops_only_its_decisions_and_says_so(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {(d.kind, d.task, d.item) for d in read_inbox(Project(fresh_demo)).items}
    _deny(monkeypatch, fresh_demo, f"{SAVED_CARDS}/runs")
    inbox = read_inbox(Project(fresh_demo))
    after = {(d.kind, d.task, d.item) for d in inbox.items}
    assert before - after == {
        ("design-prep", "demo-shop:checkout:saved-cards", "PREP-001"),
        ("design-prep", "demo-shop:checkout:saved-cards", "PREP-002"),
    }
    assert after < before, "the other decisions stay"
    assert inbox.unlisted == [f"{SAVED_CARDS}/runs/"] and inbox.unreadable == []
    result = okstra(capsys, "inbox", fresh_demo)
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[-2:] == [
        f"{DEMO_DECISIONS - 2} decisions waiting in 5 tasks",
        f"1 folder could not be listed; run okstra check {fresh_demo}",
    ]


def test_folders_and_files_are_counted_together(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (fresh_demo / ".okstra/tasks/payments/refund-ledger/task-manifest.json").write_text("{", encoding="utf-8")
    _deny(monkeypatch, fresh_demo, f"{SAVED_CARDS}/runs", f"{TAX_EXPORT}/runs/analysis/reports")
    result = okstra(capsys, "inbox", fresh_demo)
    assert result.code == 1
    assert result.out.splitlines()[-1] == (
        f"2 folders could not be listed and 1 file could not be read; run okstra check {fresh_demo}"
    )
    doc = json.loads(okstra(capsys, "inbox", fresh_demo, "--json").out)
    assert doc["unreadable"] == 3
    assert doc["unreadablePaths"] == sorted(
        [
            f"{SAVED_CARDS}/runs/",
            f"{TAX_EXPORT}/runs/analysis/reports/",
            ".okstra/tasks/payments/refund-ledger/task-manifest.json",
        ]
    )


def test_help_says_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        okstra(capsys, "inbox", "--help")
    out = capsys.readouterr().out
    assert "exit status:" in out
    assert "0  the list is complete" in out and "1  the list may be incomplete" in out and "2  usage error" in out


def _without_permission_override() -> list[str] | None:
    """A command prefix under which ``chmod 000`` holds; None when the process cannot be made to obey it."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"] if setpriv else None


@pytest.mark.parametrize(
    ("folder", "named", "decisions"),
    [
        (TASKS, f"{TASKS}/", 0),  # no task folder can be entered: nothing can be read
        (TAX_EXPORT, f"{TAX_EXPORT}/", DEMO_DECISIONS - 1),
        (f"{SAVED_CARDS}/runs", f"{SAVED_CARDS}/runs/", DEMO_DECISIONS - 2),
    ],
)
def test_chmod_000_folders_are_named(fresh_demo: Path, folder: str, named: str, decisions: int) -> None:
    prefix = _without_permission_override()
    if prefix is None:
        pytest.skip("root without setpriv: this process reads any folder whatever its mode")
    target = fresh_demo / folder
    target.chmod(0)
    try:
        probe = subprocess.run([*prefix, "ls", str(target)], capture_output=True, check=False)
        if probe.returncode == 0:
            pytest.skip("this process lists a chmod 000 folder (permissions are not enforced here)")
        proc = subprocess.run(
            [*prefix, sys.executable, "-m", "okstra_core.cli", "inbox", str(fresh_demo), "--json"],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
    finally:
        target.chmod(0o755)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["unreadablePaths"] == [named] and len(doc["items"]) == decisions
    assert proc.stderr == f"okstra inbox: cannot list {named}: Permission denied\n"
