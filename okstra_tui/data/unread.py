"""What is new inside a task since the person last looked at it: the catalog's • made finer.

The catalog marks a task that changed since it was last opened
(:mod:`okstra_tui.data.seen`). Opening it from the catalog starts a *visit*:
until the next visit, the task's runs and artifacts written after the
previous look are new (a task never opened before: all of them). A file opened
during the visit is no longer new. A task the catalog did not mark has nothing
new. All of this lives in memory for the session; the seen state on disk is
the catalog's.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

if TYPE_CHECKING:
    from okstra_tui.data.seen import SeenMoments

#: The cutoff of a task never looked at before: everything in it is new.
NEVER = dt.datetime.min.replace(tzinfo=dt.UTC)

#: The mark of something new, as the catalog shows it.
NEW_MARK = "•"
NEW_STYLE = "bold cyan"


def marked(text: str | Text, new: bool) -> Text | str:
    """*text* with the new mark before it when *new* (the catalog's •)."""
    return Text.assemble((f"{NEW_MARK} ", NEW_STYLE), text) if new else text


def _newest_ns(path: Path) -> int | None:
    """The mtime of *path* (for a folder: of it or its direct subfolders, where a new file shows), or None."""
    try:
        newest = os.lstat(path).st_mtime_ns
    except OSError:
        return None
    if os.path.isdir(path) and not os.path.islink(path):
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        newest = max(newest, entry.stat(follow_symlinks=False).st_mtime_ns)
        except OSError:
            pass
    return newest


@dataclass
class Looks:
    """The session's visits to tasks and the files opened in them, over when each task was last looked at before
    the session (read from the seen state at launch)."""

    #: When each task was last looked at, as the catalog read the seen state at launch (None until then: nothing
    #: is new).
    seen: SeenMoments | None = None
    _since: dict[str, dt.datetime] = field(default_factory=dict)
    _visits: dict[str, dt.datetime] = field(default_factory=dict)
    _opened: set[Path] = field(default_factory=set)

    def visit(self, key: str, changed: bool, now: dt.datetime | None = None) -> None:
        """The person opens task *key* from the catalog; *changed*: the catalog marked it as changed."""
        moment = now or dt.datetime.now(dt.UTC)
        previous = self._visits.get(key)
        if previous is None and self.seen is not None:
            previous = self.seen.seen_at(key)
        self._visits[key] = moment
        if changed:
            self._since[key] = previous or NEVER
        else:
            self._since.pop(key, None)

    def since(self, key: str) -> dt.datetime | None:
        """What counts as new in task *key* during this visit: written after this moment (None: nothing)."""
        return self._since.get(key)

    def new_paths(self, key: str, paths: Iterable[Path]) -> set[Path]:
        """Those of *paths* written after the visit's cutoff and not opened since (reads metadata only)."""
        since = self._since.get(key)
        if since is None:
            return set()
        cutoff = int(since.timestamp() * 1_000_000_000) if since > NEVER else None
        new = set()
        for path in paths:
            if path in self._opened:
                continue
            mtime = _newest_ns(path)
            if mtime is not None and (cutoff is None or mtime > cutoff):
                new.add(path)
        return new

    def opened(self, path: Path) -> None:
        """*path* was opened: it is no longer new in this visit."""
        self._opened.add(path)
