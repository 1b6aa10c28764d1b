"""The read-only guard: under it every write primitive and every verb that writes refuses, and no byte changes.

Each verb runs with the arguments the fault-injection suite proves succeed (so
a refusal is the guard's, not a bad argument's), first under the guard (exit 1,
one line saying read-only, the tree byte for byte as before), then without it
(exit 0: the same call would have written).
"""

from __future__ import annotations

import argparse
import hashlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from okstra_core import cli, fresh_tree, read_only, writes
from okstra_core.errors import ReadOnly
from okstra_core.models.run import ErrorRecord

from . import scenario as sc
from .test_faults import CASES, RETRY_ONLY, TASKS

#: Verbs that never write: they only read the store and print.
READING_VERBS = {
    "check",
    "design-prep resolve",
    "agent-prompt verify-completion",
    "inbox",
    "log-report",
    "completion",
    "task keys",
    "search",
    "stats",
}


def tree_digest(root: Path) -> dict[str, str]:
    """Every file and folder under *root* (private names included): its SHA-256, or ``dir``/``link``."""
    out: dict[str, str] = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs:
            path = os.path.join(dirpath, name)
            out[os.path.relpath(path, root)] = "link" if os.path.islink(path) else "dir"
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                out[os.path.relpath(path, root)] = "link:" + os.readlink(path)
                continue
            with open(path, "rb") as fh:
                out[os.path.relpath(path, root)] = hashlib.sha256(fh.read()).hexdigest()
    return out


@pytest.fixture
def guarded(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bool], None]]:
    """Switch the guard on or off for this test only (the product can only switch it on)."""

    def switch(on: bool) -> None:
        monkeypatch.setattr(read_only, "_read_only", on)
        if on:
            monkeypatch.setenv(writes.READ_ONLY_ENV, "1")
        else:
            # setenv first, so the variable's absence is what the test's end restores (enable_read_only sets it).
            monkeypatch.setenv(writes.READ_ONLY_ENV, "")
            monkeypatch.delenv(writes.READ_ONLY_ENV)

    switch(False)
    yield switch


def _leaf_verbs() -> set[str]:
    """Every verb of the ``okstra`` command, as ``group verb`` or ``verb``."""
    out: set[str] = set()

    def walk(parser: argparse.ArgumentParser, prefix: str) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            out.add(prefix.strip())
            return
        for name, child in subs[0].choices.items():
            walk(child, f"{prefix} {name}")

    walk(cli.build_parser(), "")
    return out


def _agent_dispatch(root: Path) -> list[str]:
    return [
        "team-state",
        "agent-dispatch",
        str(root),
        "--task",
        sc.RETRY,
        "--run-type",
        "analysis",
        "--dispatch-id",
        "a-ro",
        "--worker-id",
        "claude-analyser",
    ]


