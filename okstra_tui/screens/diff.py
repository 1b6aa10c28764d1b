"""A unified diff between two artifacts (two seqs of one category)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Self

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from okstra_core import reading
from okstra_core.digests import pretty_json
from okstra_core.errors import LoadError
from okstra_core.text import visible

from ..navigation import Location, View
from ..widgets.error_panel import ErrorPanel
from ..widgets.footer import BindingsFooter
from .base import ViewScreen


def comparable_text(path: Path, root: Path) -> str | LoadError:
    """The file's text; JSON pretty-printed so that a diff shows changed values, not reflowed lines."""
    text = reading.read_text(path, root=root)
    if isinstance(text, LoadError):
        return text
    if path.name.endswith(".json"):
        value = reading.parse_json(path, text)
        if not isinstance(value, LoadError):
            return pretty_json(value).decode("utf-8")
    return text


def unified(a: Path, b: Path, root: Path) -> str | LoadError:
    left = comparable_text(a, root)
    if isinstance(left, LoadError):
        return left
    right = comparable_text(b, root)
    if isinstance(right, LoadError):
        return right
    lines = difflib.unified_diff(left.splitlines(), right.splitlines(), fromfile=a.name, tofile=b.name, lineterm="")
    return "\n".join(lines) or "(no differences)"


def _shared_start(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def pair_label(left: str, right: str) -> str:
    """Two names with what they share said once: ``report-001 ↔ 002.json`` for ``report-001.json``, ``report-002.json``.

    The shared start and end are cut at a ``-``, ``_`` or ``.`` so that a number is never split.
    """
    if left == right:
        return f"{left} ↔ {right}"
    head = _shared_start(left, right)
    start = max(head.rfind(c) for c in "-_.") + 1
    tail = _shared_start(left[start:][::-1], right[start:][::-1])[::-1]
    cut = min((i for i in (tail.find(c) for c in "-_.") if i >= 0), default=len(tail))
    end = len(tail) - cut
    return f"{left[: len(left) - end]} ↔ {right[start : len(right) - end]}{left[len(left) - end :]}"


class DiffScreen(ViewScreen):
    """``D`` on two artifacts in the runs view lands here."""

    VIEW_NAME = View.DIFF
    HELP = "A unified diff of two artifacts; JSON is compared pretty-printed."

    def __init__(self, task_root: Path, left: Path, right: Path) -> None:
        super().__init__()
        self.task_root = task_root
        self.left = left
        self.right = right

    @classmethod
    def from_location(cls, location: Location) -> Self:
        if location.partner is None:
            raise ValueError("the diff view needs two files")
        return cls(location.task_root, location.target_path, location.partner)

    @property
    def location(self) -> Location:
        return Location(View.DIFF, self.task_root, self.left, partner=self.right)

    def crumbs(self) -> list[str]:
        return [
            f"{self.task_root.parent.name}/{self.task_root.name}",
            "Diff",
            pair_label(self.left.name, self.right.name),
        ]

    def compose(self) -> ComposeResult:
        yield self.breadcrumbs()
        with VerticalScroll(id="diff-body", classes="pane"):
            yield Static("Comparing…", id="diff-text")
        yield BindingsFooter()

    def on_mount(self) -> None:
        self.query_one("#diff-body").focus()

    def read(self) -> str | LoadError:
        return unified(self.left, self.right, self.okstra.project.root)

    def show(self, result: str | LoadError) -> None:
        body = self.query_one("#diff-body", VerticalScroll)
        for old in body.query(ErrorPanel):
            old.remove()
        text = self.query_one("#diff-text", Static)
        if isinstance(result, LoadError):
            text.update(Text("The two files cannot be compared.", style="bold"))
            body.mount(ErrorPanel(result))
        else:
            text.update(
                Syntax(
                    visible(result, multiline=True),
                    "diff",
                    theme="ansi_dark",
                    background_color="default",
                    word_wrap=True,
                )
            )

    def current_path(self) -> Path | None:
        return self.right
