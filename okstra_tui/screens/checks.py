"""Checks: the contract checker run in a worker, findings grouped by file, Enter jumps to the file.

Any file written in the store may break the contract or mend it: a change anywhere in the store runs the check
again (:attr:`ViewScreen.WHOLE_STORE`; the check cache re-reads only the tasks that changed), and the findings
are shown again where the cursor was.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import ProgressBar, Static, Tree

from okstra_core import layout
from okstra_core.text import counted, visible

from ..navigation import Location, View
from ..ui_thread import call_ui
from ..widgets.error_panel import ErrorPanel
from ..widgets.footer import BindingsFooter
from ..widgets.store_tree import StoreTree
from .base import ViewScreen

if TYPE_CHECKING:
    from okstra_core.check.findings import CheckReport, Finding

SEVERITY_STYLES = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def run_checker(
    root: Path, home: Path, progress: Callable[[int, int], None] | None = None
) -> tuple[CheckReport, str | None] | str:
    """The checker's report and the settings file it applied (project-relative, or None), or a one-line reason
    it could not run; *progress* gets ``(tasks checked, tasks)``.

    The project's settings file applies as it does to ``okstra check`` (rule selection, per-path ignores, the
    cache folder); the check runs in this process (``jobs`` is not used: no worker processes forked from the app).
    """
    from okstra_core.check import run_check
    from okstra_core.check.cache import CheckCache, Verdict, save_verdict
    from okstra_core.check.settings import SettingsError, resolve

    try:
        settings = resolve(root)
    except SettingsError as exc:
        return f"the check could not run: {exc}"
    # The same cache as `okstra check`: a re-check after an edit re-reads only the tasks that changed.
    check_cache = CheckCache(layout.okstra_cache_dir(settings.cache_dir))
    shown = None
    if settings.file is not None:
        file, base = Path(os.path.abspath(settings.file)), Path(os.path.abspath(root))
        shown = layout.rel(file, base) if file.is_relative_to(base) else str(file)
    try:
        report = settings.apply(run_check(root, home=home, jobs=1, progress=progress, check_cache=check_cache))
    except Exception as exc:  # CheckError and anything unexpected: shown, never raised
        return f"the check could not run: {exc}"
    # Home shows it without checking, as it shows the verdict `okstra check` keeps.
    now = dt.datetime.now(dt.UTC)
    verdict = Verdict(now, report.errors, report.warnings, report.infos, report.files, bool(settings.strict))
    save_verdict(check_cache, report.root, home, verdict)
    return report, shown


def location_for(project_root: Path, rel: str) -> Location:
    """Where a finding's file is best shown: its run dir (artifact selected), its task, or the file itself."""
    if rel.startswith("$OKSTRA_HOME"):
        return Location(View.MANAGERS)
    path = project_root / rel
    tasks = layout.tasks_dir(project_root)
    try:
        parts = path.relative_to(tasks).parts
    except ValueError:
        return Location(View.FILE, project_root, path)
    if len(parts) < 2:
        return Location(View.CATALOG)
    task_root = tasks / parts[0] / parts[1]
    if len(parts) == 2:
        return Location(View.TASK, task_root)
    if parts[2] == layout.RUNS_DIR and len(parts) >= 5 and not path.is_dir():
        return Location(View.RUNS, task_root, artifact=path)
    if path.is_dir() and not path.is_symlink():
        return Location(View.RUNS, task_root) if parts[2] == layout.RUNS_DIR else Location(View.TASK, task_root)
    return Location(View.FILE, task_root, path)


