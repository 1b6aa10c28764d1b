"""The process's read-only guard: when it is on, every store write primitive refuses before touching anything.

It is switched on by :func:`enable_read_only` (``okstra-tui --read-only``) or by
``OKSTRA_READ_ONLY`` in the environment, which the processes a read-only
workbench starts inherit. :mod:`okstra_core.writes` consults it first in each
store primitive (and re-exports these names).
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ReadOnly

#: The environment variable that puts a process (and the processes it starts) under the read-only guard.
READ_ONLY_ENV = "OKSTRA_READ_ONLY"

_read_only = False


def enable_read_only() -> None:
    """Refuse every store write in this process from now on, and in the processes it starts.

    There is no way back: a read-only workbench stays read-only until it exits.
    """
    global _read_only
    _read_only = True
    os.environ[READ_ONLY_ENV] = "1"


def read_only() -> bool:
    """Whether store writes are refused: :func:`enable_read_only` was called, or ``OKSTRA_READ_ONLY`` is set.

    Any value but empty or ``0`` counts as set, so a typo errs on the safe side.
    """
    return _read_only or os.environ.get(READ_ONLY_ENV, "") not in ("", "0")


def refuse_if_read_only(target: Path | str) -> None:
    """Raise :class:`ReadOnly` naming *target* under the read-only guard; every store primitive calls it first."""
    if read_only():
        raise ReadOnly(
            target, "read-only: this workbench writes nothing (started with --read-only or OKSTRA_READ_ONLY)"
        )
