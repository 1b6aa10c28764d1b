"""The validated writes as ``okstra`` verbs.

Every verb addresses a project root and (mostly) a task by key
(``project:group:task``) or folder (``group/task``). It prints what it wrote,
or refuses with one line naming the file and the reason (an
:class:`~okstra_core.errors.OkstraError`; ``okstra_core.cli`` prints it and
exits 1). Inputs are read and checked before anything is written, so a
refusal changes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .. import layout, names, reading
from ..errors import OkstraError, ValidationFailed, WriteRefused
from ..models import run as rm
from ..store import Project, RunDir, Task

Handler = Callable[[argparse.Namespace], int]


# ------------------------------------------------------------------ helpers


def _project(args: argparse.Namespace) -> Project:
    opened = Project.open(Path(args.project))
    if isinstance(opened, reading.LoadError):
        raise OkstraError(opened.path, opened.reason)
    # Paths inside the store are compared and printed against the real root.
    return Project(Path(os.path.realpath(opened.root)))


def _task(project: Project, key: str) -> Task:
    task = project.find_task(key)
    if task is None:
        raise OkstraError(
            layout.task_catalog_path(project.root), f"no task {key!r} (by key, group/task folder or task id)"
        )
    return task


def _rel(project: Project, path: Path) -> str:
    try:
        return path.relative_to(project.root).as_posix()
    except ValueError:
        return str(path)


def _input_path(project: Project, text: str) -> Path:
    """A path given on the command line: as given (absolute or from the working folder), else project-relative."""
    given = Path(text)
    if given.is_absolute() or given.exists():
        return Path(os.path.realpath(given))
    return Path(os.path.realpath(project.root / given))


def _read_input(path: Path, what: str) -> str:
    if str(path) == "-":
        return sys.stdin.read()
    text = reading.read_text(path)
    if isinstance(text, reading.LoadError):
        raise OkstraError(path, f"{what}: {text.reason}")
    return text


def _read_json_object(path: Path, what: str) -> dict[str, Any]:
    text = _read_input(path, what)
    value = reading.parse_json(path, text)
    if isinstance(value, reading.LoadError):
        raise ValidationFailed(path, f"{what}: {value.reason}")
    if not isinstance(value, dict):
        raise ValidationFailed(path, f"{what} must be a JSON object")
    return value


@contextmanager
def _named(path: Path) -> Iterator[None]:
    """Give a refusal that names no file the file it is about."""
    try:
        yield
    except OkstraError as exc:
        if exc.path is None:
            raise type(exc)(path, exc.reason) from None
        raise


def _run_dir(task: Task, task_type: str | None, stage: int | None) -> RunDir:
    if task_type is None:
        manifest = task.manifest
        if isinstance(manifest, reading.LoadError):
            raise OkstraError(manifest.path, manifest.reason)
        task_type = manifest.task_type
    rd = task.run_dir(task_type, stage)
    if rd is None:
        where = layout.run_dir(task.root, task_type, stage)
        raise OkstraError(where, "run dir does not exist (no run of this type/stage yet)")
    return rd


def _artifact(rd: RunDir, kind: str, seq: int | None) -> Path:
    found = rd.of_kind(kind)
    if seq is not None:
        found = [a for a in found if a.seq == seq]
    if not found:
        label = f"{kind} seq {seq:03d}" if seq is not None else kind
        raise OkstraError(rd.path, f"no {label} in this run dir")
    return found[-1].path


def _add_task_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("project", type=Path, help="project root holding .okstra/")
    p.add_argument("--task", required=True, metavar="KEY", help="task key project:group:task (or group/task folder)")


def _add_run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--run-type", default=None, metavar="TYPE", help="task type of the run dir (default: the task's type)"
    )
    p.add_argument(
        "--stage",
        type=int,
        default=None,
        metavar="N",
        help="stage of an implementation or single-stage final-verification run",
    )


def _say(line: str) -> None:
    print(line)


# ---------------------------------------------------------- direction, planning


def cmd_direction_select(args: argparse.Namespace) -> int:
    from ..workflows import direction

    project = _project(args)
    task = _task(project, args.task)
    report = _input_path(project, args.report) if args.report else None
    answers = _answers(_input_path(project, args.answers)) if args.answers else None
    path = direction.select_direction(project.root, task, args.option, report_path=report, answers=answers)
    header = reading.load_sidecar(path, _user_response_header(), root=project.root)
    digest = header.header.source_data_sha256 if not isinstance(header, reading.LoadError) else "?"  # type: ignore[attr-defined]
    _say(f"{_rel(project, path)}: selected {args.option} (source-data-sha256 {digest})")
    return 0


def _user_response_header() -> type[Any]:
    from ..models.sidecars import UserResponseHeader

    return UserResponseHeader


def cmd_planning_prepare(args: argparse.Namespace) -> int:
    from ..models.report import SelectedDirection
    from ..workflows import direction

    project = _project(args)
    task = _task(project, args.task)
    path = direction.planning_prepare(project.root, task)
    snap = reading.load_model(path, SelectedDirection, root=project.root)
    if isinstance(snap, reading.LoadError):
        raise OkstraError(snap.path, snap.reason)
    _say(f"{_rel(project, path)}: {snap.option_id} ({snap.mode}) sourceDataSha256 {snap.source_data_sha256}")
    return 0


# --------------------------------------------------------------- design-prep


def cmd_design_prep_materialize(args: argparse.Namespace) -> int:
    from ..workflows import design_prep
    from ..writes import Outcome

    project = _project(args)
    task = _task(project, args.task)
    report = design_prep.approved_snapshot(task)
    if design_prep.is_markerless(report):
        _say(f"{report.rel()}: {design_prep.LEGACY_UNASSESSED}: markerless legacy plan, no requests to materialise")
        return 0
    done = design_prep.materialize(project.root, task)
    if not done:
        _say(f"{report.rel()}: no provisional or blocked design items; nothing to materialise")
    for m in done:
        _say(
            f"{_rel(project, m.path)}: "
            f"{'written' if m.outcome is Outcome.CREATED else 'unchanged (already materialised)'}"
        )
    return 0


def cmd_design_prep_confirm(args: argparse.Namespace) -> int:
    from ..workflows import design_prep

    project = _project(args)
    task = _task(project, args.task)
    source = _input_path(project, args.input) if args.input != "-" else Path("-")
    text = _read_input(source, "answer file")
    path = design_prep.confirm(project.root, task, args.item, text, confirmed_by=args.by, answer_path=source)
    parsed = names.parse_in_category("design-prep-inputs", path.name)
    rev = f"r{parsed.revision}" if parsed and parsed.revision else "?"
    _say(f"{_rel(project, path)}: confirmed {args.item} {rev}")
    return 0


def cmd_design_prep_resolve(args: argparse.Namespace) -> int:
    from ..workflows import design_prep

    project = _project(args)
    task = _task(project, args.task)
    res = design_prep.resolve(task)
    if args.json:
        print(json.dumps(res.to_json(project.root), indent=2, ensure_ascii=False))
        return 0 if res.error is None else 1
    if res.report is None:
        _say(f"{task.rel}: no implementation-planning report; nothing to resolve")
        return 0
    if res.error is not None:
        raise OkstraError(res.report, res.error)
    _say(f"approved snapshot: {_rel(project, res.report)}")
    if res.legacy_unassessed:
        _say(f"{design_prep.LEGACY_UNASSESSED}: the plan has no assessment markers; it proceeds unassessed")
    for item in res.items:
        auth = item.authoritative
        verdict = (
            f"r{auth.revision} {_rel(project, auth.path)}"
            if auth
            else ("legacy-unassessed" if res.legacy_unassessed else "no authoritative input")
        )
        _say(f"{item.prep_id} [{item.status}] {item.title}: {verdict}")
        for v in item.inputs:
            if v.verdict != "authoritative":
                _say(f"  {v.verdict}: {v.path.name} ({v.reason})")
    return 0


# ----------------------------------------------------- user responses, clarification


def _answers(path: Path) -> dict[str, str]:
    value = _read_json_object(path, "answers file")
    bad = [k for k, v in value.items() if not isinstance(v, str)]
    if bad:
        raise ValidationFailed(path, f"answers file: the answer to {bad[0]!r} is not a string")
    return value


def cmd_user_response_export(args: argparse.Namespace) -> int:
    from ..workflows import user_response_export

    project = _project(args)
    task = _task(project, args.task)
    report = _input_path(project, args.report)
    answers = _answers(_input_path(project, args.answers))
    before = _current_sidecar(task, report)
    path, superseded = user_response_export.export(project.root, task, report, answers, args.option)
    after = reading.read_bytes(path, root=project.root)
    _say(f"{_rel(project, path)}: {'unchanged (same answers already exported)' if before == after else 'written'}")
    if superseded is not None:
        _say(f"{_rel(project, superseded)}: earlier export kept as a superseded copy")
    return 0


def _current_sidecar(task: Task, report: Path) -> bytes | None:
    from ..workflows.direction import sidecar_path_for
    from ..workflows.reports import report_by_path

    path = sidecar_path_for(report_by_path(task, report))
    data = reading.read_bytes(path, root=task.project.root)
    return data if isinstance(data, bytes) else None


def cmd_clarification_attach(args: argparse.Namespace) -> int:
    from ..workflows import user_response_export

    project = _project(args)
    task = _task(project, args.task)
    target, attached = user_response_export.attach_clarification(project.root, task)
    if attached:
        for rel in attached:
            _say(f"{_rel(project, target)}: attached {rel}")
    else:
        _say(f"{_rel(project, target)}: up to date (every sidecar already attached)")
    return 0


# ---------------------------------------------------------------- team-state


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
    if args.state:
        state_path = _input_path(project, args.state)
        rd = next((r for r in task.run_dirs if state_path.parent == r.path / "state"), None)
        if rd is None:
            raise OkstraError(state_path, "is not a team-state file of this task")
    else:
        rd = _run_dir(task, args.run_type, args.stage)
        state_path = _artifact(rd, "team-state", args.seq)
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
        state_path, f"no run manifest of this execution ({state.run_date_time_segment}) in {rd.rel}/manifests"
    )


def _row(project: Project, args: argparse.Namespace, manifest: rm.RunManifest, state: rm.TeamState) -> dict[str, Any]:
    row: dict[str, Any] = _read_json_object(_input_path(project, args.row), "row file") if args.row else {}
    for attr, key in _ROW_FLAGS:
        value = getattr(args, attr, None)
        if value is not None:
            row[key] = value
    row.setdefault("dispatchedAt", _now())
    if state.schema_version.startswith("2") and not any(k in row for k in _IDENTITY):
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
    from ..workflows.common import SYSTEM_CLOCK, iso

    return iso(SYSTEM_CLOCK.now())


def _dispatch(args: argparse.Namespace, model: type[rm.WorkerDispatch] | type[rm.AgentDispatch]) -> int:
    from ..workflows import teamstate
    from ..workflows.common import validated

    project = _project(args)
    task = _task(project, args.task)
    state_path, manifest, state = _team_state(project, task, args)
    row = _row(project, args, manifest, state)
    where = _input_path(project, args.row) if args.row else state_path
    dispatch = validated(model, row, where)
    if isinstance(dispatch, rm.AgentDispatch):
        rows = len(teamstate.upsert_agent_dispatch(project.root, state_path, dispatch).agent_dispatches)
    else:
        rows = len(teamstate.upsert_worker_dispatch(project.root, state_path, dispatch).worker_dispatches)
    key = dispatch.dispatch_id or "(no dispatch id: rows stack)"
    _say(f"{_rel(project, state_path)}: recorded dispatch {key} ({rows} row(s))")
    return 0


def cmd_team_dispatch(args: argparse.Namespace) -> int:
    return _dispatch(args, rm.WorkerDispatch)


def cmd_team_agent_dispatch(args: argparse.Namespace) -> int:
    return _dispatch(args, rm.AgentDispatch)


def cmd_team_link(args: argparse.Namespace) -> int:
    from ..workflows import teamstate

    project = _project(args)
    task = _task(project, args.task)
    state_path, manifest, _state = _team_state(project, task, args)
    result = _input_path(project, args.result)
    result_rel = _rel(project, result)
    if not layout.is_relative_posix(result_rel):
        raise WriteRefused(result, "result path is outside the project")
    teamstate.link_result(project.root, state_path, manifest, args.dispatch_id, result_rel, args.accepted_at or _now())
    _say(f"{_rel(project, state_path)}: {result_rel} linked to dispatch {args.dispatch_id}")
    return 0


# ------------------------------------------------------------------- prompts


def cmd_prompt_publish(args: argparse.Namespace) -> int:
    from ..workflows import prompts

    project = _project(args)
    task = _task(project, args.task)
    if args.manifest:
        manifest_path = _input_path(project, args.manifest)
    else:
        manifest_path = _artifact(_run_dir(task, args.run_type, args.stage), "run-manifest", args.seq)
    body_path = _input_path(project, args.body) if args.body != "-" else Path("-")
    body = _read_input(body_path, "prompt body")
    instruction = (
        args.instruction
        or (layout.instruction_set_dir(task.root) / "analysis-packet.md").relative_to(task.project.root).as_posix()
    )
    published = prompts.publish_prompt(
        project.root, manifest_path, args.assignment, body, duty_id=args.duty, instruction_rel=instruction
    )
    note = " (recovered the identical prompt of an interrupted publication)" if published.recovered_orphan else ""
    _say(f"{_rel(project, published.prompt)}: published{note}")
    _say(f"{_rel(project, published.meta)}: metadata (completion marker)")
    return 0


# --------------------------------------------------------------- invocations


def _add_invocation_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("project", type=Path, help="project root holding .okstra/")
    p.add_argument("--purpose", required=True, help="canonical slug, e.g. code-review")
    p.add_argument("--id", required=True, dest="invocation_id", help="invocation id (canonical slug)")


def _slugs(project: Project, args: argparse.Namespace) -> None:
    with _named(layout.agent_invocations_dir(project.root)):
        layout.invocation_paths(project.root, args.purpose, args.invocation_id)


def cmd_agent_start(args: argparse.Namespace) -> int:
    from ..workflows import invocations

    project = _project(args)
    _slugs(project, args)
    instructions = _read_input(_input_path(project, args.instructions), "instructions file")
    prompt = _read_input(_input_path(project, args.prompt), "prompt file")
    paths = invocations.start(project.root, args.purpose, args.invocation_id, instructions, prompt)
    for path in (paths.instructions, paths.prompt, paths.meta):
        _say(f"{_rel(project, path)}: published")
    return 0


def cmd_agent_complete(args: argparse.Namespace) -> int:
    from ..workflows import invocations

    project = _project(args)
    _slugs(project, args)
    source = _input_path(project, args.body) if args.body != "-" else Path("-")
    body = _read_input(source, "returned body")
    marker = invocations.complete(project.root, args.purpose, args.invocation_id, body)
    paths = layout.invocation_paths(project.root, args.purpose, args.invocation_id)
    _say(f"{_rel(project, paths.result)}: result envelope")
    _say(f"{_rel(project, marker)}: completion marker")
    return 0


def cmd_agent_verify(args: argparse.Namespace) -> int:
    from ..workflows import invocations

    project = _project(args)
    _slugs(project, args)
    body = invocations.verify_completion(project.root, args.purpose, args.invocation_id)
    # Consumers parse exactly returnedBody: nothing else goes to stdout, not even a newline.
    sys.stdout.write(body)
    sys.stdout.flush()
    return 0


# ------------------------------------------------------------ migrate, converge, tasks


def cmd_migrate_legacy(args: argparse.Namespace) -> int:
    from ..progress import terminal_progress
    from ..workflows import migrate

    project = _project(args)
    tasks = [_task(project, args.task)] if args.task else [ref.open() for ref in project.task_refs]
    total = 0
    with terminal_progress("migrating", "tasks", quiet=args.quiet) as progress:
        for done, task in enumerate(tasks, 1):
            moves = migrate.migrate_task(project.root, task, dry_run=args.dry_run)
            for move in moves:
                note = " (new seq: the legacy seq is taken)" if move.reallocated else ""
                verb = "would move" if args.dry_run else "moved"
                _say(f"{_rel(project, move.source)} -> {_rel(project, move.target)}: {verb}{note}")
            total += len(moves)
            if progress is not None:
                progress(done, len(tasks))
    if total == 0:
        _say("no flat legacy artifacts to migrate")
    elif args.dry_run:
        _say(f"{total} file(s) would move; nothing was changed (dry run)")
    return 0


def cmd_convergence_seed(args: argparse.Namespace) -> int:
    from ..workflows import convergence

    project = _project(args)
    task = _task(project, args.task)
    rd = _run_dir(task, args.run_type, args.stage)
    groups = _artifact(rd, "convergence-groups", args.seq)
    parsed = names.parse_in_category("state", groups.name)
    assert parsed is not None and parsed.seq is not None
    before = reading.read_bytes(
        convergence.state_path(rd.path, "convergence-work", rd.task_type, parsed.seq), root=project.root
    )
    work = convergence.seed_work(
        project.root, rd.path, rd.task_type, parsed.seq, restart_from_round0=args.restart_from_round0
    )
    after = reading.read_bytes(work, root=project.root)
    if isinstance(before, reading.LoadError):
        state = "seeded from Round 0"
    elif before == after:
        state = "resumed (matching valid working state; nothing written)"
    else:
        state = "restarted from Round 0 (previous state archived under state/migrations/)"
    _say(f"{_rel(project, work)}: {state}")
    return 0


def cmd_task_refresh_fix_cycles(args: argparse.Namespace) -> int:
    from ..workflows import tasks

    project = _project(args)
    task = _task(project, args.task)
    summary, changed = tasks.refresh_fix_cycles(project.root, task.root)
    open_id = summary.open_cycle_id or "none"
    what = "updated" if changed else "already up to date"
    _say(
        f"{_rel(project, layout.task_manifest_path(task.root))}: fixCycles {what} (count {summary.count}, open "
        f"{open_id})"
    )
    return 0


# ------------------------------------------------------------------- parsers


def _named_refusals(func: Handler) -> Handler:
    """Every refusal names a file: one that names none is pinned to the project root."""

    def run(args: argparse.Namespace) -> int:
        with _named(Path(args.project)):
            return func(args)

    run.__doc__ = func.__doc__
    return run


def _group(sub: Any, name: str, help_text: str) -> Any:
    parser = sub.add_parser(name, help=help_text)
    return parser.add_subparsers(dest=f"{name}_verb", metavar="VERB", required=True)


def register(sub: Any) -> None:
    """Add the workflow verbs to the ``okstra`` parser."""
    d = _group(sub, "direction", "direction selection (comparison-mode user-response sidecar)")
    p = d.add_parser(
        "select", help="record the confirmed IO-NNN choice and the report digest; the report is never touched"
    )
    _add_task_args(p)
    p.add_argument("--option", required=True, metavar="IO-NNN")
    p.add_argument("--report", default=None, metavar="PATH", help="option-selection data.json (default: the newest)")
    p.add_argument(
        "--answers", default=None, metavar="FILE", help='JSON object of clarification answers {"CQ-001": ...}'
    )
    p.set_defaults(func=cmd_direction_select)

    d = _group(sub, "planning", "implementation-planning preparation")
    p = d.add_parser(
        "prepare", help="verify the option report digest and write instruction-set/selected-direction.json"
    )
    _add_task_args(p)
    p.set_defaults(func=cmd_planning_prepare)

    d = _group(sub, "design-prep", "design preparation requests, confirmed inputs and the resolver")
    p = d.add_parser("materialize", help="write the deterministic request of every provisional or blocked item")
    _add_task_args(p)
    p.set_defaults(func=cmd_design_prep_materialize)
    p = d.add_parser("confirm", help="check an answer against the item, then append a new revision")
    _add_task_args(p)
    p.add_argument("--item", required=True, metavar="PREP-NNN")
    p.add_argument(
        "--input",
        required=True,
        metavar="FILE",
        help="answer file with one '## <field>' section per field ('-': stdin)",
    )
    p.add_argument("--by", default="user", help="who confirmed (recorded as confirmed-by)")
    p.set_defaults(func=cmd_design_prep_confirm)
    p = d.add_parser("resolve", help="per item: the authoritative revision and every skipped file with its reason")
    _add_task_args(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_design_prep_resolve)

    d = _group(sub, "user-response", "user-response sidecars")
    p = d.add_parser("export", help="write user-responses/user-response-<task-type>-<seq>.md for these answers")
    _add_task_args(p)
    p.add_argument("--report", required=True, metavar="PATH", help="the report's data.json")
    p.add_argument("--answers", required=True, metavar="FILE", help='JSON object {"CQ-001": "..."}')
    p.add_argument("--option", default=None, metavar="IO-NNN", help="selected option (comparison-mode reports)")
    p.set_defaults(func=cmd_user_response_export)

    d = _group(sub, "clarification", "clarification responses")
    p = d.add_parser(
        "attach", help="attach the task's user-response sidecars to instruction-set/clarification-response.md"
    )
    _add_task_args(p)
    p.set_defaults(func=cmd_clarification_attach)

    d = _group(sub, "team-state", "team-state ledger writes (under the run-state lock)")
    for verb, func, help_text in (
        ("dispatch", cmd_team_dispatch, "upsert a worker dispatch keyed by dispatchId"),
        ("agent-dispatch", cmd_team_agent_dispatch, "upsert a host-native agent dispatch"),
    ):
        p = d.add_parser(verb, help=help_text)
        _add_task_args(p)
        _add_run_args(p)
        p.add_argument("--seq", type=int, default=None, help="team-state seq (default: the newest)")
        p.add_argument(
            "--state", default=None, metavar="PATH", help="team-state file (instead of --run-type/--stage/--seq)"
        )
        p.add_argument(
            "--row", default=None, metavar="FILE", help="the row as a JSON object (flags below override its fields)"
        )
        for attr, key in _ROW_FLAGS:
            p.add_argument("--" + attr.replace("_", "-"), dest=attr, default=None, metavar=key)
        p.set_defaults(func=func)
    p = d.add_parser("link", help="link an accepted result path to exactly one dispatch id (exclusive both ways)")
    _add_task_args(p)
    _add_run_args(p)
    p.add_argument("--seq", type=int, default=None, help="team-state seq (default: the newest)")
    p.add_argument(
        "--state", default=None, metavar="PATH", help="team-state file (instead of --run-type/--stage/--seq)"
    )
    p.add_argument("--dispatch-id", required=True)
    p.add_argument(
        "--result", required=True, metavar="PATH", help="the accepted result file (declared by the run manifest)"
    )
    p.add_argument("--accepted-at", default=None, metavar="TIME")
    p.set_defaults(func=cmd_team_link)

    d = _group(sub, "prompt", "run-backed prompt publication")
    p = d.add_parser("publish", help="publish a prompt (create-only) and then its metadata (the completion marker)")
    _add_task_args(p)
    _add_run_args(p)
    p.add_argument("--seq", type=int, default=None, help="run-manifest seq (default: the newest)")
    p.add_argument(
        "--manifest", default=None, metavar="PATH", help="run manifest (instead of --run-type/--stage/--seq)"
    )
    p.add_argument("--assignment", required=True, metavar="REF", help="assignmentRef in the run manifest")
    p.add_argument("--body", required=True, metavar="FILE", help="prompt text ('-': stdin)")
    p.add_argument("--duty", required=True, metavar="ID", help="duty id in the run's duty catalog")
    p.add_argument(
        "--instruction",
        default=None,
        metavar="REL",
        help="instruction file (project-relative; default: analysis-packet.md)",
    )
    p.set_defaults(func=cmd_prompt_publish)

    d = _group(sub, "agent-prompt", "agent invocations outside a task run")
    p = d.add_parser("start", help="publish instructions, prompt and metadata")
    _add_invocation_args(p)
    p.add_argument("--instructions", required=True, metavar="FILE")
    p.add_argument("--prompt", required=True, metavar="FILE")
    p.set_defaults(func=cmd_agent_start)
    p = d.add_parser("complete", help="publish the result envelope, then the completion marker")
    _add_invocation_args(p)
    p.add_argument("--body", required=True, metavar="FILE", help="the returned body ('-': stdin)")
    p.set_defaults(func=cmd_agent_complete)
    p = d.add_parser("verify-completion", help="print only returnedBody when the whole chain holds")
    _add_invocation_args(p)
    p.set_defaults(func=cmd_agent_verify)

    p = sub.add_parser("migrate-legacy", help="move flat legacy artifacts into their category folders")
    p.add_argument("project", type=Path, help="project root holding .okstra/")
    p.add_argument("--task", default=None, metavar="KEY", help="only this task (default: every task)")
    p.add_argument("--dry-run", action="store_true", help="print the moves without making them")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress display (shown only on a terminal's stderr)")
    p.set_defaults(func=cmd_migrate_legacy)

    d = _group(sub, "convergence", "convergence state")
    p = d.add_parser("seed", help="seed the working state from the groups file")
    _add_task_args(p)
    _add_run_args(p)
    p.add_argument("--seq", type=int, default=None, help="convergence-groups seq (default: the newest)")
    p.add_argument(
        "--restart-from-round0",
        action="store_true",
        help="archive invalid or partial state under state/migrations/ and start again from Round 0",
    )
    p.set_defaults(func=cmd_convergence_seed)

    d = _group(sub, "task", "task manifest upkeep")
    p = d.add_parser("refresh-fix-cycles", help="recompute fixCycles from history/fix-cycles.jsonl")
    _add_task_args(p)
    p.set_defaults(func=cmd_task_refresh_fix_cycles)

    for parser in _leaf_parsers(sub):
        func = parser.get_default("func")
        if func is not None and func.__module__ == __name__:
            parser.set_defaults(func=_named_refusals(func))


def _leaf_parsers(sub: Any) -> list[argparse.ArgumentParser]:
    out: list[argparse.ArgumentParser] = []
    for parser in sub.choices.values():
        nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if nested:
            out += _leaf_parsers(nested[0])
        else:
            out.append(parser)
    return out
