"""The workbench's children: ``python -m okstra_tui.child``, one job each, bound to the workbench's process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from okstra_tui.children import child_command, run_child
from okstra_tui.data.catalog import current_inbox


def test_the_waiting_child_counts_what_the_workbench_would(demo_root: Path) -> None:
    out = run_child("waiting", demo_root)
    assert out is not None
    counts = json.loads(out)
    expected: dict[str, int] = {}
    for decision in current_inbox(demo_root).items:
        if decision.task_root is not None:
            rel = decision.task_root.relative_to(demo_root).as_posix()
            expected[rel] = expected.get(rel, 0) + 1
    assert counts == expected and sum(counts.values()) > 0


@pytest.mark.parametrize(
    "argv",
    [[], ["nosuchjob", ".", "1"], ["waiting", ".", "notapid"], ["waiting", ".", "1", "--x"], ["others", ".", "x"]],
)
def test_a_child_started_wrongly_says_how_and_exits_2(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "okstra_tui.child", *argv], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("usage: python -m okstra_tui.child ") and "Traceback" not in done.stderr


def test_a_child_whose_workbench_is_gone_ends(demo_root: Path) -> None:
    """Started for a parent it does not have (its workbench ended), the child ends instead of reading."""
    command = child_command("notices", demo_root)
    command[-1] = "1"  # not this child's parent
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == ""
