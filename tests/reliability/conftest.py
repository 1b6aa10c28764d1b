"""Fixtures for the reliability suite: a slim copy of the demo store per test.

The copies live in memory (``/dev/shm``) when the machine has it: these tests
kill processes and inject errors, they do not cut the power, so what they
prove does not depend on the disk, and a memory file system keeps fsync from
dominating the run time.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .scenario import slim_copy


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """A private scratch folder, in memory when possible; removed afterwards."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        folder = Path(tempfile.mkdtemp(prefix="okstra-rel-", dir=shm))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    else:
        yield tmp_path


@pytest.fixture
def slim_factory(demo_root: Path, scratch: Path) -> Callable[..., Path]:
    """Make a fresh slim copy of the demo store under the scratch folder (one per name)."""

    def make(name: str, tasks: tuple[str, ...] | None = None) -> Path:
        return slim_copy(demo_root, scratch / name, *((tasks,) if tasks else ()))

    return make
