"""Rendering and log reports on the demo project (made by the core's own write path)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from okstra_core.cli import main
from okstra_core.digests import sha256_bytes
from okstra_core.render import is_reading_copy_stale, log_report, render_html
from okstra_core.render.source import load_source
from okstra_core.store import Project


def _data_files(root: Path) -> list[Path]:
    return sorted(root.glob(".okstra/tasks/*/*/runs/**/reports/final-report-*.data.json"))


def test_demo_has_every_task_type(demo_root: Path) -> None:
    types = {
        p.name.removeprefix("final-report-").removesuffix(".data.json").rsplit("-", 1)[0]
        for p in _data_files(demo_root)
    }
    assert types >= {"analysis", "option-selection", "implementation-planning", "implementation", "final-verification"}


def test_phase7_siblings_match_a_fresh_render(demo_root: Path) -> None:
    files = _data_files(demo_root)
    assert files
    for data in files:
        source = load_source(data)
        assert not hasattr(source, "reason"), source
        html = data.with_name(data.name.replace(".data.json", ".html"))
        md = data.with_name(data.name.replace(".data.json", ".md"))
        assert html.read_text(encoding="utf-8") == render_html(
            source.report,
            source.data,
            source.report_rel,
            source.report_stem,  # type: ignore[union-attr]
        )
        assert is_reading_copy_stale(md, data) is False


def test_cli_leaves_the_demo_byte_identical(fresh_demo: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    files = _data_files(fresh_demo)
    reports = sorted(p for p in (fresh_demo / ".okstra").rglob("reports/*") if p.is_file())
    before = {p: sha256_bytes(p.read_bytes()) for p in reports}
    for data in files:
        sibling = data.with_name(data.name.replace(".data.json", ".html"))
        assert main(["render-final-report", str(data), "--html"]) == 0
        assert capsysbinary.readouterr().out == sibling.read_bytes()
        assert main(["render-final-report", str(data), "--html", "-o", str(sibling)]) == 0  # identical: fine
        assert main(["render-final-report", str(data)]) == 0
        assert capsysbinary.readouterr().out == data.with_name(data.name.replace(".data.json", ".md")).read_bytes()
    after = {p: sha256_bytes(p.read_bytes()) for p in reports}
    assert after == before


def test_log_report_figures_are_the_real_sizes(demo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = Project.open(demo_root)
    assert isinstance(project, Project)
    checked = 0
    for ref in project.task_refs:
        task = ref.open()
        for rd in task.run_dirs:
            report = log_report(rd.path)
            assert not report.problems
            logs = {p.relative_to(rd.path).as_posix(): p for p in (rd.path / "prompts").glob("*.log")}
            prompts = {p.relative_to(rd.path).as_posix(): p for p in (rd.path / "prompts").glob("*.md")}
            assert {p.log for p in report.pairs if p.log and not p.flat} == set(logs)
            assert {p.prompt for p in report.pairs if p.prompt and not p.flat} == set(prompts)
            for pair in report.pairs:
                if pair.log:
                    assert pair.transcript_bytes == os.path.getsize(rd.path / pair.log) == pair.size_bytes
                    checked += 1
                if pair.prompt:
                    assert pair.prompt_bytes == os.path.getsize(rd.path / pair.prompt)
            doc = report.to_json()
            assert (
                doc["totalBytes"]
                == doc["transcriptBytes"]
                == sum(os.path.getsize(p) for p in logs.values())
                + sum(p.transcript_bytes or 0 for p in report.pairs if p.flat)
            )
            assert doc["promptBytes"] == sum(p.prompt_bytes or 0 for p in report.pairs)
            assert main(["log-report", str(rd.path), "--json"]) == 0
            assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(doc))
    assert checked > 10


def test_log_report_of_a_staged_type_covers_every_stage(demo_root: Path) -> None:
    impl = next(demo_root.glob(".okstra/tasks/*/*/runs/implementation"))
    stages = sorted(p.name for p in impl.iterdir() if p.name.startswith("stage-"))
    report = log_report(impl)
    assert {p.name.split("/", 1)[0] for p in report.pairs} == set(stages)
    expected = sum(os.path.getsize(p) for p in impl.glob("stage-*/prompts/*.log"))
    assert report.total_bytes == expected


def test_log_report_refuses_a_missing_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["log-report", str(tmp_path / "nope")]) == 1
    assert "not a directory" in capsys.readouterr().err
