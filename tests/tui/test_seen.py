"""``okstra_tui.data.seen``: what a person has seen of a project, kept in the user's state folder."""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from okstra_core import layout
from okstra_core.errors import OkstraError
from okstra_tui.data import seen

TASK = "payments/refund-ledger"


def snapshot(root: Path) -> dict[Path, bytes | None]:
    return {p: (p.read_bytes() if p.is_file() else None) for p in root.rglob("*")}


def _roots(root: Path) -> list[Path]:
    return sorted(p.parent for p in layout.tasks_dir(root).glob("*/*/task-manifest.json"))


def _touch_manifest(root: Path, task: str) -> None:
    path = layout.tasks_dir(root) / task / "task-manifest.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    value["latestRunStatus"] = "error"
    path.with_suffix(".new").write_text(json.dumps(value), encoding="utf-8")
    os.replace(path.with_suffix(".new"), path)


def test_the_first_launch_has_nothing_unread_and_a_change_is(fresh_demo: Path) -> None:
    state = seen.load(fresh_demo)
    assert state.first and state.warning is None
    sigs = seen.signatures(fresh_demo, _roots(fresh_demo))
    assert state.unread(sigs) == set()
    seen.mark_seen(fresh_demo, sigs, replace_all=True)
    assert seen.load(fresh_demo).unread(sigs) == set()
    _touch_manifest(fresh_demo, TASK)
    now = seen.signatures(fresh_demo, _roots(fresh_demo))
    assert seen.load(fresh_demo).unread(now) == {TASK}
    seen.mark_seen(fresh_demo, {TASK: now[TASK]})
    assert seen.load(fresh_demo).unread(now) == set()


def test_marks_made_at_one_moment_hold_that_moment_once(fresh_demo: Path) -> None:
    """Every task marked at once (the first launch, mark all read) holds one moment, not a copy per task: a
    hundred thousand marks are held for the whole session."""
    import datetime as dt

    sigs = seen.signatures(fresh_demo, _roots(fresh_demo))
    seen.mark_seen(fresh_demo, sigs, replace_all=True, now=dt.datetime(2026, 12, 1, tzinfo=dt.UTC))
    seen.mark_seen(fresh_demo, dict(list(sigs.items())[:2]), replace_all=False)  # a later moment, folded in
    seen.mark_seen(fresh_demo, {}, replace_all=False)
    marks = seen.load(fresh_demo).marks
    assert len(sigs) > 3 and marks.keys() == sigs.keys()
    moments = {mark.at for mark in marks.values()}
    assert len(moments) == 2
    assert len({id(mark.at) for mark in marks.values()}) == 2


def test_the_moments_a_session_keeps_say_when_each_task_was_seen(fresh_demo: Path) -> None:
    """A session keeps when each task was last looked at, not the signatures: the same answers as the state."""
    import datetime as dt

    sigs = seen.signatures(fresh_demo, _roots(fresh_demo))
    seen.mark_seen(fresh_demo, sigs, replace_all=True, now=dt.datetime(2026, 12, 1, tzinfo=dt.UTC))
    seen.mark_seen(fresh_demo, dict(list(sigs.items())[:1]), now=dt.datetime(2026, 12, 2, 8, 30, tzinfo=dt.UTC))
    state = seen.load(fresh_demo)
    moments = state.moments()
    assert moments.project == state.project and not hasattr(moments, "marks")
    answers = {key: moments.seen_at(key) for key in sigs}
    assert answers == {key: state.seen_at(key) for key in sigs}
    assert sorted(set(answers.values())) == [
        dt.datetime(2026, 12, 1, tzinfo=dt.UTC),
        dt.datetime(2026, 12, 2, 8, 30, tzinfo=dt.UTC),
    ]
    assert moments.seen_at("nowhere/never-seen") is None


def test_a_run_appended_to_the_timeline_alone_makes_its_task_unread(fresh_demo: Path) -> None:
    """okstra appends to the timeline for each run: a change to it alone (the manifest untouched) is news."""
    sigs = seen.signatures(fresh_demo, _roots(fresh_demo))
    seen.mark_seen(fresh_demo, sigs, replace_all=True)
    manifest = layout.task_manifest_path(layout.tasks_dir(fresh_demo) / TASK)
    before = manifest.stat()
    timeline = layout.timeline_path(layout.tasks_dir(fresh_demo) / TASK)
    value = json.loads(timeline.read_text(encoding="utf-8"))
    value["entries"].append(dict(value["entries"][-1], status="in-progress"))
    timeline.with_suffix(".new").write_text(json.dumps(value), encoding="utf-8")
    os.replace(timeline.with_suffix(".new"), timeline)
    assert manifest.stat() == before
    assert seen.load(fresh_demo).unread(seen.signatures(fresh_demo, _roots(fresh_demo))) == {TASK}


