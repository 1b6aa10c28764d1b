"""Progress of long work: a plain callback for the core, a rich display on a terminal's stderr for the commands.

The core's long operations (the check, the demo generator, the legacy
migration) take an optional :data:`Progress` callable and call it with
``(done, total)``; they know nothing of how it is shown. The commands wrap
it with :func:`terminal_progress`, which draws rich's progress display on
standard error only when that is a terminal, outside CI and without
``--quiet``; the workbench passes a callable that updates its own widget.
Standard output is never touched, so a report piped or redirected is the
same bytes with or without a display.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

#: ``progress(done, total)``: *done* of *total* units of work are finished.
Progress = Callable[[int, int], None]

#: Values of ``CI`` that do not mean "running in CI".
_NOT_CI = frozenset({"", "0", "false", "no"})


def in_ci(environ: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """Whether the environment says this runs in CI (``CI`` set to anything but empty, 0, false or no)."""
    env = os.environ if environ is None else environ
    return env.get("CI", "").strip().lower() not in _NOT_CI


def wanted(stream: TextIO | None = None, *, quiet: bool = False) -> bool:
    """Whether a progress display belongs on *stream* (default: stderr): a terminal, not CI, not quiet, not dumb."""
    if quiet or in_ci() or os.environ.get("TERM") == "dumb":
        return False
    target = sys.stderr if stream is None else stream
    try:
        return target.isatty()
    except (AttributeError, ValueError, OSError):  # closed or replaced streams
        return False


@contextmanager
def terminal_progress(
    description: str, unit: str, *, quiet: bool = False, rate: bool = False
) -> Iterator[Progress | None]:
    """A rich progress display on stderr for the block, or None where none belongs (see :func:`wanted`).

    *unit* names what is counted ("tasks"); with *rate* the display adds the
    rate and the time left. The display is transient: it is cleared when the
    block ends, leaving only what the command itself prints.
    """
    if not wanted(quiet=quiet):
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        ProgressColumn,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.progress import (
        Progress as RichProgress,
    )

    columns: list[ProgressColumn | str] = [
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TaskProgressColumn(),
    ]
    if rate:
        columns += [TextColumn("{task.fields[rate]}"), TextColumn("left"), TimeRemainingColumn()]
    else:
        columns.append(TimeElapsedColumn())
    console = Console(file=sys.stderr, highlight=False)
    # Lines a command prints meanwhile go above the display when stdout shares the terminal;
    # a redirected stdout is left alone, so its bytes never change.
    redirect = sys.stdout.isatty()
    display = RichProgress(*columns, console=console, transient=True, redirect_stdout=redirect, redirect_stderr=False)
    task = display.add_task(description, total=None, rate="")
    with display:

        def update(done: int, total: int) -> None:
            speed = display.tasks[0].speed if rate else None
            display.update(task, completed=done, total=total, rate=f"{speed:,.0f} {unit}/s" if speed else "")

        yield update
