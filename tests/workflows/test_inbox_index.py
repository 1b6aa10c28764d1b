"""The inbox through the store index gives the same answer as a fresh look, whatever happens to the store.

A state machine makes random steps: decisions made by every verb, and writes as an agent makes them (a new
run's report, a manifest rewritten in place, a report edited, a file removed, a task folder moved away and
back, a task copied in, a file written twice within one timestamp tick). After every step, the inbox read
through the index equals the inbox read afresh, for an index opened anew (a new process with one stat pass),
for one opened anew that asks the test session's watchman daemon what changed (kept in its own cache folder,
so that only watchman-backed processes bring it up to date), and for one kept open across steps (a
long-lived process that looks again after each change). The steps (:class:`StoreSteps`) also drive the other
verbs that answer through the index (``tests/workflows/test_verbs_index.py``).

Files a step touched are dated back a few seconds (as they would be by the next look of a real user), so
that the index trusts them and the comparison tests what it kept; the write-twice step is not, so that the
index's protection against a second write within one clock tick is what keeps it right.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import PrivateWatchman
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from okstra_core import cli
from okstra_core.commands.inbox import inbox_document
from okstra_core.commands.inbox_output import group_lines
from okstra_core.store import Project
from okstra_core.store_index import ChangedSince, StoreIndex
from okstra_core.workflows import inbox as inbox_module
from okstra_core.workflows.inbox import Inbox, kept_runs, read_inbox, waiting_per_task
from okstra_core.workflows.latest_run import kept_run
from okstra_core.workflows.pulse import Notice, Pulse, read_pulse

from .test_inbox_demo import ADDRESS, CARDS, FRAUD, TAX, TAX_REPORT

KEY = b"k" * 32
SCOPE = "test"
TASKS = ".okstra/tasks"


def _settle(root: Path, since: float) -> None:
    """Date back what changed since *since* by ten seconds (files and folders), as a later look would find it."""
    old = time.time() - 10
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            st_ = os.lstat(path)
            if st_.st_mtime >= since - 1 and not os.path.islink(path):
                os.utime(path, (old, old))
    if os.stat(root).st_mtime >= since - 1:
        os.utime(root, (old, old))


def _snapshot(root: Path) -> dict[str, tuple[int, int, int, int]]:
    """Every file and folder under *root* with its metadata: what an ideal event source would compare."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(folder, name)
            st_ = os.lstat(path)
            out[path] = (st_.st_mtime_ns, st_.st_ctime_ns, st_.st_size, st_.st_ino)
    return out


def _doc(root: Path, index: StoreIndex | None) -> str:
    return json.dumps(inbox_document(root, read_inbox(Project(root), index)), sort_keys=True)


def _fresh_runs(root: Path) -> list[tuple[str, object]]:
    """Each task's latest run read afresh, as :func:`kept_runs` gives them (a task without one: left out)."""
    runs = ((os.fspath(ref.root), kept_run(ref.open())) for ref in Project(root).task_refs)
    return [(folder, run) for folder, run in runs if run is not None]


def _pulse(read: tuple[Pulse, list[Notice]]) -> tuple[list[object], dict[str, object]]:
    """What the notices compare of a pulse (as :func:`read_pulse` gives it): its decisions' digests and task
    folders, and each task's latest run."""
    pulse = read[0]
    return sorted(pulse.decisions.items()), dict(pulse.runs)


def _counts(root: Path, inbox: Inbox) -> dict[str, int]:
    """The decisions of *inbox* per task folder, project-relative."""
    counts: dict[str, int] = {}
    for decision in inbox.items:
        if decision.task_root is not None:
            rel = decision.task_root.relative_to(root).as_posix()
            counts[rel] = counts.get(rel, 0) + 1
    return counts


def _same_size(manifest: dict[str, Any], flag: bool) -> str:
    """The manifest awaiting approval or not, in text of the same length either way ("true" + 1 = "false")."""
    value = {**manifest, "workflow": {**manifest["workflow"], "awaitingApproval": flag}, "x-pad": "p" if flag else ""}
    return json.dumps(value)


