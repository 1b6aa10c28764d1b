"""A check reads each file of the store at most once: every rule asks the unit, which keeps what it read."""

from __future__ import annotations

import collections
import os
from pathlib import Path

import pytest

from okstra_core import layout
from okstra_core.check.engine import run_check


def _count_opens(monkeypatch: pytest.MonkeyPatch, roots: tuple[Path, ...]) -> collections.Counter[str]:
    opened: collections.Counter[str] = collections.Counter()
    real_open = os.open
    prefixes = tuple(str(r) + os.sep for r in roots)

    def counting_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        text = os.fspath(path)  # type: ignore[arg-type]
        reading = isinstance(text, str) and text.startswith(prefixes) and not flags & (os.O_WRONLY | os.O_RDWR)
        if reading and not os.path.isdir(text):
            opened[text] += 1
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counting_open)
    return opened


def test_every_file_of_the_store_is_opened_at_most_once(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = layout.demo_home(fresh_demo)
    opened = _count_opens(monkeypatch, (layout.okstra_dir(fresh_demo), home))
    report = run_check(fresh_demo, home=home, jobs=1)
    assert report.files > 100
    assert len(opened) >= report.files * 9 // 10, "the count sees the check's reads"
    twice = {layout.rel(Path(p), fresh_demo): n for p, n in opened.items() if n > 1}
    assert twice == {}


def test_the_counter_sees_a_second_read(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened = _count_opens(monkeypatch, (layout.okstra_dir(fresh_demo),))
    manifest = next(layout.okstra_dir(fresh_demo).rglob("task-manifest.json"))
    for _ in range(2):
        fd = os.open(manifest, os.O_RDONLY)
        os.close(fd)
    assert opened[str(manifest)] == 2
