"""Progress displays: on a terminal's stderr only; never in a pipe, in CI or with --quiet; stdout unchanged."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from okstra_core import progress as progress_module
from okstra_core.check import run_check

OKSTRA = str(Path(sys.executable).parent / "okstra")
TIMEOUT = 180.0


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "NO_COLOR")}
    env["TERM"] = "xterm-256color"
    env.update(extra)
    return env


def _run(argv: list[str], *, on_pty: bool, env: dict[str, str]) -> tuple[int, bytes, bytes]:
    """Run *argv* with stdout to a pipe and stderr to a pty (or a pipe); returns (code, stdout, stderr)."""
    if not on_pty:
        done = subprocess.run(argv, capture_output=True, env=env, timeout=TIMEOUT)
        return done.returncode, done.stdout, done.stderr
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL, env=env)
    finally:
        os.close(slave)
    err = bytearray()
    deadline = time.monotonic() + TIMEOUT
    try:
        assert proc.stdout is not None
        out_fd = proc.stdout.fileno()
        out = bytearray()
        open_fds = {master, out_fd}
        while open_fds and time.monotonic() < deadline:
            ready, _, _ = select.select(list(open_fds), [], [], 1.0)
            for fd in ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: the pty's other side is closed
                    chunk = b""
                if not chunk:
                    open_fds.discard(fd)
                elif fd == master:
                    err += chunk
                else:
                    out += chunk
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close() if proc.stdout else None
        os.close(master)
    return code, bytes(out), bytes(err)


def _plain(data: bytes) -> bytes:
    """Terminal output without its escape sequences."""
    return re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", data)


def _check_argv(root: Path) -> list[str]:
    return [OKSTRA, "check", str(root), "--home", str(root / ".okstra-home")]


@pytest.mark.parametrize(
    "make_argv",
    [
        pytest.param(lambda root, tmp: _check_argv(root), id="check"),
        pytest.param(
            lambda root, tmp: [OKSTRA, "check", str(root), "--format", "json", "--home", str(root / ".okstra-home")],
            id="check-json",
        ),
        pytest.param(lambda root, tmp: [OKSTRA, "migrate-legacy", str(root), "--dry-run"], id="migrate-legacy"),
    ],
)
def test_progress_on_a_terminal_only_and_stdout_the_same(demo_root: Path, tmp_path: Path, make_argv: object) -> None:
    argv = make_argv(demo_root, tmp_path)  # type: ignore[operator]
    code_pty, out_pty, err_pty = _run(argv, on_pty=True, env=_env())
    code_pipe, out_pipe, err_pipe = _run(argv, on_pty=False, env=_env())
    assert code_pty == code_pipe
    assert out_pty == out_pipe, "stdout is byte-for-byte the same with and without a progress display"
    assert re.search(rb"\d+/\d+ tasks", _plain(err_pty)), err_pty[:300]
    assert err_pipe == b""


def test_demo_progress_counts_tasks_with_rate(tmp_path: Path) -> None:
    argv_for = lambda name: [OKSTRA, "demo", str(tmp_path / name), "--tasks", "40", "--jobs", "1"]  # noqa: E731
    code_pty, out_pty, err_pty = _run(argv_for("a"), on_pty=True, env=_env())
    code_pipe, out_pipe, err_pipe = _run(argv_for("b"), on_pty=False, env=_env())
    assert code_pty == code_pipe == 0
    # The only line that differs is the folder's name (and the time taken).
    assert out_pty.replace(b"/a", b"/b").split(b" in ")[0] == out_pipe.split(b" in ")[0]
    assert out_pty.count(b"\n") == out_pipe.count(b"\n") == 2
    shown = _plain(err_pty)
    assert b"40/40 tasks" in shown and b"writing the demo" in shown and b"tasks/s" in shown, shown
    assert err_pipe == b""


@pytest.mark.parametrize(("extra_env", "flag"), [({"CI": "true"}, []), ({}, ["--quiet"]), ({"TERM": "dumb"}, [])])
def test_no_progress_in_ci_or_quiet(demo_root: Path, extra_env: dict[str, str], flag: list[str]) -> None:
    argv = _check_argv(demo_root) + flag
    _code, out, err = _run(argv, on_pty=True, env=_env(**extra_env))
    _, out_pipe, _ = _run(argv, on_pty=False, env=_env())
    assert err == b""
    assert out == out_pipe


def test_check_reports_every_task_to_the_callback(demo_root: Path) -> None:
    calls: list[tuple[int, int]] = []
    plain = run_check(demo_root, home=demo_root / ".okstra-home", jobs=1)
    report = run_check(demo_root, home=demo_root / ".okstra-home", jobs=1, progress=lambda d, t: calls.append((d, t)))
    assert report.findings == plain.findings and report.files == plain.files
    total = calls[0][1]
    assert total >= 8
    assert calls[0] == (0, total) and calls[-1] == (total, total)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_demo_generator_reports_progress(tmp_path: Path) -> None:
    from okstra_core.demo import generate

    calls: list[tuple[int, int]] = []
    generate(tmp_path / "p", tasks=30, jobs=1, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (30, 30)
    assert all(t == 30 for _, t in calls) and [d for d, _ in calls] == sorted(d for d, _ in calls)


@pytest.mark.parametrize(
    ("value", "expected"), [("", False), ("0", False), ("false", False), ("1", True), ("true", True)]
)
def test_ci_variable(value: str, expected: bool) -> None:
    assert progress_module.in_ci({"CI": value}) is expected
