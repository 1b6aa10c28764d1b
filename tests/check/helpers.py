"""Helpers for checker tests: run the engine on a demo copy and edit demo files minimally."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from okstra_core.check import CheckReport, Finding, run_check

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
