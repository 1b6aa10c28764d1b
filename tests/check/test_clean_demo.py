"""The demo, as the core's own write path produces it, checks clean (warnings only where it is meant to)."""

from __future__ import annotations

from pathlib import Path

from okstra_core.check.catalog import RULES_BY_ID

from .helpers import check, findings_of


def test_demo_has_no_errors(demo_root: Path) -> None:
    report = check(demo_root)
    errors = [f for f in report.findings if f.severity == "error"]
    assert errors == []
    assert report.files > 100


def test_demo_warnings_are_the_intended_ones(demo_root: Path) -> None:
    report = check(demo_root)
    rules = {f.rule for f in report.findings}
    # The demo deliberately holds flat legacy artifacts, reverify prompts without
    # metadata, a duplicate design-prep revision, a stale fingerprint and a markerless plan.
    assert {"OKS017", "OKS050", "OKS082", "OKS083", "OKS084"} <= rules
    assert all(RULES_BY_ID[r].severity == "warning" for r in rules)
    stale = findings_of(report, "OKS083")
    assert stale and all("design-prep-inputs/" in f.path for f in stale)


def test_parallel_run_gives_the_same_findings(demo_root: Path) -> None:
    import okstra_core.check.engine as engine

    old = engine.PARALLEL_MIN_TASKS
    engine.PARALLEL_MIN_TASKS = 1
    try:
        parallel = check(demo_root, jobs=2)
    finally:
        engine.PARALLEL_MIN_TASKS = old
    serial = check(demo_root)
    assert parallel.findings == serial.findings
    assert parallel.files == serial.files


def test_check_is_read_only(fresh_demo: Path) -> None:
    def snapshot() -> dict[str, tuple[int, int]]:
        out = {}
        for p in sorted(fresh_demo.rglob("*")):
            st = p.lstat()
            out[p.relative_to(fresh_demo).as_posix()] = (st.st_size, st.st_mtime_ns)
        return out

    before = snapshot()
    check(fresh_demo)
    assert snapshot() == before


def test_managers_are_checked_only_when_home_exists(fresh_demo: Path, tmp_path: Path) -> None:
    (fresh_demo / ".okstra-home/managers/release-train/manager.json").write_text("{", encoding="utf-8")
    assert findings_of(check(fresh_demo), "OKS004")
    assert not findings_of(check(fresh_demo, home=tmp_path / "absent"), "OKS004")
