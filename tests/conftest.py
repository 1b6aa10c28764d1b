"""Shared fixtures: demo projects made by the core's own write path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never touch a real ``~/.okstra``."""
    monkeypatch.setenv("OKSTRA_HOME", str(tmp_path_factory.mktemp("okstra-home")))


@pytest.fixture(scope="session")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo project generated once per session. Treat it as read-only."""
    from okstra_core.demo import generate

    target = tmp_path_factory.mktemp("demo") / "project"
    generate(target)
    return target


@pytest.fixture
def fresh_demo(demo_root: Path, tmp_path: Path) -> Path:
    """A private, mutable copy of the demo project (symlinks copied as symlinks)."""
    target = tmp_path / "project"
    shutil.copytree(demo_root, target, symlinks=True)
    return target
