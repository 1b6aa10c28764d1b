"""Managers: each manager's projects, task groups and tasks, children, snapshots and events."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static, Tree

from okstra_core import layout, reading
from okstra_core.errors import LoadError
from okstra_core.store import Manager, ManagerTask, list_managers

from ..widgets.error_panel import ErrorPanel
from ..widgets.footer import BindingsFooter
from .base import ViewScreen


@dataclass(frozen=True, slots=True)
class Node:
    """What a tree node stands for."""

    kind: str  # manager | projects | task | file
    manager: Manager | None = None
    task: ManagerTask | None = None
    path: Path | None = None


def detail(node: Node) -> list[Any]:
    """The widgets describing one node (errors inline)."""
    out: list[Any] = []

    def bad(value: Any, title: str) -> bool:
        if isinstance(value, LoadError):
            out.append(ErrorPanel(value, title=title))
            return True
        return False

    if node.kind == "manager" and node.manager is not None:
        info = node.manager.info()
        if not bad(info, "manager.json"):
            grid = Table.grid(padding=(0, 2))
            grid.add_column(style="bold")
            grid.add_column()
            grid.add_row("manager", info.manager_id)
            grid.add_row("title", info.title or "-")
            grid.add_row("schema", info.schema_version)
            grid.add_row("created", info.created_at or "-")
            projects = node.manager.projects()
            grid.add_row("projects", str(len(projects.projects)) if not isinstance(projects, LoadError) else "?")
            grid.add_row("tasks", str(len(node.manager.tasks())))
            out.append(Static(grid))
    elif node.kind == "projects" and node.manager is not None:
        projects = node.manager.projects()
        if not bad(projects, "projects.json"):
            table = Table(title="Registered projects", title_justify="left", title_style="bold")
            for col in ("project", "root", "role", "tags", "root exists"):
                table.add_column(col)
            for p in projects.projects:
                exists = Path(p.project_root).is_dir()
                table.add_row(
                    p.project_id,
                    p.project_root,
                    p.role,
                    ", ".join(p.tags),
                    Text("yes", style="green") if exists else Text("missing", style="red"),
                )
            out.append(Static(table))
    elif node.kind == "task" and node.task is not None:
        t = node.task
        manifest = t.manifest()
        if not bad(manifest, "manifest.json"):
            plan = "\n".join(f"  {i}. {step}" for i, step in enumerate(manifest.plan, 1)) or "  -"
            out.append(Static(Text.assemble((manifest.task_key, "bold"), f"  {manifest.title}\nplan:\n{plan}")))
        children = t.children()
        if not bad(children, "children.json"):
            table = Table(title="Children", title_justify="left", title_style="bold")
            for col in ("project", "child task", "key", "status"):
                table.add_column(col)
            for c in children.children:
                table.add_row(c.project_id, c.child_task_id, c.child_task_key, c.status)
            out.append(Static(table))
        snaps = t.snapshots()
        if not bad(snaps, "snapshots.json"):
            table = Table(
                title="Snapshots (read-side, imported by task sync)", title_justify="left", title_style="bold"
            )
            for col in ("project", "task key", "status", "latest run", "synced"):
                table.add_column(col)
            for pid, s in snaps.projects.items():
                table.add_row(pid, s.task_key, s.current_status, s.latest_run_status or "-", s.synced_at)
            out.append(Static(table))
        for label, doc in (("events.jsonl", t.events()), ("directives.jsonl", t.directives())):
            if bad(doc, label):
                continue
            table = Table(title=label, title_justify="left", title_style="bold")
            if label == "events.jsonl":
                for col in ("at", "event", "detail"):
                    table.add_column(col)
                for e in doc.records:
                    table.add_row(e.at, e.event, ", ".join(f"{k}={v}" for k, v in e.detail.items()))
            else:
                for col in ("at", "scope", "project", "text"):
                    table.add_column(col)
                for d in doc.records:
                    table.add_row(d.at, d.scope, d.project_id or "-", d.text)
            out.append(Static(table))
            for err in doc.errors:
                out.append(ErrorPanel(err, title=label))
        contexts = t.child_contexts()
        if contexts:
            out.append(Static(Text("child context: " + ", ".join(p.name for p in contexts))))
    elif node.kind == "file" and node.path is not None:
        text = reading.read_text(node.path)
        if not bad(text, node.path.name):
            from textual.widgets import Markdown

            out.append(Markdown(text))
    return out


class ManagersScreen(ViewScreen):
    """Manager-owned cross-project state under the manager home."""

    VIEW_NAME = "managers"
    HELP = (
        "Managers under the manager home ($OKSTRA_HOME or ~/.okstra): their registered projects, task groups and "
        "tasks with children, snapshots (read-side copies, never the source of truth), events and directives."
    )

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        with Horizontal():
            tree: Tree[Node | None] = Tree("managers", id="mgr-tree", classes="pane")
            tree.show_root = False
            tree.border_title = "Managers"
            yield tree
            body = VerticalScroll(Static("Loading…"), id="mgr-body", classes="pane")
            body.border_title = "Details"
            yield body
        yield BindingsFooter()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#mgr-tree").focus()
        self._load()

    def watched_paths(self) -> list[Path]:
        home = layout.okstra_home()
        paths = [layout.managers_dir(home)]
        for m in list_managers(home):
            paths.extend([m.folder, m.folder / "manager.json", m.folder / "projects.json"])
            for t in m.tasks():
                paths.extend(
                    [t.folder, t.folder / "events.jsonl", t.folder / "snapshots.json", t.folder / "children.json"]
                )
        return paths

    def reload(self) -> None:
        self._load(keep=True)

    @work(thread=True, exclusive=True, group="managers")
    def _load(self, keep: bool = False) -> None:
        self.mark_seen()
        home = layout.okstra_home()
        managers = [(m, m.info(), m.projects(), m.tasks()) for m in list_managers(home)]
        self.app.call_from_thread(self._build, home, managers, keep)

    def _build(self, home: Path, managers: list[Any], keep: bool) -> None:
        tree: Tree[Node | None] = self.query_one("#mgr-tree", Tree)
        line = tree.cursor_line
        tree.clear()
        for manager, info, projects, tasks in managers:
            title = info.title if not isinstance(info, LoadError) and info.title else manager.manager_id
            mnode = tree.root.add(Text(title, style="bold"), data=Node("manager", manager), expand=True)
            count = len(projects.projects) if not isinstance(projects, LoadError) else "?"
            pnode = mnode.add(f"projects ({count})", data=Node("projects", manager))
            if not isinstance(projects, LoadError):
                for p in projects.projects:
                    pnode.add_leaf(f"{p.project_id} · {p.role}", data=Node("projects", manager))
            groups: dict[str, list[ManagerTask]] = {}
            for t in tasks:
                groups.setdefault(t.task_group, []).append(t)
            for group, members in sorted(groups.items()):
                gnode = mnode.add(f"task group {group}", data=None, expand=True)
                for t in members:
                    tnode = gnode.add(t.task_id, data=Node("task", manager, t))
                    for ctx in t.child_contexts():
                        tnode.add_leaf(f"child-context/{ctx.name}", data=Node("file", manager, t, ctx))
        if not managers:
            tree.root.add_leaf(Text(f"No managers under {layout.managers_dir(home)}", style="dim"))
        if keep and line >= 0:
            self.call_after_refresh(setattr, tree, "cursor_line", line)
        elif tree.root.children:
            self.call_after_refresh(tree.move_cursor, tree.root.children[0])

    @on(Tree.NodeHighlighted, "#mgr-tree")
    def _highlighted(self, event: Tree.NodeHighlighted[Node | None]) -> None:
        if event.node.data is not None:
            self._detail(event.node.data)

    @work(thread=True, exclusive=True, group="manager-detail")
    def _detail(self, node: Node) -> None:
        widgets = detail(node)
        self.app.call_from_thread(self._show, widgets)

    async def _show(self, widgets: list[Any]) -> None:
        body = self.query_one("#mgr-body", VerticalScroll)
        with self.app.batch_update():
            await body.remove_children()
            await body.mount_all(widgets or [Static("Nothing to show.")])

    def current_path(self) -> Path | None:
        node = self.query_one("#mgr-tree", Tree).cursor_node
        data = node.data if node is not None else None
        if isinstance(data, Node):
            if data.path is not None:
                return data.path
            if data.task is not None:
                return data.task.folder
            if data.manager is not None:
                return data.manager.folder
        return layout.managers_dir(layout.okstra_home())
