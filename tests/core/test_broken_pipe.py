"""A reader that stops early (``okstra inbox DEMO | head -1``): the verb ends quietly, never "Broken pipe"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from okstra_core import layout
from okstra_core.cli import EXIT_BROKEN_PIPE

OKSTRA = str(Path(sys.executable).parent / "okstra")
OKSTRA_TUI = str(Path(sys.executable).parent / "okstra-tui")


def _closed_pipe_run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    """Run *argv* with standard output a pipe whose reading end is closed before anything is written."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(argv, stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=180, check=False)
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "argv",
    [
        ["inbox", "{root}"],
        ["inbox", "{root}", "--json"],
        ["check", "{root}", "--no-cache", "--jobs", "1", "--home", "{home}"],
        ["--version"],
        ["tui", "--check", "{root}", "--no-cache", "--jobs", "1", "--home", "{home}"],
        ["tui", "--version"],
    ],
    ids=["inbox", "inbox-json", "check", "version", "tui-check", "tui-version"],
)
def test_a_closed_pipe_ends_the_verb_quietly(demo_root: Path, tmp_path: Path, argv: list[str]) -> None:
    home = layout.demo_home(demo_root)
    args = [a.format(root=demo_root, home=home) for a in argv]
    env = {**os.environ, "OKSTRA_HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    command = [OKSTRA_TUI, *args[1:]] if args[0] == "tui" else [OKSTRA, *args]
    proc = _closed_pipe_run(command, env)
    assert proc.stderr == b"", proc.stderr.decode(errors="replace")
    assert proc.returncode == EXIT_BROKEN_PIPE


def test_an_open_pipe_still_gets_everything(demo_root: Path) -> None:
    env = {**os.environ, "OKSTRA_HOME": str(layout.demo_home(demo_root))}
    proc = subprocess.run([OKSTRA, "inbox", str(demo_root)], capture_output=True, env=env, timeout=180, check=False)
    assert (proc.returncode, proc.stderr) == (0, b"")
    assert proc.stdout.decode().splitlines()[-1].endswith("tasks")
