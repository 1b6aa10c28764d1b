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


_CARDS = ".okstra/tasks/checkout/saved-cards/runs/implementation-planning/design-prep-inputs"
_RETRY = ".okstra/tasks/payments/retry-policy/runs"
_QUERY = ".okstra/tasks/search/query-latency/runs/analysis"
#: What the demo holds on purpose, file by file: a stale fingerprint and a duplicate design-prep revision in two
#: plans, reverify prompts without metadata, a markerless plan, and one flat legacy execution.
INTENDED = {
    ("OKS083", f"{_CARDS}/design-prep-input-001-PREP-002-r1-20261113T102431000000Z.md"),
    ("OKS082", f"{_CARDS}/design-prep-input-002-PREP-001-r1-20261116T104631000000Z.md"),
    ("OKS082", f"{_CARDS}/design-prep-input-002-PREP-001-r1-20261116T104648000000Z.md"),
    *(
        ("OKS050", f"{_RETRY}/analysis/prompts/{analyser}-analyser-reverify-r{r}-analysis-001.md")
        for analyser in ("claude", "codex", "gemini")
        for r in (1, 2)
    ),
    (
        "OKS083",
        f"{_RETRY}/implementation-planning/design-prep-inputs/design-prep-input-001-PREP-002-r1-20261109T102139000000Z.md",
    ),
    (
        "OKS082",
        f"{_RETRY}/implementation-planning/design-prep-inputs/design-prep-input-002-PREP-002-r2-20261109T154339000000Z.md",
    ),
    (
        "OKS082",
        f"{_RETRY}/implementation-planning/design-prep-inputs/design-prep-input-002-PREP-002-r2-20261109T154356000000Z.md",
    ),
    (
        "OKS084",
        ".okstra/tasks/search/index-rebuild/runs/implementation-planning/reports/"
        "final-report-implementation-planning-001.data.json",
    ),
    ("OKS017", f"{_QUERY}/final-analysis-007.status"),
    ("OKS017", f"{_QUERY}/lead-execution-prompt-analysis-007.md"),
    ("OKS050", f"{_QUERY}/lead-execution-prompt-analysis-007.md"),
    ("OKS017", f"{_QUERY}/run-manifest-analysis-007.json"),
}


def test_demo_warnings_are_the_intended_ones(demo_root: Path) -> None:
    report = check(demo_root)
    found = [(f.rule, f.path) for f in report.findings]
    assert len(found) == len(set(found)), "one finding per rule and file"
    assert set(found) == INTENDED
    assert all(RULES_BY_ID[f.rule].severity == "warning" for f in report.findings)


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