@dataclass(frozen=True, slots=True)
class _TreePlace:
    """Where the cursor was in the findings and which files were open, to show a new check's findings there."""

    #: The file under the cursor, and which of its findings (-1: the file's own line); None: no findings shown.
    path: str | None = None
    finding: int = -1
    line: int = 0
    #: Each file shown, open or not; empty: none was shown (a first check opens them as it sees fit).
    opened: dict[str, bool] = field(default_factory=dict)

    @classmethod
    def of(cls, tree: Tree[str | None]) -> _TreePlace:
        opened = {node.data: node.is_expanded for node in tree.root.children if node.data is not None}
        node = tree.cursor_node
        if node is None or node.data is None:
            return cls(opened=opened)
        parent = node.parent
        finding = parent.children.index(node) if parent is not None and parent is not tree.root else -1
        return cls(node.data, finding, tree.cursor_line, opened)

    def expanded(self, path: str, default: bool) -> bool:
        return self.opened.get(path, default if not self.opened else False)

    def restore(self, tree: Tree[str | None]) -> None:
        """The cursor on the same finding (or its file, or the same line) as before; the first line at first."""
        if not tree.root.children:
            return
        tree.get_node_at_line(0)  # lays the new lines out, so that each node knows its line
        for node in tree.root.children:
            if self.path is not None and node.data == self.path:
                if self.finding >= 0 and node.is_expanded and node.children:
                    node = node.children[min(self.finding, len(node.children) - 1)]
                tree.move_cursor(node)
                return
        if self.path is None:
            tree.move_cursor(tree.root.children[0])
        else:
            tree.cursor_line = self.line


def _scroll_to_cursor(tree: Tree[str | None]) -> None:
    if tree.cursor_node is not None:
        tree.scroll_to_node(tree.cursor_node, animate=False)


