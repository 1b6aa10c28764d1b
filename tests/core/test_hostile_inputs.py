"""Inputs the reader would refuse are refused before anything is written; huge JSON integers are one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from okstra_core import reading
from okstra_core.errors import OkstraError
from okstra_core.store import Project
from okstra_core.workflows import design_prep

RP = "demo-shop:payments:retry-policy"
RL = "demo-shop:payments:refund-ledger"
RL_ROOT = ".okstra/tasks/payments/refund-ledger"
REPORT = f"{RL_ROOT}/runs/analysis/reports/final-report-analysis-001.data.json"
INPUTS = ".okstra/tasks/payments/retry-policy/runs/implementation-planning/design-prep-inputs"
HUGE = "1" * 5000


def okstra(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "okstra_core.cli", *args], input=stdin, capture_output=True, timeout=120, check=False
    )


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the store except lock files and the private folders (what a write may change)."""
    out: dict[str, bytes] = {}
    for folder, dirs, files in os.walk(root / ".okstra"):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if not name.endswith(".lock") and not name.startswith("."):
                path = Path(folder, name)
                out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def _refused(proc: subprocess.CompletedProcess[bytes], reason: str) -> None:
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and reason in err, err


def _prep_answer(root: Path, value: str) -> str:
    task = Project(root).find_task(RP)
    assert task is not None
    _, item = design_prep.design_item(task, "PREP-001")
    return design_prep.answers_text({name: value for name in (item.fields or ["answer"])})


# ---------------------------------------------------------------- (7) reader's rules before writing


def test_design_prep_answer_with_nul_is_refused_before_writing(fresh_demo: Path) -> None:
    task = Project(fresh_demo).find_task(RP)
    assert task is not None
    before = _snapshot(fresh_demo)
    with pytest.raises(OkstraError, match="NUL"):
        design_prep.confirm(fresh_demo, task, "PREP-001", _prep_answer(fresh_demo, "use \x00 keys"))
    assert _snapshot(fresh_demo) == before


def test_design_prep_answer_over_the_readers_limit_is_refused(fresh_demo: Path) -> None:
    task = Project(fresh_demo).find_task(RP)
    assert task is not None
    before = _snapshot(fresh_demo)
    with pytest.raises(OkstraError, match="too large"):
        design_prep.confirm(fresh_demo, task, "PREP-001", _prep_answer(fresh_demo, "x" * (reading.MAX_BYTES + 1)))
    assert _snapshot(fresh_demo) == before


def test_user_response_with_nul_is_refused(fresh_demo: Path, tmp_path: Path) -> None:
    answers = tmp_path / "a.json"
    answers.write_text(json.dumps({"CQ-001": "yes\u0000", "CQ-002": "bank"}), encoding="utf-8")
    before = _snapshot(fresh_demo)
    proc = okstra(
        "user-response", "export", str(fresh_demo), "--task", RL, "--report", REPORT, "--answers", str(answers)
    )
    _refused(proc, "NUL")
    assert _snapshot(fresh_demo) == before


@pytest.mark.parametrize("kind", ["nul", "fifo"])
def test_clarification_attach_refuses_a_sidecar_the_reader_refuses(fresh_demo: Path, tmp_path: Path, kind: str) -> None:
    answers = tmp_path / "a.json"
    answers.write_text(json.dumps({"CQ-001": "yes", "CQ-002": "bank"}), encoding="utf-8")
    export = okstra(
        "user-response", "export", str(fresh_demo), "--task", RL, "--report", REPORT, "--answers", str(answers)
    )
    assert export.returncode == 0, export.stderr
    sidecar = next((fresh_demo / RL_ROOT / "runs/analysis/user-responses").glob("user-response-analysis-001.md"))
    if kind == "nul":
        sidecar.write_bytes(sidecar.read_bytes() + b"\x00\n")
    else:
        sidecar.unlink()
        os.mkfifo(sidecar)
    before = _snapshot(fresh_demo) if kind == "nul" else None
    proc = okstra("clarification", "attach", str(fresh_demo), "--task", RL)
    _refused(proc, "NUL" if kind == "nul" else "FIFO")
    if before is not None:
        assert _snapshot(fresh_demo) == before


# ---------------------------------------------------------------- (8) stdin and duplicate keys


def test_invalid_utf8_on_stdin_is_one_line(fresh_demo: Path) -> None:
    before = _snapshot(fresh_demo)
    args = ("design-prep", "confirm", str(fresh_demo), "--task", RP, "--item", "PREP-001", "--input", "-")
    proc = okstra(*args, stdin=_prep_answer(fresh_demo, "ok").encode() + b"\xff\xfe")
    _refused(proc, "not UTF-8")
    assert _snapshot(fresh_demo) == before


def test_duplicate_keys_in_answers_are_refused(fresh_demo: Path, tmp_path: Path) -> None:
    answers = tmp_path / "a.json"
    answers.write_text('{"CQ-001": "yes", "CQ-002": "bank", "CQ-001": "no"}', encoding="utf-8")
    before = _snapshot(fresh_demo)
    proc = okstra(
        "user-response", "export", str(fresh_demo), "--task", RL, "--report", REPORT, "--answers", str(answers)
    )
    _refused(proc, "more than once")
    assert _snapshot(fresh_demo) == before


# ---------------------------------------------------------------- (9) integers past the conversion limit


def test_huge_integer_is_the_files_own_error(fresh_demo: Path) -> None:
    report = fresh_demo / REPORT
    report.write_text(report.read_text(encoding="utf-8").replace('"schemaVersion"', f'"big": {HUGE}, "schemaVersion"'))
    got = reading.load_json(report)
    assert isinstance(got, reading.LoadError) and "too long" in got.reason
    proc = okstra("user-response", "export", str(fresh_demo), "--task", RL, "--report", REPORT, "--answers", "x.json")
    assert b"Traceback" not in proc.stderr and proc.returncode == 1
    check = okstra("check", str(fresh_demo), "--home", str(fresh_demo / ".h"), "--format", "json", "--no-cache")
    findings = json.loads(check.stdout)["findings"]
    mine = [f for f in findings if f["path"] == REPORT]
    assert any("too long" in f["message"] for f in mine), mine
    assert not any("rule failed" in f["message"] for f in findings)


def test_huge_integer_in_a_sidecar_header_is_one_line(tmp_path: Path) -> None:
    from okstra_core.models.sidecars import UserResponseHeader

    got = reading.sidecar_of_bytes(tmp_path / "s.md", f"---\nseq: {HUGE}\n---\nbody\n".encode(), UserResponseHeader)
    assert isinstance(got, reading.LoadError) and "too long" in got.reason
