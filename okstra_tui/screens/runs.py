"""Runs of one task: per task type and stage, artifacts by category and seq, with a preview."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from okstra_core import layout
from okstra_core.store import Artifact, RunDir, Task

from ..navigation import Location, View
from ..summaries import PreviewTarget, seq_groups
from ..ui_thread import call_ui
from ..widgets.footer import BindingsFooter
from ..widgets.preview import ArtifactPreview
from .base import ViewScreen

if TYPE_CHECKING:
    from okstra_core.render.log_report import LogReport

NodeData = PreviewTarget | None


class RunsScreen(ViewScreen):
    """A tree of run dirs -> categories -> seqs -> artifacts beside a preview pane."""

    VIEW_NAME = View.RUNS
    HELP = (
        "Every run dir of the task (per task type, and per stage for implementation and single-stage "
        "final-verification), its artifacts by category and seq. The preview pretty-prints JSON, renders "
        "Markdown, tails .log transcripts and shows team-state ledgers as tables. Press D on one artifact, then "
        "D on another of the same category, to diff two seqs. Flat legacy and unrecognised files are listed "
        "under their own nodes."
    )

    BINDINGS = [
        Binding("D", "diff", "Diff seqs"),
        Binding("R", "log_report", "Log report"),
    ]

    def __init__(self, task_root: Path, run_dir: Path | None = None, artifact: Path | None = None) -> None:
        super().__init__()
        self.task_root = task_root
        self.focus_run = run_dir
        self.focus_artifact = artifact
        self.bundle: Task = self.open_task(task_root)
        self.diff_mark: PreviewTarget | None = None

    @classmethod
    def from_location(cls, location: Location) -> Self:
        return cls(location.task_root, location.target, location.artifact)

    @property
    def location(self) -> Location:
        target = self.run_tree.cursor_node.data if self.is_mounted and self.run_tree.cursor_node else None
        artifact = target.path if isinstance(target, PreviewTarget) else None
        return Location(View.RUNS, self.task_root, self.focus_run, artifact)

    def crumbs(self) -> list[str]:
        return ["Catalog", f"{self.task_root.parent.name}/{self.task_root.name}", "Runs"]

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        with Horizontal():
            tree: Tree[NodeData] = Tree("runs", id="runs-tree", classes="pane")
            tree.show_root = False
            tree.border_title = "Run dirs"
            yield tree
            preview = ArtifactPreview(id="runs-preview", classes="pane")
            preview.border_title = "Preview"
            yield preview
        yield BindingsFooter()

    @property
    def run_tree(self) -> Tree[NodeData]:
        return self.query_one("#runs-tree", Tree)

    @property
    def preview(self) -> ArtifactPreview:
        return self.query_one("#runs-preview", ArtifactPreview)

    def on_mount(self) -> None:
        super().on_mount()
        self.run_tree.focus()
        self._load()

    def watched_paths(self) -> list[Path]:
        paths = [layout.runs_dir(self.task_root)]
        for rd in self.bundle.run_dirs:
            paths.append(rd.path)
            paths.extend(rd.path / c for c in layout.RUN_CATEGORIES)
            paths.append(rd.path.parent)
        impl = layout.task_type_run_dir(self.task_root, "implementation")
        paths.append(impl / layout.CARRY_DIR)
        paths.append(layout.consumers_path(self.task_root))
        target = self.preview.target
        if target is not None:
            paths.append(target.path)
        return paths

    def reload(self) -> None:
        self.bundle = self.open_task(self.task_root)
        self._load(keep=True)

    @work(thread=True, exclusive=True, group="runs-load")
    def _load(self, keep: bool = False) -> None:
        self.mark_seen()
        run_dirs = self.bundle.run_dirs
        listing = [
            (rd, rd.categories(), {c: rd.artifacts(c) for c in rd.categories()}, rd.flat_legacy(), rd.unrecognised())
            for rd in run_dirs
        ]
        carry = self.bundle.carry()
        consumers = layout.consumers_path(self.task_root)
        has_consumers = os.path.lexists(consumers)
        self.app.call_from_thread(self._build, listing, carry, consumers if has_consumers else None, keep)

    def _build(self, listing: list[Any], carry: list[Any], consumers: Path | None, keep: bool) -> None:
        tree = self.run_tree
        current = tree.cursor_node.data if tree.cursor_node is not None else None
        want = current.path if keep and isinstance(current, PreviewTarget) else self.focus_artifact
        expanded = {str(n.label) for n in _walk(tree.root) if n.is_expanded} if keep else set()
        tree.clear()
        select: TreeNode[NodeData] | None = None
        for rd, categories, by_cat, flat, unknown in listing:
            label = Text(rd.label, style="bold")
            run_node = tree.root.add(
                label,
                data=PreviewTarget(rd.path, rd.rel, kind="run-dir"),
                expand=(keep and str(label) in expanded) or self._is_focus(rd) or len(listing) == 1,
            )
            run_node.add_leaf(
                Text("log report", style="italic"),
                data=PreviewTarget(rd.path, f"log report · {rd.rel}", kind="log-report"),
            )
            for category in categories:
                arts: list[Artifact] = by_cat[category]
                cat_node = run_node.add(
                    f"{category} ({len(arts)})", data=None, expand=keep and f"{category} ({len(arts)})" in expanded
                )
                for seq, members in seq_groups(arts):
                    seq_label = f"seq {members[0].name.seq_text}" if seq is not None else "no seq"
                    seq_node = cat_node.add(seq_label, data=None, expand=True)
                    for art in members:
                        node = seq_node.add_leaf(
                            art.name.filename,
                            data=PreviewTarget(
                                art.path, art.path.relative_to(self.okstra.project.root).as_posix(), art, art.kind
                            ),
                        )
                        if want is not None and art.path == want:
                            select = node
            if flat:
                flat_node = run_node.add(Text(f"flat legacy ({len(flat)}) — to be moved", style="yellow"), data=None)
                for path, parsed in flat:
                    node = flat_node.add_leaf(
                        Text(f"{parsed.filename} → {parsed.category}/", style="yellow"),
                        data=PreviewTarget(path, f"flat legacy · {path.name}"),
                    )
                    if want is not None and path == want:
                        select = node
            if unknown:
                bad = run_node.add(Text(f"unrecognised ({len(unknown)})", style="red"), data=None)
                for path in unknown:
                    node = bad.add_leaf(
                        Text(f"{path.parent.name}/{path.name}", style="red"),
                        data=PreviewTarget(path, f"unrecognised name · {path.name}"),
                    )
                    if want is not None and path == want:
                        select = node
        if carry or consumers is not None:
            shared = tree.root.add(Text("stage-shared", style="bold"), data=None, expand=True)
            for path, _loaded in carry:
                node = shared.add_leaf(f"carry/{path.name}", data=PreviewTarget(path, f"carry · {path.name}"))
                if want is not None and path == want:
                    select = node
            if consumers is not None:
                shared.add_leaf("consumers.jsonl", data=PreviewTarget(consumers, "implementation-planning consumers"))
        if select is not None:
            parent = select.parent
            while parent is not None:
                parent.expand()
                parent = parent.parent
            self._place_cursor(select)
        elif tree.root.children and (not keep or want is None):
            self._place_cursor(tree.root.children[0])
        if keep and select is not None and isinstance(current, PreviewTarget):
            self.preview.reload()

    def _place_cursor(self, node: TreeNode[NodeData]) -> None:
        """Put the cursor on *node* now, in the tree just rebuilt."""
        tree = self.run_tree
        # A rebuilt tree lays out its lines lazily; asking for the last line lays them out, so that the
        # node's line is real (a cursor set on a node not yet laid out would land on the first line).
        if tree.last_line >= 0 and node.line >= 0:
            tree.move_cursor(node)
            tree.scroll_to_node(node, animate=False)

    def _is_focus(self, rd: RunDir) -> bool:
        if self.focus_artifact is not None:
            return self.focus_artifact.is_relative_to(rd.path)
        return self.focus_run is not None and rd.path == self.focus_run

    @on(Tree.NodeHighlighted, "#runs-tree")
    def _highlighted(self, event: Tree.NodeHighlighted[NodeData]) -> None:
        data = event.node.data
        if data is None:
            return
        if data.kind == "log-report":
            self._show_log_report(data)
            return
        if (
            self.preview.target is not None
            and self.preview.target.path == data.path
            and self.preview.target.kind == data.kind
        ):
            return
        self.preview.show(data, self.okstra.project.root)

    def _show_log_report(self, data: PreviewTarget) -> None:
        self.preview.target = data
        self._log_report(data)

    @work(thread=True, exclusive=True, group="preview")
    def _log_report(self, data: PreviewTarget) -> None:
        from .reports import compute_log_report

        report = compute_log_report(data.path)
        call_ui(self.app, self._log_report_ready, data, report)

    async def _log_report_ready(self, data: PreviewTarget, report: LogReport | str) -> None:
        from .reports import log_report_widgets

        if self.preview.target is not data:
            return
        await self.preview.remove_children()
        await self.preview.mount_all(log_report_widgets(data.label, report))

    def action_log_report(self) -> None:
        node = self.run_tree.cursor_node
        while node is not None and not (isinstance(node.data, PreviewTarget) and node.data.kind == "run-dir"):
            node = node.parent
        if node is None:
            self.notify("Move to a run dir first.", severity="warning")
            return
        for child in node.children:
            if isinstance(child.data, PreviewTarget) and child.data.kind == "log-report":
                self.run_tree.move_cursor(child)
                return

    def action_diff(self) -> None:
        node = self.run_tree.cursor_node
        data = node.data if node is not None else None
        if not isinstance(data, PreviewTarget) or data.artifact is None:
            self.notify("Diff works on artifacts: highlight one first.", severity="warning")
            return
        mark = self.diff_mark
        if mark is None or mark.path == data.path:
            self.diff_mark = data
            self.notify(f"Marked {data.path.name}; press D on another seq of {data.artifact.category} to compare.")
            return
        self.diff_mark = None
        self.open_view(Location(View.DIFF, self.task_root, mark.path, partner=data.path))

    def current_path(self) -> Path | None:
        node = self.run_tree.cursor_node
        if node is not None and isinstance(node.data, PreviewTarget):
            return node.data.path
        return self.task_root


def _walk(node: TreeNode[Any]) -> list[TreeNode[Any]]:
    out = [node]
    for child in node.children:
        out.extend(_walk(child))
    return out
