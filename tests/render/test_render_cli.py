"""``okstra render-final-report`` / ``render-task-index``: output, create-only writes, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from render_samples import TASK_TYPES, report_bytes, report_data

from okstra_core.cli import main
from okstra_core.digests import pretty_json, sha256_bytes
from okstra_core.render import is_reading_copy_stale, render_markdown
from okstra_core.render.source import load_source


def _data_file(root: Path, task_type: str = "analysis", version: str = "3.0") -> Path:
    run = "runs/implementation/stage-1" if task_type == "implementation" else f"runs/{task_type}"
    path = root / ".okstra/tasks/checkout/chk-42" / run / "reports" / f"final-report-{task_type}-001.data.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(report_bytes(task_type, version))
    return path


@pytest.mark.parametrize("task_type", TASK_TYPES)
@pytest.mark.parametrize("html", [False, True])
def test_stdout_matches_library_and_leaves_source_alone(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], task_type: str, html: bool
) -> None:
    data = _data_file(tmp_path, task_type)
    before = data.read_bytes()
    md = data.with_name(data.name.replace(".data.json", ".md"))
    md.write_bytes(b"pre-existing reading copy\n")
    argv = ["render-final-report", str(data)] + (["--html"] if html else [])
    assert main(argv) == 0
    first = capsysbinary.readouterr().out
    assert main(argv) == 0
    assert capsysbinary.readouterr().out == first
    assert data.read_bytes() == before
    assert md.read_bytes() == b"pre-existing reading copy\n"
    if not html:
        source = load_source(data)
        assert not hasattr(source, "reason")
        assert first == render_markdown(source.report).encode()  # type: ignore[union-attr]
    else:
        assert f'content="{sha256_bytes(before)}"'.encode() in first


def test_html_names_project_relative_report_and_digest(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    data = _data_file(tmp_path, "option-selection")
    assert main(["render-final-report", str(data), "--html"]) == 0
    out = capsysbinary.readouterr().out.decode()
    rel = ".okstra/tasks/checkout/chk-42/runs/option-selection/reports/final-report-option-selection-001.data.json"
    assert f'<meta name="okstra-report" content="{rel}">' in out
    assert "user-response-option-selection-001.md" in out
    assert sha256_bytes(data.read_bytes()) in out


def test_output_file_is_create_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _data_file(tmp_path)
    out = tmp_path / "copy.md"
    assert main(["render-final-report", str(data), "-o", str(out)]) == 0
    written = out.read_bytes()
    assert main(["render-final-report", str(data), "-o", str(out)]) == 0  # identical: fine
    assert "already up to date" in capsys.readouterr().err
    out.write_bytes(b"hand edits\n")
    assert main(["render-final-report", str(data), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "never overwritten" in err and str(out.name) in err
    assert out.read_bytes() == b"hand edits\n"
    assert written.startswith(b"<!-- Reading copy")


def test_schema_failure_lists_every_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    value = report_data("analysis")
    value["analysisFindings"][0]["severity"] = "catastrophic"
    del value["runDateTimeSegment"]
    value["clarificationItems"][1]["itemId"] = "Q-2"
    data = _data_file(tmp_path)
    data.write_bytes(pretty_json(value))
    out = tmp_path / "out.html"
    assert main(["render-final-report", str(data), "--html", "-o", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert str(data) in err and "3 errors" in err
    assert "runDateTimeSegment: missing" in err
    assert "analysisFindings[0].severity:" in err
    assert "clarificationItems[1].itemId:" in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{not json", "invalid JSON"),
        (b'{"schemaVersion": "9.9"}', "unknown report schemaVersion"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, reason: str) -> None:
    data = tmp_path / "final-report-analysis-001.data.json"
    data.write_bytes(content)
    assert main(["render-final-report", str(data)]) == 1
    err = capsys.readouterr().err.strip()
    assert reason in err and str(data) in err and "\n" not in err


def test_wrong_deliverable_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    value = report_data("analysis")
    value["verificationVerdict"] = {"verdict": "pass"}
    data = tmp_path / "final-report-analysis-001.data.json"
    data.write_bytes(json.dumps(value).encode())
    assert main(["render-final-report", str(data)]) == 1
    assert "exactly one task-type deliverable" in capsys.readouterr().err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render-final-report", str(tmp_path / "nope.data.json")]) == 1
    assert "file is missing" in capsys.readouterr().err


def test_stale_reading_copy(tmp_path: Path) -> None:
    data = _data_file(tmp_path)
    md = tmp_path / "copy.md"
    assert main(["render-final-report", str(data), "-o", str(md)]) == 0
    assert is_reading_copy_stale(md, data) is False
    md.write_bytes(md.read_bytes() + b"edited\n")
    assert is_reading_copy_stale(md, data) is True
    missing = is_reading_copy_stale(tmp_path / "none.md", data)
    assert not isinstance(missing, bool) and "missing" in missing.reason
    data.write_bytes(b"{}")
    broken = is_reading_copy_stale(md, data)
    assert not isinstance(broken, bool)