def _verb(*argv: str | Path) -> None:
    cli.main([str(a) for a in argv])  # a verb that refuses here (nothing to decide) changes nothing


class StoreSteps(RuleBasedStateMachine):
    """The steps that change the store; a subclass says what must equal a fresh look after each
    (:meth:`look_between`: what reads through the index between two writes in one clock tick)."""

    root: Path
    work: Path

    @initialize()
    def start(self) -> None:
        self.work = Path(tempfile.mkdtemp(dir=WORK[0]))
        self.root = self.work / "project"
        shutil.copytree(DEMO[0], self.root, symlinks=True)
        self.cache = self.work / "cache"
        self.cache_watchman = self.work / "cache-watchman"
        self.kept = StoreIndex(self.root, self.cache, key=KEY, scope=SCOPE)
        self.hidden: list[tuple[Path, Path]] = []
        self.copies = 0
        self.step_started = time.time()
        _settle(self.root, 0)
        self.seen = _snapshot(self.root)

    def _tasks(self) -> list[Path]:
        """Task folders, those of the group whose tasks wait for a person first (drawn most often)."""
        base = self.root / TASKS
        found = sorted(t for g in base.iterdir() if g.is_dir() for t in g.iterdir() if t.is_dir())
        return sorted(found, key=lambda t: t.parent.name != "checkout")

    def _after(self) -> None:
        _settle(self.root, self.step_started)

    # ---------------------------------------------------------------- decisions made by the verbs

    @rule(option=st.sampled_from(["IO-001", "IO-002", "IO-003"]))
    def choose_direction(self, option: str) -> None:
        _verb("direction", "select", self.root, "--task", FRAUD, "--option", option)
        self._after()

    @rule(task=st.sampled_from([ADDRESS, FRAUD]))
    def prepare_planning(self, task: str) -> None:
        _verb("planning", "prepare", self.root, "--task", task)
        self._after()

    @rule()
    def answer_and_attach(self) -> None:
        answers = self.work / "answers.json"
        answers.write_text(json.dumps({"CQ-001": "gross", "CQ-002": "Yes."}), encoding="utf-8")
        _verb("user-response", "export", self.root, "--task", TAX, "--report", TAX_REPORT, "--answers", answers)
        self._after()

    @rule()
    def attach(self) -> None:
        _verb("clarification", "attach", self.root, "--task", TAX)
        self._after()

    @rule(item=st.sampled_from(["PREP-001", "PREP-002"]))
    def confirm_design(self, item: str) -> None:
        answer = self.work / f"{item}.md"
        answer.write_text("## vault\n\nThe provider's vault\n\n## rationale\n\nNone.\n", encoding="utf-8")
        _verb("design-prep", "confirm", self.root, "--task", CARDS, "--item", item, "--input", answer)
        self._after()

    # ---------------------------------------------------------------- writes as an agent makes them

    @rule(data=st.data())
    def rewrite_manifest(self, data: st.DataObject) -> None:
        task = data.draw(st.sampled_from(self._tasks()))
        path = task / "task-manifest.json"
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
            value["workflow"]["awaitingApproval"] = not value["workflow"].get("awaitingApproval", False)
        except (OSError, ValueError, KeyError, TypeError):
            return
        path.write_text(json.dumps(value, indent=2), encoding="utf-8")
        self._after()

    @rule(data=st.data(), status=st.sampled_from(["completed", "error", "in-progress", None]))
    def end_a_run(self, data: st.DataObject, status: str | None) -> None:
        task = data.draw(st.sampled_from(self._tasks()))
        path = task / "task-manifest.json"
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
            value["latestRunStatus"] = status
        except (OSError, ValueError, TypeError):
            return
        path.write_text(json.dumps(value, indent=2), encoding="utf-8")
        self._after()

    def _reports(self) -> list[Path]:
        return sorted(self.root.glob(f"{TASKS}/*/*/runs/*/reports/final-report-*-001.data.json"))

    @rule(data=st.data(), title=st.text(alphabet="abc \u202e\x1b", min_size=1, max_size=12))
    def edit_report(self, data: st.DataObject, title: str) -> None:
        path = data.draw(st.sampled_from(self._reports()))
        value = json.loads(path.read_text(encoding="utf-8"))
        value["title"] = title
        path.write_text(json.dumps(value), encoding="utf-8")
        self._after()

    @rule(data=st.data())
    def new_run_report(self, data: st.DataObject) -> None:
        first = data.draw(st.sampled_from(self._reports()))
        second = first.with_name(first.name.replace("-001.", "-002."))
        if not second.exists():
            value = json.loads(first.read_text(encoding="utf-8"))
            value["title"] = "A second look"
            second.write_text(json.dumps(value), encoding="utf-8")
        else:
            second.unlink()
        self._after()

    @rule(data=st.data(), text=st.text(alphabet="ab\n", min_size=1, max_size=40))
    def grow_a_transcript(self, data: st.DataObject, text: str) -> None:
        found = sorted(self.root.glob(f"{TASKS}/*/*/runs/*/prompts/*.log"))
        with data.draw(st.sampled_from(found)).open("a", encoding="utf-8") as out:
            out.write(text)  # the folder's listing stays as it was: only the file's size tells
        self._after()

    @rule(data=st.data(), rounds=st.integers(min_value=1, max_value=4))
    def rewrite_a_convergence(self, data: st.DataObject, rounds: int) -> None:
        found = sorted(self.root.glob(f"{TASKS}/*/*/runs/*/state/convergence-*-[0-9][0-9][0-9].json"))
        path = data.draw(st.sampled_from(found))
        value = json.loads(path.read_text(encoding="utf-8"))
        value["rounds"] = rounds
        path.write_text(json.dumps(value, indent=2), encoding="utf-8")
        self._after()

    @rule(data=st.data())
    def remove_a_response(self, data: st.DataObject) -> None:
        found = sorted(self.root.glob(f"{TASKS}/*/*/runs/*/user-responses/*.md"))
        if found:
            data.draw(st.sampled_from(found)).unlink()
        self._after()

    @rule(data=st.data())
    def move_task_away(self, data: st.DataObject) -> None:
        task = data.draw(st.sampled_from(self._tasks()))
        away = self.work / f"away-{len(self.hidden)}"
        task.rename(away)
        self.hidden.append((away, task))
        self._after()

    @rule()
    def move_task_back(self) -> None:
        if self.hidden:
            away, task = self.hidden.pop()
            if not task.exists():
                away.rename(task)
        self._after()

    @rule(data=st.data())
    def copy_task_in(self, data: st.DataObject) -> None:
        task = data.draw(st.sampled_from(self._tasks()))
        self.copies += 1
        shutil.copytree(task, task.parent / f"copy-{self.copies}", symlinks=True)
        self._after()

    @rule(data=st.data())
    def write_twice_in_one_tick(self, data: st.DataObject) -> None:
        task = data.draw(st.sampled_from(self._tasks()))
        path = task / "task-manifest.json"
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
            flag = bool(value["workflow"].get("awaitingApproval", False))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return
        path.write_text(_same_size(value, flag), encoding="utf-8")
        self.look_between()  # the index looks between the two writes
        path.write_text(_same_size(value, not flag), encoding="utf-8")
        self.step_started = time.time()  # not dated back: the index must not trust what it saw in this tick

    def look_between(self) -> None:
        raise NotImplementedError

    def changed_since_last_look(self) -> ChangedSince:
        """What a long-lived process is told changed since it last looked (as file events or watchman tell it)."""
        now = _snapshot(self.root)
        changed = {p for p in now.keys() | self.seen.keys() if now.get(p) != self.seen.get(p)}
        self.seen = now
        return ChangedSince(changed)

    def teardown(self) -> None:
        if hasattr(self, "kept"):
            self.kept.close()


