"""One file, full width: instruction-set files, history files, notes, checker targets."""

from __future__ import annotations

from pathlib import Path
from typing import Self

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding

from okstra_core import layout
from okstra_core.search.query import Query, QueryError, parse
from okstra_core.text import visible

from ..data.preview import PreviewTarget, artifact_for
from ..navigation import Location, View
from ..widgets.footer import BindingsFooter
from ..widgets.preview import ArtifactPreview
from .base import ViewScreen


class FileScreen(ViewScreen):
    """A preview of one file, refreshed when it changes."""

    VIEW_NAME = View.FILE
    HELP = (
        "One file, shown the way its format reads best. Live: edits by other processes appear within two seconds. "
        "Opened from Search: shown as plain lines with the matches marked, at the first one; n / N step through them."
    )

    BINDINGS = [
        Binding("n", "next_match", "Next match"),
        Binding("N", "previous_match", "Previous match"),
    ]

    def __init__(self, task_root: Path, path: Path, query: str | None = None, anchor: str | None = None) -> None:
        super().__init__()
        self.task_root = task_root
        self.path = path
        self.query_text = query
        self.anchor_text = anchor
        self.find: Query | None = None
        if query:
            try:
                self.find = parse(query)
            except QueryError:
                self.find = None

    @classmethod
    def from_location(cls, location: Location) -> Self:
        return cls(location.task_root, location.target_path, location.query, location.anchor)

    @property
    def location(self) -> Location:
        return Location(View.FILE, self.task_root, self.path, query=self.query_text, anchor=self.anchor_text)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """n and N only for a file opened from Search."""
        if action in ("next_match", "previous_match"):
            return self.find is not None
        return True

    def action_next_match(self) -> None:
        self.query_one(ArtifactPreview).step_match(1)

    def action_previous_match(self) -> None:
        self.query_one(ArtifactPreview).step_match(-1)

    def crumbs(self) -> list[str]:
        if self.path.is_relative_to(self.task_root) and self.task_root != self.okstra.project.root:
            return [
                f"{self.task_root.parent.name}/{self.task_root.name}",
                layout.rel(self.path, self.task_root),
            ]
        return [self._rel()]

    def _rel(self) -> str:
        try:
            return layout.rel(self.path, self.okstra.project.root)
        except ValueError:
            return str(self.path)

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        preview = ArtifactPreview(id="file-preview", classes="pane")
        preview.border_title = Text(visible(self.path.name))
        yield preview
        yield BindingsFooter()

    def on_mount(self) -> None:
        preview = self.query_one(ArtifactPreview)
        preview.focus()
        preview.show(self.target(), self.okstra.project.root, find=self.find, anchor=self.anchor_text)

    def target(self) -> PreviewTarget:
        artifact = artifact_for(self.okstra.project, self.path)
        return PreviewTarget(self.path, self._rel(), artifact, artifact.kind if artifact else "file")

    def reload(self) -> None:
        self.query_one(ArtifactPreview).reload()

    def current_path(self) -> Path | None:
        return self.path
