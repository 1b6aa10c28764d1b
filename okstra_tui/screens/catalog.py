"""The catalog: every task, grouped by task group, filterable and sortable."""

from __future__ import annotations

import importlib
import itertools
import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import var
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from okstra_core import reading
from okstra_core.errors import LoadError, OkstraError
from okstra_core.store import Project

from ..data.catalog import (
    ROW_GROUP,
    ROW_KEY,
    CatalogData,
    CatalogRow,
    FirstListing,
    PhaseSummary,
    confirm_catalog,
    counted_kept,
    first_listing,
    listed_phase_summary,
    load_catalog,
    phase_summary,
    settle_collector,
    shared_key_prefix,
    uncatalogued_rows,
    unlisted_folders,
    waiting_counts,
)
from ..data.unread import NEW_MARK, NEW_STYLE
from ..navigation import Location, StoreChanged, StoreWatched, View, WaitingCounted
from ..ui_thread import call_ui
from ..widgets.error_panel import ErrorPanel
from ..widgets.footer import BindingsFooter
from ..widgets.summary_line import SummaryLine
from ..widgets.virtual_table import Column, GroupHeader, VirtualTable
from .base import ViewScreen

if TYPE_CHECKING:
    from okstra_tui.data.seen import SeenMoments

#: Sort orders, cycled by ``s``: (label, the row attribute sorted on).
SORTS: tuple[tuple[str, str], ...] = (
    ("catalog order", "order"),
    ("task key", "key"),
    ("task type", "task_type"),
    ("status", "status"),
    ("last updated", "updated"),
    ("waiting for you first", "waiting"),
)

NEXT_STYLES = {"ready": "bold green", "pending": "yellow", "blocked": "bold red", "terminal": "dim"}
STATUS_STYLES = {
    "completed": "green",
    "failed": "red",
    "error": "red",
    "blocked": "red",
    "in-progress": "cyan",
    "ready-for-lead": "cyan",
    "prepared": "cyan",
    "not in catalog": "magenta",
}

KEY_LABEL = "task key"


#: Added to a row's search text when a decision waits in the task (NUL: no title can end with it).
WAITING_WORD = "\x00waiting"

#: How long the first frame waits for the count of what waits as the store index keeps it (at a warm start with
#: watchman it is there well before; otherwise the frame does not wait longer for it).
KEPT_WAIT_SECONDS = 0.3

#: Extra rows above and below the visible ones whose manifests are read ahead.
READ_AHEAD = 30


@dataclass(frozen=True, slots=True)
class CatalogSort:
    """How the rows are ordered: an index into :data:`SORTS`, and whether the order is reversed."""

    index: int = 0
    reverse: bool = False

    @property
    def label(self) -> str:
        return SORTS[self.index][0] + (" (reversed)" if self.reverse else "")

    @property
    def key(self) -> str:
        """The :class:`CatalogRow` attribute sorted on (``order``: the catalog's own order)."""
        return SORTS[self.index][1]

    def next(self) -> CatalogSort:
        return CatalogSort((self.index + 1) % len(SORTS), self.reverse)

    def reversed(self) -> CatalogSort:
        return CatalogSort(self.index, not self.reverse)

    def by(self, index: int) -> CatalogSort:
        """Sort by *index*; asking for the current order again reverses it (a second click on a title)."""
        return self.reversed() if index == self.index else CatalogSort(index)

    def apply(self, rows: list[CatalogRow], waiting: Mapping[str, int] | None = None) -> list[CatalogRow]:
        key = self.key
        if key == "waiting":
            # Tasks with a decision waiting first (catalog order within each part; reversed: last).
            counts = waiting or {}
            return sorted(rows, key=lambda r: counts.get(r.ident, 0) == 0, reverse=self.reverse)
        if key != "order":
            return sorted(rows, key=lambda r: getattr(r, key), reverse=self.reverse != (key == "updated"))
        return list(reversed(rows)) if self.reverse else rows


def _hay_text(row: CatalogRow) -> tuple[str, str]:
    """A row's ident and the text the filter's words are looked for in (without the mark of what waits)."""
    return row.ident, " ".join((row.key, row.group, row.task_type, row.status, row.title)).lower()