class InboxThroughIndex(StoreSteps):
    def look_between(self) -> None:
        with StoreIndex(self.root, self.cache, key=KEY, scope=SCOPE) as index:
            read_inbox(Project(self.root), index)

    # ---------------------------------------------------------------- the invariant

    @invariant()
    def same_as_a_fresh_look(self) -> None:
        if not hasattr(self, "root"):
            return
        inbox = read_inbox(Project(self.root))
        fresh = json.dumps(inbox_document(self.root, inbox), sort_keys=True)
        # A new process with one stat pass.
        with StoreIndex(self.root, self.cache, key=KEY, scope=SCOPE) as anew:
            assert _doc(self.root, anew) == fresh
        # The notices' pulse (the decisions and each task's latest run), kept beside the inbox.
        with StoreIndex(self.root, self.cache, key=KEY, scope=SCOPE) as pulsed:
            assert _pulse(read_pulse(Project(self.root), pulsed)) == _pulse(read_pulse(Project(self.root)))
        # The counts per task folder, from the kept inbox while it is fresh (not a decision built).
        with StoreIndex(self.root, self.cache, key=KEY, scope=SCOPE) as counted:
            assert waiting_per_task(Project(self.root), counted) == _counts(self.root, inbox)
        # A new process told by watchman what changed since the clock the last one kept.
        with StoreIndex(self.root, self.cache_watchman, key=KEY, scope=SCOPE, watchman=True) as asked:
            assert asked.watchman_problem is None
            assert isinstance(asked.look, ChangedSince)
            WATCHMAN_TRUSTED.append(asked.look.changed is not None)
            assert _doc(self.root, asked) == fresh
        # A long-lived process told what changed, as file events or a watchman since-query tell it.
        self.kept.look = self.changed_since_last_look()
        assert _doc(self.root, self.kept) == fresh
        assert list(kept_runs(Project(self.root), self.kept)) == _fresh_runs(self.root)
        self.kept.flush()
        self.step_started = time.time()


