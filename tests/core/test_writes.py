"""The write primitives: create-only, append-only JSONL, locked replace, containment."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest

from okstra_core import fresh_tree, reading, writes, writes_outside
from okstra_core.errors import LoadError, LockTimeout, PathEscape, WriteRefused


def test_create_only_identical_succeeds_different_refused(tmp_path: Path) -> None:
    assert writes.create_only(tmp_path, "a/b.txt", b"one") is writes.Outcome.CREATED
    assert writes.create_only(tmp_path, "a/b.txt", b"one") is writes.Outcome.IDENTICAL
    with pytest.raises(WriteRefused, match="different content"):
        writes.create_only(tmp_path, "a/b.txt", b"two")
    assert (tmp_path / "a" / "b.txt").read_bytes() == b"one"
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["b.txt"]  # no temp debris


@pytest.mark.parametrize("target", ["../escape.txt", "a/../../escape.txt", "/etc/okstra-escape.txt"])
def test_paths_outside_root_are_refused(tmp_path: Path, target: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(PathEscape):
        writes.create_only(root, target, b"x")
    assert not (tmp_path / "escape.txt").exists()


def test_symlink_escape_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside)
    with pytest.raises(PathEscape):
        writes.create_only(root, "link/file.txt", b"x")
    with pytest.raises(PathEscape):
        writes.append_jsonl(root, "link/log.jsonl", {"a": 1})
    with pytest.raises(PathEscape):
        writes.replace_locked(root, "link/state.json", lambda cur: b"{}")
    assert list(outside.iterdir()) == []


def test_final_symlink_is_never_written_through(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_bytes(b"real")
    (tmp_path / "alias.txt").symlink_to(tmp_path / "real.txt")
    with pytest.raises(PathEscape):
        writes.create_only(tmp_path, "alias.txt", b"real")
    with pytest.raises(PathEscape):
        writes.replace_locked(tmp_path, "alias.txt", lambda cur: b"changed")
    assert (tmp_path / "real.txt").read_bytes() == b"real"


def test_append_jsonl_whole_lines_and_torn_tail_repair(tmp_path: Path) -> None:
    writes.append_jsonl(tmp_path, "log.jsonl", {"n": 1})
    with open(tmp_path / "log.jsonl", "ab") as fh:
        fh.write(b'{"n": 2, "tor')  # a crashed writer's fragment: never a complete record
    writes.append_jsonl(tmp_path, "log.jsonl", {"n": 3})
    lines = (tmp_path / "log.jsonl").read_text().splitlines()
    assert [json.loads(line)["n"] for line in lines] == [1, 3]


def _append_worker(args: tuple[str, int, int]) -> None:
    root, worker, count = args
    for i in range(count):
        writes.append_jsonl(Path(root), "shared.jsonl", {"worker": worker, "i": i, "pad": "x" * (50 + i % 200)})


def test_concurrent_appends_lose_nothing(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        pool.map(_append_worker, [(str(tmp_path), w, 60) for w in range(4)])
    lines = (tmp_path / "shared.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 240
    assert {(r["worker"], r["i"]) for r in records} == {(w, i) for w in range(4) for i in range(60)}


def _increment_worker(args: tuple[str, int]) -> None:
    root, count = args

    def bump(current: bytes | None) -> bytes:
        value = json.loads(current) if current else {"n": 0}
        value["n"] += 1
        return json.dumps(value).encode()

    for _ in range(count):
        writes.replace_locked(Path(root), "counter.json", bump)


def test_locked_replace_loses_no_update(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        pool.map(_increment_worker, [(str(tmp_path), 40)] * 4)
    assert json.loads((tmp_path / "counter.json").read_bytes()) == {"n": 160}
    assert sorted(p.name for p in tmp_path.iterdir()) == [".locks", "counter.json"]
    assert [p.name for p in (tmp_path / ".locks").iterdir()] == ["counter.json.lock"]


def test_replace_refusal_changes_nothing(tmp_path: Path) -> None:
    writes.create_only(tmp_path, "s.json", b"{}")

    def refuse(current: bytes | None) -> bytes:
        raise WriteRefused(tmp_path / "s.json", "no")

    with pytest.raises(WriteRefused):
        writes.replace_locked(tmp_path, "s.json", refuse)
    assert (tmp_path / "s.json").read_bytes() == b"{}"
    assert writes.replace_locked(tmp_path, "s.json", lambda cur: None) is writes.Outcome.UNCHANGED


def test_lock_timeout_is_a_clear_error(tmp_path: Path) -> None:
    target = tmp_path / "busy.json"
    with writes.locked(target):
        ctx = multiprocessing.get_context("fork")
        q: multiprocessing.Queue[str] = ctx.Queue()

        def child() -> None:
            try:
                with writes.locked(target, timeout=0.2):
                    q.put("acquired")
            except LockTimeout as exc:
                q.put(str(exc))

        proc = ctx.Process(target=child)
        proc.start()
        proc.join(10)
        message = q.get(timeout=5)
    assert "lock not acquired" in message and "busy.json" in message


def test_move_no_overwrite(tmp_path: Path) -> None:
    writes.create_only(tmp_path, "a.txt", b"A")
    writes.create_only(tmp_path, "b.txt", b"B")
    with pytest.raises(WriteRefused):
        writes.move_no_overwrite(tmp_path, tmp_path / "a.txt", "b.txt")
    assert (tmp_path / "a.txt").read_bytes() == b"A" and (tmp_path / "b.txt").read_bytes() == b"B"
    assert writes.move_no_overwrite(tmp_path, tmp_path / "a.txt", "sub/c.txt") is writes.Outcome.MOVED
    assert not (tmp_path / "a.txt").exists() and (tmp_path / "sub" / "c.txt").read_bytes() == b"A"


def test_replace_keeping_refuses_a_different_kept_copy(tmp_path: Path) -> None:
    writes.create_only(tmp_path, "live.md", b"old\n")
    writes.create_only(tmp_path, "live.kept.md", b"something else\n")
    with pytest.raises(WriteRefused, match="kept copy is never overwritten"):
        writes.replace_keeping(tmp_path, "live.md", b"new\n", lambda: "live.kept.md")
    assert (tmp_path / "live.md").read_bytes() == b"old\n"
    assert (tmp_path / "live.kept.md").read_bytes() == b"something else\n"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["live.kept.md", "live.md"]


def test_replace_keeping_finishes_after_a_kill_between_link_and_rename(tmp_path: Path) -> None:
    writes.create_only(tmp_path, "live.md", b"old\n")
    os.link(tmp_path / "live.md", tmp_path / "live.kept.md")  # what a kill right after the link leaves
    outcome, kept = writes.replace_keeping(tmp_path, "live.md", b"new\n", lambda: "live.kept.md")
    assert outcome is writes.Outcome.REPLACED and kept == tmp_path / "live.kept.md"
    assert (tmp_path / "live.md").read_bytes() == b"new\n"
    assert (tmp_path / "live.kept.md").read_bytes() == b"old\n"


def test_remove_archived_requires_matching_archive(tmp_path: Path) -> None:
    writes.create_only(tmp_path, "final.json", b"orig")
    writes.create_only(tmp_path, "archive.orig", b"other")
    with pytest.raises(WriteRefused):
        writes.remove_archived(tmp_path, "final.json", "archive.orig")
    assert (tmp_path / "final.json").exists()
    writes.create_only(tmp_path, "archive2.orig", b"orig")
    writes.remove_archived(tmp_path, "final.json", "archive2.orig")
    assert not (tmp_path / "final.json").exists()


def test_populate_fresh_tree_never_overwrites(tmp_path: Path) -> None:
    assert fresh_tree.populate_fresh_tree(tmp_path, {tmp_path / "x" / "a": b"1", tmp_path / "x" / "b": b"2"}) == 2
    with pytest.raises(FileExistsError):
        fresh_tree.populate_fresh_tree(tmp_path, {tmp_path / "x" / "a": b"3"})
    assert (tmp_path / "x" / "a").read_bytes() == b"1"
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    with pytest.raises(PathEscape):
        fresh_tree.populate_fresh_tree(tmp_path, {outside / "a": b"1"})


def test_durability_is_on_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    writes.create_only(tmp_path, "f", b"x")
    assert len(calls) >= 2  # the file and its folder
    calls.clear()
    with writes.relaxed_durability():
        writes.create_only(tmp_path, "g", b"x")
    assert calls == []


def test_replace_file_publishes_whole_files_outside_any_store(tmp_path: Path) -> None:
    target = tmp_path / "cache" / "check" / "a.json"
    assert writes_outside.replace_file(target, b"one") is writes.Outcome.CREATED
    assert writes_outside.replace_file(target, b"two") is writes.Outcome.REPLACED
    assert target.read_bytes() == b"two"
    assert [p.name for p in target.parent.iterdir()] == ["a.json"], "no temp file or lock is left beside it"


def test_replace_file_never_follows_or_replaces_a_final_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_bytes(b"kept")
    link = tmp_path / "cache" / "a.json"
    link.parent.mkdir()
    link.symlink_to(outside)
    with pytest.raises(PathEscape, match="symlink"):
        writes_outside.replace_file(link, b"new")
    assert link.is_symlink() and outside.read_bytes() == b"kept"
    (tmp_path / "cache" / "d").mkdir()
    with pytest.raises(WriteRefused, match="not a regular file"):
        writes_outside.replace_file(tmp_path / "cache" / "d", b"new")
    assert sorted(p.name for p in link.parent.iterdir()) == ["a.json", "d"], "no temp file is left behind"


def test_append_lines_outside_a_store_cuts_a_torn_tail_and_never_follows_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "state" / "a.journal"
    assert writes_outside.append_lines(target, b"one\n") is writes.Outcome.APPENDED
    with open(target, "ab") as fh:
        fh.write(b"torn")
    writes_outside.append_lines(target, b"two\n")
    assert target.read_bytes() == b"one\ntwo\n"
    with pytest.raises(WriteRefused, match="newline"):
        writes_outside.append_lines(target, b"three")
    with pytest.raises(WriteRefused, match="over the reader's limit"):
        writes_outside.append_lines(target, b"three\n", max_bytes=10)
    assert target.read_bytes() == b"one\ntwo\n"
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"kept\n")
    link = tmp_path / "state" / "b.journal"
    link.symlink_to(outside)
    with pytest.raises(PathEscape, match="symlink"):
        writes_outside.append_lines(link, b"x\n")
    assert outside.read_bytes() == b"kept\n"


def test_replace_file_failure_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "a.json"
    writes_outside.replace_file(target, b"old")

    def full(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writes.os, "replace", full)
    with pytest.raises(OSError, match="No space left"):
        writes_outside.replace_file(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_ensure_root_makes_the_folder_and_refuses_a_file(tmp_path: Path) -> None:
    writes.ensure_root(tmp_path / "a" / "b")
    assert (tmp_path / "a" / "b").is_dir()
    writes.ensure_root(tmp_path / "a" / "b")  # an existing folder is fine
    (tmp_path / "file").write_bytes(b"x")
    with pytest.raises(WriteRefused, match="a file stands"):
        writes.ensure_root(tmp_path / "file")


def test_replace_keeping_never_reads_a_kept_name_of_another_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes.create_only(tmp_path, "live.md", b"old\n")
    writes.create_only(tmp_path, "live.kept.md", b"x" * 4096)  # a big file under the kept name
    read: list[Path] = []
    real_read = writes._read_regular
    monkeypatch.setattr(writes, "_read_regular", lambda path: read.append(Path(path)) or real_read(path))
    with pytest.raises(WriteRefused, match="kept copy is never overwritten"):
        writes.replace_keeping(tmp_path, "live.md", b"new\n", lambda: "live.kept.md")
    assert "live.kept.md" not in [p.name for p in read], "its size alone tells it is not the copy"
    assert (tmp_path / "live.md").read_bytes() == b"old\n"


# ------------------------------------------------------------ the reader's size limit

LIMIT = writes.reading.MAX_BYTES


def _files(root: Path) -> dict[str, bytes]:
    """Every file under *root* but lock files (taking a lock writes nothing)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".locks" not in p.parts
    }