def group_rows(rows: list[CatalogRow], reverse: bool, first: bool = False) -> tuple[list[object], int]:
    """The table's lines: a header per task group above its rows; and the number of groups.

    Groups go in name order; with *first*, in the order their first row comes (the sort put those rows first).
    """
    groups: dict[str, list[CatalogRow]] = {}
    member_list = groups.get
    # Each row's group read in C (100,000 rows at first paint on a large store), no list made per row.
    for group, row in zip(map(ROW_GROUP, rows), rows, strict=True):
        members = member_list(group)
        if members is None:
            groups[group] = members = []
        members.append(row)
    flat: list[object] = []
    for group in list(groups) if first else sorted(groups, reverse=reverse):
        members = groups[group]
        flat.append(GroupHeader(group, len(members)))
        flat.extend(members)
    return flat, len(groups)


def first_lines(first: FirstListing, height: int) -> tuple[list[object], int]:
    """The first *height* lines :func:`group_rows` gives for every row of *first* in catalog order, and the number
    of groups, with only the rows of those lines built (a header per group, its rows in catalog order)."""
    groups = first.groups
    counts = Counter(groups)  # counted in C
    lines: list[object] = []
    for group in sorted(counts):
        if len(lines) >= height:
            break
        lines.append(GroupHeader(group, counts[group]))
        index = -1
        for _ in range(min(counts[group], height - len(lines))):
            index = groups.index(group, index + 1)  # the next member, found in C
            lines.append(first.row(index))
    return lines, len(counts)


