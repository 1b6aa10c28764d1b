"""``python -m okstra_tui.child JOB ROOT PARENT``: one long reading of the store, in a child of the workbench.

The workbench starts these (:func:`okstra_tui.children.child_command`) so that
its interpreter and memory hold none of the reading. A child runs at a lower
priority (``nice`` 10: the person's keys in the workbench come first) and ends
as soon as the process *PARENT* (the workbench's pid) is gone, however that
ended: a long reading of a large store would outlive a killed parent otherwise.

Jobs, each on the project at *ROOT*:

* ``waiting``: the decisions waiting per task folder (:func:`~okstra_tui.data.catalog.print_waiting_counts`);
* ``confirm``: the validated catalog's fingerprint (:func:`~okstra_tui.data.catalog.print_fingerprint`);
* ``check``: ``okstra check --format json`` (the notices' baseline);
* ``notices``: the notices' watcher (:func:`~okstra_tui.notices.serve_notices`).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable


def _waiting(root: str) -> int:
    from .data.catalog import print_waiting_counts

    return print_waiting_counts(root)


def _confirm(root: str) -> int:
    from .data.catalog import print_fingerprint

    return print_fingerprint(root)


def _check(root: str) -> int:
    from okstra_core.cli import main

    return main(["check", root, "--format", "json", "--quiet", "--jobs", "1"])


def _notices(root: str) -> int:
    from .notices import serve_notices

    return serve_notices(root)


JOBS: dict[str, Callable[[str], int]] = {"waiting": _waiting, "confirm": _confirm, "check": _check, "notices": _notices}


def _end_with(parent: int) -> None:
    """End this process as soon as *parent* is no longer its parent."""

    def orphaned() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=orphaned, name="okstra-child-parent", daemon=True).start()


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in JOBS or not argv[2].isdigit():
        print(f"usage: python -m okstra_tui.child {{{','.join(JOBS)}}} ROOT PARENT_PID", file=sys.stderr)
        return 2
    job, root, parent = argv
    os.nice(10)
    _end_with(int(parent))
    return JOBS[job](root)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