class ChecksScreen(ViewScreen):
    """Findings of one check run, grouped by file."""

    VIEW_NAME = View.CHECKS
    WHOLE_STORE = True
    HELP = (
        "The contract checker over the whole project (and the manager home), run in the background. Findings are "
        "grouped by file with their rule id and severity. Enter on a finding jumps to its artifact. The check runs "
        "again by itself when the store changes, and R runs it again at once; tasks unchanged since the last check "
        "(here or by `okstra check`) reuse their findings."
    )

    BINDINGS = [Binding("R", "rerun", "Re-run check")]

    def __init__(self) -> None:
        super().__init__()
        #: The summary line of the findings shown.
        self._summary = Text("Running the checker…")

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        yield Static("Running the checker…", id="checks-summary")
        yield ProgressBar(id="checks-progress", show_eta=False)
        tree: Tree[str | None] = StoreTree("findings", id="checks-tree", classes="pane")
        tree.show_root = False
        yield tree
        yield Static("", id="checks-detail")
        yield BindingsFooter()

    @property
    def findings_tree(self) -> Tree[str | None]:
        """The findings, one node per file and a leaf per finding; node data is the file's project path."""
        tree: Tree[str | None] = self.query_one("#checks-tree", Tree)
        return tree

    def on_mount(self) -> None:
        self.findings_tree.focus()
        self._run()

    def first_load(self) -> None:
        """The check starts as the view opens (:meth:`on_mount`), with its progress shown."""

    def load(self) -> None:
        """Check again, the findings shown meanwhile (the store changed): the summary says so until it ends."""
        summary = self._summary.copy()
        summary.append("  · checking again…", style="dim")
        self.query_one("#checks-summary", Static).update(summary)
        self._run(quiet=True)

    def action_rerun(self) -> None:
        self.query_one("#checks-summary", Static).update("Running the checker…")
        bar = self.query_one("#checks-progress", ProgressBar)
        bar.update(total=None, progress=0)
        bar.display = True
        self._run()

    @work(thread=True, exclusive=True, group="checker", description="checker")
    def _run(self, quiet: bool = False) -> None:
        """Run the check; *quiet*: without the progress (the findings of the last run stay shown meanwhile)."""
        shown = -1

        def progress(done: int, total: int) -> None:
            # The bar moves in whole percents: a call per step would flood the UI thread.
            nonlocal shown
            step = done * 100 // total if total else 100
            if step != shown:
                shown = step
                call_ui(self.app, self._progress, done, total)

        started = time.monotonic()
        report = run_checker(self.okstra.project.root, layout.okstra_home(), None if quiet else progress)
        call_ui(self.app, self._checked, report, time.monotonic() - started)

    def _checked(self, outcome: tuple[CheckReport, str | None] | str, seconds: float) -> None:
        self.read_took(seconds)
        self.read_done({})
        self._show(outcome)

    def _progress(self, done: int, total: int) -> None:
        self.query_one("#checks-summary", Static).update(f"Running the checker… {done:,} of {total:,} tasks checked")
        self.query_one("#checks-progress", ProgressBar).update(total=total, progress=done)

    def _show(self, outcome: tuple[CheckReport, str | None] | str) -> None:
        summary = self.query_one("#checks-summary", Static)
        self.query_one("#checks-progress", ProgressBar).display = False
        tree = self.findings_tree
        was = _TreePlace.of(tree)
        tree.clear()
        for old in self.query(ErrorPanel):
            old.remove()
        if isinstance(outcome, str):
            self._summary = Text("")
            summary.update(self._summary)
            self.mount(ErrorPanel(outcome, title="Checker"), after=summary)
            return
        report, settings_file = outcome
        by_file: dict[str, list[Finding]] = {}
        for finding in report.findings:
            by_file.setdefault(finding.path, []).append(finding)
        self._summary = Text.assemble(
            (counted(report.errors, "error"), "bold red" if report.errors else "green"),
            ", ",
            (counted(report.warnings, "warning"), "yellow" if report.warnings else ""),
            ", ",
            f"{counted(report.infos, 'info')} in {counted(len(by_file), 'file')}",
            f" ({counted(report.files, 'file')} checked)",
            f" · settings: {visible(settings_file)}" if settings_file else "",
            # The cache's problems (a signed entry that failed, a key that cannot serve), as okstra check warns.
            *[("\n" + visible(problem), "yellow") for problem in report.cache_problems],
        )
        summary.update(self._summary)
        for path, findings in by_file.items():
            worst = min(findings, key=lambda f: ("error", "warning", "info").index(f.severity)).severity
            node = tree.root.add(
                Text.assemble((visible(path), SEVERITY_STYLES.get(worst, "")), f"  ({len(findings)})"),
                data=path,
                expand=was.expanded(path, len(by_file) <= 30),
            )
            for f in findings:
                where = f":{f.line}" if f.line else ""
                node.add_leaf(
                    Text.assemble(
                        (f"{f.severity:<7}", SEVERITY_STYLES.get(f.severity, "")),
                        " ",
                        (f.rule, "bold"),
                        f"{where}  {visible(f.message)}",
                    ),
                    data=path,
                )
        if not by_file:
            tree.root.add_leaf(Text("No findings: the store keeps the contract.", style="green"))
        # At once, so that no frame shows the cursor on another line; scrolled to it once the new lines have a size.
        was.restore(tree)
        self.call_after_refresh(_scroll_to_cursor, tree)

    @on(Tree.NodeHighlighted, "#checks-tree")
    def _highlighted(self, event: Tree.NodeHighlighted[str | None]) -> None:
        """The highlighted file's whole path, and the finding's whole text: what the tree cuts to fit."""
        node = event.node
        detail = Text()
        if node.data is not None:
            detail.append(visible(node.data), style="bold")
            if not node.children:
                label = node.label if isinstance(node.label, Text) else Text(node.label)
                detail.append("\n")
                detail.append_text(label)
        self.query_one("#checks-detail", Static).update(detail)

    @on(Tree.NodeSelected, "#checks-tree")
    def _selected(self, event: Tree.NodeSelected[str | None]) -> None:
        if event.node.data is None or (event.node.children and not event.node.is_expanded):
            return
        self.open_view(location_for(self.okstra.project.root, event.node.data))

    def current_path(self) -> Path | None:
        node = self.findings_tree.cursor_node
        if node is None or not node.data or node.data.startswith("$"):
            return None
        return self.okstra.project.root / node.data