def _refused_over_limit(root: Path, write: object) -> None:
    """*write* (a call) is refused naming the limit, and nothing under *root* changes."""
    before = _files(root)
    with pytest.raises(WriteRefused) as refused:
        write()  # type: ignore[operator]
    assert f"the reader's limit of {LIMIT} bytes" in refused.value.reason
    assert "\n" not in refused.value.line(root)
    assert _files(root) == before


def test_create_only_refuses_data_over_the_reader_limit(tmp_path: Path) -> None:
    assert writes.create_only(tmp_path, "at-limit.md", b"x" * LIMIT) is writes.Outcome.CREATED
    _refused_over_limit(tmp_path, lambda: writes.create_only(tmp_path, "over.md", b"x" * (LIMIT + 1)))
    _refused_over_limit(tmp_path, lambda: writes.create_only(tmp_path, "new/folder/over.md", b"x" * (LIMIT + 1)))
    assert not (tmp_path / "new").exists()  # refused before any folder is made
    # A file no loader with a limit reads (a check report) may be larger.
    assert writes.create_only(tmp_path, "report.txt", b"x" * (LIMIT + 1), max_bytes=None) is writes.Outcome.CREATED


def test_append_jsonl_counts_the_file_it_appends_to(tmp_path: Path) -> None:
    line = writes.jsonl_line({"n": 1})
    # The file as it is, plus the line, is what the reader would get.
    (tmp_path / "log.jsonl").write_bytes(b"x" * (LIMIT - 2 * len(line) - 1) + b"\n")
    assert writes.append_jsonl(tmp_path, "log.jsonl", {"n": 1}) is writes.Outcome.APPENDED
    assert (tmp_path / "log.jsonl").stat().st_size == LIMIT - len(line)
    assert writes.append_jsonl(tmp_path, "log.jsonl", {"n": 1}) is writes.Outcome.APPENDED
    assert (tmp_path / "log.jsonl").stat().st_size == LIMIT
    _refused_over_limit(tmp_path, lambda: writes.append_jsonl(tmp_path, "log.jsonl", {"n": 1}))
    _refused_over_limit(tmp_path, lambda: writes.append_jsonl(tmp_path, "new.jsonl", {"big": "y" * LIMIT}))
    assert not (tmp_path / "new.jsonl").exists()


