"""The workbench app: navigation, global keys, the command palette, and shared comforts."""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import partial
from pathlib import Path

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from okstra_core import layout
from okstra_core.errors import LoadError
from okstra_core.store import Project, Task, TaskRef

from .navigation import History, Location
from .screens.base import ViewScreen


def open_task(root: Path) -> Task:
    """A task by its root folder, whether or not the catalog names it."""
    # <project>/.okstra/tasks/<group>/<task>: no catalog scan, opening must stay O(1).
    project = Project(root.parent.parent.parent.parent)
    return TaskRef(project, root.parent.name, root.name, root).open()


class OkstraApp(App[None]):
    """``okstra-tui``: browse one project's okstra store."""

    TITLE = "okstra workbench"
    CSS_PATH = "okstra.tcss"

    BINDINGS = [
        Binding("question_mark", "help", "Help"),
        Binding("escape", "back", "Back"),
        Binding("right_square_bracket,alt+right", "forward", "Forward", show=False),
        Binding("left_square_bracket,alt+left", "back", "Back", show=False),
        Binding("c", "catalog", "Catalog", show=False),
        Binding("x", "checks", "Checks"),
        Binding("m", "managers", "Managers"),
        Binding("y", "copy_path", "Copy path", show=False),
        Binding("e", "editor", "Open in $EDITOR", show=False),
        Binding("P", "pager", "Open in $PAGER", show=False),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, project: Project, *, demo_dir: Path | None = None) -> None:
        super().__init__()
        self.project = project
        self.demo_dir = demo_dir
        self.history = History()

    def fresh_project(self) -> Project:
        """A new read-side handle (the old one caches what it read)."""
        self.project = Project(self.project.root)
        return self.project

    def on_mount(self) -> None:
        from .screens.catalog import CatalogScreen

        self.sub_title = str(self.project.root)
        self.push_screen(CatalogScreen())

    # ---------------------------------------------------------- navigation

    def build_screen(self, location: Location) -> Screen[None]:
        """The screen that shows *location*."""
        from .screens import catalog, checks, convergence, design_prep, diff, file, managers, reports, runs, task

        view, root = location.view, location.task
        if view == "catalog":
            return catalog.CatalogScreen()
        if view == "checks":
            return checks.ChecksScreen()
        if view == "managers":
            return managers.ManagersScreen()
        assert root is not None, f"{view} needs a task"
        if view == "task":
            return task.TaskScreen(root)
        if view == "runs":
            artifact = Path(location.extra[0]) if location.extra else None
            return runs.RunsScreen(root, location.target, artifact)
        if view == "file":
            assert location.target is not None
            return file.FileScreen(root, location.target)
        if view == "diff":
            assert location.target is not None
            return diff.DiffScreen(root, location.target, Path(location.extra[0]))
        if view == "convergence":
            return convergence.ConvergenceScreen(root)
        if view == "design-prep":
            return design_prep.DesignPrepScreen(root)
        if view == "reports":
            return reports.ReportsScreen(root, location.target)
        raise ValueError(f"unknown view {view!r}")

    def navigate(self, location: Location) -> None:
        """Open *location* on top of the current view; back returns here."""
        self.history.clear_forward()
        self.push_screen(self.build_screen(location))

    def _view_stack(self) -> list[ViewScreen]:
        return [s for s in self.screen_stack if isinstance(s, ViewScreen)]

    def action_back(self) -> None:
        views = self._view_stack()
        if len(views) <= 1 or not isinstance(self.screen, ViewScreen):
            return
        self.history.left(self.screen.location)
        self.pop_screen()

    def action_forward(self) -> None:
        location = self.history.take_forward()
        if location is None:
            self.notify("Nothing to go forward to.", timeout=2)
            return
        self.push_screen(self.build_screen(location))

    def _go_top(self, view: str) -> None:
        views = self._view_stack()
        if view == "catalog":
            while len(self._view_stack()) > 1:
                self.pop_screen()
            return
        if isinstance(self.screen, ViewScreen) and self.screen.VIEW_NAME == view:
            return
        self.navigate(Location(view))

    def action_catalog(self) -> None:
        self._go_top("catalog")

    def action_checks(self) -> None:
        self._go_top("checks")

    def action_managers(self) -> None:
        self._go_top("managers")

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(self.screen))

    # ------------------------------------------------------------ comforts

    def _current_path(self) -> Path | None:
        screen = self.screen
        return screen.current_path() if isinstance(screen, ViewScreen) else None

    def action_copy_path(self) -> None:
        path = self._current_path()
        if path is None:
            self.notify("Nothing selected to copy.", severity="warning")
            return
        self.copy_to_clipboard(str(path))
        self.notify(f"Copied {path}", timeout=3)

    def _run_external(self, variable: str, fallback: str) -> None:
        import shlex
        import subprocess

        path = self._current_path()
        if path is None:
            self.notify("Nothing selected to open.", severity="warning")
            return
        command = shlex.split(os.environ.get(variable) or fallback) + [str(path)]
        try:
            with self.suspend():
                subprocess.run(command, check=False)
        except (OSError, Exception) as exc:  # a missing program or a headless terminal
            self.notify(f"Cannot run {command[0]}: {exc}", severity="error")

    def action_editor(self) -> None:
        self._run_external("EDITOR", "vi")

    def action_pager(self) -> None:
        self._run_external("PAGER", "less")

    # ----------------------------------------------------- command palette

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Every key binding with a description, so the palette offers every action."""
        yield from super().get_system_commands(screen)
        seen: set[str] = set()
        base = screen
        from .screens.help import HelpScreen

        if isinstance(screen, HelpScreen):
            base = screen.under
        for key, active in base.active_bindings.items():
            binding = active.binding
            if not binding.description or binding.action in seen or binding.action in ("quit",):
                continue
            seen.add(binding.action)
            yield SystemCommand(binding.description, f"key: {_key_label(key)}", partial(base.run_action, binding.action, active.node))
        for view in ("catalog", "checks", "managers"):
            action = f"app.{view}"
            if view not in seen:
                yield SystemCommand(f"Go to {view}", "top-level view", partial(self.run_action, action))


def _key_label(key: str) -> str:
    return {"question_mark": "?", "slash": "/", "escape": "esc", "right_square_bracket": "]",
            "left_square_bracket": "[", "enter": "enter"}.get(key, key)


def open_project(path: Path) -> Project | LoadError:
    """The project at *path*, or why it cannot be opened."""
    return Project.open(path)


def manager_home() -> Path:
    return layout.okstra_home()
