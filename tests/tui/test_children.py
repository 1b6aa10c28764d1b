"""The workbench's children: ``python -m okstra_tui.child``, one job each, bound to the workbench's process."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from okstra_tui import children
from okstra_tui.children import child_command, end_children, run_child
from okstra_tui.data.catalog import current_inbox


def test_the_waiting_child_counts_what_the_workbench_would(demo_root: Path) -> None:
    out = run_child("waiting", demo_root)
    assert out is not None
    value = json.loads(out)
    counts = value["counts"]
    assert value["kept"] is None or isinstance(value["kept"], str)  # the inbox's MAC in the store index
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


def test_a_leaving_workbench_ends_the_children_it_waits_for(demo_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A count still running when the workbench leaves is ended, not left to read the whole store for nobody."""
    monkeypatch.setattr(children, "child_command", lambda *a: [sys.executable, "-c", "import time; time.sleep(60)"])
    outcome: list[str | None] = []
    waiting = threading.Thread(target=lambda: outcome.append(run_child("waiting", demo_root)))
    waiting.start()
    deadline = time.monotonic() + 30
    while not children._running and time.monotonic() < deadline:
        time.sleep(0.01)
    (child,) = children._running
    end_children()
    waiting.join(30)
    assert not waiting.is_alive() and outcome == [None]
    assert child.poll() is not None and not children._running
