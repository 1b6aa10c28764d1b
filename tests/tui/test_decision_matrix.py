"""The decision matrix: whoever makes or opens a decision while the workbench runs, what it shows agrees.

A verb in another process, the workbench's own wizard and agent-like writes each change what waits; after each,
the catalog's count and ◆ marks, the inbox view and the notices agree with ``okstra inbox --json`` run afresh in
another process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from okstra_core import layout
from okstra_core.store import Project
from okstra_tui.app import OkstraApp
from okstra_tui.screens.catalog import CatalogScreen
from okstra_tui.screens.inbox import InboxScreen
from okstra_tui.screenshots import _write, settle
from okstra_tui.widgets.virtual_table import GroupHeader

from .conftest import SIZE, wait_until

Step = Callable[[Pilot[None], Path], Awaitable[str]]


def _afresh(root: Path) -> list[dict[str, object]]:
    """``okstra inbox --json`` in a process of its own, bypassing every cache."""
    done = subprocess.run(
        [sys.executable, "-m", "okstra_core.cli", "inbox", str(root), "--json", "--no-cache"],
        capture_output=True,
        text=True,
        check=True,
    )
    items: list[dict[str, object]] = json.loads(done.stdout)["items"]
    return items


def _okstra(*argv: str) -> None:
    subprocess.run([sys.executable, "-m", "okstra_core.cli", *argv], capture_output=True, text=True, check=True)


def _manifest(root: Path, task: str) -> Path:
    return layout.task_manifest_path(layout.tasks_dir(root) / task)


def _set_awaiting(root: Path, task: str, value: bool) -> None:
    path = _manifest(root, task)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["workflow"]["awaitingApproval"] = value
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


async def verb_prepares_planning(pilot: Pilot[None], root: Path) -> str:
    _okstra("planning", "prepare", str(root), "--task", "checkout/address-validation")
    return "checkout:address-validation"


async def agent_asks_approval(pilot: Pilot[None], root: Path) -> str:
    _set_awaiting(root, "search/query-latency", True)
    return "search:query-latency"


async def agent_settles_approval(pilot: Pilot[None], root: Path) -> str:
    _set_awaiting(root, "payments/refund-ledger", False)
    return "payments:refund-ledger"


async def agent_removes_a_choice(pilot: Pilot[None], root: Path) -> str:
    """A recorded choice removed by hand: the direction is to be chosen again."""
    sidecar = sorted(layout.tasks_dir(root).glob("*/*/runs/option-selection/user-responses/*.md"))[0]
    sidecar.unlink()
    task_root = sidecar.parents[3]
    return f"{task_root.parent.name}:{task_root.name}"


async def agent_makes_an_item_provisional(pilot: Pilot[None], root: Path) -> str:
    report = sorted((layout.tasks_dir(root) / "checkout/saved-cards").glob("runs/*/reports/*.data.json"))[-1]
    doc = json.loads(report.read_text(encoding="utf-8"))
    for item in doc["implementationPlan"]["designItems"]:
        if item["status"] == "confirmed":
            item["status"] = "provisional"
    report.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return "checkout:saved-cards"


async def agent_copies_a_task_in(pilot: Pilot[None], root: Path) -> str:
    """A task folder with a direction to choose copied in from elsewhere (another clone of the project)."""
    import shutil

    source = layout.tasks_dir(root) / "checkout/fraud-rules"
    shutil.copytree(source, layout.tasks_dir(root) / "checkout/fraud-rules-copy", symlinks=True)
    return "checkout:fraud-rules"


async def workbench_answers_questions(pilot: Pilot[None], root: Path) -> str:
    await _write(pilot, "clarification")
    await pilot.press("escape")
    await settle(pilot)
    return "checkout:tax-export"


STEPS: dict[str, Step] = {
    "verb-prepares-planning": verb_prepares_planning,
    "agent-asks-approval": agent_asks_approval,
    "agent-settles-approval": agent_settles_approval,
    "agent-removes-a-choice": agent_removes_a_choice,
    "agent-makes-an-item-provisional": agent_makes_an_item_provisional,
    "agent-copies-a-task-in": agent_copies_a_task_in,
    "workbench-answers-questions": workbench_answers_questions,
}


def _catalog(app: OkstraApp) -> CatalogScreen:
    screen = app.screen_stack[0]
    assert isinstance(screen, CatalogScreen)
    return screen


def _task_folder(root: Path, item: dict[str, object]) -> Path:
    """The task folder an ``okstra inbox --json`` item names (its path: ``.okstra/tasks/<group>/<task>/…``)."""
    parts = Path(str(item["path"])).parts
    return root.joinpath(*parts[:4])


def _catalog_agrees(app: OkstraApp, root: Path) -> bool:
    fresh = _afresh(root)
    catalog = _catalog(app)
    waiting = catalog.waiting or {}
    marked = {r.folder() for r in catalog.table.rows if not isinstance(r, GroupHeader) and r.ident in waiting}
    return sum(waiting.values()) == len(fresh) and marked == {_task_folder(root, item) for item in fresh}


def _inbox_agrees(app: OkstraApp, root: Path) -> bool:
    fresh = _afresh(root)
    inbox = app.screen
    if not isinstance(inbox, InboxScreen):
        return False
    shown = {(d.kind, d.task_root, d.item) for d in inbox.decisions}
    return len(inbox.decisions) == len(fresh) and shown == {
        (str(item["kind"]), _task_folder(root, item), item["item"]) for item in fresh
    }


@pytest.mark.parametrize("step", list(STEPS))
async def test_what_waits_agrees_whoever_changed_it(step: str, fresh_demo: Path) -> None:
    """The inbox view on top follows at once; the catalog under it counts at once and, when shown again, agrees in
    its rows and marks too (a hidden view reads again when it is shown)."""
    app = OkstraApp(Project(fresh_demo), notify="toast")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: _catalog_agrees(app, fresh_demo), "the catalog has counted what waits")
        watcher = app._notices
        await wait_until(pilot, lambda: watcher is not None and watcher.ready, "the notices know the store")
        await pilot.press("i")
        await settle(pilot)
        await wait_until(pilot, lambda: _inbox_agrees(app, fresh_demo), "the inbox view shows what waits")
        before = _afresh(fresh_demo)
        task = await STEPS[step](pilot, fresh_demo)
        after = _afresh(fresh_demo)
        assert after != before, f"{step} changed nothing that waits"
        if step.startswith("workbench"):
            await pilot.press("i")  # the wizard closed on the inbox's screen: open it again on top
            await settle(pilot)
        await wait_until(pilot, lambda: _inbox_agrees(app, fresh_demo), f"the inbox view agrees after {step}")
        if step.startswith(("verb", "agent")) and len(after) > len(before):
            # A decision that started waiting, made by someone else, is announced naming its task.
            await wait_until(
                pilot, lambda: any(n.task.endswith(task) for n in app.latest_notices), f"a notice names {task}"
            )
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, CatalogScreen)
        await wait_until(pilot, lambda: _catalog_agrees(app, fresh_demo), f"the catalog agrees after {step}")
