"""Previews of large files read and prepare only what the pane shows: the caps, their notes, control characters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from okstra_core import reading
from okstra_core.digests import pretty_json
from okstra_core.models.run import TeamState
from okstra_core.store import Project
from okstra_tui.data import preview
from okstra_tui.data.preview import PREVIEW_CHARS, PREVIEW_ROWS, PreviewTarget, artifact_for, load_preview

TASK = ".okstra/tasks/payments/retry-policy"


def _target(root: Path, path: Path) -> PreviewTarget:
    artifact = artifact_for(Project(root), path)
    assert artifact is not None, path
    return PreviewTarget(path, path.name, artifact, artifact.kind)


def test_a_long_errors_log_reads_its_first_rows_and_counts_the_rest(fresh_demo: Path) -> None:
    log = fresh_demo / TASK / "runs/analysis/logs/errors-analysis-001.jsonl"
    good = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    rows = [json.dumps({**good, "message": f"row {i}"}) for i in range(25_000)]
    rows[9] = "{not json"  # shown: checked and named
    rows[20_000] = "{not json either"  # not shown: neither read nor checked here
    rows[3] = "\x1b]52;c;PWNED\x07"  # raw controls: not JSON, shown as text
    log.write_text("\n".join(rows) + "\n", encoding="utf-8")
    loaded = load_preview(_target(fresh_demo, log), fresh_demo)
    assert loaded.error is None and loaded.text is not None
    assert loaded.text.count("\n") == PREVIEW_ROWS and "row 499" in loaded.text and "row 500" not in loaded.text
    assert loaded.cut is not None and f"{25_000 - PREVIEW_ROWS:,} more rows not shown" in loaded.cut
    assert [p.split(":")[0] for p in loaded.problems] == ["line 4", "line 10"]
    assert "\x1b" not in loaded.text and "\x07" not in loaded.text and "␛]52" in loaded.text


def test_a_huge_team_state_is_read_once_and_pretty_printed_only_as_far_as_shown(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    team_state = fresh_demo / TASK / "runs/analysis/state/team-state-analysis-001.json"
    value = json.loads(team_state.read_text(encoding="utf-8"))
    row = value["workerDispatches"][0]
    value["workerDispatches"] = [{**row, "dispatchId": f"d-{i}"} for i in range(25_000)]
    team_state.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    reads: list[Path] = []
    real = reading.read_bytes

    def counted(path: Path, **kwargs: object) -> object:
        reads.append(path)
        return real(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(reading, "read_bytes", counted)
    loaded = load_preview(_target(fresh_demo, team_state), fresh_demo)
    assert reads == [team_state], "read once: validated from the same parse"
    assert isinstance(loaded.model, TeamState) and len(loaded.model.worker_dispatches) == 25_000
    assert loaded.pretty is not None and loaded.text is None
    assert len(loaded.pretty) <= PREVIEW_CHARS and loaded.pretty.endswith("\n")
    whole = pretty_json(value).decode("utf-8")
    assert loaded.pretty == whole[: len(loaded.pretty)]
    assert loaded.cut is not None and loaded.cut.startswith(f"showing the first {len(loaded.pretty):,} characters")


def test_a_small_document_is_pretty_printed_whole_as_the_store_writes_it(fresh_demo: Path) -> None:
    manifest = next((fresh_demo / TASK / "runs/analysis/manifests").glob("run-manifest-*.json"))
    loaded = load_preview(_target(fresh_demo, manifest), fresh_demo)
    value = json.loads(manifest.read_text(encoding="utf-8"))
    assert loaded.pretty == pretty_json(value).decode("utf-8") and loaded.cut is None and not loaded.problems


def test_a_large_text_file_is_read_only_up_to_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("".join(f"line {i} \x1b[31m\n" for i in range(100_000)), encoding="utf-8")
    monkeypatch.setattr(preview.reading, "read_bytes", None)  # the whole file is never read
    loaded = load_preview(PreviewTarget(notes, notes.name), tmp_path)
    assert loaded.text is not None and len(loaded.text) <= PREVIEW_CHARS and not loaded.complete
    assert loaded.text.endswith("\n") and "\x1b" not in loaded.text and "␛[31m" in loaded.text
    assert loaded.cut is not None and f"of a {notes.stat().st_size:,}-byte file" in loaded.cut


def test_a_long_sidecar_body_is_cut(fresh_demo: Path) -> None:
    inputs = fresh_demo / ".okstra/tasks/checkout/saved-cards/runs/implementation-planning/design-prep-inputs"
    sidecar = sorted(inputs.glob("design-prep-input-*.md"))[0]
    sidecar.write_text(sidecar.read_text(encoding="utf-8") + "more\n" * 100_000, encoding="utf-8")
    loaded = load_preview(_target(fresh_demo, sidecar), fresh_demo)
    assert loaded.header is not None and not loaded.problems
    assert loaded.text is not None and len(loaded.text) <= PREVIEW_CHARS and loaded.cut is not None


def test_markdown_too_costly_to_lay_out_is_shown_as_source(tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\n" + "".join(f"- item {i}\n" for i in range(300)), encoding="utf-8")
    loaded = load_preview(PreviewTarget(notes, notes.name), tmp_path)
    assert loaded.complete and not loaded.render_markdown
    assert loaded.cut is not None and "shown as Markdown source" in loaded.cut
    short = tmp_path / "short.md"
    short.write_text("# Notes\n\n" + "".join(f"- item {i}\n" for i in range(20)), encoding="utf-8")
    loaded = load_preview(PreviewTarget(short, short.name), tmp_path)
    assert loaded.render_markdown and loaded.cut is None
