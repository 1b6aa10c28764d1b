"""Switching between projects from any view: ``O`` opens a picker of the projects, and the command palette offers
"Open project ID" for each. Both list the projects Home lists (:func:`okstra_core.projects.discover`), only those
that can be read; the one open is marked. Choosing one opens it as Enter on Home does (the app's
``open_project``).
"""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from okstra_core.projects import ProjectEntry, discover
from okstra_core.text import visible

from ..widgets.list_table import ListOptions

#: The mark of the project open.
CURRENT_MARK = "●"


def readable_projects(home: Path | None, named: tuple[Path, ...], remembered: bool) -> list[ProjectEntry]:
    """The projects of the registry that can be opened, in registry order (nothing is written)."""
    return [entry for entry in discover(home, named=named, remembered=remembered).entries if entry.readable]


def registry_sources(app: object) -> tuple[Path | None, tuple[Path, ...], bool]:
    """Where the app's Home finds its projects: the manager home, the roots named, the roots remembered or not."""
    return (
        getattr(app, "okstra_home", None),
        tuple(getattr(app, "named_roots", ())),
        bool(getattr(app, "remembered", True)),
    )


def current_root(app: object) -> Path | None:
    project = getattr(app, "project", None)
    return getattr(project, "root", None)


def switch_to(app: object, root: Path) -> None:
    """Open the project at *root* in *app* (its ``open_project``)."""
    opener = getattr(app, "open_project", None)
    if opener is not None:
        opener(root)


class ProjectsProvider(Provider):
    """The palette's "Open project ID", one per project that can be read."""

    entries: list[ProjectEntry]

    async def startup(self) -> None:
        self.entries = await asyncio.to_thread(readable_projects, *registry_sources(self.app))

    def _commands(self) -> list[tuple[str, str, Path]]:
        current = current_root(self.app)
        return [
            (
                f"Open project {visible(entry.project_id)}",
                visible(str(entry.root)) + (" (open now)" if entry.root == current else ""),
                entry.root,
            )
            for entry in self.entries
        ]

    async def discover(self) -> Hits:
        for title, help_text, root in self._commands():
            yield DiscoveryHit(title, partial(switch_to, self.app, root), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, root in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(switch_to, self.app, root), help=help_text)


class ProjectPicker(ModalScreen[Path | None]):
    """The projects that can be opened, the one open marked; Enter switches to one (dismisses with its root)."""

    BINDINGS = [Binding("escape,O", "dismiss_none", "Close")]

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[ProjectEntry] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="switch-box", classes="pane") as box:
            box.border_title = "Switch project"
            yield Static(Text("Reading the projects…", style="dim"), id="switch-summary")
            yield ListOptions(id="switch-list")

    def on_mount(self) -> None:
        self.query_one("#switch-list", ListOptions).focus()
        self._read()

    @work(thread=True, exclusive=True, group="switch-read", description="switch-read")
    def _read(self) -> None:
        entries = readable_projects(*registry_sources(self.app))
        self.app.call_from_thread(self.show, entries)

    def show(self, entries: list[ProjectEntry]) -> None:
        self.entries = entries
        current = current_root(self.app)
        listing = self.query_one("#switch-list", ListOptions)
        listing.clear_options()
        for index, entry in enumerate(entries):
            is_current = entry.root == current
            label = Text(f"{CURRENT_MARK} " if is_current else "  ", style="bold green")
            label.append(visible(entry.project_id), style="bold" if is_current else "")
            label.append(f"  {visible(str(entry.root))}", style="dim")
            listing.add_option(Option(label, id=str(index)))
            if is_current:
                listing.highlighted = index
        n = len(entries)
        summary = (
            f"{n} project{'s' if n != 1 else ''} that can be opened ({CURRENT_MARK}: open now); Enter switches"
            if entries
            else "No project can be opened: open one (okstra-tui PROJECT) or register it with a manager."
        )
        self.query_one("#switch-summary", Static).update(Text(summary, style="bold"))

    @on(OptionList.OptionSelected, "#switch-list")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.entries[int(event.option.id or 0)].root)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
