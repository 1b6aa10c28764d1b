"""Search across every project of Home's list (ctrl+f on Home): ``okstra search --all`` as you type.

The query is the project Search's (``okstra_core.search.query``); each project
is searched through its own index by :func:`okstra_core.search.projects.search_project`
and the hits merged best first by :func:`~okstra_core.search.projects.merged`,
as ``okstra search --all`` does. Hits are grouped by project and task, the
group of the best hit first. Enter opens the hit's project (as Enter on Home
does) and then the hit, scrolled to its match. A project that cannot be
searched is one line under the hits.

The search runs as the view's read (:meth:`ViewScreen.read`): a keystroke
starts a new one, which supersedes the one under way (it stops at the next
project). What it records is the list of projects (the manager home, the roots
opened) and the files of the hits shown: the view searches again when a project
is added, removed or breaks, and when a hit's file changes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from okstra_core import layout, reading
from okstra_core.projects import ProjectEntry, discover
from okstra_core.search.index import Hit
from okstra_core.search.projects import ProjectHits, merged, search_project, total
from okstra_core.search.query import QueryError, parse
from okstra_core.text import visible

from ..navigation import Location, OpenView, View
from ..widgets.footer import BindingsFooter
from ..widgets.list_table import ListOptions
from .base import ViewScreen
from .home import registry_sources
from .search import PLACEHOLDER, SHOWN_HITS, QueryKeys, hit_prompt

#: Lines naming projects that could not be searched, at most (the count says how many there are).
PROBLEMS_SHOWN = 20

HINT = (
    "Type to search every project of Home's list: the same words, phrases, prefix*, OR, NOT and filters "
    "(kind: task: type: since:) as a project's Search."
)


@dataclass(frozen=True, slots=True)
class Found:
    """One search over the projects: the query as typed, each project's hits or why it was not searched."""

    text: str
    projects: int = 0
    per_project: list[ProjectHits] = field(default_factory=list)
    #: The registry's own notes (a manager's list that could not be read).
    notes: list[str] = field(default_factory=list)
    #: Why the query cannot run (malformed, or too complex for the index), else None.
    problem: str | None = None
    #: The hits shown, best first: ``okstra search --all --limit SHOWN_HITS``'s.
    best: list[tuple[ProjectEntry, Hit]] = field(default_factory=list)

    @property
    def not_searched(self) -> list[ProjectHits]:
        return [ph for ph in self.per_project if ph.results is None]


def grouped(best: list[tuple[ProjectEntry, Hit]]) -> list[tuple[tuple[str, str], list[int]]]:
    """The indexes of *best* grouped by project and task, the group of the best hit first."""
    groups: dict[tuple[str, str], list[int]] = {}
    for n, (entry, hit) in enumerate(best):
        groups.setdefault((entry.project_id, hit.task), []).append(n)
    return list(groups.items())


def summary(found: Found) -> Text:
    """The status line: how many hits in how many projects, and how many could not be searched."""
    searched = len(found.per_project) - len(found.not_searched)
    count = total(found.per_project)
    shown = len(found.best)
    if not count:
        text = Text(f"No matches in the {searched} project{'s' if searched != 1 else ''} searched.")
    else:
        with_hits = sum(1 for ph in found.per_project if ph.results is not None and ph.results.total)
        text = Text(f"{count:,} hit{'s' if count != 1 else ''}", style="bold")
        if count > shown:
            text.append(f" (the best {shown:,} shown)")
        text.append(f" in {with_hits} of the {searched} project{'s' if searched != 1 else ''} searched")
    missing = len(found.not_searched)
    if missing:
        text.append(f"; {missing} cannot be searched (listed below)", style="bold red")
    if found.notes:
        text.append(f"; {len(found.notes)} note{'s' if len(found.notes) != 1 else ''} on the list", style="yellow")
    if count:
        text.append(". Enter opens the project at the hit.", style="dim")
    return text


