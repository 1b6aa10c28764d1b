"""``team-state dispatch | agent-dispatch | link``, ``prompt publish``, ``agent-prompt start | complete | verify``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from okstra_core import layout
from okstra_core.errors import WriteRefused
from okstra_core.models.run import RunManifest
from okstra_core.workflows import prompts

from .helpers import CI, RETRY, diff, okstra, refuses, snapshot

AN = Path(".okstra/tasks/payments/retry-policy/runs/analysis")
STATE = AN / "state/team-state-analysis-002.json"
RESULTS = AN / "worker-results"
RUN = ("--task", RETRY, "--run-type", "analysis")


def _state(root: Path) -> dict:
    return json.loads((root / STATE).read_text())


def test_dispatch_upsert_replaces_in_place_and_id_less_rows_stack(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _state(fresh_demo)["workerDispatches"]
    first = rows[0]
    r = okstra(
        capsys,
        "team-state",
        "dispatch",
        fresh_demo,
        *RUN,
        "--dispatch-id",
        first["dispatchId"],
        "--worker-id",
        first["workerId"],
        "--session-id",
        "sess-new",
        "--pane-id",
        "%99",
        "--status",
        "completed",
    )
    assert r.code == 0, r.err
    after = _state(fresh_demo)
    assert len(after["workerDispatches"]) == len(rows)
    assert after["workerDispatches"][0]["sessionId"] == "sess-new"  # replaced in place, same position
    assert after["workerDispatches"][0]["participantRef"] == first["participantRef"]  # v2 identity from the assignment
    assert after["promptDeliveryVerified"] is False
    for _ in range(2):
        assert okstra(capsys, "team-state", "dispatch", fresh_demo, *RUN, "--worker-id", "claude-analyser").code == 0
    assert len(_state(fresh_demo)["workerDispatches"]) == len(rows) + 2  # rows without a dispatch id stack


def test_agent_dispatch_and_row_file(fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    row = tmp_path / "row.json"
    row.write_text(
        json.dumps({"dispatchId": "a-9", "workerId": "report-writer", "dispatchedAt": "2026-11-30T00:00:00Z"})
    )
    assert okstra(capsys, "team-state", "agent-dispatch", fresh_demo, *RUN, "--row", row).code == 0
    assert (
        okstra(capsys, "team-state", "agent-dispatch", fresh_demo, *RUN, "--row", row, "--status", "completed").code
        == 0
    )
    agents = [a for a in _state(fresh_demo)["agentDispatches"] if a["dispatchId"] == "a-9"]
    assert len(agents) == 1 and agents[0]["status"] == "completed"


def test_dispatch_refusals(fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[1]")
    refuses(capsys, fresh_demo, "team-state", "dispatch", fresh_demo, *RUN, "--row", bad, names="bad.json")
    refuses(
        capsys, fresh_demo, "team-state", "dispatch", fresh_demo, *RUN, "--dispatch-id", "x", names=STATE.name
    )  # no workerId
    refuses(
        capsys,
        fresh_demo,
        "team-state",
        "dispatch",
        fresh_demo,
        "--task",
        RETRY,
        "--run-type",
        "implementation",
        "--stage",
        "9",
        "--worker-id",
        "w",
        names="stage-9",
    )
    (fresh_demo / STATE).write_text("{ torn")
    refuses(capsys, fresh_demo, "team-state", "dispatch", fresh_demo, *RUN, "--worker-id", "w", names=STATE.name)


def test_link_exclusive_both_ways(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = RESULTS / "claude-analyser-result-analysis-002.md"
    okstra(
        capsys, "team-state", "dispatch", fresh_demo, *RUN, "--dispatch-id", "d-extra", "--worker-id", "claude-analyser"
    )
    # already linked to another dispatch
    refuses(
        capsys,
        fresh_demo,
        "team-state",
        "link",
        fresh_demo,
        *RUN,
        "--dispatch-id",
        "d-extra",
        "--result",
        res,
        names=STATE.name,
    )
    # that dispatch already authorises another path
    other = RESULTS / "codex-analyser-result-analysis-002.md"
    refuses(
        capsys,
        fresh_demo,
        "team-state",
        "link",
        fresh_demo,
        *RUN,
        "--dispatch-id",
        "d-analysis-claude-analyser",
        "--result",
        other,
        names=STATE.name,
    )
    refuses(
        capsys,
        fresh_demo,
        "team-state",
        "link",
        fresh_demo,
        *RUN,
        "--dispatch-id",
        "nope",
        "--result",
        RESULTS / "codex-analyser-audit-analysis-002.md",
        names=STATE.name,
    )
    undeclared = fresh_demo / RESULTS / "stray-result.md"
    undeclared.write_text("x")
    refuses(
        capsys,
        fresh_demo,
        "team-state",
        "link",
        fresh_demo,
        *RUN,
        "--dispatch-id",
        "d-extra",
        "--result",
        undeclared,
        names="stray-result.md",
    )
    refuses(
        capsys,
        fresh_demo,
        "team-state",
        "link",
        fresh_demo,
        *RUN,
        "--dispatch-id",
        "d-extra",
        "--result",
        AN / "reports/final-report-analysis-002.md",
        names="final-report-analysis-002.md",
    )
    # the same link again is a no-op; a declared, unlinked result links
    before = snapshot(fresh_demo)
    assert (
        okstra(
            capsys,
            "team-state",
            "link",
            fresh_demo,
            *RUN,
            "--dispatch-id",
            "d-analysis-claude-analyser",
            "--result",
            res,
        ).code
        == 0
    )
    assert diff(before, snapshot(fresh_demo)) == []
    state = _state(fresh_demo)
    state["agentResultLinks"] = [
        link for link in state["agentResultLinks"] if link["dispatchId"] != "d-analysis-claude-analyser"
    ]
    (fresh_demo / STATE).write_text(json.dumps(state, indent=2))
    assert okstra(capsys, "team-state", "link", fresh_demo, *RUN, "--dispatch-id", "d-extra", "--result", res).code == 0
    assert {"d-extra"} == {
        link["dispatchId"] for link in _state(fresh_demo)["agentResultLinks"] if link["resultPath"] == res.as_posix()
    }


# ---------------------------------------------------------------- prompt publish

STAGE = Path(".okstra/tasks/platform/ci-speedup/runs/implementation/stage-1")
PROMPT = STAGE / "prompts/codex-executor-worker-prompt-implementation-001.md"
PUB = (
    "prompt",
    "publish",
    "--task",
    CI,
    "--run-type",
    "implementation",
    "--stage",
    "1",
    "--assignment",
    "assign-02-codex-executor",
    "--duty",
    "executor",
)


def _publish(root: Path, *extra: str | Path) -> list[str | Path]:
    return [PUB[0], PUB[1], root, *PUB[2:], *extra]


def test_publish_recovers_identical_orphan(
    fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    meta = fresh_demo / PROMPT.with_name(PROMPT.name + ".meta.json")
    meta.unlink()  # an interrupted publication: prompt written, completion marker missing
    body = tmp_path / "body.md"
    body.write_bytes((fresh_demo / PROMPT).read_bytes())
    r = okstra(capsys, *_publish(fresh_demo, "--body", body))
    assert r.code == 0, r.err
    assert "recovered" in r.out and meta.exists()
    assert json.loads(meta.read_text())["assignmentRef"] == "assign-02-codex-executor"
    before = snapshot(fresh_demo)
    assert okstra(capsys, *_publish(fresh_demo, "--body", body)).code == 0  # retry after completion: no-op
    assert diff(before, snapshot(fresh_demo)) == []


def test_publish_refusals(fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = tmp_path / "body.md"
    body.write_text("# different bytes\n")
    refuses(capsys, fresh_demo, *_publish(fresh_demo, "--body", body), names=PROMPT.name)
    (fresh_demo / PROMPT.with_name(PROMPT.name + ".meta.json")).unlink()
    refuses(capsys, fresh_demo, *_publish(fresh_demo, "--body", body), names=PROMPT.name)  # orphan with other bytes
    args = [a if a != "executor" else "nope" for a in _publish(fresh_demo, "--body", body)]
    refuses(capsys, fresh_demo, *args, names="catalog.json")
    args = [a if a != "assign-02-codex-executor" else "assign-77" for a in _publish(fresh_demo, "--body", body)]
    refuses(capsys, fresh_demo, *args, names="run-manifest-implementation-001.json")
    reservation = fresh_demo / STAGE / "prompts/.reservations" / "implementation-001-codex-executor.json"
    reservation.write_text(reservation.read_text().replace("codex-executor-worker", "someone-else-worker"))
    refuses(capsys, fresh_demo, *_publish(fresh_demo, "--body", body), names=reservation.name)


def test_run_manifest_immutable_fields_refused(fresh_demo: Path) -> None:
    path = fresh_demo / STAGE / "manifests/run-manifest-implementation-001.json"
    before = path.read_bytes()

    def change(doc: RunManifest) -> RunManifest:
        assert doc.agent_contract is not None
        doc.agent_contract.catalog_digest = "0" * 64
        return doc

    def start(doc: RunManifest) -> RunManifest:
        doc.status = "in-progress"
        return doc

    with pytest.raises(WriteRefused, match="immutable"):
        prompts.replace_run_manifest(fresh_demo, path, change)
    assert path.read_bytes() == before
    prompts.replace_run_manifest(fresh_demo, path, start)
    assert json.loads(path.read_text())["status"] == "in-progress"


# ---------------------------------------------------------------- agent invocations


def _inv(*verb: str, root: Path, purpose: str, inv: str) -> list[str | Path]:
    return ["agent-prompt", *verb[:1], root, "--purpose", purpose, "--id", inv, *verb[1:]]


def test_invocation_lifecycle_and_verify_prints_only_body(
    fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "i.md").write_text("Review.\n")
    (tmp_path / "p.md").write_text("# Prompt\n")
    (tmp_path / "body.txt").write_text("  verdict: ok\n\nno trailing newline added")
    args = dict(root=fresh_demo, purpose="code-review", inv="review-new")
    assert (
        okstra(
            capsys, *_inv("start", "--instructions", str(tmp_path / "i.md"), "--prompt", str(tmp_path / "p.md"), **args)
        ).code
        == 0
    )
    refuses(capsys, fresh_demo, *_inv("verify-completion", **args), names="review-new.prompt.md.completion.json")
    assert okstra(capsys, *_inv("complete", "--body", str(tmp_path / "body.txt"), **args)).code == 0
    out = okstra(capsys, *_inv("verify-completion", **args))
    assert out.code == 0 and out.out == "  verdict: ok\n\nno trailing newline added" and out.err == ""
    # retries with the same bytes succeed; different bytes are refused
    assert okstra(capsys, *_inv("complete", "--body", str(tmp_path / "body.txt"), **args)).code == 0
    (tmp_path / "other.txt").write_text("different")
    refuses(
        capsys,
        fresh_demo,
        *_inv("complete", "--body", str(tmp_path / "other.txt"), **args),
        names="review-new.result.json",
    )
    refuses(
        capsys,
        fresh_demo,
        *_inv("start", "--instructions", str(tmp_path / "i.md"), "--prompt", str(tmp_path / "other.txt"), **args),
        names="review-new.prompt.md",
    )


def test_verify_refuses_digest_mismatch_and_cross_link(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = layout.agent_invocations_dir(fresh_demo)
    review = base / "code-review" / "review-retry-policy-branch.result.json"
    sched = base / "schedule-verification" / "schedule-2026-w48.result.json"
    original = review.read_text()
    review.write_text(original.replace("LGTM", "LGTM!"))
    refuses(
        capsys,
        fresh_demo,
        *_inv("verify-completion", root=fresh_demo, purpose="code-review", inv="review-retry-policy-branch"),
        names="completion.json",
    )
    review.write_text(sched.read_text())  # another invocation's envelope
    line = refuses(
        capsys,
        fresh_demo,
        *_inv("verify-completion", root=fresh_demo, purpose="code-review", inv="review-retry-policy-branch"),
        names="completion.json",
    )
    assert "cross-invocation" in line
    refuses(
        capsys,
        fresh_demo,
        *_inv("verify-completion", root=fresh_demo, purpose="Code Review", inv="x"),
        names="agent-invocations: purpose",
    )


def test_complete_refuses_without_start(fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "b.txt").write_text("x")
    refuses(
        capsys,
        fresh_demo,
        *_inv("complete", "--body", str(tmp_path / "b.txt"), root=fresh_demo, purpose="code-review", inv="never"),
        names="never.prompt.md.meta.json",
    )
