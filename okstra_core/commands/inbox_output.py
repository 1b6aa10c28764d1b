"""What ``okstra inbox`` and ``okstra inbox --all`` print alike: the JSON version, the unreadable fields, the
task groups of the text output, and the re-read after a change."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..text import visible

if TYPE_CHECKING:
    from ..workflows.inbox_items import Inbox, KeptInbox

INBOX_JSON_VERSION = 1
#: The JSON lists at most this many unreadable files (sorted); ``unreadable`` counts them all.
UNREADABLE_PATHS_MAX = 50


def unreadable_fields(inbox: Inbox | KeptInbox) -> dict[str, Any]:
    """``unreadable`` (how many files and folders could not be read) and ``unreadablePaths`` (the first ones)."""
    paths = sorted([*inbox.unreadable, *inbox.unlisted])
    return {"unreadable": len(paths), "unreadablePaths": paths[:UNREADABLE_PATHS_MAX]}


def group_lines(items: list[Any], indent: str = "") -> tuple[list[str], int]:
    """The text lines of *items* grouped by task (each group ends with a blank line), and the task count."""
    groups: dict[str, list[Any]] = {}
    for decision in items:
        groups.setdefault(decision.task, []).append(decision)
    lines = []
    for task, decisions in groups.items():
        lines.append(f"{indent}{visible(task)} ({len(decisions)} waiting)")
        for d in decisions:
            label = d.kind + (f" {d.item}" if d.item else "") + (f" [{d.detail}]" if d.detail else "")
            lines.append(f"{indent}  {d.since}  {visible(label)}: {visible(d.summary)}")
            lines.append(f"{indent}      {visible(d.path)}")
        lines.append("")
    return lines, len(groups)


def reread(root: Path, before: Inbox, changed: set[Path] | None) -> Inbox:
    """The inbox after a change: only the task folders the changed paths lie in, when they all lie in one."""
    from ..layout import task_root_of
    from ..store import Project
    from ..workflows.inbox import read_inbox, refresh_inbox

    project = Project(root)
    roots = None if changed is None else {task_root_of(root, path) for path in changed}
    if roots is None or None in roots:
        return read_inbox(project)
    return refresh_inbox(project, before, {r for r in roots if r is not None})
