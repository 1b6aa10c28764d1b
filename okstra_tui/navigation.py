"""Where a view is (enough to rebuild it for back and forward), and how a view asks to go somewhere.

Screens never import the app: they post :class:`OpenView` and the app, which
owns the screen stack, handles it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from textual.message import Message


class View(StrEnum):
    """Every navigable view; the value is the name shown in breadcrumbs, help and the palette."""

    HOME = "home"
    CATALOG = "catalog"
    TASK = "task"
    RUNS = "runs"
    FILE = "file"
    DIFF = "diff"
    CONVERGENCE = "convergence"
    DESIGN_PREP = "design-prep"
    REPORTS = "reports"
    CHECKS = "checks"
    MANAGERS = "managers"
    INBOX = "inbox"
    ACTIVITY = "activity"
    RUNNING = "running"
    SEARCH = "search"
    INSIGHTS = "insights"
    WRITE_LOG = "write-log"
    #: Search and Insights over every project of Home's list (ctrl+f and I on Home).
    SEARCH_ALL = "search-all"
    INSIGHTS_ALL = "insights-all"


#: The views reachable from anywhere by one key (``H``, ``c``, ``x``, ``m``, ``i``, ``A``, ``N``, ``W``).
TOP_VIEWS: tuple[View, ...] = (
    View.HOME,
    View.CATALOG,
    View.CHECKS,
    View.MANAGERS,
    View.INBOX,
    View.ACTIVITY,
    View.RUNNING,
    View.WRITE_LOG,
)


@dataclass(frozen=True, slots=True)
class Location:
    """A view and what it shows.

    ``task`` is the task root; ``target`` the run dir (runs), file (file), report
    (reports) or left-hand file (diff) inside it; ``artifact`` the artifact to
    select in the runs view; ``partner`` the right-hand file of a diff;
    ``query`` the search typed (search) or whose matches a file shows (file);
    ``anchor`` the text (a finding id) near which the file shows its first match.
    """

    view: View
    task: Path | None = None
    target: Path | None = None
    artifact: Path | None = None
    partner: Path | None = None
    query: str | None = None
    anchor: str | None = None

    def __post_init__(self) -> None:
        # A plain string names a view too ("task"); an unknown one fails here, not when the view is built.
        object.__setattr__(self, "view", View(self.view))

    @property
    def task_root(self) -> Path:
        """The task root, for the views that show one task."""
        if self.task is None:
            raise ValueError(f"the {self.view} view needs a task")
        return self.task

    @property
    def target_path(self) -> Path:
        """The target, for the views that show one file."""
        if self.target is None:
            raise ValueError(f"the {self.view} view needs a file")
        return self.target


class OpenView(Message):
    """Open *location* on top of the current view (back returns to it); handled by the app."""

    def __init__(self, location: Location) -> None:
        super().__init__()
        self.location = location


class StoreChanged(Message):
    """Something under the store may have changed: *paths* (absolute) when the app's one watcher can name them,
    None when it cannot (a burst too large to list, a store folder replaced). Sent by the app to every view."""

    def __init__(self, paths: frozenset[str] | None) -> None:
        super().__init__()
        self.paths = paths


class StoreWatched(Message):
    """The app's change feed watches the project's store from now on: a change made before this (while a view read
    the store, before the feed's first look) may not be told, so a view that read before it looks again."""


class WaitingCounted(Message):
    """The catalog knows, for the first time since it opened, how many decisions wait (the app's longer readings
    of the whole store, such as the notices' baseline, start once the headline is on screen)."""


@dataclass(slots=True)
class History:
    """Forward stack of the locations that back navigation left."""

    forward: list[Location] = field(default_factory=list)

    def left(self, location: Location) -> None:
        self.forward.append(location)

    def take_forward(self) -> Location | None:
        return self.forward.pop() if self.forward else None

    def clear_forward(self) -> None:
        self.forward.clear()