def test_append_jsonl_over_the_limit_keeps_a_torn_tail_as_it_is(tmp_path: Path) -> None:
    """The refusal comes before the torn tail is cut: a refused append changes nothing at all."""
    line = writes.jsonl_line({"n": 1})
    torn = b'{"n":'
    (tmp_path / "log.jsonl").write_bytes(b"x" * (LIMIT - len(line)) + b"\n" + torn)
    _refused_over_limit(tmp_path, lambda: writes.append_jsonl(tmp_path, "log.jsonl", {"n": 1}))
    assert (tmp_path / "log.jsonl").read_bytes().endswith(b"\n" + torn)
    # Cutting the torn tail makes room: the size after the cut is what counts.
    (tmp_path / "log.jsonl").write_bytes(b"x" * (LIMIT - len(line) - 1) + b"\n" + torn)
    assert writes.append_jsonl(tmp_path, "log.jsonl", {"n": 1}) is writes.Outcome.APPENDED
    assert (tmp_path / "log.jsonl").stat().st_size == LIMIT


def test_replace_locked_refuses_new_bytes_over_the_limit(tmp_path: Path) -> None:
    writes.create_only(tmp_path, "state.json", b"{}")
    _refused_over_limit(tmp_path, lambda: writes.replace_locked(tmp_path, "state.json", lambda cur: b" " * (LIMIT + 1)))
    assert writes.replace_locked(tmp_path, "state.json", lambda cur: b" " * LIMIT) is writes.Outcome.REPLACED


