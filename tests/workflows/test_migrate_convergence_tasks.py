"""``migrate-legacy``, ``convergence seed`` and ``task refresh-fix-cycles``; prepare's next-phase rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from okstra_core import layout
from okstra_core.check import run_check
from okstra_core.models import task as tm
from okstra_core.store import Project
from okstra_core.workflows import convergence, migrate
from okstra_core.workflows.tasks import WorkerSpec, prepare_run, record_fix_cycle

from .helpers import LATENCY, RETRY, STALE, diff, okstra, refuses, snapshot

FLAT = Path(".okstra/tasks/search/query-latency/runs/analysis")
FLAT_NAMES = ("run-manifest-analysis-007.json", "final-analysis-007.status", "lead-execution-prompt-analysis-007.md")


def test_migrate_dry_run_changes_nothing(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(fresh_demo)
    r = okstra(capsys, "migrate-legacy", fresh_demo, "--dry-run")
    assert r.code == 0 and r.out.count(": would move") == 3
    assert diff(before, snapshot(fresh_demo)) == []


def test_migrate_moves_into_categories_keeping_bytes_and_seq(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = {n: (fresh_demo / FLAT / n).read_bytes() for n in FLAT_NAMES}
    r = okstra(capsys, "migrate-legacy", fresh_demo, "--task", LATENCY)
    assert r.code == 0 and r.out.count(": moved") == 3
    assert (fresh_demo / FLAT / "manifests/run-manifest-analysis-007.json").read_bytes() == data[FLAT_NAMES[0]]
    assert (fresh_demo / FLAT / "status/final-analysis-007.status").read_bytes() == data[FLAT_NAMES[1]]
    assert (fresh_demo / FLAT / "prompts/lead-execution-prompt-analysis-007.md").read_bytes() == data[FLAT_NAMES[2]]
    assert not any((fresh_demo / FLAT / n).exists() for n in FLAT_NAMES)
    assert not [f for f in run_check(fresh_demo).findings if f.rule == "OKS017"]
    before = snapshot(fresh_demo)
    assert "no flat legacy" in okstra(capsys, "migrate-legacy", fresh_demo).out
    assert diff(before, snapshot(fresh_demo)) == []


def test_migrate_reallocates_a_taken_seq_and_never_overwrites(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # seq 007 is already in use in status/: the flat status file gets a fresh seq, nothing is overwritten
    (fresh_demo / FLAT / "status/final-analysis-007.status").write_bytes(b"error\n")
    r = okstra(capsys, "migrate-legacy", fresh_demo, "--task", LATENCY)
    assert r.code == 0 and "new seq" in r.out
    assert (fresh_demo / FLAT / "status/final-analysis-007.status").read_bytes() == b"error\n"
    assert (fresh_demo / FLAT / "status/final-analysis-008.status").read_bytes() == b"completed\n"


def test_migrate_interrupted_then_retried_keeps_one_seq(fresh_demo: Path) -> None:
    project = Project(fresh_demo)
    task = project.find_task(LATENCY)
    assert task is not None
    (fresh_demo / FLAT / "prompts/lead-execution-prompt-analysis-007.md").parent.mkdir(exist_ok=True)
    (fresh_demo / FLAT / "lead-execution-prompt-analysis-007.md").rename(
        fresh_demo / FLAT / "worker-x-worker-prompt-analysis-007.md.tmp"
    )
    rd = task.run_dir("analysis")
    assert rd is not None
    moves = migrate.plan_moves(rd)
    # move only the first file, as if the process died right after
    migrate._migrate(fresh_demo, moves[:1])
    (fresh_demo / FLAT / "worker-x-worker-prompt-analysis-007.md.tmp").rename(
        fresh_demo / FLAT / "lead-execution-prompt-analysis-007.md"
    )
    again = Project(fresh_demo).find_task(LATENCY)
    assert again is not None
    migrate.migrate_task(fresh_demo, again)
    assert sorted(p.name for p in (fresh_demo / FLAT).rglob("*-007*")) == sorted(
        ["run-manifest-analysis-007.json", "final-analysis-007.status", "lead-execution-prompt-analysis-007.md"]
    )


def test_migrate_refuses_unknown_task(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refuses(capsys, fresh_demo, "migrate-legacy", fresh_demo, "--task", "nope", names="task-catalog.json")


# ------------------------------------------------------------------ convergence

STATE = Path(".okstra/tasks/payments/retry-policy/runs/analysis/state")
WORK = STATE / "convergence-work-analysis-001.json"
FINAL = STATE / "convergence-analysis-001.json"
SEED = ("convergence", "seed")


def _seed(root: Path, *extra: str) -> list[str | Path]:
    return [*SEED, root, "--task", RETRY, "--run-type", "analysis", *extra]


def test_seed_resumes_matching_state(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(fresh_demo)
    r = okstra(capsys, *_seed(fresh_demo))
    assert r.code == 0 and "resumed" in r.out
    assert diff(before, snapshot(fresh_demo)) == []


def test_seed_fresh_from_groups(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (fresh_demo / WORK).unlink()
    (fresh_demo / FINAL).unlink()
    r = okstra(capsys, *_seed(fresh_demo))
    assert r.code == 0 and "seeded" in r.out
    work = json.loads((fresh_demo / WORK).read_text())
    assert work["queue"] == ["G-001", "G-002", "G-003"] and work["rounds"] == [{"round": 0, "status": "reduced"}]


def test_seed_invalid_state_fails_closed_then_restart_archives_bytes(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    partial = b'{"schemaVersion": "1.2", "queue": ['
    (fresh_demo / WORK).write_bytes(partial)
    # a valid terminal final is reused unchanged: restart is refused, nothing written
    refuses(capsys, fresh_demo, *_seed(fresh_demo), names=WORK.name)
    refuses(capsys, fresh_demo, *_seed(fresh_demo, "--restart-from-round0"), names=FINAL.name)
    # an invalid final is archived (byte for byte) and removed; the work state is archived and replaced
    final_bytes = b'{"schemaVersion": "1.1"}\n'
    (fresh_demo / FINAL).write_bytes(final_bytes)
    r = okstra(capsys, *_seed(fresh_demo, "--restart-from-round0"))
    assert r.code == 0 and "restarted" in r.out, r.err
    archives = {
        p.name: p.read_bytes() for p in (fresh_demo / STATE / "migrations").iterdir() if not p.name.startswith(".")
    }
    assert sorted(archives.values()) == sorted([partial, final_bytes])
    assert not (fresh_demo / FINAL).exists()
    assert json.loads((fresh_demo / WORK).read_text())["status"] == "open"
    # retrying the restart is a resume now, and never piles up archives
    assert "resumed" in okstra(capsys, *_seed(fresh_demo, "--restart-from-round0")).out
    assert len(list((fresh_demo / STATE / "migrations").glob("*.orig"))) == 2


def test_final_replaced_only_while_archive_matches(fresh_demo: Path) -> None:
    from okstra_core import writes
    from okstra_core.errors import WriteRefused

    final = fresh_demo / FINAL
    final.write_bytes(b"{}")
    archive = convergence.archive(fresh_demo, final.parent.parent, final, b"{ other bytes }")
    with pytest.raises(WriteRefused, match="archive does not match"):
        writes.remove_archived(fresh_demo, final, archive)
    assert final.read_bytes() == b"{}"


def test_seed_refuses_missing_groups(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refuses(
        capsys,
        fresh_demo,
        *SEED,
        fresh_demo,
        "--task",
        RETRY,
        "--run-type",
        "option-selection",
        names="option-selection",
    )


# ------------------------------------------------------------------ task manifest upkeep


def test_refresh_fix_cycles(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = fresh_demo / ".okstra/tasks/search/stale-cache"
    before = snapshot(fresh_demo)
    r = okstra(capsys, "task", "refresh-fix-cycles", fresh_demo, "--task", STALE)
    assert r.code == 0 and "already up to date" in r.out
    assert diff(before, snapshot(fresh_demo)) == []
    record_fix_cycle(
        fresh_demo, root, tm.FixCycleEvent(event="closed", cycle_id="fc-2", cycle=2, at="2026-11-30T00:00:00Z")
    )
    r = okstra(capsys, "task", "refresh-fix-cycles", fresh_demo, "--task", STALE)
    assert r.code == 0 and "updated (count 2, open none)" in r.out
    manifest = json.loads(layout.task_manifest_path(root).read_text())
    assert manifest["fixCycles"].get("openCycleId") is None
    assert manifest["fixCycles"]["latest"]["closedAt"] == "2026-11-30T00:00:00Z"


def test_refresh_fix_cycles_refuses_bad_line(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = layout.fix_cycles_path(fresh_demo / ".okstra/tasks/search/stale-cache")
    with path.open("a") as fh:
        fh.write('{"event": "reopened"}\n')
    refuses(capsys, fresh_demo, "task", "refresh-fix-cycles", fresh_demo, "--task", STALE, names="fix-cycles.jsonl")


def test_prepare_lowers_ready_pointer_and_keeps_phase(fresh_demo: Path) -> None:
    root = fresh_demo / ".okstra/tasks/search/stale-cache"
    before = json.loads(layout.task_manifest_path(root).read_text())["workflow"]["nextRecommendedPhase"]
    assert before["status"] == "ready"
    prepare_run(
        fresh_demo, root, "implementation", stage=1, workers=[WorkerSpec("codex-executor", "executor", "codex", "gpt")]
    )
    after = json.loads(layout.task_manifest_path(root).read_text())["workflow"]["nextRecommendedPhase"]
    assert after == {**before, "status": "pending"}


def test_an_older_run_closing_late_leaves_the_latest_run_fields_alone(fresh_demo: Path) -> None:
    from okstra_core.workflows.tasks import close_run

    root = fresh_demo / ".okstra/tasks/search/stale-cache"
    worker = [WorkerSpec("codex-executor", "executor", "codex", "gpt")]
    first = prepare_run(fresh_demo, root, "implementation", stage=1, workers=worker)
    second = prepare_run(fresh_demo, root, "implementation", stage=2, workers=worker)
    pending = tm.NextRecommendedPhase(phase="implementation", status="pending")
    close_run(first, "completed", report_path=None, next_phase=pending)
    after = tm.TaskManifest.model_validate_json(layout.task_manifest_path(root).read_bytes())
    assert after.latest_run_path == layout.rel(second.run_dir, fresh_demo)
    assert (after.latest_run_status, after.current_status) == ("prepared", "ready-for-lead")
    assert after.workflow is not None and after.workflow.phase_states["implementation"] == "completed"
    close_run(second, "failed", report_path=None, next_phase=pending)
    after = tm.TaskManifest.model_validate_json(layout.task_manifest_path(root).read_bytes())
    assert (after.latest_run_status, after.current_status) == ("failed", "failed")


def test_a_seq_claim_named_in_other_digits_is_not_a_claim(tmp_path: Path) -> None:
    """A claim file named in superscript digits (``str.isdigit`` takes them) is skipped, never a traceback."""
    claims = tmp_path / layout.SEQ_CLAIMS_DIR
    claims.mkdir()
    (claims / "\u00b9\u00b2\u00b3").write_text("migrate-legacy from 007\n", encoding="utf-8")
    (claims / "012").write_text("migrate-legacy from 007\n", encoding="utf-8")
    (claims / "013").write_text("migrate-legacy from \u00b2\u00b2\u00b2\n", encoding="utf-8")
    assert migrate._migration_claims(tmp_path) == {7: 12}
