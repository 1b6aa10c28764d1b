"""One file, full width: instruction-set files, history files, notes, checker targets."""

from __future__ import annotations

from pathlib import Path
from typing import Self

from rich.text import Text
from textual.app import ComposeResult

from okstra_core import layout
from okstra_core.text import visible

from ..data.preview import PreviewTarget, artifact_for
from ..navigation import Location, View
from ..widgets.footer import BindingsFooter
from ..widgets.preview import ArtifactPreview
from .base import ViewScreen


class FileScreen(ViewScreen):
    """A preview of one file, refreshed when it changes."""

    VIEW_NAME = View.FILE
    HELP = "One file, shown the way its format reads best. Live: edits by other processes appear within two seconds."

    def __init__(self, task_root: Path, path: Path) -> None:
        super().__init__()
        self.task_root = task_root
        self.path = path

    @classmethod
    def from_location(cls, location: Location) -> Self:
        return cls(location.task_root, location.target_path)

    @property
    def location(self) -> Location:
        return Location(View.FILE, self.task_root, self.path)

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
        super().on_mount()
        self.mark_seen()
        preview = self.query_one(ArtifactPreview)
        preview.focus()
        preview.show(self.target(), self.okstra.project.root)

    def target(self) -> PreviewTarget:
        artifact = artifact_for(self.okstra.project, self.path)
        return PreviewTarget(self.path, self._rel(), artifact, artifact.kind if artifact else "file")

    def watched_paths(self) -> list[Path]:
        return [self.path, self.path.parent]

    def reload(self) -> None:
        self.query_one(ArtifactPreview).reload()

    def current_path(self) -> Path | None:
        return self.path
