"""Helpers for checker tests: run the engine on a demo copy and edit demo files minimally."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from okstra_core.check import CheckReport, Finding, run_check
from okstra_core.check.cache import RECORD_FIELDS, record_text

RP = "retry-policy"
TASK = ".okstra/tasks/payments/retry-policy"


def check(root: Path, **kw: Any) -> CheckReport:
    """Check *root* with its demo manager home, in this process."""
    kw.setdefault("home", root / ".okstra-home")
    kw.setdefault("jobs", 1)
    return run_check(root, **kw)


def one(root: Path, pattern: str) -> Path:
    """The first path under *root* matching a glob (sorted), failing loudly when none does."""
    found = sorted(root.glob(pattern))
    assert found, f"demo has no {pattern}"
    return found[0]


def rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    """Load, change in place and rewrite a JSON file."""
    value = json.loads(path.read_text(encoding="utf-8"))
    change(value)
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


def edit_text(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def findings_of(report: CheckReport, rule: str) -> list[Finding]:
    return [f for f in report.findings if f.rule == rule]


def records_database(cache_dir: Path) -> Path:
    """The one store index database in *cache_dir*, where the check keeps its records."""
    (path,) = (cache_dir / "index").glob("*.sqlite")
    return path


def kept_records(cache_dir: Path) -> dict[str, dict[str, Any]]:
    """Every check record kept in *cache_dir*, by task folder: its fields, its shape's digest and its MAC."""
    conn = sqlite3.connect(records_database(cache_dir))
    try:
        rows = conn.execute("SELECT task, shape, record, mac FROM check_tasks").fetchall()
    finally:
        conn.close()
    out = {}
    for task, shape, record, mac in rows:
        fields = dict(zip(RECORD_FIELDS, json.loads(record), strict=True))
        out[json.loads(task)] = {**fields, "shape": shape, "mac": mac}
    return out


def edit_records(cache_dir: Path, change: Callable[[dict[str, dict[str, Any]]], None]) -> None:
    """Apply *change* to the records :func:`kept_records` gives and write them back as they are (MACs unchanged
    unless *change* changes them; a record it removes is deleted)."""
    records = kept_records(cache_dir)
    change(records)
    conn = sqlite3.connect(records_database(cache_dir))
    try:
        with conn:
            (scope,) = {row[0] for row in conn.execute("SELECT scope FROM check_tasks")}
            conn.execute("DELETE FROM check_tasks")
            conn.executemany(
                "INSERT INTO check_tasks VALUES (?, ?, ?, ?, ?)",
                [(scope, json.dumps(rel), rec["shape"], record_text(rec), rec["mac"]) for rel, rec in records.items()],
            )
    finally:
        conn.close()
