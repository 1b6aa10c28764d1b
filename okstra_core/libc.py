"""The C library, loaded once through :mod:`ctypes`, for the few calls Python has no function for.

Used by the worker processes (``prctl``), the file events (``inotify``) and the
long-running processes' memory (``mallopt``). Loaded on the first question only:
importing :mod:`ctypes` costs every command's start otherwise.
"""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes


@functools.cache
def libc() -> ctypes.CDLL | None:
    """This process's C library with ``errno`` kept for :func:`ctypes.get_errno`; None off Linux, or where it
    cannot be loaded."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
