"""A tree built from nothing in one go (the bulk demo, benchmark trees): many files, no temp files, no fsync.

A half-built disposable tree is simply rebuilt, so it skips the store writes'
protocol; containment, the size limit and the read-only guard still hold.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import writes
from .errors import PathEscape


def populate_fresh_tree(root: Path, files: dict[Path, bytes], *, max_bytes: int | None = writes.STORE_LIMIT) -> int:
    """Create many files in a tree being built from nothing (bulk demo and benchmark trees).

    Each file is created exclusively (an existing file is an error, never
    overwritten) and containment is checked against *root*; there is no temp
    file or fsync because a half-built disposable tree is simply rebuilt.
    A file over *max_bytes* (the reader's limit) refuses the whole tree before
    anything is written. Returns the number of files written.
    """
    writes.refuse_if_read_only(root)
    for path, data in files.items():
        writes._refuse_over_limit(path, len(data), max_bytes)
    real_root = str(writes._real_root(root))
    made: set[str] = set()
    count = 0
    for path, data in files.items():
        parent = os.path.dirname(path)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            real_parent = os.path.realpath(parent)
            if real_parent != real_root and not real_parent.startswith(real_root + os.sep):
                raise PathEscape(path, f"resolves outside {writes._root_text(root)}")
            made.add(parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, writes.CREATE_MODE)
        try:
            writes._write_all(fd, data)
        finally:
            os.close(fd)
        count += 1
    return count