DEMO: list[Path] = []
WORK: list[str] = []
#: Per step, whether watchman's answer was trusted (the index then looked only at what it named).
WATCHMAN_TRUSTED: list[bool] = []


@pytest.mark.slow
def test_inbox_through_the_index_equals_a_fresh_look(
    demo_root: Path, tmp_path: Path, watchman_on: PrivateWatchman
) -> None:
    DEMO[:] = [demo_root]
    WORK[:] = [str(tmp_path)]
    WATCHMAN_TRUSTED.clear()
    machine: Any = InboxThroughIndex
    machine.TestCase.settings = settings(
        max_examples=3,
        stateful_step_count=50,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    machine.TestCase().runTest()
    # Past each example's first step, watchman vouched for its answers: the index relied on them.
    assert WATCHMAN_TRUSTED.count(True) > len(WATCHMAN_TRUSTED) // 2


def test_the_counts_of_a_fresh_kept_inbox_build_no_decision(
    demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counting what waits per task reads the kept inbox's rows as they are; the counts are those of the
    decisions, and a change makes them read afresh."""
    root = Path(shutil.copytree(demo_root, tmp_path / "store", symlinks=True))
    _settle(root, time.time())
    fresh = waiting_per_task(Project(root))
    assert fresh == _counts(root, read_inbox(Project(root))) and sum(fresh.values()) > 0
    assert all("/" in rel and not rel.startswith("/") for rel in fresh)
    with StoreIndex(root, tmp_path / "cache", key=KEY, scope=SCOPE) as first:
        read_inbox(Project(root), first)

    def built(*_: object) -> None:
        raise AssertionError("a decision was built")

    with monkeypatch.context() as patched, StoreIndex(root, tmp_path / "cache", key=KEY, scope=SCOPE) as index:
        patched.setattr(inbox_module, "_decode_decision", built)
        assert waiting_per_task(Project(root), index) == fresh
        assert index.reused == index.computed == 0
    _verb("planning", "prepare", root, "--task", ADDRESS)
    with StoreIndex(root, tmp_path / "cache", key=KEY, scope=SCOPE) as index:
        after = waiting_per_task(Project(root), index)
        assert after == waiting_per_task(Project(root)) != fresh
        assert index.computed > 0


def test_the_inbox_printed_from_a_fresh_kept_inbox_builds_no_decision(
    demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``okstra inbox`` prints a fresh kept inbox from its rows: the same document and text as the decisions
    give, no decision built; a stale one, or one of another shape, is not used."""
    root = Path(shutil.copytree(demo_root, tmp_path / "store", symlinks=True))
    _settle(root, time.time())
    fresh = read_inbox(Project(root))
    with StoreIndex(root, tmp_path / "cache", key=KEY, scope=SCOPE) as first:
        assert inbox_module.kept_inbox(first) is None  # nothing kept yet
        read_inbox(Project(root), first)

    def built(*_: object) -> None:
        raise AssertionError("a decision was built")

    with monkeypatch.context() as patched, StoreIndex(root, tmp_path / "cache", key=KEY, scope=SCOPE) as index:
        patched.setattr(inbox_module, "_decode_decision", built)
        kept = inbox_module.kept_inbox(index)
    assert kept is not None
    assert inbox_document(root, kept) == inbox_document(root, fresh) and kept.items
    assert group_lines(kept.items) == group_lines(fresh.items)
    assert (kept.unreadable, kept.unlisted, kept.unlisted_reasons, kept.complete) == (
        fresh.unreadable,
        fresh.unlisted,
        fresh.unlisted_reasons,
        fresh.complete,
    )
    _verb("planning", "prepare", root, "--task", ADDRESS)
    with StoreIndex(root, tmp_path / "cache", key=KEY, scope=SCOPE) as index:
        assert inbox_module.kept_inbox(index) is None  # what it was read from changed


@pytest.mark.parametrize("row", [["a-kind-of-no-inbox", *[None] * 10], ["approval", "k"], "approval", 5])
@pytest.mark.parametrize("at", [0, 1, 2])
def test_a_kept_inbox_of_rows_of_another_shape_is_not_printed(row: object, at: int) -> None:
    """A row not of the kept shape, first, in the middle or last: no reader of the kept rows takes any of them
    (each then reads the inbox itself), and the one handing out rows one at a time says so before the first."""
    good = ["approval", "t", ".okstra/x.md", None, "s", "2026-01-01T00:00:00Z", None, None, None, ".okstra/t", None]
    items = [good, good]
    items.insert(at, row)

    class Kept:
        def kept_text(self, name: str) -> str:
            return json.dumps({"items": items, "unreadable": [], "unlisted": [], "reasons": {}})

    kept = Kept()
    assert inbox_module.kept_inbox(kept) is None  # type: ignore[arg-type]
    assert inbox_module.kept_counts(Path("/"), kept) is None  # type: ignore[arg-type]
    rows = inbox_module._kept_rows(kept)  # type: ignore[arg-type]
    assert rows is not None and rows.readable() is None


def test_a_kept_inbox_is_read_a_row_at_a_time_as_it_was_kept() -> None:
    """The rows of a kept inbox's text are those it was written with, and its other members come after them."""
    good = ["approval", "t", ".okstra/x.md", None, "s", "2026-01-01T00:00:00Z", None, None, None, "/p/.okstra/t", None]
    value = {"unreadable": ["u"], "items": [good, [*good[:9], None, None]], "unlisted": ["l"], "reasons": {"l": "r"}}

    class Kept:
        def kept_text(self, name: str) -> str:
            return json.dumps(value)

    rows = inbox_module._kept_rows(Kept())  # type: ignore[arg-type]
    assert rows is not None and list(rows.rows()) == value["items"]
    assert rows.readable() == (["u"], ["l"], {"l": "r"})
    assert inbox_module.kept_counts(Path("/p"), Kept()) == {".okstra/t": 1}  # type: ignore[arg-type]


def test_a_kept_decision_is_counted_by_the_field_its_encoding_puts_its_task_folder_in(demo_root: Path) -> None:
    """The counts read from kept rows take the task folder where the encoding writes it (one shape, named once)."""
    decisions = read_inbox(Project(demo_root)).items
    assert decisions
    for decision in decisions:
        row = inbox_module._encode_decision(decision)
        assert len(row) == inbox_module.DECISION_FIELDS
        assert row[inbox_module.TASK_ROOT_FIELD] == (None if decision.task_root is None else str(decision.task_root))
        assert inbox_module._decode_decision(row) == decision


def test_the_runs_are_kept_beside_the_inbox_and_a_pulse_reads_no_task_again(
    demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading the inbox through the index (the workbench's count at its start) keeps each task's latest run
    beside it: the notices' first pulse then computes nothing, and equals a fresh one; a run that ends is seen."""
    root = Path(shutil.copytree(demo_root, tmp_path / "store", symlinks=True))
    _settle(root, time.time())
    fresh = read_pulse(Project(root))
    assert fresh[0].runs and fresh[0].decisions
    with StoreIndex(root, tmp_path / "cache", key=KEY, scope=SCOPE) as counted:
        waiting_per_task(Project(root), counted)
        assert counted.computed > 0

    def read(*_: object) -> None:
        raise AssertionError("a task was read again")

    with monkeypatch.context() as patched, StoreIndex(root, tmp_path / "cache", key=KEY, scope=SCOPE) as index:
        patched.setattr(inbox_module, "_task_inbox", read)
        assert _pulse(read_pulse(Project(root), index)) == _pulse(fresh)
        assert index.computed == 0
    manifest = Path(next(iter(fresh[0].runs.values()))[1]) / "task-manifest.json"
    value = json.loads(manifest.read_text(encoding="utf-8"))
    value["latestRunStatus"] = "error" if value.get("latestRunStatus") != "error" else "completed"
    manifest.write_text(json.dumps(value), encoding="utf-8")
    _settle(root, time.time())
    with StoreIndex(root, tmp_path / "cache", key=KEY, scope=SCOPE) as index:
        after = read_pulse(Project(root), index)
        assert _pulse(after) == _pulse(read_pulse(Project(root))) != _pulse(fresh)
        assert index.computed > 0


def test_kept_runs_of_an_unexpected_shape_are_read_again(demo_root: Path, tmp_path: Path) -> None:
    """A runs fact or a task's fact of another shape (an older form, a run that is not text) is computed afresh."""
    root = Path(shutil.copytree(demo_root, tmp_path / "store", symlinks=True))
    _settle(root, time.time())
    fresh = _fresh_runs(root)
    for bad in ([["x", 1, None, None, None]], [["x", "k", None, None]], {"x": []}, [[1, "k", None, None, None]]):
        with pytest.raises((ValueError, TypeError)):
            inbox_module._decode_runs(root, bad)
    with pytest.raises(KeyError):
        inbox_module._decode_task({"items": [], "unreadable": [], "unlisted": {}})
    with StoreIndex(root, tmp_path / "cache", key=KEY, scope=SCOPE) as index:
        assert list(kept_runs(Project(root), index)) == fresh
    # Each bad shape kept, signed, with reads that still hold: it is computed again, never shown.
    for bad in ('[["x", 1, null, null, null]]', '{"x": []}', '[[".okstra/tasks/x", "k"]]', "[5]"):
        with StoreIndex(root, tmp_path / "cache", key=KEY, scope=SCOPE) as index:
            row = index._row(inbox_module.RUNS_FACT)
            assert row is not None
            index._keep(inbox_module.RUNS_FACT, bad, row[1])
        with StoreIndex(root, tmp_path / "cache", key=KEY, scope=SCOPE) as index:
            assert list(kept_runs(Project(root), index)) == fresh
            assert index.computed == 1 and index.reused >= 1, bad  # the runs again, from the tasks' kept facts
