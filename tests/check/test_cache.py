"""The incremental check: with its cache, the report is byte-for-byte the report of a fresh check, after any edit."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from okstra_core import store_index
from okstra_core.check import cache as cache_module
from okstra_core.check.cache import CheckCache
from okstra_core.check.engine import CheckError
from okstra_core.check.formats import render
from okstra_core.commands.check import main_check

from .helpers import TASK, check, edit_json, edit_records, kept_records, one, records_database

Snapshot = dict[str, tuple[str, int, int, int, int]]


@pytest.fixture(autouse=True)
def _trust_fresh_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests edit files right before checking: cache them anyway, so that stale reuse would show."""
    monkeypatch.setattr(cache_module, "RACY_SECONDS", 0.0)


def _snapshot(root: Path) -> Snapshot:
    """Every entry under *root*, without following symlinks: a symlink's target, and the inode, size, mtime and
    change time of each entry (any write, rename or chmod changes the change time, so the bytes need no reading)."""
    out: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            target = os.readlink(path) if os.path.islink(path) else ""
            out[path] = (target, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return out


#: Every format a report is written in. The formats render the same report, so most tests compare one (JSON:
#: every field of every finding); one test compares them all.
ALL_FORMATS = ("text", "json", "sarif")


class Pair:
    """Runs the cached and the fresh check on one project and compares them."""

    def __init__(self, root: Path, cache_dir: Path, formats: tuple[str, ...] = ("json",), **defaults: Any) -> None:
        self.root = root
        self.cache = CheckCache(cache_dir)
        self.formats = formats
        self.defaults = defaults

    def compare(self, **kw: Any) -> tuple[str, CheckCache]:
        """Check cached, then fresh; both reports must be the same bytes in each format, the store unchanged."""
        kw = {**self.defaults, **kw}
        before = _snapshot(self.root)
        self.cache.hits = self.cache.misses = 0
        cached = check(self.root, check_cache=self.cache, **kw)
        assert _snapshot(self.root) == before, "a cached check changed the store"
        fresh = check(self.root, **kw)
        assert _snapshot(self.root) == before, "a check changed the store"
        for fmt in self.formats:
            assert render(cached, fmt) == render(fresh, fmt), fmt
        return render(fresh, "text"), self.cache


def _task(root: Path) -> Path:
    return root / TASK


@pytest.mark.parametrize("jobs", [1, 2], ids=["one-process", "workers"])
def test_cached_report_is_the_fresh_report_across_edits(
    fresh_demo: Path, tmp_path: Path, jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from okstra_core.check import engine

    # With workers, the reuse check's lstat calls run in them even for this small store.
    monkeypatch.setattr(engine, "PARALLEL_MIN_TASKS", 1)
    root = fresh_demo
    pair = Pair(root, tmp_path / "cache", formats=ALL_FORMATS, jobs=jobs)
    _, c = pair.compare()
    tasks = c.misses
    assert tasks >= 8 and c.hits == 0
    _, c = pair.compare()
    assert (c.hits, c.misses) == (tasks, 0), "an unchanged store reuses every task"

    def step(edit: Callable[[], None], *, changes_report: bool = True, misses: int = 1, **kw: Any) -> str:
        previous, _ = pair.compare(**kw)
        edit()
        text, c = pair.compare(**kw)
        assert (text != previous) is changes_report
        assert c.misses == misses and c.hits == tasks - misses
        return text

    task = _task(root)
    # A file changed.
    team_state = one(task, "runs/analysis/state/team-state-*.json")
    step(lambda: team_state.write_text("{ not json", encoding="utf-8"))
    # A file added.
    step(lambda: (task / "runs" / "analysis" / "state" / "stray.txt").write_text("x\n", encoding="utf-8"))
    # A file removed.
    worker_result = one(task, "runs/analysis/worker-results/*-result-*.md")
    step(worker_result.unlink)
    # A file renamed.
    report_md = one(task, "runs/analysis/reports/final-report-*.md")
    step(lambda: report_md.rename(report_md.with_name("renamed-report.md")))
    # The mtime kept but the size changed.
    timeline = task / "history" / "timeline.json"

    def same_mtime_other_size() -> None:
        st = timeline.stat()
        timeline.write_text("[1]\n", encoding="utf-8")  # not a timeline (a bare list of entries would be)
        os.utime(timeline, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert timeline.stat().st_mtime_ns == st.st_mtime_ns

    step(same_mtime_other_size)

    # The mtime and the size kept, the bytes changed (only the inode change time shows it).
    def same_mtime_same_size() -> None:
        st = timeline.stat()
        timeline.write_text('"x"\n', encoding="utf-8")
        os.utime(timeline, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert timeline.stat().st_size == st.st_size

    step(same_mtime_same_size)


def test_symlinks_swapped_and_edited_through(fresh_demo: Path, tmp_path: Path) -> None:
    root = fresh_demo
    pair = Pair(root, tmp_path / "cache")
    task = _task(root)
    elsewhere = root / "shared"
    elsewhere.mkdir()
    # A task file as a symlink to one of two files outside the task (inside the project).
    manifest = task / "task-manifest.json"
    (elsewhere / "good.json").write_bytes(manifest.read_bytes())
    (elsewhere / "bad.json").write_text("{ broken" + " " * 10 + "\n", encoding="utf-8")
    manifest.unlink()
    manifest.symlink_to(elsewhere / "good.json")
    # A run folder as a symlink to a folder outside the task.
    results = task / "runs" / "analysis" / "worker-results"
    shutil.move(str(results), str(elsewhere / "worker-results"))
    results.symlink_to(elsewhere / "worker-results", target_is_directory=True)
    clean, c = pair.compare()
    _, c = pair.compare()
    assert c.misses == 0

    def swap(link: Path, target: Path) -> None:
        tmp = link.with_name(link.name + ".new")
        tmp.symlink_to(target)
        os.replace(tmp, link)

    swap(manifest, elsewhere / "bad.json")
    broken, c = pair.compare()
    assert broken != clean and c.misses == 1
    swap(manifest, elsewhere / "good.json")
    again, c = pair.compare()
    assert again == clean and c.misses == 1
    # A file changed behind a symlinked folder: the task's tree is unchanged, what its rules read is not.
    inner = one(elsewhere / "worker-results", "*-result-*.md")
    inner.write_bytes(b"\xff\xfe not utf-8\n")
    edited, c = pair.compare()
    assert edited != clean and c.misses == 1


def test_catalog_entry_and_added_task(fresh_demo: Path, tmp_path: Path) -> None:
    root = fresh_demo
    pair = Pair(root, tmp_path / "cache")
    first, c = pair.compare()
    tasks = c.misses
    catalog = root / ".okstra" / "discovery" / "task-catalog.json"
    data = json.loads(catalog.read_text(encoding="utf-8"))
    data["tasks"][0]["taskKey"] += "-renamed"
    catalog.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    changed, c = pair.compare()
    assert changed != first and c.misses == 1 and c.hits == tasks - 1
    # A task folder copied in: the project part reports it, the new task is checked, the others reused.
    shutil.copytree(_task(root), _task(root).with_name("copied-task"), symlinks=True)
    added, c = pair.compare()
    assert added != changed and c.misses == 1 and c.hits == tasks


def test_rule_selection_and_checker_version(fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = fresh_demo
    one(_task(root), "runs/analysis/state/team-state-*.json").write_text("{ not json", encoding="utf-8")
    pair = Pair(root, tmp_path / "cache")
    full, c = pair.compare()
    tasks = c.misses
    selected, c = pair.compare(select=["OKS004"])
    assert selected != full and c.hits == tasks, "findings are cached before the selection is applied"
    ignored, c = pair.compare(ignore=["OKS004"])
    assert ignored not in (full, selected) and c.hits == tasks
    import okstra_core

    real_version = okstra_core.__version__
    monkeypatch.setattr(okstra_core, "__version__", "99.0.0")
    cache_module.checker_fingerprint.cache_clear()
    try:
        other, c = pair.compare()
        assert other == full and c.misses == tasks and c.hits == 0, "another checker version reuses nothing"
        _, c = pair.compare()
        assert c.hits == tasks
    finally:
        monkeypatch.setattr(okstra_core, "__version__", real_version)
        cache_module.checker_fingerprint.cache_clear()
    assert cache_module.RACY_SECONDS == 0.0
    _, c = pair.compare()
    assert c.misses == tasks, "and back to the first version: the cache it rewrote is not that version's"


def test_parallel_workers_reuse_and_recheck(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from okstra_core.check import engine
    from okstra_core.demo import generate

    # The thresholds scaled down with the store: workers from 16 tasks on, 8 tasks a chunk (3 chunks of 24).
    monkeypatch.setattr(engine, "PARALLEL_MIN_TASKS", 16)
    monkeypatch.setattr(engine, "CHUNK_TASKS", 8)
    root = generate(tmp_path / "project", tasks=24, jobs=1)
    pair = Pair(root, tmp_path / "cache")
    first, c = pair.compare(jobs=2)
    assert c.misses == 24
    _, c = pair.compare(jobs=2)
    assert c.hits == 24
    target = sorted((root / ".okstra" / "tasks").glob("bulk-*/task-*"))[-1] / "history" / "timeline.json"
    target.write_text("[", encoding="utf-8")
    edited, c = pair.compare(jobs=2)
    assert edited != first and (c.hits, c.misses) == (23, 1)


@pytest.mark.parametrize(
    "garbage",
    [
        b"",
        b"{not json",
        b"[]",
        b'{"format": 1, "tasks": 5}',
        b"\xff\xfe\x00",
    ],
)
def test_corrupt_cache_is_ignored(fresh_demo: Path, tmp_path: Path, garbage: bytes) -> None:
    pair = Pair(fresh_demo, tmp_path / "cache")
    pair.compare()
    records_database(tmp_path / "cache").write_bytes(garbage)
    _, c = pair.compare()
    assert c.hits == 0, "nothing is reused from a corrupt cache"
    _, c = pair.compare()
    assert c.misses == 0, "and the next run rewrote it"


def test_records_with_wrong_values_are_dropped(fresh_demo: Path, tmp_path: Path) -> None:
    pair = Pair(fresh_demo, tmp_path / "cache")
    _, c = pair.compare()
    tasks = c.misses

    def spoil(records: dict[str, dict[str, Any]]) -> None:
        first, second = sorted(records)[:2]
        records[first]["findings"] = [["OKS999", "error", "x", "made up", None]]
        records[second]["shape"] = "no such shape"

    edit_records(tmp_path / "cache", spoil)
    _, c = pair.compare()
    assert (c.hits, c.misses) == (tasks - 2, 2)


@pytest.mark.parametrize("at_once", [1, 3, 4096])
def test_records_are_held_as_their_texts_and_checked_a_part_at_a_time(
    fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at_once: int
) -> None:
    """The loaded records are held as the texts they were kept as, each parsed anew when asked; checked when
    loaded a part at a time, a spoilt one in any part is dropped, and the report is a fresh check's."""
    monkeypatch.setattr(cache_module, "PARSED_AT_ONCE", at_once)
    pair = Pair(fresh_demo, tmp_path / "cache")
    _, c = pair.compare()
    tasks = c.misses
    loaded = CheckCache(tmp_path / "cache").load(str(fresh_demo), str(fresh_demo / ".okstra-home"))
    assert len(loaded) == tasks
    rel = sorted(loaded)[-1]
    assert loaded[rel] == loaded[rel] and loaded[rel] is not loaded[rel]
    assert cache_module.record_text(loaded[rel]) == loaded.kept_row(rel)[0]

    def spoil(records: dict[str, dict[str, Any]]) -> None:
        records[sorted(records)[-1]]["findings"] = "not a list of findings"

    edit_records(tmp_path / "cache", spoil)
    _, c = pair.compare()
    assert (c.hits, c.misses) == (tasks - 1, 1)


def test_a_save_that_fails_leaves_the_kept_records_whole(
    fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pair = Pair(fresh_demo, tmp_path / "cache")
    pair.compare()
    kept = kept_records(tmp_path / "cache")
    one(_task(fresh_demo), "runs/analysis/state/team-state-*.json").write_text("{", encoding="utf-8")
    monkeypatch.setattr(store_index, "BUSY_SECONDS", 0.05)
    other = sqlite3.connect(records_database(tmp_path / "cache"), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process is writing, past the run's wait
    try:
        _, c = pair.compare()  # the check itself is unaffected
    finally:
        other.rollback()
        other.close()
    assert c.unsaved is not None and "locked" in c.unsaved, c.problems()
    assert kept_records(tmp_path / "cache") == kept, "the previous records stay whole"


def test_a_save_that_fails_midway_keeps_none_of_its_rows(fresh_demo: Path, tmp_path: Path) -> None:
    """The records of a run replace the kept ones in one transaction: a failure on the last row keeps the previous
    records whole, not some of each."""
    pair = Pair(fresh_demo, tmp_path / "cache")
    pair.compare()
    kept = kept_records(tmp_path / "cache")
    last = json.dumps(sorted(kept)[-1])
    conn = sqlite3.connect(records_database(tmp_path / "cache"))
    with conn:
        conn.execute(
            "CREATE TRIGGER spoil BEFORE INSERT ON check_tasks WHEN NEW.task = ? "
            "BEGIN SELECT RAISE(ABORT, 'disk full'); END".replace("?", "'" + last.replace("'", "''") + "'")
        )
    conn.close()
    one(_task(fresh_demo), "runs/analysis/state/team-state-*.json").write_text("{", encoding="utf-8")
    _, c = pair.compare()
    assert c.unsaved is not None and "disk full" in c.unsaved, c.problems()
    assert kept_records(tmp_path / "cache") == kept, "the previous records stay whole"


def test_a_save_waits_for_another_process_writing(
    fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    pair = Pair(fresh_demo, tmp_path / "cache")
    pair.compare()
    kept = kept_records(tmp_path / "cache")
    one(_task(fresh_demo), "runs/analysis/state/team-state-*.json").write_text("{", encoding="utf-8")
    other = sqlite3.connect(records_database(tmp_path / "cache"), isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another process is writing
    original = cache_module._write_records
    release = threading.Timer(0.2, other.rollback)

    def writing(*args: Any) -> None:
        release.start()  # the other process finishes while this one waits
        original(*args)

    monkeypatch.setattr(cache_module, "_write_records", writing)
    try:
        _, c = pair.compare()
    finally:
        release.join()
        other.close()
    assert c.unsaved is None, c.problems()
    assert kept_records(tmp_path / "cache") != kept, "this run's records were kept"


def test_the_records_live_in_the_store_index_database_only(fresh_demo: Path, tmp_path: Path) -> None:
    pair = Pair(fresh_demo, tmp_path / "cache")
    pair.compare()
    one(_task(fresh_demo), "runs/analysis/state/team-state-*.json").write_text("{", encoding="utf-8")
    pair.compare()  # a second save replaces the first
    files = sorted(p.relative_to(tmp_path / "cache").as_posix() for p in (tmp_path / "cache").rglob("*"))
    assert files == ["index", f"index/{records_database(tmp_path / 'cache').name}"], files


def test_symlinked_database_is_neither_read_nor_written(fresh_demo: Path, tmp_path: Path) -> None:
    pair = Pair(fresh_demo, tmp_path / "cache")
    pair.compare()
    path = records_database(tmp_path / "cache")
    outside = tmp_path / "outside.sqlite"
    outside.write_bytes(path.read_bytes())  # a valid database: following the link would reuse it
    kept = outside.read_bytes()
    path.unlink()
    path.symlink_to(outside)
    _, c = pair.compare()
    assert c.hits == 0, "a symlinked database is not read"
    assert outside.read_bytes() == kept, "nor written through"
    assert not path.is_symlink() and path.is_file(), "the link is replaced by a database of its own"
    assert not list(tmp_path.glob("outside.sqlite-*")), "no file is made beside the link's target"


def test_cache_inside_the_store_is_refused(fresh_demo: Path) -> None:
    with pytest.raises(CheckError, match="inside the store"):
        check(fresh_demo, check_cache=CheckCache(fresh_demo / ".okstra" / "cache"))
    assert not (fresh_demo / ".okstra" / "cache").exists()


def test_cli_cache_dir_default_and_no_cache(
    fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    monkeypatch.delenv("OKSTRA_CACHE_DIR", raising=False)
    home = ["--home", str(fresh_demo / ".okstra-home")]
    assert main_check([str(fresh_demo), "--no-cache", *home]) == 0
    plain = capsys.readouterr().out
    assert not xdg.exists(), "--no-cache writes no cache"
    assert main_check([str(fresh_demo), *home]) == 0
    assert capsys.readouterr().out == plain
    assert kept_records(xdg / "okstra")
    chosen = tmp_path / "chosen"
    assert main_check([str(fresh_demo), "--cache-dir", str(chosen), *home]) == 0
    assert capsys.readouterr().out == plain
    assert kept_records(chosen), "the settings' cache folder holds the store index with the check's records"
    assert main_check([str(fresh_demo), "--cache-dir", str(fresh_demo / ".okstra" / "c"), *home]) == 2
    assert "inside the store" in capsys.readouterr().err


def test_a_cache_that_cannot_be_saved_is_said_once_and_changes_nothing_else(
    fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = ["--home", str(fresh_demo / ".okstra-home")]
    assert main_check([str(fresh_demo), "--no-cache", *home]) == 0
    plain = capsys.readouterr()
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    assert main_check([str(fresh_demo), "--cache-dir", str(blocker), *home]) == 0
    out, err = capsys.readouterr()
    assert out == plain.out, "the report is the same"
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("okstra check: warning: cache not used: "), lines
    assert str(blocker) in lines[0] and "Not a directory" in lines[0]
    assert blocker.read_text() == "not a folder\n"


def _status(root: Path, rel: str, value: str) -> None:
    (root / rel).write_text(value + "\n", encoding="utf-8")


def _segment_of(root: Path, rel: str, value: str) -> None:
    from .helpers import edit_json

    def change(d: dict[str, Any]) -> None:
        d.get("identity", d).update(runDateTimeSegment=value)

    edit_json(root / rel, change)


def _open_cycle(root: Path, cycle_id: str) -> None:
    log = root / ".okstra/tasks/search/stale-cache/history/fix-cycles.jsonl"
    line = {"event": "opened", "cycleId": cycle_id, "cycle": 3, "symptom": "x", "at": "2026-11-02T09:16:00Z"}
    with log.open("a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


def _cases() -> dict[str, Any]:
    from .test_cross_file import CASES

    return CASES


def _add_group(root: Path, group_id: str) -> None:
    from .helpers import edit_json

    groups = root / f"{TASK}/runs/analysis/state/convergence-groups-analysis-001.json"
    edit_json(groups, lambda d: d["groups"].append({"groupId": group_id}))


#: Rules on manager state: the project part is checked afresh on every run, so no task record changes.
_PROJECT_LEVEL = ("OKS143", "OKS144")

_A = f"{TASK}/runs/analysis"
#: For each cross-file rule, an edit of the *other* file of its pair, made after the case planted its inconsistency.
OTHER_FILE: dict[str, Callable[[Path], None]] = {
    "OKS041": lambda r: _segment_of(r, f"{_A}/manifests/run-manifest-analysis-001.json", "2026-11-18T09:00:00Z"),
    "OKS042": lambda r: _segment_of(r, f"{_A}/manifests/run-manifest-analysis-002.json", "2026-11-20T14:00:00Z"),
    "OKS043": lambda r: _status(r, f"{_A}/status/final-analysis-002.status", "failed"),
    "OKS044": lambda r: _segment_of(
        r,
        f"{_A}/state/active-run-context-analysis-003.json",
        json.loads((r / f"{_A}/manifests/run-manifest-analysis-002.json").read_text(encoding="utf-8"))[
            "runDateTimeSegment"
        ],
    ),
    "OKS045": lambda r: _segment_of(r, f"{_A}/manifests/run-manifest-analysis-001.json", "2026-10-01T00:00:00Z"),
    "OKS046/status": lambda r: _status(
        r, f"{TASK}/runs/final-verification/status/final-final-verification-001.status", "failed"
    ),
    "OKS046/path": lambda r: _status(
        r, f"{TASK}/runs/final-verification/status/final-final-verification-001.status", "failed"
    ),
    "OKS046/current": lambda r: _status(
        r, f"{TASK}/runs/final-verification/status/final-final-verification-001.status", "in-progress"
    ),
    "OKS046/checkpoint": lambda r: _status(
        r, f"{TASK}/runs/final-verification/status/final-final-verification-001.status", "failed"
    ),
    "OKS047": lambda r: _open_cycle(r, "fc-9"),
    "OKS048": lambda r: _cases()["OKS048"].mend(r),  # the timeline records the report's run
    "OKS047/timeline": lambda r: _open_cycle(r, "fc-9"),
    "OKS054/assignment": lambda r: _cases()["OKS054/assignment"].mend(r),
    "OKS102/dir": lambda r: _cases()["OKS102/stage"].plant(r),
    "OKS102/stage": lambda r: _cases()["OKS102/dir"].plant(r),
    "OKS103": lambda r: (r / f"{TASK}/instruction-set/task-brief.md").write_text("edited\n", encoding="utf-8"),
    "OKS065": lambda r: _cases()["OKS065"].mend(r),
    "OKS114": lambda r: _cases()["OKS114"].mend(r),
    "OKS115/analyser": lambda r: _cases()["OKS115/analyser"].mend(r),
    "OKS115/group": lambda r: _add_group(r, "G-404"),
    "OKS143": lambda r: _cases()["OKS143"].mend(r),
    "OKS144": lambda r: (r / ".okstra/project.json").write_text('{"projectId": "demo-shop"}\n', encoding="utf-8"),
}


@pytest.mark.parametrize("name", sorted(OTHER_FILE))
def test_cross_file_rules_are_cached_by_both_files(name: str, fresh_demo: Path, tmp_path: Path) -> None:
    """A rule reading two files: an edit of either gives the cached report the fresh one gives."""
    from .test_cross_file import CASES

    case = CASES[name]
    misses = 0 if name in _PROJECT_LEVEL else 1
    pair = Pair(fresh_demo, tmp_path / "cache")
    clean, _ = pair.compare()
    case.plant(fresh_demo)
    planted, c = pair.compare()
    assert planted != clean and name.split("/")[0] in planted and c.misses == misses
    OTHER_FILE[name](fresh_demo)
    other, c = pair.compare()
    assert other != planted and c.misses == misses


def test_every_cross_file_case_has_an_other_file_edit() -> None:
    assert set(OTHER_FILE) == set(_cases())


def test_tasks_of_one_layout_share_one_shape_until_the_save(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold check holds every task's record until it saves them: the tasks whose trees have the same entries
    hold one list of them, whether checked here or by workers, and what is saved is the same."""
    from okstra_core.check import engine, run_check
    from okstra_core.demo import generate

    root = tmp_path / "project"
    generate(root, tasks=80)  # bulk tasks of a few layouts, enough for workers
    saved: list[dict[str, dict[str, Any]]] = []
    real_save = engine._save

    def spy(*args: Any) -> None:
        saved.append(args[4])
        real_save(*args)

    monkeypatch.setattr(engine, "_save", spy)
    for jobs in (1, 2):
        saved.clear()
        run_check(root, jobs=jobs, check_cache=CheckCache(tmp_path / f"cache-{jobs}"))
        (records,) = saved
        shapes = [record["shape"] for record in records.values()]
        by_value: dict[tuple[str, ...], list[str]] = {}
        for shape in shapes:
            assert by_value.setdefault(tuple(shape), shape) is shape, "two lists of one shape"
        assert len(by_value) < len(shapes), "the demo's bulk tasks share layouts"


@pytest.mark.parametrize("cached", [False, True], ids=["no-cache", "cache"])
def test_a_one_process_check_lets_each_chunk_of_tasks_go_once_checked(
    demo_root: Path, tmp_path: Path, cached: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checked in one process, the tasks' catalog entries are held no longer than their chunk: a large store's
    entries are never all held at once."""
    import gc
    import weakref

    from okstra_core.check import engine

    monkeypatch.setattr(engine, "CHUNK_TASKS", 2)
    chunks: list[list[weakref.ref[Any]]] = []
    real = engine._task_chunk

    def watched(root: str, home: str | None, tasks: list[tuple[str, Any]], *rest: Any) -> Any:
        gc.collect()
        alive = [sum(ref() is not None for ref in refs) for refs in chunks]
        assert alive == [0] * len(chunks), f"entries of chunks already checked are still held: {alive}"
        chunks.append([weakref.ref(entry) for _, entry in tasks if entry is not None])
        return real(root, home, tasks, *rest)

    monkeypatch.setattr(engine, "_task_chunk", watched)
    check_cache = CheckCache(tmp_path / "cache") if cached else None
    report = check(demo_root, check_cache=check_cache, jobs=1)
    assert len(chunks) > 2 and all(chunks), "the demo's tasks were checked in several chunks, each with entries"
    assert report == check(demo_root, jobs=1), "the report is that of a check holding every entry"


def test_the_cached_records_are_read_once_the_project_s_own_reading_is_let_go(
    demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large store's kept records and the project's own reading (its parsed catalog among it) are never held
    together: the records are read after that reading is released."""
    from okstra_core.check.unit import Unit

    check(demo_root, check_cache=CheckCache(tmp_path / "cache"))
    released: list[bool] = []
    real_release, real_load = Unit.release, CheckCache.load

    def release(self: Unit) -> None:
        released.append(True)
        real_release(self)

    def load(self: CheckCache, root: str, home: str | None) -> dict[str, Any]:
        assert released, "the records were read while the project's own reading was held"
        return real_load(self, root, home)

    monkeypatch.setattr(Unit, "release", release)
    monkeypatch.setattr(CheckCache, "load", load)
    reusing = CheckCache(tmp_path / "cache")
    check(demo_root, check_cache=reusing)
    assert reusing.hits > 0 and reusing.misses == 0


def test_a_kept_text_that_is_no_record_of_its_own_is_no_record() -> None:
    """Two kept texts that parse only joined (the load checks them in one parse) give no record: their tasks are
    checked afresh, never a traceback."""
    from okstra_core.check.cache import KeptRecords

    shape: Any = (["x"], ((), ()), b"")
    halves = KeptRecords({"a/b": ('["k", "e", 1', shape), "a/c": ("[], []]", shape)})
    assert halves.get("a/b") is None and halves.get("a/c") is None
    assert len(halves) == 2 and halves.kept_row("a/b")[0] == '["k", "e", 1'
    # A text that parses on its own but not as a record (its task joined to its neighbours at the load, where
    # its own part of the parse was another text's) is no record either: the check never meets a wrong type.
    typed = KeptRecords({"a/d": ('[1, 2, "three", 4, 5]', shape), "a/e": ('["k", "e", 1, [["/p", "s"]], []]', shape)})
    assert typed.get("a/d") is None
    kept = typed["a/e"]
    assert kept["files"] == 1 and kept["deps"] == [["/p", "s"]] and kept["shape"] == ["x"]


def _project_edits(root: Path) -> dict[str, Callable[[], None]]:
    """One edit of each kind of path the project part's rules rest on, outside every task folder."""
    discovery = root / ".okstra" / "discovery"
    home = root / ".okstra-home" / "managers" / "release-train"
    billing = root / "services" / "billing"

    def latest() -> None:
        edit_json(discovery / "latest-task.json", lambda v: v.update(taskKey="demo-shop:nowhere:nothing"))

    def registered_id() -> None:
        edit_json(billing / ".okstra" / "project.json", lambda v: v.update(projectId="billing-renamed"))

    return {
        "catalog": lambda: edit_json(discovery / "task-catalog.json", lambda v: v["tasks"].pop()),
        "latest task": latest,
        "project file": lambda: edit_json(root / ".okstra" / "project.json", lambda v: v.update(projectId=7)),
        "store entry": lambda: (root / ".okstra" / "stray.txt").write_text("x\n", encoding="utf-8"),
        "task group": lambda: (root / ".okstra" / "tasks" / "Not A Slug").mkdir(),
        "invocation": lambda: one(root, ".okstra/agent-invocations/*/*.result.json").write_text("{", encoding="utf-8"),
        "manager": lambda: edit_json(home / "manager.json", lambda v: v.update(managerId="someone-else")),
        "registered project id": registered_id,
        "registered project gone": lambda: billing.rename(root / "services" / "billing-moved"),
        "latest task's manifest gone": lambda: (root / TASK / "task-manifest.json").unlink(),
    }


@pytest.mark.parametrize("edit", list(_project_edits(Path("."))))
def test_the_project_part_is_reused_until_a_path_it_rests_on_changes(
    edit: str, fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A warm check neither lists the task groups nor parses the catalog: the project part's findings and task
    folders are kept, and its rules run again once anything they read changed, the report that of a fresh check."""
    from okstra_core.check.rules import project_rules

    ran: list[bool] = []
    real_rules = project_rules.check_project

    def rules(*args: Any) -> Any:
        ran.append(True)
        return real_rules(*args)

    monkeypatch.setattr(project_rules, "check_project", rules)
    root = fresh_demo
    edit_json(root / ".okstra" / "discovery" / "latest-task.json", lambda v: v.update(taskRootPath=TASK))
    pair = Pair(root, tmp_path / "cache")
    clean, c = pair.compare()
    assert not c.project_reused
    ran.clear()
    again, c = pair.compare()
    assert again == clean and c.project_reused and ran == [True], "the fresh check alone ran the project's rules"
    _project_edits(root)[edit]()
    ran.clear()
    edited, c = pair.compare()
    assert edited != clean, "the edit changes the report"
    assert not c.project_reused and ran == [True, True], "the project's rules ran again, cached too"
    _, c = pair.compare()
    assert c.project_reused, "and their new record is reused"


def test_a_project_record_that_fails_its_mac_is_not_trusted(fresh_demo: Path, tmp_path: Path) -> None:
    one(fresh_demo / ".okstra" / "agent-invocations", "*/*.result.json").write_text("{", encoding="utf-8")
    pair = Pair(fresh_demo, tmp_path / "cache")
    broken, _ = pair.compare()
    conn = sqlite3.connect(records_database(tmp_path / "cache"))
    with conn:
        (head,) = conn.execute("SELECT head FROM check_project").fetchone()
        deps, findings, files = json.loads(head)
        assert findings, "the invalid result is one of the project part's findings"
        conn.execute("UPDATE check_project SET head = ?", (json.dumps([deps, [], files]),))
    conn.close()
    cache = CheckCache(tmp_path / "cache")
    report = check(fresh_demo, check_cache=cache)
    assert render(report, "text") == broken and not cache.project_reused
    assert cache.rejected == 1 and cache.problems()[0].startswith("1 cache entry failed the integrity check")


def test_the_kept_tasks_are_the_tasks_the_rules_found() -> None:
    """The project record's tasks read back as the folders and entry keys they were written from, each made when
    read; a line that is not one the record writes makes the record unusable (its rules run), never a wrong task."""
    from okstra_core.check.rules.project_rules import CatalogEntryKey, KeptTasks, kept_tasks, kept_tasks_text

    digest = "ab" * 32
    tasks: list[tuple[str, CatalogEntryKey | None]] = [
        (".okstra/tasks/g/t", CatalogEntryKey("p:g:t", "p", "g", "t", ".okstra/tasks/g/t", digest)),
        (".okstra/tasks/g/u", CatalogEntryKey("other:key", "p", "g", "u", None, digest)),
        (".okstra/tasks/g/v", CatalogEntryKey("k", None, "g", "v", "elsewhere/v", "not hex")),
        (".okstra/tasks/g/w\nx", None),
    ]
    text = kept_tasks_text(tasks)
    assert text is not None and text.count("\n") == len(tasks) - 1, "one line per task, a newline in a name escaped"
    kept = kept_tasks(text)
    assert kept is not None and len(kept) == len(tasks)
    assert list(kept) == tasks and kept[1] == tasks[1] and kept[1:3] == tasks[1:3]
    assert kept[0][1] is not kept[0][1], "made anew each time it is read, never held"
    assert kept_tasks("") is not None and len(kept_tasks("")) == 0  # type: ignore[arg-type]
    for bad in ("[1]", '["a", ["p", "g"]]', '["a", [null, "g", "t", null, null, "d"]]', "{", '["a"]\n["b",'):
        assert kept_tasks(bad) is None, bad
    with pytest.raises(ValueError):  # a line never checked: an error, never a wrong task (also under -O)
        KeptTasks(["{"])[0]
    unkept = CatalogEntryKey("p:g:t", "p", "g", "t", None, "unkept:" + "0" * 32)
    assert kept_tasks_text([(".okstra/tasks/g/t", unkept)]) is None, "a task checked afresh every time"
