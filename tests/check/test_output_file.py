"""``okstra check -o FILE``: create-only, never inside the store, never through a symlink or into a FIFO."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _check(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "okstra_core.cli", "check", str(root), "--home", str(root / ".h"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _one_line_refusal(proc: subprocess.CompletedProcess[str], path: Path | str, reason: str) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and reason in lines[0], proc.stderr


def test_creates_a_new_file(fresh_demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.txt"
    proc = _check(fresh_demo, "-o", str(out), "--no-cache")
    assert proc.returncode == 0, proc.stderr  # the demo has warnings only
    assert proc.stdout == ""
    # The file holds exactly the report stdout would have shown.
    assert out.read_text(encoding="utf-8") == _check(fresh_demo, "--no-cache").stdout
    assert "0 errors" in out.read_text(encoding="utf-8")


def test_existing_file_needs_force(fresh_demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.txt"
    out.write_text("mine\n", encoding="utf-8")
    _one_line_refusal(_check(fresh_demo, "-o", str(out)), out, "--force")
    assert out.read_text(encoding="utf-8") == "mine\n"
    assert _check(fresh_demo, "-o", str(out), "--force").returncode in (0, 1)
    assert "files checked" in out.read_text(encoding="utf-8")


def test_never_writes_inside_the_store(fresh_demo: Path) -> None:
    target = fresh_demo / ".okstra/project.json"
    before = target.read_bytes()
    _one_line_refusal(_check(fresh_demo, "-o", str(target), "--force"), target, "inside the store")
    assert target.read_bytes() == before
    new = fresh_demo / ".okstra/report.txt"
    _one_line_refusal(_check(fresh_demo, "-o", str(new)), new, "inside the store")
    assert not new.exists()


def test_refuses_a_symlink(fresh_demo: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(victim)
    _one_line_refusal(_check(fresh_demo, "-o", str(link), "--force"), link, "symlink")
    assert victim.read_text(encoding="utf-8") == "keep\n"


def test_refuses_a_fifo_without_blocking(fresh_demo: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    _one_line_refusal(_check(fresh_demo, "-o", str(fifo), "--force"), fifo, "not a regular file")


@pytest.mark.parametrize("name", ["", "."])
def test_refuses_a_path_naming_no_file(fresh_demo: Path, name: str) -> None:
    proc = _check(fresh_demo, "-o", name)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_a_failed_forced_replace_keeps_the_old_report_whole(
    fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from okstra_core import writes
    from okstra_core.commands.check import main_check

    out = tmp_path / "report.txt"
    out.write_text("previous report\n", encoding="utf-8")

    def disk_full(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writes.os, "replace", disk_full)
    code = main_check([str(fresh_demo), "--home", str(fresh_demo / ".h"), "--no-cache", "-o", str(out), "--force"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "No space left" in err, err
    assert out.read_text(encoding="utf-8") == "previous report\n", "the old report stays whole"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project", "report.txt"], "no temp file is left"


def test_a_missing_output_folder_is_refused_even_with_force(fresh_demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "missing" / "report.txt"
    for extra in ((), ("--force",)):
        _one_line_refusal(_check(fresh_demo, "-o", str(out), *extra), out, "output folder does not exist")
    assert not (tmp_path / "missing").exists()