def test_every_writing_verb_is_covered() -> None:
    writing = {c.removesuffix(" --restart-from-round0") for c in CASES}
    extra = {"team-state agent-dispatch", "demo", "render-final-report", "render-task-index"}
    assert _leaf_verbs() == writing | extra | READING_VERBS


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_verb_refuses_under_the_guard(
    case: str,
    slim_factory: Callable[..., Path],
    guarded: Callable[[bool], None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    setup, argv = CASES[case]
    root = slim_factory("ro", TASKS.get(case, RETRY_ONLY))
    setup(root)
    args = [str(a) for a in argv(root)]
    before = tree_digest(root)
    capsys.readouterr()
    guarded(True)
    assert cli.main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "read-only" in err, err
    assert tree_digest(root) == before, "a refused verb changed the store"
    guarded(False)
    assert cli.main(args) == 0, capsys.readouterr().err
    assert tree_digest(root) != before, "the same call without the guard writes"


def test_agent_dispatch_and_renders_refuse(
    slim_factory: Callable[..., Path], guarded: Callable[[bool], None], capsys: pytest.CaptureFixture[str]
) -> None:
    root = slim_factory("ro", RETRY_ONLY)
    task_root = root / ".okstra/tasks/payments/retry-policy"
    report = next((root / sc.PLAN / "reports").glob("*.data.json"))
    calls = [
        _agent_dispatch(root),
        ["render-task-index", str(task_root), "-o", str(task_root / "index-copy.md")],
        ["render-final-report", str(report), "-o", str(report.with_name("copy.md"))],
    ]
    before = tree_digest(root)
    guarded(True)
    for args in calls:
        capsys.readouterr()
        assert cli.main(args) == 1, args
        assert "read-only" in capsys.readouterr().err
    assert tree_digest(root) == before
    guarded(False)
    for args in calls:
        assert cli.main(args) == 0, capsys.readouterr().err


def test_demo_refuses_under_the_guard(
    tmp_path: Path, guarded: Callable[[bool], None], capsys: pytest.CaptureFixture[str]
) -> None:
    guarded(True)
    assert cli.main(["demo", str(tmp_path / "demo"), "--tasks", "0", "--quiet"]) == 1
    assert "read-only" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_every_workflow_refuses_under_the_guard(
    slim_factory: Callable[..., Path], guarded: Callable[[bool], None]
) -> None:
    """The crash suite's writer runs every workflow; under the guard its first write is refused, nothing changes."""
    root = slim_factory("ro")
    sc.prepare_pending_work(root)
    before = tree_digest(root)
    guarded(True)
    with pytest.raises(ReadOnly):
        sc.writer(root)
    assert tree_digest(root) == before


def test_every_primitive_refuses(tmp_path: Path, guarded: Callable[[bool], None]) -> None:
    root = tmp_path / "store"
    root.mkdir()
    (root / "a.json").write_bytes(b"{}\n")
    (root / "a.copy").write_bytes(b"{}\n")
    (root / "runs").mkdir()
    record = ErrorRecord(at="2026-12-01T12:00:00Z", worker_id="w", code="c", message="m").dump()
    attempts: dict[str, Callable[[], object]] = {
        "create_only": lambda: writes.create_only(root, "b.json", b"{}\n"),
        "create_only_json": lambda: writes.create_only_json(root, "b.json", {}),
        "append_jsonl": lambda: writes.append_jsonl(root, "log.jsonl", record),
        "replace_locked": lambda: writes.replace_locked(root, "a.json", lambda _: b"[]\n"),
        "replace_keeping": lambda: writes.replace_keeping(root, "a.json", b"[]\n", lambda: "a.old"),
        "move_no_overwrite": lambda: writes.move_no_overwrite(root, root / "a.copy", "c.json"),
        "remove_archived": lambda: writes.remove_archived(root, "a.json", "a.copy"),
        "ensure_root": lambda: writes.ensure_root(tmp_path / "new-root"),
        "ensure_dir": lambda: writes.ensure_dir(root, root / "new"),
        "allocate_seq": lambda: writes.allocate_seq(root, root / "runs", "reports"),
        "locked": lambda: writes.locked(root / "a.json").__enter__(),
        "lock_path_for": lambda: writes.lock_path_for(root / "a.json"),
        "populate_fresh_tree": lambda: fresh_tree.populate_fresh_tree(root, {root / "x/y.json": b"{}"}),
    }
    public = {
        name
        for name in dir(writes)
        if not name.startswith("_")
        and callable(getattr(writes, name))
        and getattr(writes, name).__module__ == writes.__name__
    }
    not_writes = {
        "Outcome",
        "resolve_target",
        "jsonl_line",
        "enable_read_only",
        "read_only",
        "refuse_if_read_only",
        "observe_writes",
    }
    outside_stores = {"relaxed_durability"}  # replace_file and create_private live in writes_outside
    assert public - not_writes - outside_stores == set(attempts) - {"populate_fresh_tree"}, (
        "every write primitive is attempted"
    )
    before = tree_digest(tmp_path)
    guarded(True)
    for name, attempt in attempts.items():
        with pytest.raises(ReadOnly) as refused:
            attempt()
        assert "read-only" in refused.value.reason, name
    assert tree_digest(tmp_path) == before


@pytest.mark.parametrize("value", ["1", "yes", "true"])
def test_the_environment_variable_switches_the_guard_on(
    tmp_path: Path, value: str, guarded: Callable[[bool], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(writes.READ_ONLY_ENV, value)
    assert writes.read_only()
    with pytest.raises(ReadOnly):
        writes.create_only(tmp_path, "a", b"")
    monkeypatch.setenv(writes.READ_ONLY_ENV, "0")
    assert not writes.read_only()


def test_enable_read_only_is_inherited(guarded: Callable[[bool], None]) -> None:
    writes.enable_read_only()
    assert writes.read_only() and os.environ[writes.READ_ONLY_ENV] == "1"
