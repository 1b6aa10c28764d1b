"""Bad input of every kind becomes a finding naming the file: never a traceback, never a hang."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from .helpers import TASK, check, rel

TARGET = f"{TASK}/task-manifest.json"


def _finding(root: Path, path: str) -> list[tuple[str, str]]:
    report = check(root)
    return [(f.rule, f.message) for f in report.findings if f.path == path]


@pytest.mark.parametrize(
    ("content", "rule", "words"),
    [
        (b'{"schemaVersion": ', "OKS004", "invalid JSON"),
        (b'{"schemaVersion": 1}', "OKS020", "does not match"),
        (b"[" * 10000 + b"]" * 10000, "OKS004", "nesting too deep"),
        (b'{"a": "\xff\xfe"}', "OKS001", "not UTF-8"),
        (b"\x89PNG\r\n\x1a\n\x00\x00binary", "OKS001", "binary"),
        (b"", "OKS004", "invalid JSON"),
    ],
)
def test_bad_content(fresh_demo: Path, content: bytes, rule: str, words: str) -> None:
    (fresh_demo / TARGET).write_bytes(content)
    found = _finding(fresh_demo, TARGET)
    assert any(r == rule and words in m for r, m in found), found


def test_50_megabytes(fresh_demo: Path) -> None:
    with (fresh_demo / TARGET).open("wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    assert any(r == "OKS001" and "too large" in m for r, m in _finding(fresh_demo, TARGET))


def test_fifo(fresh_demo: Path) -> None:
    (fresh_demo / TARGET).unlink()
    os.mkfifo(fresh_demo / TARGET)
    assert any(r == "OKS001" and "FIFO" in m for r, m in _finding(fresh_demo, TARGET))


def test_escaping_symlinks_name_the_root_they_leave(fresh_demo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text("{}", encoding="utf-8")
    in_home = ".okstra-home/managers/release-train/manager.json"
    for path in (TARGET, in_home):
        (fresh_demo / path).unlink()
        (fresh_demo / path).symlink_to(outside)
    report = check(fresh_demo)
    messages = {f.path: f.message for f in report.findings if f.rule == "OKS002"}
    assert messages[TARGET].startswith("symlink escapes the project root")
    assert messages[in_home].startswith("symlink escapes the manager home")


def test_escaping_selected_direction_is_listed_not_followed(
    fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A selected-direction.json linking out of a task without an option-selection run is never stat-ed through."""
    outside = tmp_path / "outside.json"
    outside.write_text("{}", encoding="utf-8")
    link = fresh_demo / ".okstra/tasks/checkout/receipt-emails/instruction-set/selected-direction.json"
    link.symlink_to(outside)
    followed: list[str] = []
    real_stat = os.stat

    def stat(path: Any, *args: Any, follow_symlinks: bool = True, **kwargs: Any) -> os.stat_result:
        if follow_symlinks and os.fspath(path) == str(link):
            followed.append(os.fspath(path))
        return real_stat(path, *args, follow_symlinks=follow_symlinks, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    found = _finding(fresh_demo, rel(fresh_demo, link))
    assert [r for r, _ in found] == ["OKS002"], found
    assert followed == []


def test_symlink_loop(fresh_demo: Path) -> None:
    (fresh_demo / TARGET).unlink()
    os.symlink("task-manifest.json", fresh_demo / TARGET)
    assert any(r == "OKS003" and "loop" in m for r, m in _finding(fresh_demo, TARGET))


def test_symlinked_folder_escaping_the_root_is_not_followed(fresh_demo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "reports").mkdir(parents=True)
    (outside / "reports" / "final-report-analysis-001.data.json").write_text("{")
    link = fresh_demo / TASK / "runs/research"
    os.symlink(outside, link)
    found = _finding(fresh_demo, rel(fresh_demo, link))
    assert any(r == "OKS002" for r, _ in found)
    assert not any("outside" in f.path for f in check(fresh_demo).findings)


def test_unreadable_file(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import okstra_core.reading as reading

    target = str(fresh_demo / TARGET)
    real_open = os.open

    def deny(path: object, flags: int, *args: object) -> int:
        if str(path) == target:
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(reading.os, "open", deny)
    assert any(r == "OKS001" and "permission denied" in m for r, m in _finding(fresh_demo, TARGET))


def test_unreadable_folder_is_a_finding(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import okstra_core.check.unit as unit

    # The listing itself is refused, as chmod 000 refuses it to anyone but root (and CI runs as root).
    folder = fresh_demo / TASK / "history"
    real_scandir = os.scandir

    def deny(path: Any) -> Any:
        if str(path) == str(folder):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(unit.os, "scandir", deny)
    found = _finding(fresh_demo, rel(fresh_demo, folder))
    assert ("OKS001", "folder cannot be listed: Permission denied") in found, found


def test_a_file_where_a_folder_belongs_is_named(fresh_demo: Path) -> None:
    folder = fresh_demo / TASK / "history"
    shutil.rmtree(folder)
    folder.write_text("not a folder")
    assert any(r == "OKS005" for r, _ in _finding(fresh_demo, rel(fresh_demo, folder)))


@pytest.mark.parametrize(
    "repeat",
    [
        '"status": "completed", "status": "failed"',
        '"status" :"completed",\n\t"status"\r\n:\t"failed"',  # any JSON whitespace around the colon
        '"status": "completed", "note": "a\\": b", "status": "failed"',
    ],
)
def test_a_repeated_key_is_one_finding_naming_it(fresh_demo: Path, repeat: str) -> None:
    path = fresh_demo / TARGET
    text = path.read_text(encoding="utf-8")
    # Two keys repeat: still one finding for the file, naming the first.
    text = text.replace("{", "{" + repeat + ', "x": 1, "x": 2, ', 1)
    path.write_text(text, encoding="utf-8")
    found = [(r, m) for r, m in _finding(fresh_demo, TARGET) if r == "OKS007"]
    assert found == [
        (
            "OKS007",
            "key 'status' appears more than once in one object; "
            "readers disagree on which value counts (okstra's keep the last)",
        )
    ]


def test_equal_keys_in_different_objects_are_fine(fresh_demo: Path) -> None:
    path = fresh_demo / TARGET
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("{", '{"extra": {"status": 1, "inner": {"status": 2}}, ', 1), encoding="utf-8")
    assert [r for r, _ in _finding(fresh_demo, TARGET) if r == "OKS007"] == []
