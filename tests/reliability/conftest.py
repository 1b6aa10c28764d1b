"""Fixtures for the reliability suite: a slim copy of the demo store per test.

The copies live under the test's ``tmp_path``, in memory when the machine has a memory file system (see
``tests/conftest.py``): these tests kill processes and inject errors, they do not cut the power, so what they
prove does not depend on the disk.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .scenario import slim_copy


@pytest.fixture
def slim_factory(demo_root: Path, tmp_path: Path) -> Callable[..., Path]:
    """Make a fresh slim copy of the demo store under the test's folder (one per name)."""

    def make(name: str, tasks: tuple[str, ...] | None = None) -> Path:
        return slim_copy(demo_root, tmp_path / name, *((tasks,) if tasks else ()))

    return make
