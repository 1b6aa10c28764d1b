"""``okstra team-state``: dispatch rows and result links in the team-state ledger."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import layout, reading
from ..errors import OkstraError, WriteRefused
from ..store import Project, Task
from .common import (
    add_group,
    add_run_args,
    add_task_args,
    find_artifact,
    find_run_dir,
    input_path,
    named_refusals,
    open_project,
    open_task,
    read_json_object,
    rel,
    say,
)

if TYPE_CHECKING:  # the models are imported when a verb runs, not at every command's start
    from ..models import run as rm

_ROW_FLAGS = (
    ("dispatch_id", "dispatchId"),
    ("worker_id", "workerId"),
    ("invocation_id", "invocationId"),
    ("session_id", "sessionId"),
    ("pane_id", "paneId"),
    ("prompt_path", "promptPath"),
    ("dispatched_at", "dispatchedAt"),
    ("status", "status"),
)


_IDENTITY = ("participantRef", "roleExecutionRef", "invocationRef", "attempt", "executionLabel")


def _team_state(project: Project, task: Task, args: argparse.Namespace) -> tuple[Path, rm.RunManifest, rm.TeamState]:
    """The run's team-state file and the run manifest of the same execution."""
    from ..models import run as rm

    if args.state:
        state_path = input_path(project, args.state)
        rd = next((r for r in task.run_dirs if state_path.parent == r.path / layout.STATE_DIR), None)
        if rd is None:
            raise OkstraError(state_path, "is not a team-state file of this task")
    else:
        rd = find_run_dir(task, args.run_type, args.stage)
        state_path = find_artifact(rd, "team-state", args.seq)
    state = reading.load_model(state_path, rm.TeamState, root=project.root)
    if isinstance(state, reading.LoadError):
        raise OkstraError(state.path, state.reason)
    for art in reversed(rd.of_kind("run-manifest")):
        manifest = reading.load_model(art.path, rm.RunManifest, root=project.root)
        if (
            not isinstance(manifest, reading.LoadError)
            and manifest.run_date_time_segment == state.run_date_time_segment
        ):
            return state_path, manifest, state
    raise OkstraError(
        state_path,
        f"no run manifest of this execution ({state.run_date_time_segment}) in {rd.rel}/{layout.MANIFESTS_DIR}",
    )


def _row(project: Project, args: argparse.Namespace, manifest: rm.RunManifest, state: rm.TeamState) -> dict[str, Any]:
    row: dict[str, Any] = read_json_object(input_path(project, args.row), "row file") if args.row else {}
    for attr, key in _ROW_FLAGS:
        value = getattr(args, attr, None)
        if value is not None:
            row[key] = value
    row.setdefault("dispatchedAt", _now())
    if (state.schema_version or "").startswith("2") and not any(k in row for k in _IDENTITY):
        # A v2 ledger needs the stored identity: take it from the run's invocation assignment.
        match = next(
            (
                a
                for a in manifest.invocation_assignments
                if a.invocation_id == row.get("invocationId")
                or (not row.get("invocationId") and a.worker_id == row.get("workerId"))
            ),
            None,
        )
        if match is not None and match.is_v2:
            row.update(
                {
                    "participantRef": match.participant_ref,
                    "roleExecutionRef": match.role_execution_ref,
                    "invocationRef": match.invocation_ref,
                    "attempt": match.attempt,
                    "executionLabel": match.execution_label,
                }
            )
            row.setdefault("invocationId", match.invocation_id)
    return row


def _now() -> str:
    from ..times import iso
    from ..workflows.common import SYSTEM_CLOCK

    return iso(SYSTEM_CLOCK.now())


def _dispatch(args: argparse.Namespace, model: type[rm.WorkerDispatch] | type[rm.AgentDispatch]) -> int:
    from ..models import run as rm
    from ..workflows import teamstate
    from ..workflows.common import validated

    project = open_project(args)
    task = open_task(project, args.task)
    state_path, manifest, state = _team_state(project, task, args)
    row = _row(project, args, manifest, state)
    where = input_path(project, args.row) if args.row else state_path
    dispatch = validated(model, row, where)
    if isinstance(dispatch, rm.AgentDispatch):
        rows = len(teamstate.upsert_agent_dispatch(project.root, state_path, dispatch).agent_dispatches)
    else:
        rows = len(teamstate.upsert_worker_dispatch(project.root, state_path, dispatch).worker_dispatches)
    key = dispatch.dispatch_id or "(no dispatch id: rows stack)"
    say(f"{rel(project, state_path)}: recorded dispatch {key} ({rows} row(s))")
    return 0


def cmd_team_dispatch(args: argparse.Namespace) -> int:
    from ..models import run as rm

    return _dispatch(args, rm.WorkerDispatch)


def cmd_team_agent_dispatch(args: argparse.Namespace) -> int:
    from ..models import run as rm

    return _dispatch(args, rm.AgentDispatch)


def cmd_team_link(args: argparse.Namespace) -> int:
    from ..workflows import teamstate

    project = open_project(args)
    task = open_task(project, args.task)
    state_path, manifest, _state = _team_state(project, task, args)
    result = input_path(project, args.result)
    result_rel = rel(project, result)
    if not layout.is_relative_posix(result_rel):
        raise WriteRefused(result, "result path is outside the project")
    teamstate.link_result(project.root, state_path, manifest, args.dispatch_id, result_rel, args.accepted_at or _now())
    say(f"{rel(project, state_path)}: {result_rel} linked to dispatch {args.dispatch_id}")
    return 0


def register(sub: Any) -> None:
    """Add the ``team-state`` verbs to the ``okstra`` parser."""
    d = add_group(sub, "team-state", "team-state ledger writes (under the run-state lock)")
    for verb, func, help_text in (
        ("dispatch", cmd_team_dispatch, "upsert a worker dispatch keyed by dispatchId"),
        ("agent-dispatch", cmd_team_agent_dispatch, "upsert a host-native agent dispatch"),
    ):
        p = d.add_parser(verb, help=help_text)
        add_task_args(p)
        add_run_args(p)
        p.add_argument("--seq", type=int, default=None, help="team-state seq (default: the newest)")
        p.add_argument(
            "--state", default=None, metavar="PATH", help="team-state file (instead of --run-type/--stage/--seq)"
        )
        p.add_argument(
            "--row", default=None, metavar="FILE", help="the row as a JSON object (flags below override its fields)"
        )
        for attr, key in _ROW_FLAGS:
            p.add_argument("--" + attr.replace("_", "-"), dest=attr, default=None, metavar=key)
        p.set_defaults(func=named_refusals(func))
    p = d.add_parser("link", help="link an accepted result path to exactly one dispatch id (exclusive both ways)")
    add_task_args(p)
    add_run_args(p)
    p.add_argument("--seq", type=int, default=None, help="team-state seq (default: the newest)")
    p.add_argument(
        "--state", default=None, metavar="PATH", help="team-state file (instead of --run-type/--stage/--seq)"
    )
    p.add_argument("--dispatch-id", required=True)
    p.add_argument(
        "--result", required=True, metavar="PATH", help="the accepted result file (declared by the run manifest)"
    )
    p.add_argument("--accepted-at", default=None, metavar="TIME")
    p.set_defaults(func=named_refusals(cmd_team_link))