def test_a_task_that_appears_later_is_unread(fresh_demo: Path) -> None:
    sigs = seen.signatures(fresh_demo, _roots(fresh_demo))
    del sigs[TASK]
    seen.mark_seen(fresh_demo, sigs, replace_all=True)
    assert seen.load(fresh_demo).unread(seen.signatures(fresh_demo, _roots(fresh_demo))) == {TASK}


def test_state_lives_outside_the_store_and_leaves_it_untouched(fresh_demo: Path) -> None:
    before = snapshot(fresh_demo)
    mtimes = {p: p.stat().st_mtime_ns for p in fresh_demo.rglob("*")}
    seen.mark_seen(fresh_demo, seen.signatures(fresh_demo, _roots(fresh_demo)), replace_all=True)
    seen.load(fresh_demo)
    assert snapshot(fresh_demo) == before
    assert {p: p.stat().st_mtime_ns for p in fresh_demo.rglob("*")} == mtimes
    path = seen.state_path(fresh_demo)
    assert path.is_file() and path.is_relative_to(layout.okstra_state_dir())
    assert not path.is_relative_to(fresh_demo)


def test_marks_of_other_shapes_are_read_as_before(fresh_demo: Path) -> None:
    """A mark with fields a later version adds is read; one whose fields are not text is not; objects elsewhere
    shaped like a mark are not taken for one."""
    path = seen.state_path(fresh_demo)
    path.parent.mkdir(parents=True, exist_ok=True)
    mark = {"signature": "1.2.3:-", "at": "2026-12-01T00:00:00Z"}
    doc = {
        "version": 1,
        "project": os.path.realpath(fresh_demo),
        "tasks": {"a/b": {**mark, "by": "me"}, "a/c": {"signature": 1, "at": "x"}, "a/d": mark, "a/e": [mark]},
        "note": mark,
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    state = seen.load(fresh_demo)
    assert state.warning is None and not state.first
    assert state.marks == {"a/b": seen.Mark(**mark), "a/d": seen.Mark(**mark)}


def test_a_corrupt_or_foreign_file_is_replaced_with_a_warning(fresh_demo: Path) -> None:
    path = seen.state_path(fresh_demo)
    sigs = seen.signatures(fresh_demo, _roots(fresh_demo))
    for bad, reason in (
        (b"{not json", "not valid JSON"),
        (json.dumps({"version": 99, "tasks": {}}).encode(), "not a version 1 seen-state file"),
        (json.dumps({"version": 1, "project": "/elsewhere", "tasks": {}}).encode(), "written for another project"),
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bad)
        state = seen.load(fresh_demo)
        assert state.first and state.unread(sigs) == set()  # never trusted: nothing is unread
        assert state.warning == f"{path}: {reason}; it will be replaced"
        seen.mark_seen(fresh_demo, sigs, replace_all=True)
        assert seen.load(fresh_demo).warning is None


def _marker(root: str, keys: list[str], state_dir: str) -> None:
    os.environ["OKSTRA_STATE_DIR"] = state_dir
    for key in keys:
        seen.mark_seen(Path(root), {key: "sig-" + key})


def test_two_processes_lose_none_of_each_others_marks(fresh_demo: Path) -> None:
    seen.mark_seen(fresh_demo, {}, replace_all=True)
    keys = [f"group/task-{n}" for n in range(60)]
    ctx = multiprocessing.get_context("spawn")
    state_dir = str(layout.okstra_state_dir())
    workers = [ctx.Process(target=_marker, args=(str(fresh_demo), keys[i::2], state_dir)) for i in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=300)
        assert w.exitcode == 0
    marks = seen.load(fresh_demo).marks
    assert {k: m.signature for k, m in marks.items()} == {k: "sig-" + k for k in keys}


def test_one_mark_is_appended_to_the_journal_and_the_file_is_left_alone(fresh_demo: Path) -> None:
    sigs = seen.signatures(fresh_demo, _roots(fresh_demo))
    seen.mark_seen(fresh_demo, sigs, replace_all=True)
    path, journal = seen.state_path(fresh_demo), seen.journal_path(fresh_demo)
    before = path.read_bytes()
    assert not journal.exists()
    seen.mark_seen(fresh_demo, {TASK: "changed-signature"})
    seen.mark_seen(fresh_demo, {"group/new-task": "sig"})
    assert path.read_bytes() == before
    assert len(journal.read_bytes().splitlines()) == 2
    marks = seen.load(fresh_demo).marks
    assert marks[TASK].signature == "changed-signature" and marks["group/new-task"].signature == "sig"
    # Marking everything folds the journal into the file and removes it.
    seen.mark_seen(fresh_demo, {TASK: "again"}, replace_all=True)
    assert not journal.exists()
    assert {k: m.signature for k, m in seen.load(fresh_demo).marks.items()} == {TASK: "again"}


def test_a_torn_journal_line_is_skipped_and_the_next_mark_lands_whole(fresh_demo: Path) -> None:
    seen.mark_seen(fresh_demo, {"a/one": "1"}, replace_all=True)
    seen.mark_seen(fresh_demo, {"a/two": "2"})
    journal = seen.journal_path(fresh_demo)
    with open(journal, "ab") as fh:
        fh.write(b'{"task": "a/three", "signa')  # a crash in the middle of an append
    assert set(seen.load(fresh_demo).marks) == {"a/one", "a/two"}
    seen.mark_seen(fresh_demo, {"a/four": "4"})
    assert set(seen.load(fresh_demo).marks) == {"a/one", "a/two", "a/four"}
    assert journal.read_bytes().endswith(b"\n") and b"a/three" not in journal.read_bytes()


def test_a_long_journal_is_folded_into_the_file(fresh_demo: Path) -> None:
    seen.mark_seen(fresh_demo, {}, replace_all=True)
    journal = seen.journal_path(fresh_demo)
    pad = "x" * 1000
    seen.mark_seen(fresh_demo, {"g/t0": pad})
    line = len(journal.read_bytes())  # one mark's line (the file's identity in it varies from run to run)
    n = 1
    while journal.exists():
        seen.mark_seen(fresh_demo, {f"g/t{n}": pad})
        n += 1
        assert n < 10 * seen.JOURNAL_MAX_BYTES // 1000
    # The mark that found the journal past its limit replaced the file with every mark in it; until then every
    # line, each at most two digits longer than the first, was kept in the journal.
    assert n >= seen.JOURNAL_MAX_BYTES // (line + 2)
    saved = json.loads(seen.state_path(fresh_demo).read_bytes())["tasks"]
    assert set(saved) == {f"g/t{i}" for i in range(n)}


def test_a_symlinked_journal_is_never_written_through(fresh_demo: Path, tmp_path: Path) -> None:
    seen.mark_seen(fresh_demo, {"a/one": "1"}, replace_all=True)
    outside = tmp_path / "elsewhere.txt"
    outside.write_bytes(b"keep\n")
    journal = seen.journal_path(fresh_demo)
    journal.symlink_to(outside)
    seen.mark_seen(fresh_demo, {"a/two": "2"})
    assert outside.read_bytes() == b"keep\n"
    assert not journal.is_symlink() and not journal.exists()
    assert set(seen.load(fresh_demo).marks) == {"a/one", "a/two"}


def test_a_journal_that_cannot_be_removed_is_named(fresh_demo: Path) -> None:
    seen.mark_seen(fresh_demo, {"a/one": "1"}, replace_all=True)
    journal = seen.journal_path(fresh_demo)
    journal.mkdir()
    (journal / "x").write_bytes(b"")
    with pytest.raises(OkstraError) as raised:
        seen.mark_seen(fresh_demo, {"a/two": "2"})
    assert str(journal) in str(raised.value) and "cannot be removed" in str(raised.value)
    # The file was still replaced with the new mark: nothing is lost.
    assert set(seen.load(fresh_demo).marks) == {"a/one", "a/two"}


def test_a_journal_left_behind_by_a_replaced_file_is_never_replayed(fresh_demo: Path) -> None:
    seen.mark_seen(fresh_demo, {TASK: "v1"}, replace_all=True)
    seen.mark_seen(fresh_demo, {TASK: "v2"})
    journal = seen.journal_path(fresh_demo)
    left = journal.read_bytes()
    # A crash after the file was replaced with a newer mark and before the journal was removed.
    seen.mark_seen(fresh_demo, {TASK: "v3"}, replace_all=True)
    journal.write_bytes(left)
    assert seen.load(fresh_demo).marks[TASK].signature == "v3"
    seen.mark_seen(fresh_demo, {"a/other": "x"})  # appends over the new file; the stale line stays inert
    marks = seen.load(fresh_demo).marks
    assert marks[TASK].signature == "v3" and marks["a/other"].signature == "x"


def test_odd_journals_are_never_read_through_and_marks_still_land(fresh_demo: Path, tmp_path: Path) -> None:
    seen.mark_seen(fresh_demo, {"a/one": "1"}, replace_all=True)
    journal = seen.journal_path(fresh_demo)
    seen.mark_seen(fresh_demo, {})  # nothing to mark: nothing written
    assert not journal.exists()
    # A hard-linked journal: never appended through; the next mark replaces the file and drops it.
    other = tmp_path / "other"
    other.write_bytes(b"")
    os.link(other, journal)
    seen.mark_seen(fresh_demo, {"a/two": "2"})
    assert other.read_bytes() == b"" and not journal.exists()
    # A FIFO: loading does not block on it, and the next mark replaces it.
    os.mkfifo(journal)
    assert set(seen.load(fresh_demo).marks) == {"a/one", "a/two"}
    seen.mark_seen(fresh_demo, {"a/three": "3"})
    assert set(seen.load(fresh_demo).marks) == {"a/one", "a/two", "a/three"}


def test_a_file_replaced_while_it_is_read_is_read_again(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen.mark_seen(fresh_demo, {"a/one": "1"}, replace_all=True)
    seen.mark_seen(fresh_demo, {"a/two": "2"})
    replay = seen._replay
    calls = []

    def folded_meanwhile(path: Path, file: str, marks: dict[str, seen.Mark]) -> None:
        replay(path, file, marks)
        if not calls:  # another workbench folds the journal right after this reader took the file
            calls.append(file)
            seen.mark_seen(fresh_demo, {"a/one": "1", "a/two": "2", "a/three": "3"}, replace_all=True)

    monkeypatch.setattr(seen, "_replay", folded_meanwhile)
    assert set(seen.load(fresh_demo).marks) == {"a/one", "a/two", "a/three"}
    assert len(calls) == 1


@pytest.mark.parametrize(("make", "what"), [(os.mkdir, "a directory"), (os.mkfifo, "a FIFO")])
def test_a_state_path_that_is_no_file_is_one_line_and_never_waits(
    fresh_demo: Path, make: Callable[[Path], None], what: str, without_waiting: Callable[..., object]
) -> None:
    path = seen.state_path(fresh_demo)
    path.parent.mkdir(parents=True, exist_ok=True)
    make(path)
    sigs = seen.signatures(fresh_demo, _roots(fresh_demo))
    line = f"{path}: is {what}, not a regular file; nothing is remembered as seen until it is removed"
    state = without_waiting(lambda: seen.load(fresh_demo), path)
    assert isinstance(state, seen.SeenState) and state.first and state.warning == line
    assert state.unread(sigs) == set()
    for mark in (lambda: seen.mark_seen(fresh_demo, sigs, replace_all=True), lambda: seen.mark_seen(fresh_demo, sigs)):
        refused = without_waiting(mark, path)
        assert isinstance(refused, OkstraError) and str(refused) == line


def test_the_state_of_many_tasks_is_written_without_its_text_held_in_pieces(tmp_path: Path) -> None:
    """Writing the marks of a large store holds the marks' document and the text written, not every piece of
    the text besides (an indented dump is Python's encoder, which holds them all before joining them: 8.8 times
    the text written, against 5.9 times)."""
    import tracemalloc

    marks = {
        f"group-{i % 50}/task-{i:06d}": seen.Mark(f"{i}:{i * 7}:manifest", "2026-12-06T23:00:00Z")
        for i in range(20_000)
    }
    tracemalloc.start()
    try:
        data = seen._dump(tmp_path, marks)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(seen._parse(data, tmp_path)[0]) == len(marks)
    assert peak < 7 * len(data), f"{peak:,} bytes held to write {len(data):,}"
