"""Where a view is: enough to rebuild it for back and forward."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Location:
    """A view and what it shows. ``task`` is the task root; ``target`` a run dir or file inside it."""

    view: str
    task: Path | None = None
    target: Path | None = None
    extra: tuple[str, ...] = field(default=())


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
