"""Managers: each manager's projects, task groups and tasks, children, snapshots and events."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widget import Widget
from textual.widgets import Static, Tree

from okstra_core import layout, reading
from okstra_core.errors import LoadError
from okstra_core.manager_home import Manager, ManagerTask, list_managers
from okstra_core.models.manager import ManagerFile, ProjectsFile
from okstra_core.reading import JsonlDoc
from okstra_core.watch import Signature

from ..navigation import View
from ..ui_thread import call_ui
from ..widgets.error_panel import ErrorPanel
from ..widgets.footer import BindingsFooter
from ..widgets.shown import shown, shown_block
from ..widgets.store_markdown import StoreMarkdown
from ..widgets.store_tree import StoreTree
from .base import ViewScreen


@dataclass(frozen=True, slots=True)
class ManagerNode:
    """A manager: its ``manager.json`` facts."""

    manager: Manager


@dataclass(frozen=True, slots=True)
class ProjectsNode:
    """A manager's registered projects (``projects.json``)."""

    manager: Manager


@dataclass(frozen=True, slots=True)
class TaskNode:
    """A manager task: plan, children, snapshots, events and directives."""

    manager: Manager
    task: ManagerTask


@dataclass(frozen=True, slots=True)
class FileNode:
    """A child-context file of a manager task, rendered as Markdown."""

    manager: Manager
    task: ManagerTask
    path: Path


#: One manager as the tree lists it: the manager, its manager.json, its projects.json and its tasks.
ManagerListing = tuple[Manager, ManagerFile | LoadError, ProjectsFile | LoadError, list[ManagerTask]]

#: What a tree node stands for.
Node = ManagerNode | ProjectsNode | TaskNode | FileNode


def _table(title: str, columns: tuple[str, ...]) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold")
    for col in columns:
        table.add_column(col)
    return table


def manager_detail(manager: Manager) -> list[Widget]:
    """The manager's identity and counts."""
    info = manager.info()
    if isinstance(info, LoadError):
        return [ErrorPanel(info, title=layout.MANAGER_INFO)]
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    grid.add_row("manager", shown(info.manager_id))
    grid.add_row("title", shown(info.title or "-"))
    grid.add_row("schema", shown(info.schema_version))
    grid.add_row("created", shown(info.created_at or "-"))
    projects = manager.projects()
    grid.add_row("projects", str(len(projects.projects)) if not isinstance(projects, LoadError) else "?")
    grid.add_row("tasks", str(len(manager.tasks())))
    return [Static(grid)]


def projects_detail(manager: Manager) -> list[Widget]:
    """The registered projects and whether their roots exist."""
    projects = manager.projects()
    if isinstance(projects, LoadError):
        return [ErrorPanel(projects, title=layout.MANAGER_PROJECTS)]
    table = _table("Registered projects", ("project", "root", "role", "tags", "root exists"))
    for p in projects.projects:
        exists = Path(p.project_root).is_dir()
        table.add_row(
            shown(p.project_id),
            shown(p.project_root),
            shown(p.role),
            shown(", ".join(p.tags)),
            Text("yes", style="green") if exists else Text("missing", style="red"),
        )
    return [Static(table)]


def _plan_widget(task: ManagerTask) -> Widget:
    manifest = task.manifest()
    if isinstance(manifest, LoadError):
        return ErrorPanel(manifest, title=layout.MANAGER_TASK_MANIFEST)
    steps = manifest.plan if isinstance(manifest.plan, list) else []
    plan = "\n".join(f"  {i}. {step}" for i, step in enumerate(steps, 1)) or "  -"
    return Static(
        Text.assemble(shown(manifest.task_key or "-", "bold"), shown_block(f"  {manifest.title or ''}\nplan:\n{plan}"))
    )


def _children_widget(task: ManagerTask) -> Widget:
    children = task.children()
    if isinstance(children, LoadError):
        return ErrorPanel(children, title=layout.MANAGER_CHILDREN)
    table = _table("Children", ("project", "child task", "key", "status"))
    for c in children.children:
        table.add_row(*(shown(v) for v in (c.project_id, c.child_task_id, c.child_task_key, c.status)))
    return Static(table)


