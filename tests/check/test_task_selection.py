"""``run_check(only_tasks=...)``: the checker's own engine over one task folder."""

from __future__ import annotations

from pathlib import Path

from okstra_core.check import run_check

RETRY = ".okstra/tasks/payments/retry-policy"
LEDGER = ".okstra/tasks/payments/refund-ledger"


def test_one_task_is_checked_and_only_its_findings_are_kept(fresh_demo: Path) -> None:
    broken = fresh_demo / LEDGER / "task-manifest.json"
    broken.write_text("{ not json", encoding="utf-8")
    whole = run_check(fresh_demo)
    assert any(f.path == f"{LEDGER}/task-manifest.json" and f.severity == "error" for f in whole.findings)

    ledger = run_check(fresh_demo, only_tasks=[LEDGER])
    assert ledger.findings and all(f.path.startswith(LEDGER + "/") for f in ledger.findings)
    assert any(f.path == f"{LEDGER}/task-manifest.json" for f in ledger.findings)
    # The same findings the whole run reports for that task, no more and no fewer.
    assert ledger.findings == [f for f in whole.findings if f.path.startswith(LEDGER + "/")]

    retry = run_check(fresh_demo, only_tasks=[RETRY])
    assert retry.errors == 0
    assert all(f.path.startswith(RETRY + "/") for f in retry.findings)