class SearchAllScreen(QueryKeys, ViewScreen):
    """A query field over the hits of every project, grouped by project and task."""

    VIEW_NAME = View.SEARCH_ALL
    HELP = (
        "Search every project of Home's list at once (the hits of `okstra search --all`): the same query as a "
        "project's Search, each project searched through its own index in your cache folder. Hits are grouped "
        "by project and task, the best first. Enter opens that project, then the file at the match (Escape "
        "comes back to the project's catalog, H to Home). A project that cannot be searched is one line below "
        "the hits."
    )

    def __init__(self, query: str = "") -> None:
        super().__init__()
        #: The query typed last: what the next read searches.
        self.typed = query
        self.found = Found(query)
        self._searching = threading.Lock()

    @classmethod
    def from_location(cls, location: Location) -> Self:
        return cls(location.query or "")

    @property
    def location(self) -> Location:
        return Location(View.SEARCH_ALL, query=self.typed or None)

    def crumbs(self) -> list[str]:
        return ["Home", "Search every project"]

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        yield Input(value=self.typed, placeholder=PLACEHOLDER, id="search-query")
        yield Static(Text(HINT, style="dim"), id="search-status")
        results = ListOptions(id="search-results", classes="pane")
        results.border_title = "Results"
        yield results
        yield BindingsFooter()

    def on_mount(self) -> None:
        self.focus_query()

    @on(Input.Changed, "#search-query")
    def _typed(self, event: Input.Changed) -> None:
        if event.value == self.typed:
            return
        self.typed = event.value
        if event.value.strip():
            self._show_status(Text("Searching every project…", style="dim"))
        self.load()

    @on(Input.Submitted, "#search-query")
    def _submitted(self) -> None:
        self.action_results()

    # ------------------------------------------------------------ reading

    def read(self) -> Found:
        home, named, remembered = registry_sources(self.app)
        registry = discover(home, named=named, remembered=remembered)
        text = self.typed
        projects, notes = len(registry.entries), list(registry.notes)
        if not text.strip():
            return Found(text, projects, notes=notes)
        try:
            query = parse(text)
        except QueryError as exc:
            return Found(text, projects, notes=notes, problem=str(exc))
        cache = layout.okstra_cache_dir()
        worker = get_current_worker()
        per_project: list[ProjectHits] = []
        # One search at a time: a superseded one stops at its next project (what it found is dropped), and no
        # index is brought up to date by two threads at once.
        with self._searching:
            try:
                for entry in registry.entries:
                    if worker.is_cancelled:
                        break  # a newer query was typed: its own search waits for this one to stop
                    hits = search_project(entry, cache, query, limit=SHOWN_HITS, include_logs=query.wants_logs)
                    per_project.append(hits)
            except QueryError as exc:  # one the index's own parser cannot run
                return Found(text, projects, notes=notes, problem=str(exc))
        found = Found(text, projects, per_project, notes, best=merged(per_project, SHOWN_HITS))
        for entry, hit in found.best:
            reading.note_status(entry.root / hit.path)  # a hit's file changed: its snippet is searched again
        return found

    def show(self, data: Found) -> None:
        self.found = data
        for ph in data.per_project:
            for notice in ph.notices:
                self.app.notify(f"{ph.entry.project_id}: {notice}", severity="warning", timeout=8)
        if not data.text.strip():
            self._show_status(Text(HINT, style="dim"))
        elif data.problem is not None:
            self._show_status(Text(visible(data.problem), style="bold red"))
        else:
            self._show_status(summary(data))
        self._show_hits(data)

    # --------------------------------------------------------------- showing

    def _show_status(self, text: Text) -> None:
        self.query_one("#search-status", Static).update(text)

    def _show_hits(self, found: Found) -> None:
        results = self.query_one("#search-results", OptionList)
        options: list[Option | None] = []
        width = self.size.width - 6  # the list's border, padding and scroll bar
        best = found.best if found.problem is None else []
        for (project_id, task), indexes in grouped(best):
            heading = Text(visible(project_id), style="bold magenta")
            heading.append(f"  {visible(task)}", style="bold")
            heading.append(f"  {len(indexes)} hit{'s' if len(indexes) != 1 else ''}", style="dim")
            heading.truncate(max(width, 20), overflow="ellipsis")
            options.append(Option(heading, disabled=True))
            options.extend(Option(hit_prompt(best[n][1], width), id=str(n)) for n in indexes)
        options.extend(self._problem_lines(found, width))
        results.clear_options()
        results.add_options(options)
        results.border_title = f"Results ({len(best):,})" if best else "Results"

    def _problem_lines(self, found: Found, width: int) -> list[Option | None]:
        """One line per project that could not be searched (the first :data:`PROBLEMS_SHOWN`)."""
        missing = found.not_searched
        lines: list[Option | None] = []
        for ph in missing[:PROBLEMS_SHOWN]:
            line = Text(f"✗ {visible(ph.entry.project_id)}", style="bold red")
            line.append(f"  not searched: {visible(ph.problem or ph.entry.health)}", style="red")
            line.truncate(max(width, 20), overflow="ellipsis")
            lines.append(Option(line, disabled=True))
        if len(missing) > PROBLEMS_SHOWN:
            lines.append(Option(Text(f"… and {len(missing) - PROBLEMS_SHOWN} more", style="red"), disabled=True))
        return lines

    def selected_hit(self) -> tuple[ProjectEntry, Hit] | None:
        results = self.query_one("#search-results", OptionList)
        if results.highlighted is None:
            return None
        option = results.get_option_at_index(results.highlighted)
        return None if option.id is None else self.found.best[int(option.id)]

    @on(OptionList.OptionSelected, "#search-results")
    def _open_hit(self, event: OptionList.OptionSelected) -> None:
        if event.option_id is None:
            return
        entry, hit = self.found.best[int(event.option_id)]
        app = self.app
        opener = getattr(app, "open_project", None)
        if opener is None:
            return
        root = entry.root
        opener(root)
        if self.okstra.project.root != root:
            return  # it could not be opened (it says why)
        task_root = layout.tasks_dir(root) / hit.task_folder
        app.post_message(OpenView(Location(View.FILE, task_root, root / hit.path, query=self.typed, anchor=hit.label)))

    def current_path(self) -> Path | None:
        chosen = self.selected_hit()
        return None if chosen is None else chosen[0].root / chosen[1].path
