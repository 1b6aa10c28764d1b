"""Runs of one task: per task type and stage, artifacts by category and seq, with a preview."""

from __future__ import annotations

from collections.abc import Set
from pathlib import Path
from typing import TYPE_CHECKING, Self

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from okstra_core import layout
from okstra_core.store import RunDir, Task

from ..data.preview import LOG_REPORT, PreviewTarget
from ..data.runs import RunDirListing, RunsListing, list_runs, seq_groups
from ..data.unread import NEW_MARK, marked
from ..navigation import Location, View
from ..widgets.footer import BindingsFooter
from ..widgets.preview import ArtifactPreview
from ..widgets.store_tree import StoreTree
from .base import ViewScreen

if TYPE_CHECKING:
    pass

NodeData = PreviewTarget | None


class RunTreeFiller:
    """Adds the runs tree's nodes and remembers the one showing the artifact to select."""

    def __init__(
        self, project_root: Path, want: Path | None, expanded: set[str] | None, new: Set[Path] = frozenset()
    ) -> None:
        self.project_root = project_root
        self.want = want
        #: Artifacts written since the person last looked at the task: marked, and their folders opened.
        self.new = new
        #: Labels of the nodes that were expanded before a reload (None: a first build).
        self.expanded = expanded
        self.select: TreeNode[NodeData] | None = None

    def _was_expanded(self, label: str) -> bool:
        return self.expanded is not None and label in self.expanded

    def leaf(self, parent: TreeNode[NodeData], label: Text | str, target: PreviewTarget) -> None:
        node = parent.add_leaf(label, data=target)
        if self.want is not None and target.path == self.want:
            self.select = node

    def run_dir(self, root: TreeNode[NodeData], run: RunDirListing, focus: bool) -> None:
        """A run dir: its log report, categories by seq, flat legacy files and unrecognised names."""
        rd = run.run
        label = Text(rd.label, style="bold")
        fresh = {category for category, arts in run.by_category.items() if any(a.path in self.new for a in arts)}
        expand = self._was_expanded(str(label)) or focus or bool(fresh)
        run_node = root.add(label, data=PreviewTarget(rd.path, rd.rel, kind="run-dir"), expand=expand)
        run_node.add_leaf(
            Text("log report", style="italic"),
            data=PreviewTarget(rd.path, f"log report · {rd.rel}", kind=LOG_REPORT),
        )
        for category, arts in run.by_category.items():
            cat_label = f"{category} ({len(arts)})"
            cat_node = run_node.add(cat_label, data=None, expand=self._was_expanded(cat_label) or category in fresh)
            for seq, members in seq_groups(arts):
                seq_label = f"seq {members[0].name.seq_text}" if seq is not None else "no seq"
                seq_node = cat_node.add(seq_label, data=None, expand=True)
                for art in members:
                    rel = layout.rel(art.path, self.project_root)
                    name = marked(art.name.filename, art.path in self.new)
                    self.leaf(seq_node, name, PreviewTarget(art.path, rel, art, art.kind))
        self._odd_files(run_node, run)

    def _odd_files(self, run_node: TreeNode[NodeData], run: RunDirListing) -> None:
        """Flat legacy files (to be moved into their category) and names no kind's grammar accepts."""
        if run.flat:
            flat_node = run_node.add(Text(f"flat legacy ({len(run.flat)}) — to be moved", style="yellow"), data=None)
            for path, parsed in run.flat:
                label = Text(f"{parsed.filename} → {parsed.category}/", style="yellow")
                self.leaf(flat_node, label, PreviewTarget(path, f"flat legacy · {path.name}"))
        if run.migrations:
            archives = run_node.add(Text(f"state/migrations ({len(run.migrations)})", style="italic"), data=None)
            for path in run.migrations:
                self.leaf(archives, path.name, PreviewTarget(path, f"migration archive (replaced state) · {path.name}"))
        if run.unknown:
            bad = run_node.add(Text(f"unrecognised ({len(run.unknown)})", style="red"), data=None)
            for path in run.unknown:
                label = Text(f"{path.parent.name}/{path.name}", style="red")
                self.leaf(bad, label, PreviewTarget(path, f"unrecognised name · {path.name}"))

    def stage_shared(self, root: TreeNode[NodeData], listing: RunsListing) -> None:
        """Carry files and the consumers ledger, shared by the implementation stages."""
        if not listing.carry and listing.consumers is None:
            return
        shared = root.add(Text("stage-shared", style="bold"), data=None, expand=True)
        for path in listing.carry:
            self.leaf(shared, f"{layout.CARRY_DIR}/{path.name}", PreviewTarget(path, f"carry · {path.name}"))
        if listing.consumers is not None:
            shared.add_leaf(
                layout.CONSUMERS_FILE, data=PreviewTarget(listing.consumers, "implementation-planning consumers")
            )


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
        with Horizontal(id="runs-main"):
            tree: Tree[NodeData] = StoreTree("runs", id="runs-tree", classes="pane")
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
        self.run_tree.focus()

    def read(self) -> tuple[RunsListing, Set[Path]]:
        from okstra_tui.data import seen

        self.bundle = bundle = self.open_task(self.task_root)
        listing = list_runs(bundle)
        arts = (a.path for run in listing.run_dirs for members in run.by_category.values() for a in members)
        key = seen.task_key(self.okstra.project.root, self.task_root)
        return listing, self.okstra.looks.new_paths(key, arts)

    def show(self, data: tuple[RunsListing, Set[Path]]) -> None:
        listing, new = data
        self._build(listing, self.reads > 1, new)

    def _build(self, listing: RunsListing, keep: bool, new: Set[Path] = frozenset()) -> None:
        """Rebuild the tree; a reload keeps the expanded nodes and the cursor on the same artifact."""
        tree = self.run_tree
        current = tree.cursor_node.data if tree.cursor_node is not None else None
        want = current.path if keep and isinstance(current, PreviewTarget) else self.focus_artifact
        expanded = {str(n.label) for n in _walk(tree.root) if n.is_expanded} if keep else set()
        tree.clear()
        filler = RunTreeFiller(self.okstra.project.root, want, expanded if keep else None, new)
        for run in listing.run_dirs:
            filler.run_dir(tree.root, run, self._is_focus(run.run) or len(listing.run_dirs) == 1)
        filler.stage_shared(tree.root, listing)
        if listing.problem is not None:
            tree.root.add_leaf(Text(f"runs/: {listing.problem.reason}", style="bold red"))
        select = filler.select
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
        if (
            data.artifact is not None
            and isinstance(event.node.label, Text)
            and event.node.label.plain.startswith(NEW_MARK)
        ):
            # Seen now: no longer new in this visit.
            self.okstra.looks.opened(data.path)
            event.node.set_label(data.artifact.name.filename)
        if (
            self.preview.target is not None
            and self.preview.target.path == data.path
            and self.preview.target.kind == data.kind
        ):
            return
        self.preview.show(data, self.okstra.project.root)

    def action_log_report(self) -> None:
        node = self.run_tree.cursor_node
        while node is not None and not (isinstance(node.data, PreviewTarget) and node.data.kind == "run-dir"):
            node = node.parent
        if node is None:
            self.notify("Move to a run dir first.", severity="warning")
            return
        for child in node.children:
            if isinstance(child.data, PreviewTarget) and child.data.kind == LOG_REPORT:
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


def _walk(node: TreeNode[NodeData]) -> list[TreeNode[NodeData]]:
    out = [node]
    for child in node.children:
        out.extend(_walk(child))
    return out