class CatalogScreen(ViewScreen):
    """Tasks grouped by task group; Enter opens a task."""

    VIEW_NAME = View.CATALOG
    HELP = (
        "Every task of the project, grouped by task group. The latest-task pointer is starred. "
        "Phase columns come from each task's manifest, read as rows come into view. "
        "Type / to filter (words match key, group, type, status and title; the word waiting matches the tasks "
        "with a decision waiting for you, marked ◆); s cycles the sort order, one of which puts those tasks first. "
        "The line above the table says how many decisions wait; i opens them. "
        "Tasks that changed since you last opened them are marked • (u jumps to the next one, U marks all read)."
    )

    BINDINGS = [
        Binding("slash", "filter", "Filter"),
        Binding("s", "sort", "Sort"),
        Binding("S", "reverse", "Reverse sort", show=False),
        Binding("L", "latest", "Latest task"),
        Binding("u", "next_unread", "Next changed"),
        Binding("U", "mark_all_read", "Mark all read"),
        Binding("I", "insights", "Insights"),
        Binding("enter", "open_task", "Open task", show=False),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    sort: var[CatalogSort] = var(CatalogSort(), init=False)
    """The order the rows are shown in: ``s`` cycles it, ``S`` reverses it, a column title picks it."""

    filter_text: var[str] = var("", init=False)
    """The filter bar's text: every word must match a row's key, group, type, status or title."""

    def __init__(self) -> None:
        super().__init__()
        self.data: CatalogData | None = None
        #: The ``project:`` prefix every row's task key shares (shown once, in the key column's title).
        self.key_prefix = ""
        #: The filter the table's rows currently reflect (``filter_text`` may be ahead of it while typing).
        self.shown_filter = ""
        self.phases: dict[str, PhaseSummary] = {}
        self._pending: set[str] = set()
        #: Rows whose phase columns come from the validated manifest (the others show the plain listing).
        self._validated: set[str] = set()
        #: Rows given a folder breaking the slug rule after their phases were first read (see _read_placed).
        self._placed: dict[str, Path] = {}
        self._haystack: dict[str, str] = {}
        #: Set once the first rows are on screen; background reads wait for it so they do not delay that frame.
        self._rows_painted = threading.Event()
        #: Set once the phase columns of the first rows in view are listed; the validated reading waits for it.
        self._phases_listed = threading.Event()
        #: The last filter's result (data, lowercased text, matching rows in catalog order), to narrow from.
        self._matched: tuple[CatalogData, str, list[CatalogRow]] | None = None
        #: The plain listing painted first, handed to the worker that confirms it.
        self._quick: CatalogData | None = None
        #: Decisions waiting for a person, per task root (None until the inbox has been read).
        self.waiting: dict[str, int] | None = None
        #: What waits per task folder as the store index keeps it, read from now on so that a warm start shows
        #: the count on its first frame (see :class:`KeptWaiting`).
        self._kept = self.okstra.kept_waiting(self.okstra.project.root)
        self._kept_counts: dict[Path, int] | None = None
        self._said_counted = False
        #: Whether a count began once the change feed watched the store (one that began before may have missed a
        #: change the feed's first look took in as it was).
        self._counted_watched = False
        #: A count looking at every path was asked for and has not begun (see :meth:`_recount_waiting`).
        self._whole_look_due = False
        #: Numbers the reading's counts of what waits in the order they started, and the latest one shown (a
        #: count that started earlier but ends later is not shown over it).
        self._counts_started = itertools.count()
        self._count_shown = -1
        #: The number of the latest count begun (-1: none yet).
        self._count_begun = -1
        #: Rows (idents) whose task changed since the person last opened it (None until read).
        self.unread: set[str] | None = None

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        yield SummaryLine("Loading the catalog…", id="catalog-summary")
        yield Static(id="catalog-errors")
        table = VirtualTable(
            [
                # On a narrow terminal columns give way, current phase first; the key never does.
                Column("latest", " ", 1),
                Column("waiting", " ", 1),
                Column("unread", " ", 1),
                Column("key", KEY_LABEL, min_width=24),
                Column("type", "type", 18, give_way=3),
                Column("status", "status", 14, give_way=5),
                Column("phase", "current phase", 22, give_way=1),
                Column("next", "next", 8, give_way=4),
                Column("updated", "updated", 16, give_way=2),
            ],
            self._cells,
            id="catalog-table",
        )
        table.row_style = self._row_style
        yield table
        yield BindingsFooter()

    @property
    def table(self) -> VirtualTable:
        return self.query_one("#catalog-table", VirtualTable)

    @property
    def filter_input(self) -> Input | None:
        """The filter bar, once ``/`` has opened it (it is not built before it is wanted)."""
        found = self.query("#filter")
        return found.first(Input) if found else None

    def on_mount(self) -> None:
        # One watcher: whichever of the sort and the filter changes, the rows are rebuilt.
        self.watch(self, "sort", self._rebuild, init=False)
        self.watch(self, "filter_text", self._rebuild, init=False)
        self.table.focus()
        # The first rows come from the plain listing, read here so that the first frame already shows them;
        # every row is built right after that frame, then the validated reading follows in a worker.
        first = first_listing(self.okstra.fresh_project())
        if first is None:
            self._quick = None
            self._load()
            return
        self._kept_counts = self._kept.wait(KEPT_WAIT_SECONDS)
        if self._kept_counts is None:
            self._kept_counts = self._kept.then(lambda counts: call_ui(self.app, self._kept_came, counts))
        self._show_first(first)
        self._list_first_phases()
        self.call_after_refresh(self._list_all, first)

    def _show_first(self, first: FirstListing) -> None:
        """The first frame: the rows in view, with the lines below them counted but not built yet."""
        lines, groups = first_lines(first, max(self.app.size.height, 1))
        self._set_key_prefix(first.keys)
        total = len(first) + groups
        self.table.set_rows(lines + [None] * (total - len(lines)), at=1 if len(lines) > 1 else 0)
        self._show_summary(len(first), len(first), groups, first.latest)

    def _list_all(self, first: FirstListing) -> None:
        """Every row, once the first frame is shown; then the validated reading follows in a worker."""
        data = first.data()
        self._loaded(data, listed=True)
        self._quick = data
        kept, self._kept_counts = self._kept_counts, None
        if kept is not None:
            self._waiting_read({row.ident: kept[folder] for row in data.rows if (folder := row.folder()) in kept})
        # What waits is counted at once, beside the validated reading rather than after it: through a warm store
        # index it is known long before the catalog is confirmed (the reading counts again when it is done).
        self._recount_waiting(data, None)
        self._load()

    # ---------------------------------------------------------------- data

    def first_load(self) -> None:
        """Nothing more: the first frame paints from the plain listing (see ``on_mount``), which then reads."""

    def load(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="catalog-load", description="catalog-load")
    def _load(self) -> None:
        """Read the validated catalog (``_quick`` holds the plain listing already on screen, if any)."""
        quick, self._quick = self._quick, None
        with reading.recording() as reads:
            data, project = self._read_catalog(quick)
        call_ui(self.app, self.read_done, reads.paths)
        # Opening a task should not wait for its view's module: import it here, off the UI thread.
        importlib.import_module("okstra_tui.screens.task")
        if data.save_listing is not None:  # the next start paints from the cached listing
            data.save_listing()
            data.save_listing = None
        # The rows hold what they show: the validated catalog and the task list (tens of megabytes on a large
        # store) are not kept for the session.
        project.forget()
        if data is not quick:  # the rows on screen stand: they were counted as soon as they were listed
            self._read_waiting(project, data)
        self._read_unread(project, data)
        settle_collector(len(data.rows))

    def _read_catalog(self, quick: CatalogData | None) -> tuple[CatalogData, Project]:
        """The validated catalog, shown (or confirming the plain listing on screen, *quick*)."""
        project = self.okstra.project if quick is not None else self.okstra.fresh_project()
        if quick is not None:
            # The validated read imports the models: let the rows and their phase columns paint before it
            # competes for the interpreter (listing the phases of the rows in view takes ~20 ms).
            self._rows_painted.wait(timeout=2.0)
            self._phases_listed.wait(timeout=0.5)
        replacement = confirm_catalog(project, quick) if quick is not None else load_catalog(project)
        if quick is not None and replacement is None:
            # The rows on screen stand; the task folders the catalog does not name are added below them.
            placed: list[CatalogRow] = []
            extra = uncatalogued_rows(project, quick.rows, placed)
            unlisted = unlisted_folders(project)
            if extra or unlisted:
                call_ui(self.app, self._add_rows, quick, extra, unlisted)
            if placed:
                call_ui(self.app, self._read_placed, placed)
            data = quick
        else:
            assert replacement is not None
            data = replacement
            # A new reading replaces the rows in one step, folders not in the catalog included: the table
            # never shows the catalog's rows without them (nor, when the catalog is gone, no rows at all).
            data.rows.extend(uncatalogued_rows(project, data.rows))
            data.unlisted = unlisted_folders(project)
            call_ui(self.app, self._loaded, data)
        return data, project

    def _read_unread(self, project: Project, data: CatalogData) -> None:
        """Which rows changed since the person last opened them (the first launch takes everything as seen)."""
        from okstra_tui.data import seen

        root = project.root
        state = seen.load(root)
        sigs = seen.signatures(root, (row.folder() for row in data.rows))
        unread: set[str] = set()
        if state.first:
            try:
                seen.mark_seen(root, sigs, replace_all=True)
            except OkstraError as exc:
                if f"{exc}" != state.warning:  # the warning below says it already
                    call_ui(self.app, self.notify, f"{exc}", severity="warning", timeout=8)
        else:
            changed = state.unread(sigs)
            unread = {row.ident for row in data.rows if seen.task_key(root, row.folder()) in changed}
        if state.warning:
            call_ui(self.app, self.notify, state.warning, severity="warning", timeout=8)
        # The looks before this session (what the tasks' views mark as new) are kept from the first reading only.
        moments = state.moments() if self.okstra.looks.seen is None else None
        call_ui(self.app, self._unread_read, unread, moments)

    def _unread_read(self, unread: set[str], moments: SeenMoments | None = None) -> None:
        looks = self.okstra.looks
        if looks.seen is None and moments is not None:
            looks.seen = moments
        if unread == self.unread:
            return
        self.unread = unread
        self._rebuild()

    @on(StoreChanged)
    def _store_changed(self, event: StoreChanged) -> None:
        """A change anywhere in the store may start or end a decision: count again (through the store index, which
        reads again only the tasks whose files changed)."""
        data = self.data
        if data is not None:
            self._recount_waiting(data, event.paths)

    @on(StoreWatched)
    def _store_watched(self) -> None:
        """The feed watches the store from now on: a count that looked before may have missed a decision made
        before the feed's first look (no change after that look tells of it); one that began since needs nothing."""
        data = self.data
        if data is None or self._counted_watched:
            return
        if self.okstra.told_since(counted_kept(self.okstra.project.root)):
            # The feed's first look named every change since the count shown left the inbox kept in the store
            # index (each is a burst of its own, counted again): a whole count again would only find the same.
            self._counted_watched = True
            self._maybe_settled()
            return
        self._recount_waiting(data, None)

    def _recount_waiting(self, data: CatalogData, changed: frozenset[str] | None) -> None:
        """Count again in a worker (a later request replaces one that has not begun); a look at every path, once
        asked for, is never replaced by a look at the *changed* paths only."""
        if changed is None:
            self._whole_look_due = True
        self._recount_worker(data, changed)

    @work(thread=True, exclusive=True, group="catalog-waiting", description="catalog-waiting")
    def _recount_worker(self, data: CatalogData, changed: frozenset[str] | None) -> None:
        self._read_waiting(Project(self.okstra.project.root), data, changed)

    def _read_waiting(self, project: Project, data: CatalogData, changed: frozenset[str] | None = None) -> None:
        """What waits for a person, per row (the core's inbox), read after the catalog is on screen."""
        started = self._count_begun = next(self._counts_started)
        self._kept.join()  # the early count reads first: the two never read at once, and this one finds it warm
        if get_current_worker().is_cancelled:
            return  # the view (or the workbench) is gone while it waited: nothing would show the count
        if self._whole_look_due:
            self._whole_look_due, changed = False, None
        if changed is None and self.okstra.store_watched:
            self._counted_watched = True  # a whole look after the feed's first look: it misses nothing
        counts = waiting_counts(project.root, len(data.rows), changed)
        if counts is None:
            # The inbox view names what cannot be read; the catalog just shows no markers.
            call_ui(self.app, self._counted)
            return
        # Keyed by row identity, worked out here off the UI thread (a row's root is built on first use).
        rows = len(data.rows)
        by_row = {row.ident: counts[folder] for row in data.rows[:rows] if (folder := row.folder()) in counts}
        call_ui(self.app, self._count_came, started, data, rows, by_row)

    def _count_came(self, started: int, data: CatalogData, rows: int, by_row: dict[str, int]) -> None:
        """A count the reading made: shown unless one started later is shown already; one made for rows that
        are no longer those shown is made again for them."""
        if started < self._count_shown:
            return
        if self.data is not data or len(data.rows) != rows:
            if self.data is not None:
                self._recount_waiting(self.data, None)
            return
        self._count_shown = started
        self._waiting_read(by_row)
        self._maybe_settled()

    def _maybe_settled(self) -> None:
        """Say the count settled once the latest count begun is shown and a count begun once the feed watched is
        (or the feed's first look confirmed the one shown)."""
        if self._counted_watched and self._count_shown == self._count_begun >= 0:
            self._counted()

    def _kept_came(self, counts: dict[Path, int]) -> None:
        """The kept count, come after the first frame: shown unless the reading's own count is in already."""
        data = self.data
        if self.waiting is not None:
            return
        if data is None:
            self._kept_counts = counts  # the rows are not listed yet: they take it when they are
            return
        self._waiting_read({row.ident: counts[folder] for row in data.rows if (folder := row.folder()) in counts})

    def _counted(self) -> None:
        """Say once that the count of what waits is known and settled (or cannot be had): made by a whole look
        begun once the change feed watched, or confirmed by the feed's first look (see :meth:`_store_watched`).
        The app's longer readings of the whole store wait for it, so that none runs beside a count."""
        if not self._said_counted:
            self._said_counted = True
            self.post_message(WaitingCounted())

    def _waiting_read(self, counts: dict[str, int]) -> None:
        """Show *counts* (per row): the kept count, or one the reading made (the notices wait for a settled one:
        see :meth:`_counted`)."""
        previous = self.waiting or {}
        if counts == self.waiting:
            return
        self.waiting = counts
        # Only the rows whose mark changed get a new search text (the filter word "waiting").
        hay = self._haystack
        for ident in previous.keys() ^ counts.keys():
            if ident in hay:
                text = hay[ident].removesuffix(WAITING_WORD)
                hay[ident] = text + WAITING_WORD if ident in counts else text
        self._matched = None
        self._rebuild()

    def _add_rows(self, data: CatalogData, extra: list[CatalogRow], unlisted: list[LoadError]) -> None:
        if self.data is not data:
            return
        if unlisted:
            data.unlisted = unlisted
            self._show_problems(data)
        data.rows.extend(extra)
        if extra:  # the rows added get their marks too
            self._recount_waiting(data, None)
        self._set_key_prefix(list(map(ROW_KEY, data.rows)))
        self._matched = None
        self._haystack.update(self._hay(row) for row in extra)
        self._rebuild()

    @work(thread=True, exclusive=True, group="catalog-haystack", description="catalog-haystack")
    def _build_haystack(self, data: CatalogData) -> None:
        """The filter's search text of every row, built once the filter bar opens (at 100,000 tasks it is about
        15 MB that a workbench nobody filters in never holds), off the UI thread."""
        hay = dict(map(_hay_text, data.rows))
        call_ui(self.app, self._add_haystack, data, hay)

    def _add_haystack(self, data: CatalogData, hay: dict[str, str]) -> None:
        """Take *hay* (built without the marks of what waits) as the search text of *data*'s rows; a row's text
        built here meanwhile stands."""
        if self.data is not data:
            return
        for ident in (self.waiting or {}).keys() & hay.keys():
            hay[ident] += WAITING_WORD
        hay.update(self._haystack)
        self._haystack = hay

    def _set_key_prefix(self, keys: list[str]) -> None:
        """Say the project prefix every task key shares once, in the column title, instead of on every row."""
        prefix = shared_key_prefix(keys)
        if prefix != self.key_prefix:
            self.key_prefix = prefix
            self.table.set_column_label("key", f"{KEY_LABEL} ({prefix}…)" if prefix else KEY_LABEL)

    def _loaded(self, data: CatalogData, listed: bool = False) -> None:
        """Show *data*'s rows; with *listed*, they are the rows of the first frame's listing, whose key prefix and
        phase columns stand."""
        self.data = data
        self.call_after_refresh(self._rows_painted.set)
        if not listed:
            self._set_key_prefix(list(map(ROW_KEY, data.rows)))
            self.phases.clear()
            self._pending.clear()
            self._validated.clear()
            self._placed.clear()
            self.read_also("phases", None)
        self._haystack = {}
        self._show_problems(data)
        self._rebuild()

    #: Unlisted folders shown as panels; more are counted in the last one.
    UNLISTED_PANELS = 3

    def _show_problems(self, data: CatalogData) -> None:
        """A panel per broken catalog file, and per folder of tasks that could not be listed (as okstra inbox)."""
        errors = self.query_one("#catalog-errors", Static)
        panels = [ErrorPanel(e) for e in (data.error, data.latest_error) if e is not None]
        shown = data.unlisted[: self.UNLISTED_PANELS]
        panels += [ErrorPanel(e, title="Cannot list") for e in shown]
        if len(data.unlisted) > len(shown):
            panels.append(ErrorPanel(f"and {len(data.unlisted) - len(shown)} more folders", title="Cannot list"))
        errors.remove_children()
        if panels:
            errors.mount_all(panels)

    def _hay(self, row: CatalogRow) -> tuple[str, str]:
        ident, hay = _hay_text(row)
        if self.waiting and ident in self.waiting:
            hay += WAITING_WORD
        return ident, hay

    def _rebuild(self) -> None:
        """Show the rows that pass the filter, in the sort order, grouped by task group."""
        data = self.data
        if data is None:
            return
        sort = self.sort
        rows = sort.apply(self._filtered(data), self.waiting)
        flat, groups = group_rows(rows, sort.reverse and sort.key == "order", first=sort.key == "waiting")
        self.shown_filter = self.filter_text
        self.table.set_rows(flat, keep=lambda r: r.ident if isinstance(r, CatalogRow) else ("group", r.label))
        if self.table.cursor == 0 and len(flat) > 1 and isinstance(flat[0], GroupHeader):
            self.table.cursor = 1
        self._show_summary(len(rows), len(data.rows), groups, data.latest_key)

    def _show_summary(self, shown: int, total: int, groups: int, latest_key: str | None) -> None:
        sort = self.sort
        latest = latest_key or "none"
        parts = [
            (Text.assemble((f"{shown}", "bold"), f" of {total} tasks"), 0),
            (Text(f" in {groups} groups"), 2),
            (Text.assemble("   sort: ", (sort.label, "bold")), 3),
            (Text.assemble("   latest: ", ("★ " + latest.removeprefix(self.key_prefix), "bold yellow")), 0),
        ]
        counted = self.waiting.values() if self.waiting is not None else (self._kept_counts or {}).values()
        if counted:
            waiting = sum(counted)
            parts.insert(2, (Text.assemble("   ", (f"◆ {waiting} waiting for you", "bold magenta"), " (i)"), 0))
        if self.unread:
            count = len(self.unread)
            changed = f"{NEW_MARK} {count} changed since you last looked"
            parts.insert(-1, (Text.assemble("   ", (changed, "bold cyan"), " (u)"), 4))
        if self.filter_text:
            parts.append((Text(f"   filter: {self.filter_text!r}", style="italic"), 1))
        self.query_one("#catalog-summary", SummaryLine).show(parts)

    def _filtered(self, data: CatalogData) -> list[CatalogRow]:
        """The rows matching every word of the filter, in catalog order."""
        text = self.filter_text.lower()
        words = text.split()
        if not words:
            self._matched = None
            return data.rows
        hay = self._haystack
        rows = data.rows
        if len(hay) < len(rows):
            hay.update(self._hay(row) for row in rows if row.ident not in hay)
        # Typing on narrows: every row matching the longer text matched the shorter one.
        previous = self._matched
        if previous is not None and previous[0] is data and previous[1] and text.startswith(previous[1]):
            rows = previous[2]
        if len(words) == 1:
            word = words[0]
            rows = [r for r in rows if word in hay[r.ident]]
        else:
            rows = [r for r in rows if all(w in hay[r.ident] for w in words)]
        self._matched = (data, text, rows)
        return rows

    def _cells(self, row: CatalogRow) -> list[Text | str]:
        phase = self.phases.get(row.ident)
        if phase is None:
            phase_cell = Text("…", style="dim")
            next_cell = Text("…", style="dim")
        elif phase.error is not None:
            phase_cell = Text("manifest: " + phase.error, style="red")
            next_cell = Text("?", style="red")
        else:
            phase_cell = Text(f"{phase.phase or '-'}" + (f" ({phase.phase_state})" if phase.phase_state else ""))
            next_cell = Text(phase.next_status, style=NEXT_STYLES.get(phase.next_status, ""))
        return [
            Text("★", style="bold yellow") if row.latest else "",
            Text("◆", style="bold magenta") if self.waiting and row.ident in self.waiting else "",
            Text(NEW_MARK, style=NEW_STYLE) if self.unread and row.ident in self.unread else "",
            Text(row.key.removeprefix(self.key_prefix)),
            row.task_type,
            Text(row.status, style=STATUS_STYLES.get(row.status, "")),
            phase_cell,
            next_cell,
            row.updated.replace("T", " ")[:16],
        ]

    def _row_style(self, row: CatalogRow) -> Style | None:
        return Style(bold=True) if row.latest else None

    @on(VirtualTable.VisibleRangeChanged, "#catalog-table")
    def _visible(self, event: VirtualTable.VisibleRangeChanged) -> None:
        rows = self.table.rows
        start = max(event.start - READ_AHEAD, 0)
        end = min(event.end + READ_AHEAD, len(rows))
        wanted = [
            r
            for r in rows[start:end]
            if isinstance(r, CatalogRow) and r.ident not in self._validated and r.ident not in self._pending
        ]
        if wanted:
            self._pending.update(r.ident for r in wanted)
            self._read_phases(wanted)
        elif not any(isinstance(r, CatalogRow) for r in rows[start:end]):
            self._phases_listed.set()  # no task in view: nothing for the validated reading to wait for

    def _list_first_phases(self) -> None:
        """Phase columns of the first screenful from the manifests' plain listing, so the first frame has them.

        About 10 ms for a screenful; the rows scrolled into view later are listed off the UI thread.
        """
        rows = self.table.rows[: max(self.app.size.height, 1)]
        for row in rows:
            if isinstance(row, CatalogRow) and (summary := listed_phase_summary(row)) is not None:
                self.phases[row.ident] = summary

    @work(thread=True, group="catalog-phases", description="catalog-phases")
    def _read_phases(self, rows: list[CatalogRow]) -> None:
        """Phase columns: first from the manifests' plain listing (painted at once), then validated."""
        self._rows_painted.wait(timeout=2.0)
        folders = [row.folder() for row in rows]  # what each is read from: a row may be given another meanwhile
        listed = {row.ident: summary for row in rows if (summary := listed_phase_summary(row)) is not None}
        if listed:
            call_ui(self.app, self._phases_read, listed, False, rows, folders)
        self._phases_listed.set()
        with reading.recording() as reads:
            found = {row.ident: phase_summary(row) for row in rows}
        call_ui(self.app, self._phases_read, found, True, rows, folders)
        call_ui(self.app, self.read_also, "phases", reads.paths)

    def _read_placed(self, rows: list[CatalogRow]) -> None:
        """Rows given their task's folder once the task folders were listed (one breaking the slug rule): their
        phase columns, read from the slug folder before, are read again, and what waits is counted again (a count
        made before, the kept one at a warm start say, matched their decisions to no row)."""
        if self.data is not None:
            self._recount_waiting(self.data, None)
        idents = {row.ident for row in rows}
        self._placed.update((row.ident, row.folder()) for row in rows)
        for ident in idents:
            self.phases.pop(ident, None)
        self._validated.difference_update(idents)
        self._pending.update(idents)
        self._read_phases(rows)

    def _phases_read(
        self, found: dict[str, PhaseSummary], validated: bool, rows: list[CatalogRow], folders: list[Path]
    ) -> None:
        # A row given its task's folder after this reading began (see _read_placed) is read again from there.
        placed = self._placed
        if placed:
            for row, folder in zip(rows, folders, strict=True):
                if placed.get(row.ident, folder) != folder:
                    found.pop(row.ident, None)
        changed = any(self.phases.get(ident) != summary for ident, summary in found.items())
        self.phases.update(found)
        if validated:
            self._pending.difference_update(found)
            self._validated.update(found)
        if changed:
            self.table.invalidate()

    # ------------------------------------------------------------- actions

    async def action_filter(self) -> None:
        bar = self.filter_input
        if bar is None:
            bar = Input(
                value=self.filter_text,
                id="filter",
                placeholder="filter: words match key, group, type, status, title  (Esc clears)",
                compact=True,  # one line: the rows keep the room, even on a 24-line terminal
            )
            await self.mount(bar, before=self.query_one("#catalog-summary"))
        bar.display = True
        bar.focus()
        data = self.data
        if data is not None and len(self._haystack) < len(data.rows):
            self._build_haystack(data)

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.table.focus()

    def action_clear_filter(self) -> None:
        """Hide the filter bar; without one, go back (to Home, when the catalog was opened from it)."""
        bar = self.filter_input
        if bar is None or (not bar.display and not bar.value):
            self.app.call_later(self.app.run_action, "app.back")
            return
        bar.value = ""
        bar.display = False
        self.table.focus()

    def action_sort(self) -> None:
        self.sort = self.sort.next()

    def action_reverse(self) -> None:
        self.sort = self.sort.reversed()

    @on(VirtualTable.HeaderClicked, "#catalog-table")
    def _header_clicked(self, event: VirtualTable.HeaderClicked) -> None:
        by_column = {"key": 1, "type": 2, "status": 3, "updated": 4}
        index = by_column.get(event.column.key)
        if index is not None:
            self.sort = self.sort.by(index)

    def action_insights(self) -> None:
        self.open_view(Location(View.INSIGHTS))

    def action_latest(self) -> None:
        for i, row in enumerate(self.table.rows):
            if isinstance(row, CatalogRow) and row.latest:
                self.table.cursor = i
                return
        if self.data is None:
            return  # only the first frame's rows are built yet
        self.notify("No latest-task pointer in this project.", severity="warning")

    def action_open_task(self) -> None:
        row = self.table.current_row
        if isinstance(row, CatalogRow):
            self._open(row)

    @on(VirtualTable.Selected, "#catalog-table")
    def _selected(self, event: VirtualTable.Selected) -> None:
        if isinstance(event.row, CatalogRow):
            self._open(event.row)

    def _open(self, row: CatalogRow) -> None:
        """Open *row*'s task; it counts as read from now on (what changed inside it is marked there)."""
        from okstra_tui.data import seen

        changed = self.unread is not None and row.ident in self.unread
        self.okstra.looks.visit(seen.task_key(self.okstra.project.root, row.root), changed)
        if self.unread and changed:
            self.unread.discard(row.ident)
            self._rebuild()
        self._mark_read(self.okstra.project.root, [row])
        self.open_view(Location(View.TASK, row.root))

    @work(thread=True, group="catalog-seen", description="catalog-seen")
    def _mark_read(self, root: Path, rows: list[CatalogRow]) -> None:
        """Mark *rows*, tasks of the project at *root*, read (*root* taken when they were picked: the workbench
        may have opened another project by the time this runs)."""
        from okstra_tui.data import seen

        try:
            seen.mark_seen(root, seen.signatures(root, (row.folder() for row in rows)))
        except OkstraError as exc:
            call_ui(self.app, self.notify, f"{exc}", severity="warning", timeout=8)

    def action_next_unread(self) -> None:
        """Move to the next task that changed since it was last opened (after the cursor, wrapping)."""
        rows = self.table.rows
        if not self.unread:
            self.notify("Nothing changed since you last looked.", timeout=3)
            return
        count = len(rows)
        for step in range(1, count + 1):
            i = (self.table.cursor + step) % count
            row = rows[i]
            if isinstance(row, CatalogRow) and row.ident in self.unread:
                self.table.cursor = i
                return
        self.notify("The changed tasks are hidden by the filter.", timeout=3)

    def action_mark_all_read(self) -> None:
        """Take every task as seen now."""
        data = self.data
        if data is None:
            return
        self.unread = set()
        self._rebuild()
        self._mark_read(self.okstra.project.root, list(data.rows))

    def current_path(self) -> Path | None:
        row = self.table.current_row
        return row.root if isinstance(row, CatalogRow) else self.okstra.project.root
