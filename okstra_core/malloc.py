"""Fewer malloc arenas in the processes that run threads for as long as they live.

glibc gives each thread that allocates an arena of its own (up to eight per
core). Memory freed in an arena stays with it, so a long-running process whose
threads each read a little (the workbench's views and watchers, the follower of
the other projects) keeps pages that no thread uses any more. Python runs one
thread at a time (the interpreter's lock), so the arenas buy it nothing: two
are enough. :func:`fewer_arenas` asks for that where the user has not chosen
(``MALLOC_ARENA_MAX`` in the environment); a C library without ``mallopt``
(not glibc) is left as it is. Called before the process starts its threads,
it applies to every arena they would make. :func:`give_back` returns what a
large reading freed.

It also keeps large blocks out of the arenas. glibc maps a block of 128 kB or
more on its own and unmaps it when freed, but raises that threshold to the
size of each such block freed (up to 32 MB): after the first large reading, the
texts, records and lists of every later one (a polling look at a large store's
kept inbox, each second) come from the arenas, between blocks that live on, and
stay resident once freed. A fixed threshold (``MALLOC_MMAP_THRESHOLD_`` where
the user chose one) gives each of them back as it is freed.
"""

from __future__ import annotations

import os
from typing import Final

#: ``mallopt``'s parameter for the most arenas (``M_ARENA_MAX`` in glibc's ``malloc.h``).
M_ARENA_MAX: Final = -8
#: How many arenas a process keeps.
ARENAS: Final = 2
#: ``mallopt``'s parameter for the size from which a block is mapped on its own (``M_MMAP_THRESHOLD``).
M_MMAP_THRESHOLD: Final = -3
#: That size, glibc's default, kept fixed.
MMAP_THRESHOLD: Final = 128 * 1024


def fewer_arenas() -> bool:
    """Keep this process to :data:`ARENAS` malloc arenas, and its blocks of :data:`MMAP_THRESHOLD` or more out of
    them; whether the C library agreed to the arenas."""
    from .libc import libc

    loaded = libc()
    mallopt = getattr(loaded, "mallopt", None)
    if mallopt is None:
        return False
    if "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    return bool(mallopt(M_ARENA_MAX, ARENAS))


def give_back() -> bool:
    """Return to the system the memory this process freed (``malloc_trim``): called by a long-running process
    after a large reading it does not keep (the notices' first pulse of a whole store), whose freed pages glibc
    would otherwise hold for the process's life. Whether the C library has the call."""
    from .libc import libc

    loaded = libc()
    trim = getattr(loaded, "malloc_trim", None)
    if trim is None:
        return False
    trim(0)
    return True
