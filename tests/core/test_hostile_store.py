"""A clean store: created files get the mode an ordinary open() gives under the caller's umask."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from okstra_core import writes


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_every_primitive_creates_files_under_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        writes.create_only(tmp_path, "a/created.json", b"{}\n")
        writes.replace_locked(tmp_path, "a/replaced.json", lambda _: b"{}\n")
        writes.replace_locked(tmp_path, "a/replaced.json", lambda _: b"[]\n")
        writes.append_jsonl(tmp_path, "a/log.jsonl", {"a": 1})
        writes.replace_keeping(tmp_path, "a/kept.md", b"one\n", lambda: "a/kept-old.md")
        writes.replace_keeping(tmp_path, "a/kept.md", b"two\n", lambda: "a/kept-old.md")
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "a").iterdir() if not p.name.startswith(".")}
    assert modes == dict.fromkeys(modes, 0o666 & ~umask), modes


def test_a_fresh_demo_has_one_mode(tmp_path: Path) -> None:
    target = tmp_path / "demo"
    subprocess.run(
        [sys.executable, "-m", "okstra_core.cli", "demo", str(target)],
        check=True,
        capture_output=True,
        preexec_fn=lambda: os.umask(0o002),
    )
    modes = Counter(
        oct(stat.S_IMODE(os.lstat(os.path.join(folder, name)).st_mode))
        for folder, _, files in os.walk(target / ".okstra")
        for name in files
        if not os.path.islink(os.path.join(folder, name))
    )
    assert set(modes) == {"0o664"}, modes


def test_lock_files_live_in_a_private_folder(demo_root: Path) -> None:
    beside = [
        os.path.join(folder, name)
        for folder, _, files in os.walk(demo_root)
        for name in files
        if name.endswith(".lock") and os.path.basename(folder) != ".locks"
    ]
    assert beside == [], beside[:5]
    assert any(".locks" in dirs for _, dirs, _ in os.walk(demo_root / ".okstra"))


def test_a_symlink_in_place_of_the_lock_folder_is_refused(tmp_path: Path) -> None:
    from okstra_core.errors import WriteRefused

    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / ".locks").symlink_to(outside)
    with pytest.raises(WriteRefused, match="lock folder"):
        writes.append_jsonl(root, "log.jsonl", {"a": 1})
    assert list(outside.iterdir()) == []


def _leftover(folder: Path, target: str, age: float) -> Path:
    path = folder / f".okstra-tmp-{target}.killed{int(age)}"
    path.write_bytes(b"x" * 1000)
    old = time.time() - age
    os.utime(path, (old, old))
    return path


def test_next_write_removes_its_own_stale_temp_files(tmp_path: Path) -> None:
    stale = _leftover(tmp_path, "state.json", writes.STALE_TEMP_SECONDS + 60)
    fresh = _leftover(tmp_path, "state.json", 5)  # a writer may still be busy with it
    other = _leftover(tmp_path, "other.json", writes.STALE_TEMP_SECONDS + 60)  # not this target's
    writes.replace_locked(tmp_path, "state.json", lambda _: b"{}\n")
    assert not stale.exists()
    assert fresh.exists() and other.exists()


def test_checker_reports_leftover_temp_files_with_their_writer(fresh_demo: Path) -> None:
    from okstra_core.check import run_check
    from okstra_core.check.catalog import LEFTOVER_TEMP_FILE

    state = next(fresh_demo.glob(".okstra/tasks/*/*/runs/analysis/state"))
    _leftover(state, "team-state-analysis-001.json", 10)
    report = run_check(fresh_demo, home=fresh_demo / ".h", jobs=1)
    found = [f for f in report.findings if f.rule == LEFTOVER_TEMP_FILE]
    assert len(found) == 1 and "team-state-analysis-001.json" in found[0].message
    assert found[0].severity == "warning"


def test_every_demo_task_root_has_its_task_index(demo_root: Path) -> None:
    from okstra_core import layout
    from okstra_core.render import render_task_index
    from okstra_core.store import Project

    project = Project(demo_root)
    refs = list(project.task_refs)
    assert refs
    for ref in refs:
        task = ref.open()
        manifest = task.manifest
        assert not isinstance(manifest, Exception) and hasattr(manifest, "workflow"), manifest
        index = layout.task_index_path(ref.root)
        assert index.read_text(encoding="utf-8") == render_task_index(manifest), ref.root


def test_a_transcript_over_the_read_limit_is_read_from_its_end(fresh_demo: Path) -> None:
    from okstra_core import reading
    from okstra_core.check import run_check
    from okstra_tui.data.preview import PreviewTarget, load_preview

    log = next(fresh_demo.glob(".okstra/tasks/*/*/runs/analysis/prompts/*.log"))
    line = b"x" * 99 + b"\n"
    with open(log, "wb") as fh:
        fh.write(line * ((reading.MAX_BYTES // len(line)) + 1000))
        fh.write(b"the last line\n")
    loaded = load_preview(PreviewTarget(log, log.name), fresh_demo)
    assert loaded.error is None and loaded.text is not None and loaded.text.endswith("the last line")
    report = run_check(fresh_demo, home=fresh_demo / ".h", jobs=1)
    rel = log.relative_to(fresh_demo).as_posix()
    assert [f for f in report.findings if f.path == rel and f.severity == "error"] == []
