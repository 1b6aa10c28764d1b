"""The command line: exit codes 0/1/2, --select/--ignore, --strict, --list-rules, okstra-tui --check."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from okstra_core.check.catalog import markdown
from okstra_core.cli import main
from okstra_core.commands.check import main_check


def test_clean_demo_exits_0(demo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(demo_root), "--home", str(demo_root / ".okstra-home"), "-j", "1"]) == 0
    assert "0 errors" in capsys.readouterr().out


def test_warnings_fail_only_with_strict(demo_root: Path) -> None:
    home = str(demo_root / ".okstra-home")
    assert main_check([str(demo_root), "--home", home, "-j", "1", "--format", "json"]) == 0
    assert main_check([str(demo_root), "--home", home, "-j", "1", "--strict", "--format", "json"]) == 1


def test_errors_exit_1_and_select_ignore(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (fresh_demo / ".okstra/discovery/latest-task.json").write_text("{")
    home = str(fresh_demo / ".okstra-home")
    assert main_check([str(fresh_demo), "--home", home, "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert {f["rule"] for f in doc["findings"] if f["severity"] == "error"} == {"OKS004"}
    assert main_check([str(fresh_demo), "--home", home, "--ignore", "OKS004", "--format", "json"]) == 0
    capsys.readouterr()
    assert main_check([str(fresh_demo), "--home", home, "--select", "OKS08,OKS017", "--format", "json"]) == 0
    rules = {f["rule"] for f in json.loads(capsys.readouterr().out)["findings"]}
    assert rules and all(r.startswith("OKS08") or r == "OKS017" for r in rules)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--select", "OKS999"], "okstra check: --select: unknown rule id or prefix 'OKS999'"),
        (
            ["--format", "yaml"],
            "okstra check: error: argument --format: invalid choice: 'yaml' "
            "(choose from 'text', 'json', 'json-lines', 'github', 'gitlab', 'sarif', 'junit', 'markdown')",
        ),
        (["--jobs", "x"], "okstra check: error: argument --jobs/-j: invalid int value: 'x'"),
    ],
)
def test_bad_flags_exit_2(demo_root: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main_check([str(demo_root), *argv]) == 2  # okstra-tui --check: the same flags and exit codes
    capsys.readouterr()
    proc = subprocess.run(
        [sys.executable, "-m", "okstra_core.cli", "check", str(demo_root), *argv], capture_output=True, text=True
    )
    assert proc.returncode == 2
    out, err = proc.stdout, proc.stderr
    assert out == ""
    # One line says what is wrong; the rest, if any, is the usage (as git and ruff print it).
    said = [line for line in err.splitlines() if line.startswith("okstra check:")]
    assert said == [message], err
    assert err.rstrip("\n").endswith(message)


def test_no_project_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main_check([str(tmp_path)]) == 2
    assert "no .okstra/ store" in capsys.readouterr().err
    assert main_check([str(tmp_path / "missing")]) == 2


def test_list_rules_markdown_is_docs_rules_md(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--list-rules", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    docs = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    assert out == markdown()
    assert docs.read_text(encoding="utf-8") == out, "docs/rules.md is stale: run `make rules-doc`"


def test_list_rules_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--list-rules"]) == 0
    assert capsys.readouterr().out.startswith("OKS001  error")


def test_okstra_check_runs_as_a_process(demo_root: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "okstra_core.cli",
            "check",
            str(demo_root),
            "--format",
            "github",
            "--home",
            str(demo_root / ".okstra-home"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("0 errors")
