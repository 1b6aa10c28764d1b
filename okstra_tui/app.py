"""The workbench app: navigation, global keys, the command palette, and shared comforts."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import SeverityLevel
from textual.screen import Screen

from okstra_core.store import Project
from okstra_core.text import visible

from .navigation import TOP_VIEWS, History, Location, OpenView, View
from .screens.base import ViewScreen
from .views import build_screen

if TYPE_CHECKING:
    from okstra_core.workflows.inbox import PendingDecision

    from .screens.task import TaskScreen

#: Name under which the kept task view is installed (installed screens stay mounted when popped).
KEPT_TASK_SCREEN = "okstra-task-view"

#: Above this many tasks the palette does not read the inbox on every opening (the inbox view, i, lists it).
PALETTE_INBOX_TASKS = 1000


class OkstraApp(App[None]):
    """``okstra-tui``: browse one project's okstra store."""

    TITLE = "okstra workbench"
    CSS_PATH = "okstra.tcss"

    BINDINGS = [
        Binding("question_mark", "help", "Help"),
        Binding("escape", "back", "Back"),
        Binding("right_square_bracket,alt+right", "forward", "Forward", show=False),
        Binding("left_square_bracket,alt+left", "back", "Back", show=False),
        Binding("i", "inbox", "Inbox"),
        Binding("c", "catalog", "Catalog", show=False),
        Binding("x", "checks", "Checks"),
        Binding("m", "managers", "Managers"),
        Binding("I", "insights", "Insights", show=False),
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
        self._kept_task: TaskScreen | None = None

    def fresh_project(self) -> Project:
        """A new read-side handle (the old one caches what it read)."""
        self.project = Project(self.project.root)
        return self.project

    def get_default_screen(self) -> Screen[None]:
        """The catalog is the bottom of the stack (no blank screen is built under it)."""
        self._pause_gc_until_painted()
        return build_screen(Location(View.CATALOG))

    def _pause_gc_until_painted(self) -> None:
        """Keep the cyclic collector out of start-up, then freeze what start-up built.

        The first frame builds a few hundred thousand long-lived objects (the rows
        of a 10,000-task catalog, the widgets), none of them cyclic: collecting
        while they are made only walks them again and again. Once the frame is
        painted the collector resumes, and ``gc.freeze`` moves them out of its
        later walks.
        """
        was_enabled = gc.isenabled()
        gc.disable()

        def painted() -> None:
            if was_enabled:
                gc.enable()
            gc.freeze()

        self.call_after_refresh(painted)

    def on_mount(self) -> None:
        self.sub_title = visible(str(self.project.root))

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Notifications name store files: shown as text, control characters visible (never markup)."""
        super().notify(visible(message), title=visible(title), severity=severity, timeout=timeout, markup=False)

    # ---------------------------------------------------------- navigation

    def build_screen(self, location: Location) -> Screen[None]:
        """The screen that shows *location* (the kept task view for a task, when it is free)."""
        if location.view is View.TASK:
            return self._task_screen(location.task_root)
        return build_screen(location)

    def _task_screen(self, root: Path) -> Screen[None]:
        """A task view showing *root*: the kept one when it is not on the stack, else a new one.

        Building a task screen (three tables, the overview, the footer) costs far
        more than a navigation step may; one is kept mounted across back and
        forward and re-aimed at the next task opened.
        """
        from .screens.task import TaskScreen

        kept = self._kept_task
        if kept is not None and kept not in self.screen_stack:
            kept.show_task(root)
            return kept
        screen = TaskScreen(root)
        if kept is None:
            self._kept_task = screen
            self.install_screen(screen, name=KEPT_TASK_SCREEN)
        return screen

    @on(OpenView)
    def _open_view(self, message: OpenView) -> None:
        self.navigate(message.location)

    def navigate(self, location: Location) -> None:
        """Open *location* on top of the current view; back returns here."""
        self.history.clear_forward()
        self.push_screen(self.build_screen(location))

    def _view_stack(self) -> list[ViewScreen]:
        return [s for s in self.screen_stack if isinstance(s, ViewScreen)]

    async def action_back(self) -> None:
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

    def _go_top(self, view: View) -> None:
        if view is View.CATALOG:
            while len(self._view_stack()) > 1:
                self.pop_screen()
            return
        if isinstance(self.screen, ViewScreen) and view is self.screen.VIEW_NAME:
            return
        self.navigate(Location(view))

    def action_catalog(self) -> None:
        self._go_top(View.CATALOG)

    def action_checks(self) -> None:
        self._go_top(View.CHECKS)

    def action_managers(self) -> None:
        self._go_top(View.MANAGERS)

    def action_inbox(self) -> None:
        self._go_top(View.INBOX)

    def action_insights(self) -> None:
        self._go_top(View.INSIGHTS)

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
        command = [*shlex.split(os.environ.get(variable) or fallback), str(path)]
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
            yield SystemCommand(
                binding.description, f"key: {_key_label(key)}", partial(self.run_action, binding.action, active.node)
            )
        yield from self._decision_commands()
        for view in TOP_VIEWS:
            action = f"app.{view}"
            if view not in seen:
                yield SystemCommand(f"Go to {view}", "top-level view", partial(self.run_action, action))

    def _decision_commands(self) -> Iterable[SystemCommand]:
        """One palette command per pending decision: it opens the decision's wizard."""
        from okstra_core.workflows.inbox import pending_decisions

        from .screens.inbox import KIND_LABELS

        if len(self.project.task_refs) > PALETTE_INBOX_TASKS:
            return
        for decision in pending_decisions(Project(self.project.root)):
            title = f"Decide: {KIND_LABELS.get(decision.kind, decision.kind)} · {decision.task}"
            if decision.item:
                title += f" {decision.item}"
            yield SystemCommand(title, decision.summary, partial(self.open_decision, decision))

    def open_decision(self, decision: PendingDecision) -> None:
        """Open the wizard that makes *decision* over the current view (which re-reads after a write)."""
        from .screens.inbox import wizard_for_decision

        wizard = wizard_for_decision(self.project.root, decision)
        if isinstance(wizard, str):
            self.notify(visible(wizard), severity="warning", timeout=6, markup=False)
            return
        screen = self.screen
        if isinstance(screen, ViewScreen):
            screen.open_form(wizard)
        else:
            self.push_screen(wizard)


def _key_label(key: str) -> str:
    return {
        "question_mark": "?",
        "slash": "/",
        "escape": "esc",
        "right_square_bracket": "]",
        "left_square_bracket": "[",
        "enter": "enter",
    }.get(key, key)