def _snapshots_widget(task: ManagerTask) -> Widget:
    snaps = task.snapshots()
    if isinstance(snaps, LoadError):
        return ErrorPanel(snaps, title=layout.MANAGER_SNAPSHOTS)
    table = _table(
        "Snapshots (read-side, imported by task sync)", ("project", "task key", "status", "latest run", "synced")
    )
    for pid, s in snaps.projects.items():
        table.add_row(*(shown(v) for v in (pid, s.task_key, s.current_status, s.latest_run_status or "-", s.synced_at)))
    return Static(table)


def _events_table(doc: JsonlDoc) -> Table:
    table = _table(layout.MANAGER_EVENTS, ("at", "event", "detail"))
    for e in doc.records:
        table.add_row(shown(e.at), shown(e.event), shown(", ".join(f"{k}={v}" for k, v in e.detail.items())))
    return table


def _directives_table(doc: JsonlDoc) -> Table:
    table = _table(layout.MANAGER_DIRECTIVES, ("at", "scope", "project", "text"))
    for d in doc.records:
        table.add_row(*(shown(v) for v in (d.at, d.scope, d.project_id or "-", d.text)))
    return table


def _ledger_widgets(label: str, doc: JsonlDoc | LoadError, table: Callable[[JsonlDoc], Table]) -> list[Widget]:
    """A JSONL ledger as a table, then one panel per bad line."""
    if isinstance(doc, LoadError):
        return [ErrorPanel(doc, title=label)]
    return [Static(table(doc)), *(ErrorPanel(err, title=label) for err in doc.errors)]


def _live_widgets(manager: Manager, task: ManagerTask) -> list[Widget]:
    """Each child task as its own project's store says it is now, with its snapshot marked stale when they
    disagree (and the command that refreshes it)."""
    from okstra_core.workflows.manager_live import live_task

    live = live_task(manager, task)
    table = _table("Now, as each child's project says", ("project", "status", "phase", "waiting", "snapshot"))
    for child in live.children:
        if not child.read:
            table.add_row(shown(child.project_id or "-"), shown(child.problem or "", style="red"))
            continue
        phase = f"{child.phase or '-'} ({child.phase_state})" if child.phase_state else child.phase or "-"
        table.add_row(
            shown(child.project_id or "-"),
            shown(child.current_status or "-"),
            shown(phase),
            Text(str(len(child.waiting)), style="bold magenta" if child.waiting else ""),
            Text("stale", style="bold yellow") if child.stale else Text("agrees", style="dim"),
        )
    out: list[Widget] = [Static(table, classes="live-children")]
    stale = [child for child in live.children if child.stale]
    for child in stale:
        out.append(
            Static(shown(f"{child.project_id}: {'; '.join(child.stale)}", style="yellow"), classes="live-children")
        )
    refresh = next((child.refresh for child in stale if child.refresh), None)
    if refresh is not None:
        line = Text.assemble(("refresh the snapshots: ", "bold"), shown(refresh))
        out.append(Static(line, classes="live-children"))
    out.extend(Static(shown(problem, style="red")) for problem in live.problems)
    return out


def task_detail(manager: Manager, task: ManagerTask) -> list[Widget]:
    """Plan, children (as the manager records them, and live), snapshots, events, directives and the
    child-context file names."""
    out = [_plan_widget(task), _children_widget(task), *_live_widgets(manager, task), _snapshots_widget(task)]
    out.extend(_ledger_widgets(layout.MANAGER_EVENTS, task.events(), _events_table))
    out.extend(_ledger_widgets(layout.MANAGER_DIRECTIVES, task.directives(), _directives_table))
    contexts = task.child_contexts()
    if contexts:
        out.append(Static(shown("child context: " + ", ".join(p.name for p in contexts))))
    return out


def file_detail(task: ManagerTask, path: Path) -> list[Widget]:
    """A child-context file rendered as Markdown."""
    text = task.read_child_context(path)
    if isinstance(text, LoadError):
        return [ErrorPanel(text, title=path.name)]
    return [StoreMarkdown(text)]


#: The part of the view (:meth:`~okstra_tui.screens.base.ViewScreen.read_also`) the details of the node read.
DETAILS = "details"


def detail(node: Node) -> list[Widget]:
    """The widgets describing one node (errors inline)."""
    match node:
        case ManagerNode(manager):
            return manager_detail(manager)
        case ProjectsNode(manager):
            return projects_detail(manager)
        case TaskNode(manager, task):
            return task_detail(manager, task)
        case FileNode(_, task, path):
            return file_detail(task, path)


