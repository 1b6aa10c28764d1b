"""Hostile conditions around writes: a full disk while a sidecar is replaced leaves the old one live."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from okstra_core.cli import main

RL = "demo-shop:payments:refund-ledger"
REPORT = ".okstra/tasks/payments/refund-ledger/runs/analysis/reports/final-report-analysis-001.data.json"
SIDECARS = ".okstra/tasks/payments/refund-ledger/runs/analysis/user-responses"


def okstra(*args: str, fsize: int | None = None, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return subprocess.run(
        [sys.executable, "-m", "okstra_core.cli", *args],
        capture_output=True,
        input=stdin,
        preexec_fn=limit,
        check=False,
    )


def _answers(path: Path, text: str) -> Path:
    path.write_text(json.dumps({"CQ-001": text, "CQ-002": "bank"}), encoding="utf-8")
    return path


def _sidecar_state(root: Path) -> dict[str, bytes]:
    folder = root / SIDECARS
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if not p.name.startswith(".")}


def test_disk_full_while_replacing_a_sidecar_keeps_the_live_one(fresh_demo: Path, tmp_path: Path) -> None:
    root = fresh_demo
    export = ["user-response", "export", str(root), "--task", RL, "--report", REPORT, "--answers"]
    first = okstra(*export, str(_answers(tmp_path / "a.json", "yes, re-book them")))
    assert first.returncode == 0, first.stderr
    before = _sidecar_state(root)
    big = _answers(tmp_path / "big.json", "x" * 3_000_000)
    second = okstra(*export, str(big), fsize=100 * 1024)
    assert second.returncode == 1
    assert len(second.stderr.decode().strip().splitlines()) == 1, second.stderr
    assert _sidecar_state(root) == before, "the live sidecar and its superseded copies are unchanged"
    leftovers = [p.name for p in (root / SIDECARS).iterdir() if p.name.startswith(".okstra-tmp")]
    assert leftovers == []


@pytest.mark.parametrize("fail_at", ["link", "replace"])
def test_a_failed_switch_leaves_the_old_sidecar_live(
    fresh_demo: Path, tmp_path: Path, fail_at: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = fresh_demo
    export = ["user-response", "export", str(root), "--task", RL, "--report", REPORT, "--answers"]
    assert main([*export, str(_answers(tmp_path / "a.json", "first"))]) == 0
    before = _sidecar_state(root)
    real = getattr(os, fail_at)

    def broken(*args: object, **kw: object) -> None:
        if SIDECARS in str(args[0]):
            raise OSError(28, "No space left on device")
        real(*args, **kw)

    monkeypatch.setattr(os, fail_at, broken)
    assert main([*export, str(_answers(tmp_path / "b.json", "second"))]) == 1
    monkeypatch.setattr(os, fail_at, real)
    assert _sidecar_state(root) == before
