"""The workbench's write log: where it lives, what an entry holds, trimming, tolerance, concurrent appends."""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from okstra_core import layout, write_log
from okstra_core.cli import main as okstra
from okstra_core.errors import OkstraError
from okstra_core.write_log import Input, Verb

MOMENT = dt.datetime(2026, 12, 1, 9, 30, 5, 123456, tzinfo=dt.UTC)


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".okstra").mkdir(parents=True)
    return root


def record(root: Path, n: int = 0, inputs: tuple[Input, ...] = ()) -> write_log.Entry:
    verb = Verb(("planning", "prepare"), (("--task", "g/t"),), inputs)
    written = root / ".okstra" / "tasks" / "g" / "t" / f"file-{n}.md"
    return write_log.record(root, MOMENT + dt.timedelta(seconds=n), f"write {n}", "g/t", [written], [verb])


def test_an_entry_names_the_files_and_a_command_line_with_its_moment(tmp_path: Path) -> None:
    root = project(tmp_path)
    entry = record(root, inputs=(Input("--answers", ".json", '{"CQ-001": "yes"}\n'),))
    real = os.path.realpath(root)
    (argv,) = entry.commands
    assert argv[:4] == ("okstra", "planning", "prepare", real)
    assert argv[-2:] == ("--at", "2026-12-01T09:30:05.123456Z")
    answers = Path(argv[argv.index("--answers") + 1])
    assert answers.read_text(encoding="utf-8") == '{"CQ-001": "yes"}\n'
    assert stat.S_IMODE(answers.stat().st_mode) == 0o600, "typed answers are readable by their owner only"
    assert entry.files == (".okstra/tasks/g/t/file-0.md",)
    log = write_log.read_log(root)
    assert log.entries == [entry] and log.skipped == 0


def test_the_log_lives_in_the_state_folder_never_in_the_store(tmp_path: Path) -> None:
    root = project(tmp_path)
    record(root, inputs=(Input("--input", ".md", "## Field\nx\n"),))
    state = layout.okstra_state_dir()
    assert write_log.log_path(root).is_relative_to(state)
    assert [p for p in (root / ".okstra").rglob("*")] == [], "nothing is written into the store"


def test_newest_first_and_the_log_is_trimmed_with_the_inputs_only_old_entries_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(write_log, "KEEP_ENTRIES", 3)
    monkeypatch.setattr(write_log, "TRIM_AT", 5)
    root = project(tmp_path)
    for n in range(6):
        record(root, n, inputs=(Input("--answers", ".json", f"{n}\n"),))
    entries = write_log.read_log(root).entries
    assert [e.what for e in entries] == ["write 5", "write 4", "write 3"]
    kept = {Path(e.commands[0][e.commands[0].index("--answers") + 1]).name for e in entries}
    inputs = write_log.log_dir(root) / write_log.INPUTS_DIR
    assert set(os.listdir(inputs)) == kept


def test_unusable_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    root = project(tmp_path)
    record(root, 1)
    with open(write_log.log_path(root), "ab") as handle:
        handle.write(b"not json\n")
        handle.write(json.dumps({"version": 99, "at": "x"}).encode() + b"\n")
        handle.write(b'{"version": 1, "at": "x", "what": 3}\n')
        handle.write(b"\xff\xfe\n")
        handle.write(b"[" * 100_000 + b"\n")  # nested past the parser's depth
    record(root, 2)
    log = write_log.read_log(root)
    assert [e.what for e in log.entries] == ["write 2", "write 1"] and log.skipped == 5


def test_a_log_that_cannot_be_written_is_named_in_one_line(tmp_path: Path) -> None:
    root = project(tmp_path)
    os.makedirs(write_log.log_path(root))  # a folder where the log should be: refused even as root
    with pytest.raises(OkstraError) as caught:
        record(root)
    assert caught.value.path == write_log.log_path(root) and "cannot be written" in str(caught.value)


def test_a_symlinked_log_is_never_followed(tmp_path: Path) -> None:
    root = project(tmp_path)
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(b"")
    os.makedirs(write_log.log_dir(root))
    os.symlink(elsewhere, write_log.log_path(root))
    with pytest.raises(OkstraError):
        record(root)
    with pytest.raises(OkstraError):
        write_log.read_log(root)
    assert elsewhere.read_bytes() == b""


def _append_many(root: str, start: int, state: str) -> None:
    os.environ["OKSTRA_STATE_DIR"] = state
    for n in range(start, start + 40):
        record(Path(root), n)


def test_two_workbenches_appending_at_once_lose_no_entry(tmp_path: Path) -> None:
    root = project(tmp_path)
    state = str(layout.okstra_state_dir())
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_append_many, args=(str(root), s, state)) for s in (0, 1000)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    log = write_log.read_log(root)
    assert log.skipped == 0 and len(log.entries) == 80
    assert {e.what for e in log.entries} == {f"write {n}" for n in [*range(40), *range(1000, 1040)]}


def test_at_must_be_a_time(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as caught:
        okstra(["planning", "prepare", str(tmp_path), "--task", "g/t", "--at", "yesterday"])
    assert caught.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith("argument --at: 'yesterday' is not an ISO 8601 time (e.g. 2026-12-02T07:41:05.123456Z)")


def test_two_writes_of_one_moment_keep_their_own_inputs(tmp_path: Path) -> None:
    root = project(tmp_path)
    entries = [record(root, 0, inputs=(Input("--answers", ".json", f"{n}\n"),)) for n in range(3)]
    files = [Path(e.commands[0][e.commands[0].index("--answers") + 1]) for e in entries]
    assert len(set(files)) == 3
    assert [f.read_text(encoding="utf-8") for f in files] == ["0\n", "1\n", "2\n"]


@pytest.mark.parametrize(("make", "what"), [(os.mkdir, "a directory"), (os.mkfifo, "a FIFO")])
def test_a_log_that_is_no_file_is_one_line_and_never_waits(
    tmp_path: Path, make: Callable[[Path], None], what: str, without_waiting: Callable[..., object]
) -> None:
    root = project(tmp_path)
    path = write_log.log_path(root)
    os.makedirs(path.parent)
    make(path)
    read = without_waiting(lambda: write_log.read_log(root), path)
    assert isinstance(read, OkstraError) and read.path == path
    assert read.reason == f"is {what}, not a regular file"
    written = without_waiting(lambda: record(root), path)
    assert isinstance(written, OkstraError) and written.path == path
    assert written.reason.startswith("cannot be written (") and "\n" not in str(written)


def test_each_entry_names_the_project_written_and_older_entries_still_read(tmp_path: Path) -> None:
    root = project(tmp_path)
    entry = record(root)
    assert entry.project_root == os.path.realpath(root)
    (line,) = write_log.log_path(root).read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["projectRoot"] == os.path.realpath(root)
    older = {k: v for k, v in json.loads(line).items() if k != "projectRoot"}
    odd = {**json.loads(line), "projectRoot": ["not", "a", "root"]}
    with open(write_log.log_path(root), "a", encoding="utf-8") as handle:
        handle.write(json.dumps(older) + "\n" + json.dumps(odd) + "\n")
    log = write_log.read_log(root)
    assert [e.project_root for e in log.entries] == [None, None, os.path.realpath(root)] and log.skipped == 0
