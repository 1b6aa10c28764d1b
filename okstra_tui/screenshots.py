"""``python -m okstra_tui.screenshots DIR``: an SVG of each main view of a fresh demo.

The same scenes drive the snapshot tests, so the README's pictures and the
tests show the same states.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot

from okstra_core import layout
from okstra_core.store import Project

from .app import OkstraApp
from .navigation import Location, View

SIZE = (120, 40)
#: The default size of most terminals: every view is also checked there.
SMALL_SIZE = (80, 24)

Scene = Callable[[Pilot[None]], Awaitable[None]]


async def settle(pilot: Pilot[None]) -> None:
    """Let workers finish and their results paint."""
    from textual.worker import WorkerCancelled

    for _ in range(3):
        # An exclusive worker replaced by a newer one ends cancelled.
        with contextlib.suppress(WorkerCancelled):
            await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def _app(pilot: Pilot[None]) -> OkstraApp:
    app = pilot.app
    assert isinstance(app, OkstraApp)
    return app


def _task_with(app: OkstraApp, predicate: Callable[[Path], bool]) -> Path:
    for ref in app.project.task_refs:
        if predicate(ref.root):
            return ref.root
    return app.project.task_refs[0].root


def _has(pattern: str) -> Callable[[Path], bool]:
    return lambda root: any(root.glob(pattern))


async def catalog(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await pilot.press("L")
    await settle(pilot)


async def task(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    await settle(pilot)
    app.navigate(Location(View.TASK, _task_with(app, _has("runs/implementation/stage-*"))))
    await settle(pilot)


async def runs(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    await settle(pilot)
    root = _task_with(app, _has("runs/*/state/team-state-*.json"))
    team_state = sorted(root.glob("runs/*/state/team-state-*.json"))[-1]
    app.navigate(Location(View.RUNS, root, team_state.parent.parent, artifact=team_state))
    await settle(pilot)


async def convergence(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    await settle(pilot)
    app.navigate(Location(View.CONVERGENCE, _task_with(app, _has("runs/*/state/convergence-round-*"))))
    await settle(pilot)


async def design_prep(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    await settle(pilot)
    app.navigate(Location(View.DESIGN_PREP, _task_with(app, _has("runs/implementation-planning/design-prep-inputs/*"))))
    await settle(pilot)
    await pilot.press("down", "down")
    await settle(pilot)


async def reports(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    await settle(pilot)
    app.navigate(Location(View.REPORTS, _task_with(app, _has("instruction-set/selected-direction.json"))))
    await settle(pilot)


def _reports(root: Path) -> list[Path]:
    return sorted(root.glob("runs/implementation-planning/reports/final-report-*.data.json"))


async def file(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    await settle(pilot)
    root = _task_with(app, _has("runs/implementation-planning/reports/*"))
    app.navigate(Location(View.FILE, root, layout.instruction_set_dir(root) / "task-brief.md"))
    await settle(pilot)


async def diff(pilot: Pilot[None]) -> None:
    app = _app(pilot)
    await settle(pilot)
    root = _task_with(app, lambda r: len(_reports(r)) >= 2)
    left, right = _reports(root)[:2]
    app.navigate(Location(View.DIFF, root, left, partner=right))
    await settle(pilot)


async def checks(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await pilot.press("x")
    await settle(pilot)


async def managers(pilot: Pilot[None]) -> None:
    await settle(pilot)
    await pilot.press("m")
    await settle(pilot)


async def help_screen(pilot: Pilot[None]) -> None:
    await task(pilot)
    await pilot.press("question_mark")
    await settle(pilot)


#: View name -> how to get there from start.
SCENES: dict[str, Scene] = {
    "catalog": catalog,
    "task": task,
    "runs": runs,
    "convergence": convergence,
    "design-prep": design_prep,
    "reports": reports,
    "file": file,
    "diff": diff,
    "checks": checks,
    "managers": managers,
    "help": help_screen,
}


async def capture(root: Path, name: str, scene: Scene, out: Path) -> Path:
    """Drive one scene headless and save its SVG."""
    project = Project.open(root)
    assert isinstance(project, Project)
    app = OkstraApp(project)
    async with app.run_test(size=SIZE) as pilot:
        await scene(pilot)
        target = out / f"{name}.svg"
        app.save_screenshot(filename=target.name, path=str(out))
    return target


def main(argv: list[str] | None = None) -> int:
    """Write ``<view>.svg`` for every main view into the given folder."""
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    from okstra_core.demo import generate

    with tempfile.TemporaryDirectory(prefix="okstra-shots-") as tmp:
        root = generate(Path(tmp) / "project")
        os.environ["OKSTRA_HOME"] = str(layout.okstra_dir(root).parent / ".okstra-home")
        for name, scene in SCENES.items():
            path = asyncio.run(capture(root, name, scene, out))
            print(path)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
