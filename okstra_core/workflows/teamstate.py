"""Team-state ledger writes: dispatch upserts, agent dispatches and exclusive result links.

All go through a locked read-modify-replace of the team-state file (the
run-state lock) with unique temporary files, so parallel writers never lose
each other's updates. ``promptDeliveryVerified`` always stays false (the model
admits no other value).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .. import reading
from ..errors import WriteRefused
from ..models import run as rm
from .common import update_json

Dispatch = TypeVar("Dispatch", rm.WorkerDispatch, rm.AgentDispatch)


def _apply(project_root: Path, team_state: Path, change: Callable[[rm.TeamState], None]) -> rm.TeamState:
    def mutate(current: rm.TeamState | None) -> rm.TeamState:
        if current is None:
            raise WriteRefused(team_state, "team-state file is missing")
        change(current)
        return current

    result = update_json(project_root, team_state, rm.TeamState, mutate)
    assert result is not None
    return result


def _upsert(rows: list[Dispatch], row: Dispatch) -> None:
    """Replace the row with the same ``dispatchId`` in place; rows without one stack."""
    key = row.dispatch_id
    if key:
        for index, existing in enumerate(rows):
            if existing.dispatch_id == key:
                rows[index] = row
                return
    rows.append(row)


def upsert_worker_dispatch(project_root: Path, team_state: Path, dispatch: rm.WorkerDispatch) -> rm.TeamState:
    """Record a code-owned worker launch keyed by ``dispatchId``; nothing is ever pruned."""
    return _apply(project_root, team_state, lambda doc: _upsert(doc.worker_dispatches, dispatch))


def upsert_agent_dispatch(project_root: Path, team_state: Path, dispatch: rm.AgentDispatch) -> rm.TeamState:
    """Record a host-native agent call keyed by ``dispatchId``."""
    return _apply(project_root, team_state, lambda doc: _upsert(doc.agent_dispatches, dispatch))


def result_allowed(project_root: Path, manifest: rm.RunManifest, result_path: str) -> str | None:
    """Why *result_path* may not be accepted for this run (None when it may)."""
    paths = manifest.authorized_paths
    if paths is None:
        return "run manifest has no authorizedPaths"
    real = os.path.realpath(project_root / result_path)
    roots = [os.path.realpath(project_root / r) for r in paths.result_roots or []]
    if not any(real == r or real.startswith(r + os.sep) for r in roots):
        return f"{result_path} is outside the authorised result roots"
    if result_path not in (paths.declared_results or []):
        return f"{result_path} is not a declared result path of the run"
    return None


def link_problems(links: list[rm.AgentResultLink]) -> list[str]:
    """Exclusivity of result links in both directions (the one owner of this rule)."""
    problems = []
    by_path: dict[str, str] = {}
    by_dispatch: dict[str, str] = {}
    for link in links:
        other = by_path.get(link.result_path)
        if other is not None and other != link.dispatch_id:
            problems.append(f"result {link.result_path} is linked to dispatches {other} and {link.dispatch_id}")
        by_path.setdefault(link.result_path, link.dispatch_id)
        other_path = by_dispatch.get(link.dispatch_id)
        if other_path is not None and other_path != link.result_path:
            problems.append(f"dispatch {link.dispatch_id} authorises results {other_path} and {link.result_path}")
        by_dispatch.setdefault(link.dispatch_id, link.result_path)
    return problems


def link_result(
    project_root: Path, team_state: Path, manifest: rm.RunManifest, dispatch_id: str, result_path: str, accepted_at: str
) -> rm.TeamState:
    """Associate an accepted result path with exactly one dispatch id, and the reverse."""
    why = result_allowed(project_root, manifest, result_path)
    if why:
        raise WriteRefused(project_root / result_path, why)
    if not (project_root / result_path).is_file():
        raise WriteRefused(project_root / result_path, "result file does not exist")

    def change(doc: rm.TeamState) -> None:
        ids = {r.dispatch_id for r in doc.worker_dispatches} | {r.dispatch_id for r in doc.agent_dispatches}
        if dispatch_id not in ids:
            raise WriteRefused(team_state, f"no dispatch {dispatch_id!r} in the ledger")
        for link in doc.agent_result_links:
            same_path = link.result_path == result_path
            same_id = link.dispatch_id == dispatch_id
            if same_path and same_id:
                return
            if same_path:
                raise WriteRefused(team_state, f"{result_path} is already linked to dispatch {link.dispatch_id}")
            if same_id:
                raise WriteRefused(team_state, f"dispatch {dispatch_id} already authorises {link.result_path}")
        doc.agent_result_links.append(
            rm.AgentResultLink(dispatch_id=dispatch_id, result_path=result_path, accepted_at=accepted_at)
        )

    return _apply(project_root, team_state, change)


def load(project_root: Path, team_state: Path) -> rm.TeamState | reading.LoadError:
    return reading.load_model(team_state, rm.TeamState, root=project_root)
