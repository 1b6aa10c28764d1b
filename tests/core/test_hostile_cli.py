"""Smaller hostile command lines: each is one line and a non-zero exit, never a run until killed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

RP = "demo-shop:payments:retry-policy"
REPORT = ".okstra/tasks/payments/refund-ledger/runs/analysis/reports/final-report-analysis-001.data.json"


def okstra(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "okstra_core.cli", *args], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.parametrize("flags", [["--jobs", "0"], ["--jobs", "-1"], ["--tasks", "999999999999999999999"]])
def test_demo_refuses_impossible_sizes(tmp_path: Path, flags: list[str]) -> None:
    proc = okstra("demo", str(tmp_path / "d"), *flags)
    assert proc.returncode != 0
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "d").exists()


def test_a_newline_in_an_argument_stays_on_one_line(fresh_demo: Path) -> None:
    proc = okstra("design-prep", "confirm", str(fresh_demo), "--task", RP, "--item", "PREP-001\n", "--input", "-")
    assert proc.returncode == 1
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_render_to_an_empty_output_name_is_refused(fresh_demo: Path) -> None:
    proc = okstra("render-final-report", str(fresh_demo / REPORT), "-o", "")
    assert proc.returncode == 1 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_output_refusal_names_the_whole_path(fresh_demo: Path, tmp_path: Path) -> None:
    out = tmp_path / "sub" / "copy.md"
    out.parent.mkdir()
    out.write_text("different\n", encoding="utf-8")
    proc = okstra("render-final-report", str(fresh_demo / REPORT), "-o", str(out))
    assert proc.returncode == 1
    assert str(out) in proc.stderr, proc.stderr


def test_a_byte_order_mark_in_an_answer_file_is_ignored(fresh_demo: Path, tmp_path: Path) -> None:
    answers = tmp_path / "a.json"
    answers.write_bytes(b'\xef\xbb\xbf{"CQ-001": "yes", "CQ-002": "bank"}')
    proc = okstra(
        "user-response",
        "export",
        str(fresh_demo),
        "--task",
        "demo-shop:payments:refund-ledger",
        "--report",
        REPORT,
        "--answers",
        str(answers),
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("where", ["/", "."])
def test_log_report_refuses_a_folder_that_is_no_run_dir(fresh_demo: Path, where: str) -> None:
    proc = okstra("log-report", str(fresh_demo) if where == "." else where)
    assert proc.returncode == 1 and "not a run dir" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


CATALOG = ".okstra/discovery/task-catalog.json"


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b'{"tasks": [', "invalid JSON"), (b'{"tasks": 3}', "does not match TaskCatalog"), (b"\xff\xfe", "UTF-8")],
)
def test_an_unreadable_catalog_is_named_with_its_reason(fresh_demo: Path, content: bytes, reason: str) -> None:
    (fresh_demo / CATALOG).write_bytes(content)
    proc = okstra("task", "refresh-fix-cycles", str(fresh_demo), "--task", RP)
    assert proc.returncode == 1
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1, proc.stderr
    assert line.startswith(f"okstra: {fresh_demo / CATALOG}: cannot look up task {RP!r}: "), line
    assert reason in line and "no task" not in line


def test_an_unreadable_catalog_still_finds_a_task_by_its_folder(fresh_demo: Path) -> None:
    (fresh_demo / CATALOG).write_bytes(b'{"tasks": [')
    proc = okstra("task", "refresh-fix-cycles", str(fresh_demo), "--task", "payments/retry-policy")
    assert proc.returncode == 0, proc.stderr


def test_a_missing_catalog_says_no_task(fresh_demo: Path) -> None:
    (fresh_demo / CATALOG).unlink()
    proc = okstra("task", "refresh-fix-cycles", str(fresh_demo), "--task", RP)
    assert proc.returncode == 1
    assert f"no task {RP!r}" in proc.stderr
