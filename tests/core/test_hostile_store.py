"""A clean store: created files get the mode an ordinary open() gives under the caller's umask."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from okstra_core import writes


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_every_primitive_creates_files_under_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        writes.create_only(tmp_path, "a/created.json", b"{}\n")
        writes.replace_locked(tmp_path, "a/replaced.json", lambda _: b"{}\n")
        writes.replace_locked(tmp_path, "a/replaced.json", lambda _: b"[]\n")
        writes.append_jsonl(tmp_path, "a/log.jsonl", {"a": 1})
        writes.replace_keeping(tmp_path, "a/kept.md", b"one\n", lambda: "a/kept-old.md")
        writes.replace_keeping(tmp_path, "a/kept.md", b"two\n", lambda: "a/kept-old.md")
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "a").iterdir() if not p.name.endswith(".lock")}
    assert modes == dict.fromkeys(modes, 0o666 & ~umask), modes


def test_a_fresh_demo_has_one_mode(tmp_path: Path) -> None:
    target = tmp_path / "demo"
    subprocess.run(
        [sys.executable, "-m", "okstra_core.cli", "demo", str(target)],
        check=True,
        capture_output=True,
        preexec_fn=lambda: os.umask(0o002),
    )
    modes = Counter(
        oct(stat.S_IMODE(os.lstat(os.path.join(folder, name)).st_mode))
        for folder, _, files in os.walk(target / ".okstra")
        for name in files
        if not os.path.islink(os.path.join(folder, name))
    )
    assert set(modes) == {"0o664"}, modes
