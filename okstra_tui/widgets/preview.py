"""The preview pane: an artifact shown the way its format reads best.

JSON is pretty-printed and highlighted, Markdown rendered, a ``.log``
transcript shown as its tail, a team-state ledger as tables. Reading happens
in a worker; a file that cannot be read shows an :class:`ErrorPanel`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.syntax import Syntax
from rich.text import Text
from textual import events, on, work
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import DataTable, Static

from okstra_core import reading
from okstra_core.models.run import TeamState
from okstra_core.search.query import Query
from okstra_core.text import visible
from okstra_core.watch import Signature

from ..data.preview import (
    LOG_REPORT,
    PREVIEW_ROWS,
    LoadedPreview,
    PreviewTarget,
    load_preview,
)
from ..data.runs import compute_log_report
from ..ui_thread import call_ui
from .error_panel import ErrorPanel
from .log_report import log_report_widgets

if TYPE_CHECKING:
    from okstra_core.render.log_report import LogReport
from .list_table import ListTable
from .shown import cut
from .store_markdown import StoreMarkdown
from .text_lines import Mark, TextLines

#: Up to this many characters text is laid out whole (a ``Static``, words kept together when it wraps); longer
#: text is drawn a row at a time (:class:`TextLines`), so that its cost does not grow with its length.
LAZY_FROM = 20_000


def _rows_note(label: str, total: int) -> Static:
    shown = f"first {PREVIEW_ROWS:,} of {total:,}" if total > PREVIEW_ROWS else f"{total}"
    return Static(f"{label} ({shown})", classes="preview-heading")


def syntax(text: str, lexer: str) -> Syntax:
    return Syntax(text, lexer, theme="ansi_dark", line_numbers=False, word_wrap=True, background_color="default")


class ArtifactPreview(VerticalScroll):
    """Shows one :class:`PreviewTarget`; ``show`` loads it in the background."""

    DEFAULT_CSS = """
    ArtifactPreview { padding: 0 1; }
    ArtifactPreview > .preview-title { text-style: bold; color: $text-accent; height: auto; }
    ArtifactPreview > .preview-note { color: $text-warning; height: auto; }
    ArtifactPreview > .preview-heading { text-style: bold; margin-top: 1; height: auto; }
    ArtifactPreview DataTable { height: auto; max-height: 16; margin-bottom: 1; }
    ArtifactPreview Markdown { margin: 0; padding: 0; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.target: PreviewTarget | None = None
        self.root: Path | None = None
        #: A search whose matches are highlighted (the text is then shown plain, never rendered).
        self.find: Query | None = None
        #: Text (a finding id) after whose first line the first match shown is looked for.
        self.anchor_text: str | None = None
        #: What the preview shown read (each path with its metadata then): the view reloads it when that changes.
        self.depends_on: Signature = {}
        #: How many loads have been shown.
        self.loads = 0

    def on_mount(self) -> None:
        self.mount(Static("Select an artifact to preview it.", classes="preview-note"))

    def show(
        self,
        target: PreviewTarget,
        root: Path,
        *,
        keep_scroll: bool = False,
        find: Query | None = None,
        anchor: str | None = None,
    ) -> None:
        """Load *target* (off the UI thread) and replace the pane's content; with *find*, at its first match
        (the first after the line holding *anchor*, when there is one)."""
        self.target = target
        self.root = root
        self.find = find
        self.anchor_text = anchor
        self._load(target, root, keep_scroll)

    def reload(self) -> None:
        if self.target is not None and self.root is not None:
            self._load(self.target, self.root, True)

    def _depends(self, read: Signature) -> None:
        """The preview now shows what was read as *read*: its view reloads it when that changes."""
        self.depends_on = read
        self.loads += 1
        # The app's feed looks at what the preview read where no store watcher sees it change (a file read
        # through a symlink; every file, when the store is polled); its view verifies it at each change.
        follow = getattr(self.app, "follow_reads", None)
        if follow is not None:
            follow(self, read)

    @on(events.Unmount)
    def _unfollow(self) -> None:
        drop = getattr(self.app, "drop_reads", None)
        if drop is not None:
            drop(self)

    @work(thread=True, exclusive=True, group="preview", description="preview")
    def _load(self, target: PreviewTarget, root: Path, keep_scroll: bool) -> None:
        if target.kind == LOG_REPORT:
            with reading.recording() as reads:
                report = compute_log_report(target.path)
            call_ui(self.app, self._render_log_report, target, report, reads.paths)
            return
        with reading.recording() as reads:
            loaded = load_preview(target, root)
        call_ui(self.app, self._render_loaded, loaded, keep_scroll, reads.paths)

    async def _render_log_report(self, target: PreviewTarget, report: LogReport | str, read: Signature) -> None:
        """A run dir's log report: its transcripts' and prompts' figures, reloaded when one of them changes."""
        if target is not self.target:
            return
        self._depends(read)
        with self.app.batch_update():
            await self.remove_children()
            await self.mount_all(log_report_widgets(target.label, report))

    async def _render_loaded(self, loaded: LoadedPreview, keep_scroll: bool, read: Signature) -> None:
        if loaded.target is not self.target:
            return
        self._depends(read)
        y = self.scroll_y
        shown = self._matches()
        current = shown.current if shown is not None else None
        with self.app.batch_update():
            await self.remove_children()
            await self.mount_all(self._widgets_for(loaded))
        matches = self._matches()
        if matches is not None and matches.marks:
            if keep_scroll and current is not None and current < len(matches.marks):
                matches.set_current(current)
            else:
                matches.set_current(self._first_after_anchor(matches))
            if not keep_scroll:
                self.call_after_refresh(self._scroll_to_current)
        if keep_scroll:
            self.scroll_to(y=y, animate=False)
        elif matches is None or not matches.marks:
            self.scroll_home(animate=False)
        self._say_matches()

    # ---------------------------------------------------------- search matches

    def _matches(self) -> TextLines | None:
        """The text holding the search's matches, when a search is shown."""
        if self.find is None:
            return None
        found = self.query(TextLines)
        return found.first() if found else None

    def _first_after_anchor(self, matches: TextLines) -> int:
        """The first match at or after the first line holding the anchor (the first match when none does)."""
        if self.anchor_text:
            for i, line in enumerate(matches.lines):
                if self.anchor_text in line:
                    return next((k for k, mark in enumerate(matches.marks) if mark[0] >= i), 0)
        return 0

    def step_match(self, step: int) -> None:
        """Move to the next (*step* 1) or previous (-1) match, wrapping around."""
        matches = self._matches()
        if matches is None or not matches.marks:
            return
        current = -1 if matches.current is None else matches.current
        matches.set_current((current + step) % len(matches.marks))
        self._scroll_to_current()
        self._say_matches()

    def _scroll_to_current(self) -> None:
        matches = self._matches()
        if matches is None or matches.current is None:
            return
        row = matches.virtual_region.y + matches.row_of(matches.current)
        self.scroll_to(y=max(row - 3, 0), animate=False)

    def _say_matches(self) -> None:
        if self.find is None:
            self.border_subtitle = None
            return
        matches = self._matches()
        if matches is None or not matches.marks:
            self.border_subtitle = "no match in the text shown"
        else:
            self.border_subtitle = f"match {(matches.current or 0) + 1} of {len(matches.marks)} · n / N"

    def _widgets_for(self, loaded: LoadedPreview) -> list[Widget]:
        target = loaded.target
        out: list[Widget] = [Static(Text(visible(target.label)), classes="preview-title")]
        if loaded.error is not None:
            out.append(ErrorPanel(loaded.error))
            return out
        for problem in loaded.problems:
            out.append(ErrorPanel(problem, title="Does not validate" if target.fmt == "json" else "Note"))
        if isinstance(loaded.model, TeamState):
            out.extend(team_state_widgets(loaded.model))
        if loaded.header is not None:
            out.append(Static(syntax(loaded.header, "yaml")))
        if loaded.cut is not None:
            out.append(Static(Text(loaded.cut), classes="preview-note"))
        out.append(_body(target.fmt, loaded, self.find))
        return out


def _marks(text: str, find: Query) -> list[Mark]:
    """Where *find* matches in each line of *text* (tabs expanded, as :class:`TextLines` shows them)."""
    marks: list[Mark] = []
    for i, line in enumerate(text.split("\n")):
        marks.extend((i, start, end) for start, end in find.match_spans(line.expandtabs(4)))
    return marks


def _body(fmt: str, loaded: LoadedPreview, find: Query | None = None) -> Widget:
    """The file's text (already cut to the preview's size and made visible), the way its format reads best;
    with *find*, as plain lines with the search's matches marked."""
    text = loaded.pretty if loaded.pretty is not None else (loaded.text or "")
    if find is not None:
        lexer = {"json": "json", "jsonl": "json", "sh": "bash"}.get(fmt)
        return TextLines(text, lexer, marks=_marks(text, find))
    if fmt == "md" and loaded.render_markdown:
        return StoreMarkdown(text)  # already made visible; visible() leaves its stand-ins alone
    lexer = {"json": "json", "jsonl": "json", "md": "markdown", "sh": "bash", "html": "html"}.get(fmt)
    if fmt == "html":
        text = text[:20_000]
    if fmt == "status":
        return Static(Text(text.strip() or "(empty)", style="bold"))
    if len(text) > LAZY_FROM:
        return TextLines(text, lexer)
    return Static(syntax(text, lexer)) if lexer is not None else Static(Text(text))


def _short(value: str | None, keep: int = 12) -> Text:
    if not value:
        return Text("-")
    return cut(value, keep + 1)


def _cell(value: object) -> Text:
    """A table cell of store text: control characters visible, never read as markup."""
    return Text(visible(str(value)))


def team_state_widgets(state: TeamState) -> list[Widget]:
    """Dispatch rows and result links as tables; rows sharing a dispatch and links marked."""
    linked = {link.dispatch_id: link.result_path for link in state.agent_result_links}
    widgets: list[Widget] = []
    widgets.append(_rows_note("Worker dispatches", len(state.worker_dispatches)))
    table: DataTable[Text | str] = ListTable(zebra_stripes=True, cursor_type="row")
    table.add_columns("#", "dispatch", "worker", "invocation", "session", "pane", "attempt", "status", "note")
    for i, row in enumerate(state.worker_dispatches[:PREVIEW_ROWS], start=1):
        extra = row.model_extra or {}
        notes = []
        if row.dispatch_id is None:
            notes.append("no dispatchId (stacks)")
        replaced = extra.get("replaced") or extra.get("replacedAt") or extra.get("replaces")
        if replaced:
            notes.append(f"replaced {replaced}" if isinstance(replaced, str) else "replaced in place")
        if row.dispatch_id and row.dispatch_id in linked:
            notes.append(f"→ {linked[row.dispatch_id]}")
        table.add_row(
            str(i),
            _cell(row.dispatch_id or "—"),
            _cell(row.worker_id),
            _short(row.invocation_id),
            _short(row.session_id),
            _cell(row.pane_id or "—"),
            _cell(row.attempt or "—"),
            _cell(row.status),
            _cell("; ".join(notes)),
        )
    widgets.append(table)
    widgets.append(_rows_note("Agent dispatches", len(state.agent_dispatches)))
    agents: DataTable[Text | str] = ListTable(zebra_stripes=True, cursor_type="row")
    agents.add_columns("#", "dispatch", "worker", "invocation", "attempt", "status", "result link")
    for i, a in enumerate(state.agent_dispatches[:PREVIEW_ROWS], start=1):
        agents.add_row(
            str(i),
            _cell(a.dispatch_id),
            _cell(a.worker_id),
            _short(a.invocation_id),
            _cell(a.attempt or "—"),
            _cell(a.status or "—"),
            _cell(linked.get(a.dispatch_id, "—") if a.dispatch_id is not None else "—"),
        )
    widgets.append(agents)
    widgets.append(_rows_note("Result links", len(state.agent_result_links)))
    links: DataTable[Text | str] = ListTable(zebra_stripes=True, cursor_type="row")
    links.add_columns("dispatch", "accepted result", "accepted at")
    for link in state.agent_result_links[:PREVIEW_ROWS]:
        links.add_row(_cell(link.dispatch_id), _cell(link.result_path), _cell(link.accepted_at))
    widgets.append(links)
    gate = state.spec_link_gate or "—"
    widgets.append(
        Static(
            Text.assemble(
                ("spec-link gate: ", "bold"),
                visible(gate),
                ("   prompt delivery verified: ", "bold"),
                str(state.prompt_delivery_verified).lower(),
            )
        )
    )
    widgets.append(Static("Raw ledger", classes="preview-heading"))
    return widgets
