"""Store text printed by a verb: visible on a terminal, exact bytes to a pipe or a file.

A report, a returned body or a store path may carry ``ESC ]52;…BEL`` (it sets
the terminal's clipboard) or ``ESC [2J``. A terminal must never receive them
raw; a pipe must receive the document unchanged (``> copy.md`` stays exact).
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from render_samples import report_data

from okstra_core.cli import main
from okstra_core.digests import pretty_json
from okstra_core.render import render_markdown
from okstra_core.render.source import load_source

OSC52 = "\x1b]52;c;ZXZpbA==\x07"
CSI = "\x1b[2J\x9b31m"


def _hostile_report(root: Path) -> Path:
    data = report_data("analysis")
    data["summary"] = f"Clipboard {OSC52} and screen {CSI} here."
    path = root / ".okstra/tasks/checkout/chk-42/runs/analysis/reports/final-report-analysis-001.data.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(pretty_json(data))
    return path


def _on_a_terminal(argv: list[str]) -> tuple[int, bytes]:
    """Run ``okstra ARGV`` with its stdout on a pseudo-terminal; its exit status and what the terminal got."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "okstra_core.cli", *argv], stdout=slave, stderr=subprocess.PIPE, close_fds=True
    )
    os.close(slave)
    got = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        got += chunk
    os.close(master)
    assert proc.stderr is not None
    proc.stderr.read()
    return proc.wait(), bytes(got)


def test_render_final_report_on_a_terminal_shows_escapes_visibly(tmp_path: Path) -> None:
    data = _hostile_report(tmp_path)
    status, shown = _on_a_terminal(["render-final-report", str(data)])
    assert status == 0
    text = shown.decode()
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    assert "Clipboard ␛]52;c;ZXZpbA==␇ and screen ␛[2J\\x9b31m here." in text
    assert "## " in text  # still the whole reading copy, lines kept


def test_render_final_report_to_a_pipe_is_exact(tmp_path: Path) -> None:
    data = _hostile_report(tmp_path)
    out = subprocess.run(
        [sys.executable, "-m", "okstra_core.cli", "render-final-report", str(data)], capture_output=True, check=True
    ).stdout
    source = load_source(data)
    assert not hasattr(source, "reason")
    assert out == render_markdown(source.report).encode()  # type: ignore[union-attr]
    assert OSC52.encode() in out


def test_render_task_index_on_a_terminal_shows_escapes_visibly(fresh_demo: Path) -> None:
    task_root = fresh_demo / ".okstra/tasks/checkout/fraud-rules"
    manifest_path = task_root / "task-manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["title"] = f"fraud{OSC52}rules"
    manifest_path.write_text(json.dumps(manifest))
    status, shown = _on_a_terminal(["render-task-index", str(task_root)])
    assert status == 0, shown
    text = shown.decode()
    assert "\x1b" not in text and "\x07" not in text
    assert "fraud␛]52;c;ZXZpbA==␇rules" in text


def test_log_report_on_a_terminal_names_the_run_dir_visibly(fresh_demo: Path) -> None:
    tasks = fresh_demo / ".okstra/tasks"
    (tasks / "checkout").rename(tasks / f"check{CSI}out")
    run_dir = tasks / f"check{CSI}out" / "fraud-rules" / "runs" / "option-selection"
    status, shown = _on_a_terminal(["log-report", str(run_dir)])
    assert status == 0, shown
    text = shown.decode()
    assert "\x1b" not in text and "\x9b" not in text
    assert "check␛[2J\\x9b31mout" in text


@pytest.mark.parametrize("json_flag", [False, True])
def test_log_report_to_a_pipe_keeps_the_text(
    fresh_demo: Path, capsysbinary: pytest.CaptureFixture[bytes], json_flag: bool
) -> None:
    tasks = fresh_demo / ".okstra/tasks"
    (tasks / "checkout").rename(tasks / f"check{CSI}out")
    run_dir = tasks / f"check{CSI}out" / "fraud-rules" / "runs" / "option-selection"
    assert main(["log-report", str(run_dir), *(["--json"] if json_flag else [])]) == 0
    out = capsysbinary.readouterr().out
    if json_flag:
        # JSON escapes every control character, C1 (U+009B) included; the value reads back the same.
        assert "\x1b" not in out.decode() and "\x9b" not in out.decode()
        assert b"\\u009b" in out
        assert json.loads(out)["runDir"] == str(run_dir)
    else:
        assert f"Log report: {run_dir}".encode() in out


def test_verify_completion_on_a_terminal_shows_the_body_visibly(tmp_path: Path) -> None:
    from okstra_core.workflows import invocations

    root = tmp_path / "p"
    (root / ".okstra").mkdir(parents=True)
    invocations.start(root, "code-review", "r1", "instructions\n", "prompt\n")
    invocations.complete(root, "code-review", "r1", f"looks fine {OSC52}\n")
    argv = ["agent-prompt", "verify-completion", str(root), "--purpose", "code-review", "--id", "r1"]
    status, shown = _on_a_terminal(argv)
    assert status == 0, shown
    assert shown.replace(b"\r\n", b"\n") == "looks fine ␛]52;c;ZXZpbA==␇\n".encode()
    piped = subprocess.run([sys.executable, "-m", "okstra_core.cli", *argv], capture_output=True, check=True).stdout
    assert piped == f"looks fine {OSC52}\n".encode()
