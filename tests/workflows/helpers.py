"""Helpers for workflow tests: tree snapshots and running ``okstra`` in-process."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from okstra_core import cli, layout

RETRY = "demo-shop:payments:retry-policy"
REFUND = "demo-shop:payments:refund-ledger"
ROUNDING = "demo-shop:payments:currency-rounding"
INDEX = "demo-shop:search:index-rebuild"
LATENCY = "demo-shop:search:query-latency"
STALE = "demo-shop:search:stale-cache"
CI = "demo-shop:platform:ci-speedup"


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file's bytes and every folder (None) under *root*, symlinks as their target text.

    Lock files are left out: taking a lock is not a change to the store.
    """
    out: dict[str, bytes | None] = {}
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != layout.LOCKS_DIR]  # lock files hold nothing
        rel_dir = os.path.relpath(dirpath, root)
        for d in dirs:
            full = os.path.join(dirpath, d)
            out[os.path.join(rel_dir, d)] = ("link:" + os.readlink(full)).encode() if os.path.islink(full) else None
        for name in files:
            if name.endswith(layout.LOCK_SUFFIX):
                continue
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                out[os.path.join(rel_dir, name)] = ("link:" + os.readlink(full)).encode()
            else:
                with open(full, "rb") as fh:
                    out[os.path.join(rel_dir, name)] = fh.read()
    return out


def diff(before: dict[str, bytes | None], after: dict[str, bytes | None]) -> list[str]:
    """Paths added, removed or changed between two snapshots."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p, b"\0missing") != after.get(p, b"\0missing"))


@dataclass
class Result:
    code: int
    out: str
    err: str


def okstra(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> Result:
    """Run ``okstra ARGV`` in-process and capture its output."""
    capsys.readouterr()
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def refuses(capsys: pytest.CaptureFixture[str], root: Path, *argv: str | Path, names: str) -> str:
    """Run a verb that must refuse: exit 1, one stderr line naming *names*, and the tree byte-identical."""
    before = snapshot(root)
    result = okstra(capsys, *argv)
    assert result.code == 1, (result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("okstra: ")
    assert names in lines[0], lines[0]
    assert result.out == ""
    assert diff(before, snapshot(root)) == []
    return lines[0]