def test_replace_keeping_refuses_data_over_the_limit(tmp_path: Path) -> None:
    writes.create_only(tmp_path, "sidecar.md", b"old")
    _refused_over_limit(
        tmp_path, lambda: writes.replace_keeping(tmp_path, "sidecar.md", b"n" * (LIMIT + 1), lambda: "kept.md")
    )
    assert not (tmp_path / "kept.md").exists()


def test_replace_file_keeps_to_a_limit_its_reader_names(tmp_path: Path) -> None:
    target = tmp_path / "cache" / "entry.json"
    _refused_over_limit(tmp_path, lambda: writes_outside.replace_file(target, b"c" * (LIMIT + 1), max_bytes=LIMIT))
    assert not target.parent.exists()
    # Outside any store by default no loader with a limit reads it (the check cache).
    assert writes_outside.replace_file(target, b"c" * (LIMIT + 1)) is writes.Outcome.CREATED


def test_populate_fresh_tree_refuses_a_file_over_the_limit_before_writing_any(tmp_path: Path) -> None:
    files = {tmp_path / "a" / "small.md": b"small", tmp_path / "b" / "big.md": b"b" * (LIMIT + 1)}
    _refused_over_limit(tmp_path, lambda: fresh_tree.populate_fresh_tree(tmp_path, files))
    assert list(tmp_path.iterdir()) == []


def test_the_task_catalog_has_its_own_larger_limit(tmp_path: Path) -> None:
    # The one document that grows with the number of tasks: a 100,000-task catalog is about 32 MB.
    catalog = tmp_path / ".okstra" / "discovery" / "task-catalog.json"
    catalog.parent.mkdir(parents=True)
    big = b" " * (LIMIT + 1) + b"{}"
    writes.replace_locked(tmp_path, catalog, lambda current: big)
    assert reading.read_bytes(catalog) == big
    assert reading.limit_for(catalog) == reading.CATALOG_MAX_BYTES
    # The same name anywhere else, and any other file there, keep the common limit.
    for other in (tmp_path / "task-catalog.json", catalog.parent / "latest-task.json"):
        assert reading.limit_for(other) == LIMIT
        _refused_over_limit(tmp_path, lambda other=other: writes.create_only(tmp_path, other, big))
    over = tmp_path / "elsewhere" / "task-catalog.json"
    over.parent.mkdir()
    over.write_bytes(big)
    refused = reading.read_bytes(over)
    assert isinstance(refused, LoadError) and "too large" in refused.reason
