"""The write log: every store write this workbench made, with the ``okstra`` command lines that make it.

Read from the user's state folder (:mod:`okstra_core.write_log`); the
workbench's wizards append to it. Newest first; the selected entry's files
and command lines are shown below the list. In the shown lines the project
root is ``.`` and the log's own folder is ``…`` (the lines as run from the
project root); ``y`` copies them whole, with every path spelled out.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from okstra_core import layout, write_log
from okstra_core.errors import OkstraError
from okstra_core.text import counted, visible

from ..data.catalog import shared_key_prefix
from ..navigation import View
from ..widgets.footer import BindingsFooter
from ..widgets.summary_line import SummaryLine
from ..widgets.virtual_table import Column, VirtualTable
from .base import ViewScreen
from .checks import location_for


def command_text(argv: tuple[str, ...], project: str, folder: str) -> str:
    """*argv* as a shell line, shortened for the screen: the project root as ``.``, the log folder as ``…``."""
    shown = ("." if word == project else shlex.quote(word).replace(folder, "…", 1) for word in argv)
    return visible(" ".join(shown))


def full_text(entry: write_log.Entry) -> str:
    """The entry's command lines as a shell would run them (one per line): what ``y`` copies."""
    return "\n".join(shlex.join(argv) for argv in entry.commands)


class WriteLogScreen(ViewScreen):
    """The workbench's writes, newest first, each with its files and command lines."""

    VIEW_NAME = View.WRITE_LOG
    HELP = (
        "Every write this workbench made to the store (the wizards' answers, choices, confirmations, "
        "attachments and planning prepares), newest first, with the files written and the okstra command "
        "lines that make the same write: learn them, or script them. Each line carries --at, the moment "
        "written, so it repeats the write byte for byte on the store as it was. The log lives in your state "
        "folder, never in .okstra/. y copies the selected entry's command lines; Enter opens its first file; "
        "R reads the log again. okstra verbs run from a shell are not logged."
    )

    BINDINGS = [
        Binding("y", "copy_commands", "Copy commands"),
        Binding("R", "reread", "Re-read"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.entries: write_log.Log | None = None
        self.key_prefix = ""

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        yield SummaryLine("Reading the write log…", id="wlog-summary")
        table = VirtualTable(
            [
                Column("when", "when (UTC)", 19),
                Column("what", "what", min_width=14),
                Column("task", "task", min_width=16),
                Column("files", "files", 5),
            ],
            self._cells,
            id="wlog-table",
            classes="pane",
        )
        table.border_title = "Write log"
        yield table
        with VerticalScroll(id="wlog-detail", classes="pane") as detail:
            detail.border_title = "Files written and the command lines that make them"
            yield Static("", id="wlog-lines")
        yield BindingsFooter()

    def crumbs(self) -> list[str]:
        return ["Write log"]

    @property
    def table(self) -> VirtualTable:
        return self.query_one("#wlog-table", VirtualTable)

    def on_mount(self) -> None:
        self.table.focus()

    def read(self) -> write_log.Log | str:
        try:
            return write_log.read_log(self.okstra.project.root)
        except OkstraError as exc:
            return exc.line(self.okstra.project.root)

    def show(self, log: write_log.Log | str) -> None:
        if isinstance(log, str):
            self.query_one("#wlog-summary", SummaryLine).show([(Text(visible(log), style="red"), 0)])
            return
        self.entries = log
        entries = log.entries
        self.key_prefix = shared_key_prefix(e.task for e in entries)
        self.table.set_rows(list(entries), keep=lambda e: (e.at, e.what, e.task))
        count = len(entries)
        parts = [(Text.assemble((f"{count}", "bold"), f" write{'s' if count != 1 else ''} logged"), 0)]
        if log.skipped:
            parts.append((Text(f"   {counted(log.skipped, 'unreadable line')} skipped", style="yellow"), 1))
        if not entries:
            parts.append((Text("   the wizards' writes appear here (i: the decisions waiting)", style="italic"), 2))
        else:
            parts.append((Text("   shown from the project root; y copies the full lines", style="dim"), 3))
        self.query_one("#wlog-summary", SummaryLine).show(parts)
        self._show_detail(self.table.current_row)

    def _cells(self, entry: write_log.Entry) -> list[Text | str]:
        return [
            entry.at[:19].replace("T", " "),
            Text(visible(entry.what), style="bold"),
            Text(visible(entry.task.removeprefix(self.key_prefix))),
            str(len(entry.files)),
        ]

    @on(VirtualTable.Highlighted, "#wlog-table")
    def _highlighted(self, message: VirtualTable.Highlighted) -> None:
        self._show_detail(message.row)

    def _show_detail(self, entry: object) -> None:
        lines = self.query_one("#wlog-lines", Static)
        if not isinstance(entry, write_log.Entry):
            lines.update("")
            return
        project = str(self.okstra.project.root)
        folder = str(write_log.log_dir(self.okstra.project.root))
        text = Text()
        text.append(f"{entry.at}  ", style="dim")
        text.append(visible(entry.what), style="bold")
        text.append(f"  {visible(entry.task)}\n")
        for name in entry.files:
            text.append("  wrote ", style="green")
            text.append(visible(name) + "\n")
        for argv in entry.commands:
            text.append("  $ ", style="dim")
            text.append(command_text(argv, project, folder) + "\n", style="cyan")
        lines.update(text)

    def action_copy_commands(self) -> None:
        entry = self.table.current_row
        if not isinstance(entry, write_log.Entry):
            self.notify("No write selected.", timeout=3)
            return
        self.app.copy_to_clipboard(full_text(entry))
        count = len(entry.commands)
        self.notify(f"Copied {count} command line{'s' if count != 1 else ''}.", timeout=3)

    def action_reread(self) -> None:
        self.load()

    @on(VirtualTable.Selected, "#wlog-table")
    def _selected(self, message: VirtualTable.Selected) -> None:
        entry = message.row
        if isinstance(entry, write_log.Entry) and entry.files:
            root = self.okstra.project.root
            store = os.path.realpath(layout.okstra_dir(root))
            if not os.path.realpath(root / entry.files[0]).startswith(store + os.sep):
                # The log is read, not trusted: a file it names outside the store is never opened.
                self.notify(visible(f"{entry.files[0]} is not in the store; not opened."), severity="warning")
                return
            if not (root / entry.files[0]).exists():
                self.notify(visible(f"{entry.files[0]} is no longer there."), severity="warning", timeout=4)
                return
            self.open_view(location_for(root, entry.files[0]))

    def current_path(self) -> Path | None:
        entry = self.table.current_row
        if isinstance(entry, write_log.Entry) and entry.files:
            return self.okstra.project.root / entry.files[0]
        return None
