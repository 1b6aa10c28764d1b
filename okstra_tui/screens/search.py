"""Search: what the agents wrote, across the whole store, as you type.

The query is the one ``okstra search`` reads (``okstra_core.search.query``);
the index is the same file in the user's cache folder. Each keystroke starts
a search in an exclusive thread worker (the index is brought up to date
first, when the last look is more than :data:`FRESH_SECONDS` old); a result
that arrives after a newer query was typed is dropped. Hits are grouped by
task, the task of the best hit first; Enter opens the file's preview scrolled
to the first match, where ``n``/``N`` step through the matches.

Any file written in the store may match: a change anywhere in it makes the
index be looked at again before the next search, and the hits shown are
searched again (:attr:`ViewScreen.WHOLE_STORE`), so they are never older
than the store.
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Self

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from okstra_core import layout
from okstra_core.search.extract import INDEX_CHARS
from okstra_core.search.index import Hit, Results, SearchError, SearchIndex
from okstra_core.search.query import QueryError, parse
from okstra_core.text import visible
from okstra_core.watch import Signature, signature

from ..navigation import Location, View
from ..ui_thread import call_ui
from ..widgets.footer import BindingsFooter
from ..widgets.list_table import ListOptions
from .base import ViewScreen

#: Hits shown at most (the count says how many there are).
SHOWN_HITS = 200
#: An index looked at this recently is searched without looking at the store again (a look costs one stat per
#: indexed file: typing must not pay for it at every key).
FRESH_SECONDS = 10.0

PLACEHOLDER = 'words, "a phrase", prefix*, OR, NOT, kind: task: type: since:'
HINT = (
    "Type to search every report, finding, question, prompt, brief and note of the store. "
    'Words must all match; "exact phrase"; retr* for a prefix; a OR b; NOT word or -word; filters kind:finding, '
    "task:payments:*, type:analysis, since:7d (kind:log adds the agents' transcripts)."
)


def hit_prompt(hit: Hit, width: int) -> Text:
    """One hit as two lines of at most *width* cells: what it is and where, then the snippet, matches marked."""
    head = Text()
    head.append(f"  {hit.kind}", style="bold cyan")
    if hit.label:
        head.append(f" {visible(hit.label)}", style="bold")
    head.append(f"  {visible(hit.path.split('/', 4)[-1])}", style="dim")
    if hit.capped:
        head.append(f"  (first {INDEX_CHARS:,} characters indexed)", style="dim italic")
    snippet = Text("    ")
    for piece, matched in hit.snippet_parts():
        # A line break inside the snippet reads as a space on the one line it has.
        shown = visible(re.sub(r"\s+", " ", piece))
        snippet.append(shown, style="bold reverse" if matched else "")
    for line in (head, snippet):
        line.truncate(max(width, 20), overflow="ellipsis")
    return Text("\n").join([head, snippet])


def grouped(hits: list[Hit]) -> list[tuple[str, list[Hit]]]:
    """Hits grouped by task, the group of the best hit first, each group's hits best first."""
    groups: dict[str, list[Hit]] = {}
    for hit in hits:
        groups.setdefault(hit.task, []).append(hit)
    return list(groups.items())


class QueryKeys(Screen[None]):
    """What a search view's query box and results share: focus the query, move to the results."""

    BINDINGS = [
        Binding("down", "results", "Results", show=False),
        Binding("slash", "focus_query", "Edit query"),
    ]

    def focus_query(self) -> None:
        self.query_one("#search-query", Input).focus()

    def action_focus_query(self) -> None:
        self.focus_query()

    def action_results(self) -> None:
        results = self.query_one("#search-results", OptionList)
        if results.option_count:
            results.focus()
            if results.highlighted is None:
                results.action_first()


def _same_hit(a: Hit, b: Hit) -> bool:
    """Whether *a* and *b* are the same section of the same file (what it says may have changed)."""
    return (a.path, a.kind, a.label) == (b.path, b.kind, b.label)


