"""Archives of replaced convergence state are opaque bytes: bad bytes in them are not findings."""

from __future__ import annotations

from pathlib import Path

from okstra_core.check import run_check
from okstra_core.cli import main

STATE = ".okstra/tasks/payments/retry-policy/runs/analysis/state"


def test_restart_archives_hold_invalid_bytes_without_findings(fresh_demo: Path) -> None:
    state = fresh_demo / STATE
    (state / "convergence-work-analysis-001.json").write_bytes(b'{"schemaVersion": "1.2", "queue": [\xff')
    (state / "convergence-analysis-001.json").write_bytes(b'{"schemaVersion": "1.1"}\n')
    before = run_check(fresh_demo, jobs=1)
    assert any(f.path.endswith("convergence-work-analysis-001.json") and f.severity == "error" for f in before.findings)
    assert (
        main(
            [
                "convergence",
                "seed",
                str(fresh_demo),
                "--task",
                "demo-shop:payments:retry-policy",
                "--run-type",
                "analysis",
                "--restart-from-round0",
            ]
        )
        == 0
    )
    archives = sorted((state / "migrations").iterdir())
    assert len(archives) == 2
    after = run_check(fresh_demo, jobs=1)
    assert [f for f in after.findings if "/migrations/" in f.path] == []
    assert not [f for f in after.findings if f.severity == "error"], [
        f for f in after.findings if f.severity == "error"
    ]