class ManagersScreen(ViewScreen):
    """Manager-owned cross-project state under the manager home."""

    VIEW_NAME = View.MANAGERS
    HELP = (
        "Managers under the manager home ($OKSTRA_HOME or ~/.okstra): their registered projects, task groups and "
        "tasks with children, snapshots (read-side copies, never the source of truth), events and directives."
    )

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        with Horizontal(id="mgr-main"):
            tree: Tree[Node | None] = StoreTree("managers", id="mgr-tree", classes="pane")
            tree.show_root = False
            tree.border_title = "Managers"
            yield tree
            body = VerticalScroll(Static("Loading…"), id="mgr-body", classes="pane")
            body.border_title = "Details"
            yield body
        yield BindingsFooter()

    def on_mount(self) -> None:
        self.query_one("#mgr-tree").focus()

    def read(self) -> tuple[Path, list[ManagerListing]]:
        home = layout.okstra_home()
        return home, [(m, m.info(), m.projects(), m.tasks()) for m in list_managers(home)]

    def show(self, data: tuple[Path, list[ManagerListing]]) -> None:
        self._build(*data, keep=self.reads > 1)

    def _build(self, home: Path, managers: list[ManagerListing], keep: bool) -> None:
        tree: Tree[Node | None] = self.query_one("#mgr-tree", Tree)
        line = tree.cursor_line
        tree.clear()
        for manager, info, projects, tasks in managers:
            title = info.title if not isinstance(info, LoadError) and info.title else manager.manager_id
            mnode = tree.root.add(Text(title, style="bold"), data=ManagerNode(manager), expand=True)
            count = len(projects.projects) if not isinstance(projects, LoadError) else "?"
            pnode = mnode.add(f"projects ({count})", data=ProjectsNode(manager))
            if not isinstance(projects, LoadError):
                for p in projects.projects:
                    pnode.add_leaf(f"{p.project_id} · {p.role}", data=ProjectsNode(manager))
            groups: dict[str, list[ManagerTask]] = {}
            for t in tasks:
                groups.setdefault(t.task_group, []).append(t)
            for group, members in sorted(groups.items()):
                gnode = mnode.add(f"task group {group}", data=None, expand=True)
                for t in members:
                    tnode = gnode.add(t.task_id, data=TaskNode(manager, t))
                    for ctx in t.child_contexts():
                        tnode.add_leaf(f"{layout.MANAGER_CHILD_CONTEXT}/{ctx.name}", data=FileNode(manager, t, ctx))
        if not managers:
            tree.root.add_leaf(Text(f"No managers under {layout.managers_dir(home)}", style="dim"))
        if keep and line >= 0:
            self.call_after_refresh(self._back_to, tree, line)
        elif tree.root.children:
            self.call_after_refresh(tree.move_cursor, tree.root.children[0])

    def _back_to(self, tree: Tree[Node | None], line: int) -> None:
        """Put the cursor back on *line* of the rebuilt tree and show that node's details as they are now (the
        line may be the one the tree kept, which says nothing of a change)."""
        tree.cursor_line = line
        node = tree.cursor_node
        if node is not None and node.data is not None:
            self._detail(node.data)

    @on(Tree.NodeHighlighted, "#mgr-tree")
    def _highlighted(self, event: Tree.NodeHighlighted[Node | None]) -> None:
        if event.node.data is not None:
            self._detail(event.node.data)

    @work(thread=True, exclusive=True, group="manager-detail", description="manager-detail")
    def _detail(self, node: Node) -> None:
        with reading.recording() as reads:
            widgets = detail(node)
        call_ui(self.app, self._show, widgets, reads.paths)

    async def _show(self, widgets: list[Widget], read: Signature) -> None:
        # What the details read (a child project's store, as it is now) makes the view stale too; reloaded, the
        # view shows the node's details again.
        self.read_also(DETAILS, None)
        self.read_also(DETAILS, read)
        body = self.query_one("#mgr-body", VerticalScroll)
        with self.app.batch_update():
            await body.remove_children()
            await body.mount_all(widgets or [Static("Nothing to show.")])

    def current_path(self) -> Path | None:
        node = self.query_one("#mgr-tree", Tree).cursor_node
        data = node.data if node is not None else None
        if isinstance(data, FileNode):
            return data.path
        if isinstance(data, TaskNode):
            return data.task.folder
        if isinstance(data, ManagerNode | ProjectsNode):
            return data.manager.folder
        return layout.managers_dir(layout.okstra_home())
