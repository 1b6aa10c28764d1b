"""Eight processes write one run at once: dispatch upserts, result links, JSONL appends and
design-prep confirmations. No update is lost, no line is torn, and the ledger's invariants hold."""

from __future__ import annotations

import json
import multiprocessing
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from okstra_core import names, reading, sidecar, writes
from okstra_core.errors import WriteRefused
from okstra_core.models.run import ErrorRecord, RunManifest, TeamState, WorkerDispatch
from okstra_core.models.sidecars import DesignPrepInputHeader
from okstra_core.store import Project
from okstra_core.workflows import design_prep, teamstate

from .scenario import AN, ERRORS_LOG, PLAN, RETRY, TEAM_STATE

PROCS = 8
ROUNDS = 6
_ctx = multiprocessing.get_context("fork")
IDENTITY = {
    "participantRef": "participant:x",
    "roleExecutionRef": "role:analysis:9",
    "invocationRef": "invocation:x",
    "attempt": 1,
    "executionLabel": "x",
}
AUDITS = [
    f"{AN}/worker-results/{w}-audit-analysis-002.md" for w in ("claude-analyser", "codex-analyser", "report-writer")
]


def _worker(root: Path, index: int, start: object, out: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    ts = root / TEAM_STATE
    manifest = reading.load_model(root / f"{AN}/manifests/run-manifest-analysis-002.json", RunManifest, root=root)
    assert isinstance(manifest, RunManifest)
    won: list[str] = []
    refused = 0
    for k in range(ROUNDS):
        # keyed rows: every process re-sends each of its ids, so each id is replaced, never duplicated
        teamstate.upsert_worker_dispatch(
            root,
            ts,
            WorkerDispatch.model_validate(
                {
                    "dispatchId": f"d-{index}-{k % 3}",
                    "workerId": f"w{index}",
                    "sessionId": f"s{k}",
                    "dispatchedAt": "2026-12-01T12:00:00Z",
                    **IDENTITY,
                }
            ),
        )
        teamstate.upsert_worker_dispatch(
            root,
            ts,
            WorkerDispatch.model_validate(
                {"workerId": f"probe-{index}", "dispatchedAt": "2026-12-01T12:00:00Z", **IDENTITY}
            ),
        )
        writes.append_jsonl(
            root,
            root / ERRORS_LOG,
            ErrorRecord(
                at="2026-12-01T12:00:00Z",
                worker_id=f"w{index}",
                code=f"p{index}-k{k}",
                message="x" * (50 + 300 * index),
            ).dump(),
        )
        # every process races for every unlinked audit result with its own dispatch
        try:
            teamstate.link_result(root, ts, manifest, f"d-{index}-0", AUDITS[k % 3], "2026-12-01T12:00:00Z")
            won.append(AUDITS[k % 3])
        except WriteRefused:
            refused += 1
        if k % 2 == 0:
            task = Project(root).find_task(RETRY)
            assert task is not None
            design_prep.confirm(
                root, task, "PREP-001", f"## format\n\nf{index}-{k}\n\n## rationale\n\nr\n", confirmed_by=f"p{index}"
            )
    out.put((index, won, refused))  # type: ignore[attr-defined]


def test_eight_writers_one_run(slim_factory: Callable[[str], Path]) -> None:
    root = slim_factory("concurrent")
    inputs = root / PLAN / "design-prep-inputs"
    inputs_before = {p.name for p in inputs.iterdir()}
    before = json.loads((root / TEAM_STATE).read_text())
    start = _ctx.Event()
    out = _ctx.Queue()
    procs = [_ctx.Process(target=_worker, args=(root, i, start, out)) for i in range(PROCS)]
    for p in procs:
        p.start()
    start.set()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0

    state = reading.load_model(root / TEAM_STATE, TeamState, root=root)
    assert isinstance(state, TeamState)
    ids = [r.dispatch_id for r in state.worker_dispatches if r.dispatch_id]
    assert len(ids) == len(set(ids)), "one row per dispatchId"
    assert {f"d-{i}-{j}" for i in range(PROCS) for j in range(3)} <= set(ids), "no lost upsert"
    probes = Counter(r.worker_id for r in state.worker_dispatches if r.worker_id.startswith("probe-"))
    assert probes == {f"probe-{i}": ROUNDS for i in range(PROCS)}, "rows without a dispatch id stack, none lost"
    assert len(state.worker_dispatches) == len(before["workerDispatches"]) + PROCS * 3 + PROCS * ROUNDS
    assert state.prompt_delivery_verified is False
    # links: exclusive both ways, every contested audit linked exactly once, and the winners agree with the ledger
    assert teamstate.link_problems(state.agent_result_links) == []
    linked = Counter(link.result_path for link in state.agent_result_links)
    assert all(linked[a] == 1 for a in AUDITS)
    wins = Counter(path for _i, won, _r in results for path in set(won))
    assert wins == Counter(AUDITS)
    # JSONL: every append present once, every line whole
    log = reading.load_jsonl(root / ERRORS_LOG, ErrorRecord, root=root)
    assert not isinstance(log, reading.LoadError) and log.errors == []
    codes = Counter(r.code for r in log.records)
    assert codes == Counter({f"p{i}-k{k}": 1 for i in range(PROCS) for k in range(ROUNDS)})
    # design-prep: every confirmation is its own parseable file with a unique revision
    new = sorted(p for p in inputs.iterdir() if p.name not in inputs_before and not p.name.startswith("."))
    assert len(new) == PROCS * len(range(0, ROUNDS, 2))
    revisions = []
    for path in new:
        parsed = names.parse_in_category("design-prep-inputs", path.name)
        assert parsed is not None
        header = DesignPrepInputHeader.model_validate(sidecar.parse(path.read_text()).header)
        assert header.revision == parsed.revision
        revisions.append(header.revision)
    assert len(set(revisions)) == len(revisions) == len(new)
    task = Project(root).find_task(RETRY)
    assert task is not None
    res = design_prep.resolve(task)
    item = next(i for i in res.items if i.prep_id == "PREP-001")
    assert item.authoritative is not None and item.authoritative.revision == max(revisions)