class SearchScreen(QueryKeys, ViewScreen):
    """A query field over the hits, grouped by task."""

    VIEW_NAME = View.SEARCH
    WHOLE_STORE = True
    HELP = (
        "Search everything the agents wrote: reports (titles, summaries, findings, options, questions, design "
        "items), reading copies' sources, sidecars, design-prep requests and inputs, prompts, task briefs, "
        "instruction-set files, notes and team-state dispatches. Results appear as you type, grouped by task. "
        "Enter opens the file scrolled to the match; n / N step through its matches there. The index lives in "
        "your cache folder (never in the store) and is brought up to date as you search."
    )

    def __init__(self, query: str = "") -> None:
        super().__init__()
        self.initial = query
        self.hits: list[Hit] = []
        #: The query typed last; a result for any other is stale and dropped.
        self.typed = query
        self._index: SearchIndex | None = None
        self._lock = threading.Lock()
        self._looked_at = 0.0
        #: Set when the view is gone: a worker still holding the index closes it as it lets go.
        self._closed = False

    @classmethod
    def from_location(cls, location: Location) -> Self:
        return cls(location.query or "")

    @property
    def location(self) -> Location:
        return Location(View.SEARCH, query=self.typed or None)

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        yield Input(value=self.initial, placeholder=PLACEHOLDER, id="search-query")
        yield Static(Text(HINT, style="dim"), id="search-status")
        results = ListOptions(id="search-results", classes="pane")
        results.border_title = "Results"
        yield results
        yield BindingsFooter()

    def on_mount(self) -> None:
        self.focus_query()
        self._prepare()
        if self.initial.strip():
            self._search(self.initial)

    def first_load(self) -> None:
        """Nothing is read before a query is typed (the index is brought up to date as the view opens)."""

    def load(self) -> None:
        """Search again for the query shown, the index brought up to date first (the store changed)."""
        self._looked_at = 0.0
        if self.typed.strip():
            self._search(self.typed)

    def paths_changed(self, paths: frozenset[str] | None) -> None:
        if self.store_moved(paths):
            self._looked_at = 0.0  # the next search looks at the store first, whenever it comes

    def on_unmount(self) -> None:
        # Never wait here for a worker that holds the index (a first build takes minutes on a large store):
        # the worker closes it when it lets go.
        self._closed = True
        if self._lock.acquire(blocking=False):
            try:
                self._close_index()
            finally:
                self._lock.release()

    def _close_index(self) -> None:
        """Close the index (the lock held)."""
        if self._index is not None:
            self._index.close()
            self._index = None

    @on(Input.Changed, "#search-query")
    def _typed(self, event: Input.Changed) -> None:
        self.typed = event.value
        if not event.value.strip():
            self._show_status(Text(HINT, style="dim"))
            self._show_hits([])
            return
        try:
            parse(event.value)
        except QueryError as exc:
            self._show_status(Text(str(exc), style="bold red"))
            return
        self._search(event.value)

    @on(Input.Submitted, "#search-query")
    def _submitted(self) -> None:
        self.action_results()

    # ------------------------------------------------------------ the worker

    @work(thread=True, exclusive=True, group="search-index", description="search-index")
    def _prepare(self) -> None:
        """Bring the index up to date as the view opens (built with a progress line on first use)."""
        try:
            with self._lock:
                index = self._open()
                index.update(self._progress)
                self._looked_at = time.monotonic()
                notices = list(index.notices)
                index.notices.clear()
                if self._closed:
                    self._close_index()
        except SearchError as exc:
            call_ui(self.app, self._failed, self.typed, str(exc))
            return
        call_ui(self.app, self._prepared, notices)

    def _prepared(self, notices: list[str]) -> None:
        for notice in notices:
            self.app.notify(notice, severity="warning", timeout=8)
        if not self.typed.strip():
            self._show_status(Text(HINT, style="dim"))

    @work(thread=True, exclusive=True, group="search", description="search")
    def _search(self, text: str) -> None:
        started = time.monotonic()
        try:
            query = parse(text)
            with self._lock:
                index = self._open()
                if query.wants_logs and not index.include_logs:
                    index.include_logs = True  # kind:log: the transcripts are indexed from now on
                    self._looked_at = 0.0
                if time.monotonic() - self._looked_at > FRESH_SECONDS:
                    index.update()
                    self._looked_at = time.monotonic()
                results = index.search(query, limit=SHOWN_HITS, logs=query.wants_logs)
                root = index.root
                shown = signature([root / hit.path for hit in results.hits])
                notices = list(index.notices)
                index.notices.clear()
                if self._closed:
                    self._close_index()
        except (QueryError, SearchError) as exc:
            call_ui(self.app, self._failed, text, str(exc))
            return
        call_ui(self.app, self._found, text, results, notices, shown, time.monotonic() - started)

    def _open(self) -> SearchIndex:
        if self._index is None:
            index = SearchIndex(self.okstra.project.root, layout.okstra_cache_dir())
            index.open()
            self._index = index
        return self._index

    def _progress(self, done: int, total: int) -> None:
        call_ui(self.app, self._show_status, Text(f"Indexing the store: {done:,} of {total:,} files…", style="dim"))

    def _failed(self, text: str, message: str) -> None:
        if text == self.typed:
            self._show_status(Text(message, style="bold red"))

    def _found(self, text: str, results: Results, notices: list[str], shown: Signature, seconds: float) -> None:
        for notice in notices:
            self.app.notify(notice, severity="warning", timeout=8)
        self.read_took(seconds)
        if text != self.typed:
            return  # a newer query was typed meanwhile: its own result is coming
        # The hits' files are followed too: where the store is polled, they are what is polled.
        self.read_done(shown)
        self._show_hits(results.hits)
        groups = len(grouped(results.hits))
        count = results.total
        if not count:
            summary = "No matches."
        else:
            summary = f"{count:,} hit{'s' if count != 1 else ''}"
            if count > len(results.hits):
                summary += f" (the best {len(results.hits):,} shown)"
            summary += f" in {groups:,} task{'s' if groups != 1 else ''}. Enter opens a hit at its match."
        self._show_status(Text(summary))

    # --------------------------------------------------------------- showing

    def _show_status(self, text: Text) -> None:
        self.query_one("#search-status", Static).update(text)

    def _show_hits(self, hits: list[Hit]) -> None:
        results = self.query_one("#search-results", OptionList)
        # The hit under the cursor stays under it when the hits are searched again (the store changed).
        was = self._highlighted_hit()
        self.hits = hits
        options: list[Option | None] = []
        index = {id(h): i for i, h in enumerate(hits)}
        width = self.size.width - 6  # the list's border, padding and scroll bar
        for task, group in grouped(hits):
            heading = Text(visible(task), style="bold")
            heading.append(f"  {len(group)} hit{'s' if len(group) != 1 else ''}", style="dim")
            options.append(Option(heading, disabled=True))
            options.extend(Option(hit_prompt(hit, width), id=str(index[id(hit)])) for hit in group)
        results.clear_options()
        results.add_options(options)
        results.border_title = f"Results ({len(hits):,})" if hits else "Results"
        if was is not None:
            again = next((str(i) for i, hit in enumerate(hits) if _same_hit(hit, was)), None)
            if again is not None:
                results.highlighted = results.get_option_index(again)

    def _highlighted_hit(self) -> Hit | None:
        results = self.query_one("#search-results", OptionList)
        if results.highlighted is None or results.highlighted >= results.option_count:
            return None
        option = results.get_option_at_index(results.highlighted)
        return None if option.id is None else self.hits[int(option.id)]

    @on(OptionList.OptionSelected, "#search-results")
    def _open_hit(self, event: OptionList.OptionSelected) -> None:
        if event.option_id is None:
            return
        hit = self.hits[int(event.option_id)]
        root = self.okstra.project.root
        task_root = layout.tasks_dir(root) / hit.task_folder
        self.open_view(Location(View.FILE, task_root, root / hit.path, query=self.typed, anchor=hit.label))

    def current_path(self) -> Path | None:
        hit = self._highlighted_hit()
        return None if hit is None else self.okstra.project.root / hit.path
