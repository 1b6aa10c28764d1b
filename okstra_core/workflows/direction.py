"""Direction selection: the user-response sidecar, planning prepare, and the digest chain.

Option report (immutable ``data.json``) -> user-response sidecar recording the
confirmed ``IO-NNN`` and ``source-data-sha256`` of the exact report bytes ->
``instruction-set/selected-direction.json`` with ``sourceDataSha256`` ->
planning report citing it through ``selectedDirectionRef``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import layout, names, reading, writes
from ..errors import ValidationFailed, WriteRefused
from ..models.report import SelectedDirection
from ..models.sidecars import UserResponseHeader
from ..store import Task
from ..times import compact_stamp, iso
from . import user_response
from .common import SYSTEM_CLOCK, Clock
from .reports import LoadedReport, latest_report, load_report_artifact, report_by_path, require_latest


def sidecar_path_for(report: LoadedReport) -> Path:
    """``user-responses/user-response-<task-type>-<seq>.md`` beside the report's run dir."""
    parsed = report.artifact.name
    return (
        report.artifact.run.path
        / layout.USER_RESPONSES_DIR
        / names.build("user-response", task_type=parsed.task_type, seq=parsed.seq)
    )


def export_sidecar(
    project_root: Path, report: LoadedReport, text: str, clock: Clock = SYSTEM_CLOCK
) -> tuple[Path, Path | None]:
    """Write a user-response sidecar; a different earlier export is kept as a superseded copy.

    Returns the sidecar path and the superseded copy's path (None when nothing was replaced).
    """
    target = sidecar_path_for(report)
    parsed = report.artifact.name

    def superseded_name() -> Path:
        stamp = compact_stamp(clock.now())
        return target.parent / names.build(
            "user-response-superseded", task_type=parsed.task_type, seq=parsed.seq, stamp=stamp
        )

    # The new sidecar is complete on disk before the old one gets its superseded name, and the switch is one
    # rename: a failure at any point (a full disk) leaves the old sidecar live.
    data = text.encode("utf-8")
    readable = reading.sidecar_of_bytes(target, data, UserResponseHeader)
    if isinstance(readable, reading.LoadError):
        raise ValidationFailed(target, f"planning would refuse this sidecar: {readable.reason}")
    _, superseded = writes.replace_keeping(project_root, target, data, superseded_name)
    return target, superseded


def guard_consumed_choice(task: Task, report: LoadedReport, option_id: str | None) -> None:
    """Refuse a new choice once planning prepare has consumed a different one from this report.

    A different choice would break the digest chain the planning run cites.
    """
    existing = task.selected_direction()
    if (
        isinstance(existing, SelectedDirection)
        and existing.source_report_path == report.rel()
        and option_id is not None
        and existing.option_id != option_id
    ):
        raise WriteRefused(
            layout.selected_direction_path(task.root),
            f"planning prepare already took {existing.option_id} from this report; the choice can no longer change",
        )


