"""``python -m okstra_tui.child JOB ROOT PARENT [OPTION...]``: one long reading of the store, in a child process.

The workbench starts these (:func:`okstra_tui.children.child_command`) so that
its interpreter and memory hold none of the reading. A child runs at a lower
priority (``nice`` 10: the person's keys in the workbench come first) and ends
as soon as the process *PARENT* (the workbench's pid) is gone, however that
ended: a long reading of a large store would outlive a killed parent otherwise.

Jobs, each on the project at *ROOT*:

* ``waiting``: the decisions waiting per task folder (:func:`~okstra_tui.data.catalog.print_waiting_counts`);
* ``confirm``: the validated catalog's fingerprint (:func:`~okstra_tui.data.catalog.print_fingerprint`);
* ``check``: ``okstra check --format json`` (the notices' baseline);
* ``notices``: the notices' watcher (:func:`~okstra_tui.notices.serve_notices`);
* ``others``: the follower of every other project of the registry, *ROOT* being the project open
  (:func:`~okstra_tui.others.serve_others`; its options say which registry: ``--home PATH``, ``--root PATH``,
  ``--no-remembered``).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable

from okstra_core.malloc import fewer_arenas


def _waiting(root: str) -> int:
    from .data.catalog import print_waiting_counts

    return print_waiting_counts(root)


def _confirm(root: str) -> int:
    from .data.catalog import print_fingerprint

    return print_fingerprint(root)


def _check(root: str) -> int:
    from okstra_core.cli import main

    from .notices import check_arguments

    return main(check_arguments(root))


def _notices(root: str) -> int:
    from .notices import serve_notices

    return serve_notices(root)


def _others(root: str, options: list[str]) -> int:
    from .others import serve_others

    return serve_others(root, options)


JOBS: dict[str, Callable[[str], int]] = {"waiting": _waiting, "confirm": _confirm, "check": _check, "notices": _notices}

#: The jobs that take options after *PARENT*.
JOBS_WITH_OPTIONS: dict[str, Callable[[str, list[str]], int]] = {"others": _others}


def _end_with(parent: int) -> None:
    """End this process as soon as *parent* is no longer its parent."""

    def orphaned() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=orphaned, name="okstra-child-parent", daemon=True).start()


def main(argv: list[str]) -> int:
    job = argv[0] if argv else ""
    takes_options = job in JOBS_WITH_OPTIONS
    if len(argv) < 3 or (len(argv) > 3 and not takes_options) or not (job in JOBS or takes_options):
        return _usage()
    root, parent, *options = argv[1:]
    if not parent.isdigit():
        return _usage()
    os.nice(10)
    fewer_arenas()
    _end_with(int(parent))
    return JOBS_WITH_OPTIONS[job](root, options) if takes_options else JOBS[job](root)


def _usage() -> int:
    jobs = ",".join([*JOBS, *JOBS_WITH_OPTIONS])
    print(f"usage: python -m okstra_tui.child {{{jobs}}} ROOT PARENT_PID [OPTION...]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
