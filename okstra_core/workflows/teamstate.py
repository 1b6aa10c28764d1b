"""Team-state ledger writes: dispatch upserts, agent dispatches and exclusive result links.

All go through a locked read-modify-replace of the team-state file (the
run-state lock) with unique temporary files, so parallel writers never lose
each other's updates. ``promptDeliveryVerified`` always stays false.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .. import reading
from ..errors import WriteRefused
from ..models import run as rm
from .common import dump, update_json


def _apply(project_root: Path, team_state: Path, change: Any) -> rm.TeamState:
    def mutate(current: dict[str, Any] | None) -> dict[str, Any]:
        if current is None:
            raise WriteRefused(team_state, "team-state file is missing")
        change(current)
        current["promptDeliveryVerified"] = False
        return current

    result = update_json(project_root, team_state, rm.TeamState, mutate)
    assert result is not None
    return result


def _upsert(rows: list[dict[str, Any]], row: dict[str, Any]) -> None:
    """Replace the row with the same ``dispatchId`` in place; rows without one stack."""
    key = row.get("dispatchId")
    if key:
        for index, existing in enumerate(rows):
            if existing.get("dispatchId") == key:
                rows[index] = row
                return
    rows.append(row)


def upsert_worker_dispatch(project_root: Path, team_state: Path, dispatch: rm.WorkerDispatch) -> rm.TeamState:
    """Record a code-owned worker launch keyed by ``dispatchId``; nothing is ever pruned."""
    row = dump(dispatch)
    return _apply(project_root, team_state, lambda doc: _upsert(doc.setdefault("workerDispatches", []), row))


def upsert_agent_dispatch(project_root: Path, team_state: Path, dispatch: rm.AgentDispatch) -> rm.TeamState:
    """Record a host-native agent call keyed by ``dispatchId``."""
    row = dump(dispatch)
    return _apply(project_root, team_state, lambda doc: _upsert(doc.setdefault("agentDispatches", []), row))


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

    def change(doc: dict[str, Any]) -> None:
        ids = {r.get("dispatchId") for r in doc.get("workerDispatches", []) + doc.get("agentDispatches", [])}
        if dispatch_id not in ids:
            raise WriteRefused(team_state, f"no dispatch {dispatch_id!r} in the ledger")
        links = doc.setdefault("agentResultLinks", [])
        for link in links:
            same_path = link.get("resultPath") == result_path
            same_id = link.get("dispatchId") == dispatch_id
            if same_path and same_id:
                return
            if same_path:
                raise WriteRefused(team_state, f"{result_path} is already linked to dispatch {link.get('dispatchId')}")
            if same_id:
                raise WriteRefused(team_state, f"dispatch {dispatch_id} already authorises {link.get('resultPath')}")
        links.append(
            dump(rm.AgentResultLink(dispatch_id=dispatch_id, result_path=result_path, accepted_at=accepted_at))
        )

    return _apply(project_root, team_state, change)


def load(project_root: Path, team_state: Path) -> rm.TeamState | reading.LoadError:
    return reading.load_model(team_state, rm.TeamState, root=project_root)
