"""Team-state ledgers: dispatch ids, result links, authorised result paths."""

from __future__ import annotations

from collections import Counter
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ...models.run import AgentDispatch, AgentResultLink, RunManifest, TeamState, WorkerDispatch
from ..catalog import (
    DISPATCH_UNASSIGNED,
    DUPLICATE_DISPATCH,
    RESULT_LINK_SHARED,
    RESULT_LINK_UNDECLARED,
    RESULT_OUTSIDE_AUTHORIZED,
)
from .scope import Artifact, RunScope, TaskScope

M = TypeVar("M", bound=BaseModel)


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r.rstrip("/") or path.startswith(r.rstrip("/") + "/") for r in roots)


def salvage(value: Any) -> TeamState | None:
    """The rows of a ledger that failed its schema which are valid on their own (its schema error is reported).

    The link rules need only those rows, so one bad row does not hide every other link.
    """
    if not isinstance(value, dict):
        return None

    def rows(key: str, model: type[M]) -> list[M]:
        items = value.get(key)
        out: list[M] = []
        for item in items if isinstance(items, list) else []:
            try:
                out.append(model.model_validate(item))
            except ValidationError:
                continue
        return out

    segment = value.get("runDateTimeSegment")
    return TeamState.model_construct(
        run_date_time_segment=segment if isinstance(segment, str) else "",
        worker_dispatches=rows("workerDispatches", WorkerDispatch),
        agent_dispatches=rows("agentDispatches", AgentDispatch),
        agent_result_links=rows("agentResultLinks", AgentResultLink),
    )


def check_run(scope: TaskScope, run: RunScope) -> None:
    """Each team-state file of *run* against its own rows and its run manifest."""
    unit = scope.unit
    for art in run.of_kind("team-state"):
        state = unit.doc(art.path, TeamState) or salvage(unit.json(art.path))
        if state is None:
            continue
        groups: tuple[tuple[str, list[str | None]], ...] = (
            ("workerDispatches", [r.dispatch_id for r in state.worker_dispatches]),
            ("agentDispatches", [r.dispatch_id for r in state.agent_dispatches]),
        )
        for label, ids in groups:
            counts = Counter(i for i in ids if i)
            for did, n in sorted(counts.items()):
                if n > 1:
                    unit.report(
                        DUPLICATE_DISPATCH,
                        art.path,
                        f"{label}: dispatchId {did!r} is recorded {n} times (a repeat replaces the row)",
                    )
        by_path: dict[str, set[str]] = {}
        by_id: dict[str, set[str]] = {}
        for link in state.agent_result_links:
            by_path.setdefault(link.result_path, set()).add(link.dispatch_id)
            by_id.setdefault(link.dispatch_id, set()).add(link.result_path)
        for path, linked in sorted(by_path.items()):
            if len(linked) > 1:
                unit.report(
                    RESULT_LINK_SHARED,
                    art.path,
                    f"result {path!r} is linked to {len(linked)} dispatch ids ({', '.join(sorted(linked))})",
                )
        for did, paths in sorted(by_id.items()):
            if len(paths) > 1:
                unit.report(
                    RESULT_LINK_SHARED,
                    art.path,
                    f"dispatch {did!r} authorises {len(paths)} result paths ({', '.join(sorted(paths))})",
                )
        known = {i for _, ids in groups for i in ids if i}
        _links_declared(scope, run, art, state, known)
        _dispatches_assigned(scope, run, art, state)


def _assigned_workers(manifest: RunManifest) -> set[str]:
    """Every worker id the run manifest assigns: worker assignments, selected workers, invocation assignments."""
    out = {a.worker_id for a in manifest.worker_assignments if a.worker_id}
    out |= {w for w in manifest.selected_workers if isinstance(w, str)}
    out |= {str(w["workerId"]) for w in manifest.selected_workers if isinstance(w, dict) and w.get("workerId")}
    out |= {a.worker_id for a in manifest.invocation_assignments if a.worker_id}
    return out


def _dispatches_assigned(scope: TaskScope, run: RunScope, art: Artifact, state: TeamState) -> None:
    """Each dispatched worker is one the run manifest of the same execution assigned."""
    found = [(a, m) for a, m in scope.run_manifests(run) if m.run_date_time_segment == state.run_date_time_segment]
    if not found:
        return  # no manifest of this execution: OKS042 says so
    manifest_art, manifest = found[-1]
    assigned = _assigned_workers(manifest)
    if not assigned:
        return  # the manifest names no workers: nothing to hold the ledger against
    rows = [("workerDispatches", i, r.dispatch_id, r.worker_id) for i, r in enumerate(state.worker_dispatches)]
    rows += [("agentDispatches", i, r.dispatch_id, r.worker_id) for i, r in enumerate(state.agent_dispatches)]
    for label, i, dispatch_id, worker_id in rows:
        if dispatch_id and worker_id and worker_id not in assigned:
            scope.unit.report(
                DISPATCH_UNASSIGNED,
                art.path,
                f"{label}[{i}] dispatches worker {worker_id!r}, which {manifest_art.entry.name} does not "
                f"assign (it assigns: {', '.join(sorted(assigned)[:8])})",
            )


def _links_declared(scope: TaskScope, run: RunScope, art: Artifact, state: TeamState, known: set[str]) -> None:
    """Each result link names a recorded dispatch and an existing result the run manifest authorises."""
    unit = scope.unit
    manifest = scope.manifest_for_segment(run, state.run_date_time_segment)
    auth = manifest.authorized_paths if manifest is not None else None
    for link in state.agent_result_links:
        if link.dispatch_id not in known:
            unit.report(
                RESULT_LINK_UNDECLARED,
                art.path,
                f"result link names dispatch {link.dispatch_id!r}, which the ledger does not record",
            )
        if not unit.rel_exists(link.result_path):
            unit.report(RESULT_LINK_UNDECLARED, art.path, f"linked result {link.result_path!r} does not exist")
        if manifest is None and not state.run_date_time_segment:
            continue  # a ledger that failed its schema without a segment: no manifest to hold it against
        if manifest is None:
            unit.report(
                RESULT_LINK_UNDECLARED,
                art.path,
                f"no run manifest of this run dir has runDateTimeSegment {state.run_date_time_segment!r} to "
                f"declare {link.result_path!r}",
            )
            continue
        if auth is None:
            unit.report(
                RESULT_OUTSIDE_AUTHORIZED,
                art.path,
                f"result {link.result_path!r} is linked but the run manifest has no authorizedPaths",
            )
            continue
        if auth.declared_results is not None and link.result_path not in auth.declared_results:
            unit.report(
                RESULT_LINK_UNDECLARED,
                art.path,
                f"result {link.result_path!r} is not in the run manifest's declaredResults",
            )
        roots = auth.result_roots or []
        if not _under(link.result_path, roots):
            unit.report(
                RESULT_OUTSIDE_AUTHORIZED,
                art.path,
                f"result {link.result_path!r} is outside authorizedPaths.resultRoots "
                f"({', '.join(roots) if roots else 'none recorded'})",
            )