def select_direction(
    project_root: Path,
    task: Task,
    option_id: str,
    *,
    report_path: Path | None = None,
    answers: dict[str, str] | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> Path:
    """Record the confirmed option in the comparison-mode sidecar; the report is never touched."""
    report = report_by_path(task, report_path) if report_path else require_latest(task, "option-selection")
    if report.model.task_type != "option-selection":
        raise WriteRefused(report.path, "is not an option-selection report")
    inp = user_response.ExportInput(report.model, report.rel(), report.stem, report.sha256)
    if user_response.sidecar_mode(report.model) != "comparison":
        raise WriteRefused(report.path, "report is in preselected-validation mode; no selection sidecar is needed")
    problems = user_response.validate_answers(inp, answers or {}, option_id)
    if problems:
        raise WriteRefused(report.path, problems[0])
    guard_consumed_choice(task, report, option_id)
    text = user_response.render_sidecar(inp, answers or {}, option_id)
    path, _ = export_sidecar(project_root, report, text, clock)
    return path


def planning_prepare(project_root: Path, task: Task, clock: Clock = SYSTEM_CLOCK) -> Path:
    """Verify the option report digest and write ``instruction-set/selected-direction.json``."""
    report = require_latest(task, "option-selection")
    oc = report.model.option_candidates
    assert oc is not None  # guaranteed by the report model
    digest = report.sha256
    sidecar_rel: str | None = None
    if oc.mode == "comparison":
        sidecar = sidecar_path_for(report)
        loaded = reading.load_sidecar(sidecar, UserResponseHeader, root=project_root)
        if isinstance(loaded, reading.LoadError):
            raise WriteRefused(loaded.path, f"comparison mode needs the user-response sidecar: {loaded.reason}")
        header = loaded.header
        assert isinstance(header, UserResponseHeader)
        if header.source_data_sha256 != digest:
            raise WriteRefused(
                sidecar,
                f"source-data-sha256 does not match the report bytes ({report.rel()}); the report changed after "
                "the choice",
            )
        option = header.selected_option
        sidecar_rel = layout.rel(sidecar, project_root)
    else:
        if oc.preselected is None:
            raise WriteRefused(report.path, "preselected-validation report records no upstream confirmation")
        option = oc.preselected.option_id
    candidate = next((c for c in oc.candidates if c.option_id == option), None)
    if candidate is None:
        raise WriteRefused(report.path, f"selected option {option!r} is not a candidate of the report")
    snapshot = SelectedDirection(
        schema_version="1.0",
        task_key=report.model.task_key,
        option_id=candidate.option_id,
        title=candidate.title,
        summary=candidate.summary,
        mode=oc.mode,
        source_report_path=report.rel(),
        source_data_sha256=digest,
        user_response_path=sidecar_rel,
        selected_at=iso(clock.now()),
    )
    target = layout.selected_direction_path(task.root)
    existing = task.selected_direction()
    if isinstance(existing, SelectedDirection):
        same = (existing.option_id, existing.source_data_sha256, existing.source_report_path) == (
            snapshot.option_id,
            snapshot.source_data_sha256,
            snapshot.source_report_path,
        )
        if same:
            return target
        raise WriteRefused(target, f"a different direction ({existing.option_id}) is already selected for this task")
    writes.create_only_json(project_root, target, snapshot.dump())
    return target


@dataclass(frozen=True)
class ChainCheck:
    """One link of the direction-selection chain, passed or failed."""

    step: str
    ok: bool
    detail: str
    path: Path | None = None


def _choice_checks(report: LoadedReport, ids: set[str]) -> tuple[list[ChainCheck], str | None]:
    """The checks of how the option was chosen (sidecar or upstream preselection), and the chosen id."""
    oc = report.model.option_candidates
    assert oc is not None
    if oc.mode == "preselected-validation":  # else comparison, stated or not
        chosen = oc.preselected.option_id if oc.preselected else None
        candidates = ", ".join(sorted(ids)) or "none"
        if chosen is None:
            detail = f"optionCandidates.preselected names no option (expected one of: {candidates})"
        elif chosen in ids:
            detail = f"upstream confirmed {chosen}"
        else:
            detail = f"upstream confirmed {chosen!r}, which is not a candidate (expected one of: {candidates})"
        return [ChainCheck("preselected confirmation", chosen in ids, detail, report.path)], chosen
    sidecar = sidecar_path_for(report)
    root = report.artifact.run.task.project.root
    loaded = reading.load_sidecar(sidecar, UserResponseHeader, root=root) if reading.lexists(sidecar) else None
    if loaded is None:
        return [ChainCheck("user-response sidecar", False, "no sidecar records the choice yet", sidecar)], None
    if isinstance(loaded, reading.LoadError):
        return [ChainCheck("user-response sidecar", False, loaded.reason, sidecar)], None
    header = loaded.header
    assert isinstance(header, UserResponseHeader)
    chosen = header.selected_option
    checks = [_digest_check("sidecar source-data-sha256", header.source_data_sha256, report, sidecar)]
    if chosen is None:
        return [*checks, ChainCheck("sidecar option", True, "the header names no selected-option", sidecar)], None
    option_ok = chosen in ids
    detail = f"{chosen} is a candidate"
    if not option_ok:
        detail = f"selected-option {chosen!r} is not a candidate (expected one of: {', '.join(sorted(ids)) or 'none'})"
    return [*checks, ChainCheck("sidecar option", option_ok, detail, sidecar)], chosen


def _digest_check(name: str, recorded: str, report: LoadedReport, path: Path) -> ChainCheck:
    """Whether a recorded SHA-256 names the report's bytes (the sidecar's and the snapshot's link to the report)."""
    if recorded == report.sha256:
        return ChainCheck(name, True, "matches the report bytes", path)
    return ChainCheck(name, False, f"{recorded} differs from the SHA-256 of the report bytes ({report.sha256})", path)


def _snapshot_checks(task: Task, report: LoadedReport, ids: set[str], chosen: str | None) -> list[ChainCheck]:
    """The checks of ``selected-direction.json`` and of the planning report that cites it."""
    sd_path = layout.selected_direction_path(task.root)
    selected = task.selected_direction()
    if selected is None:
        return [ChainCheck("selected-direction snapshot", False, "not written yet (planning prepare)", sd_path)]
    if isinstance(selected, reading.LoadError):
        return [ChainCheck("selected-direction snapshot", False, selected.reason, sd_path)]
    checks = [_digest_check("snapshot sourceDataSha256", selected.source_data_sha256, report, sd_path)]
    if selected.option_id is not None:
        ok = selected.option_id in ids and (chosen is None or selected.option_id == chosen)
        detail = f"{selected.option_id}"
        if selected.option_id not in ids:
            candidates = ", ".join(sorted(ids)) or "none"
            detail = f"optionId {selected.option_id!r} is not a candidate (expected one of: {candidates})"
        elif not ok:
            detail = f"optionId {selected.option_id!r} is not the chosen option (expected {chosen})"
        checks.append(ChainCheck("snapshot option", ok, detail, sd_path))
    plan_art = latest_report(task, layout.IMPLEMENTATION_PLANNING)
    if plan_art is None:
        return checks
    plan = load_report_artifact(plan_art)
    if isinstance(plan, reading.LoadError):
        return [*checks, ChainCheck("planning report", False, plan.reason, plan_art.path)]
    want = layout.rel(sd_path, task.project.root)
    ok = plan.model.selected_direction_ref == want
    detail = "cites the snapshot" if ok else f"cites {plan.model.selected_direction_ref!r}, not {want}"
    return [*checks, ChainCheck("planning selectedDirectionRef", ok, detail, plan.path)]


def check_chain(task: Task) -> list[ChainCheck]:
    """Every digest and reference check of the direction-selection chain (empty: no chain here)."""
    art = latest_report(task, "option-selection")
    if art is None and task.selected_direction() is None:
        return []
    report = load_report_artifact(art) if art else None
    if art is None or isinstance(report, reading.LoadError) or report is None:
        reason = report.reason if isinstance(report, reading.LoadError) else "no option-selection report"
        return [ChainCheck("option report", False, reason, art.path if art else None)]
    checks = [ChainCheck("option report", True, f"{report.rel()} sha256 {report.sha256[:12]}…", report.path)]
    oc = report.model.option_candidates
    assert oc is not None
    ids = {c.option_id for c in oc.candidates}
    choice, chosen = _choice_checks(report, ids)
    return checks + choice + _snapshot_checks(task, report, ids, chosen)
