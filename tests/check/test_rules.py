"""One test per rule: a minimal mutation of the demo gives that rule's finding at the right path."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from okstra_core.check.catalog import RULES

from .helpers import TASK, check, edit_json, edit_text, findings_of, one, rel
from .test_cross_file import CASES as CROSS_FILE_CASES

CROSS_FILE_RULES = {name.split("/")[0] for name in CROSS_FILE_CASES}

RUNS = f"{TASK}/runs"
HOME = ".okstra-home/managers/release-train"
Mutation = Callable[[Path], str]


def _binary_index(root: Path) -> str:
    p = root / TASK / "instruction-set/analysis-material.md"
    p.write_bytes(p.read_bytes()[:40] + b"\x00" + p.read_bytes()[40:])
    return rel(root, p)


def _escaping_symlink(root: Path) -> str:
    p = root / RUNS / "analysis/reports/final-report-analysis-009.md"
    os.symlink("/etc/hostname", p)
    return rel(root, p)


def _dangling_symlink(root: Path) -> str:
    p = root / TASK / "instruction-set/analysis-material.md"
    p.unlink()
    os.symlink("does-not-exist.md", p)
    return rel(root, p)


def _truncated_json(root: Path) -> str:
    p = one(root, f"{RUNS}/analysis/manifests/run-manifest-analysis-*.json")
    p.write_bytes(p.read_bytes()[:50])
    return rel(root, p)


def _repeated_key(root: Path) -> str:
    p = one(root, f"{RUNS}/analysis/state/team-state-analysis-*.json")
    p.write_text(p.read_text(encoding="utf-8").replace("{", '{"status": "completed", "status": "failed", ', 1))
    return rel(root, p)


def _unknown_file(root: Path) -> str:
    p = root / TASK / "notes.txt"
    p.write_text("scratch\n")
    return rel(root, p)


def _unknown_folder(root: Path) -> str:
    p = root / RUNS / "analysis/scratch"
    p.mkdir()
    return rel(root, p)


def _bad_name(root: Path) -> str:
    p = root / RUNS / "analysis/reports/summary.json"
    p.write_text("{}\n")
    return rel(root, p)


def _bad_seq(root: Path) -> str:
    src = one(root, f"{RUNS}/analysis/status/final-analysis-*.status")
    p = src.with_name("final-analysis-0009.status")
    shutil.copy(src, p)
    return rel(root, p)


def _shared_seq(root: Path) -> str:
    p = one(root, f"{RUNS}/analysis/state/team-state-analysis-001.json")
    edit_json(p, lambda d: d.update(runDateTimeSegment="2026-12-31T00:00:00Z"))
    return rel(root, p)


def _wrong_task_type(root: Path) -> str:
    src = one(root, f"{RUNS}/analysis/status/final-analysis-*.status")
    p = src.with_name("final-implementation-009.status")
    shutil.copy(src, p)
    return rel(root, p)


def _stage_in_non_stage_type(root: Path) -> str:
    p = root / RUNS / "analysis/stage-1"
    p.mkdir()
    return rel(root, p)


def _carry_in_stage(root: Path) -> str:
    p = root / RUNS / "implementation/stage-1/carry"
    p.mkdir()
    return rel(root, p)


def _non_slug_group(root: Path) -> str:
    p = root / ".okstra/tasks/Payments_Old"
    shutil.copytree(root / TASK, p / "retry-policy", symlinks=True)
    return rel(root, p)


def _unknown_type(root: Path) -> str:
    p = root / RUNS / "research"
    (p / "status").mkdir(parents=True)
    return rel(root, p)


def _schema(root: Path) -> str:
    p = root / TASK / "task-manifest.json"
    edit_json(p, lambda d: d.update(currentStatus=123))
    return rel(root, p)


def _bad_jsonl_line(root: Path) -> str:
    p = root / RUNS / "implementation-planning/consumers.jsonl"
    with p.open("a") as fh:
        fh.write('{"stage": "one"}\n')
    return rel(root, p)


def _partial_v2(root: Path) -> str:
    p = root / ".okstra/tasks/platform/observability/runs/analysis/state/team-state-analysis-001.json"
    edit_json(p, lambda d: d["workerDispatches"][0].pop("attempt"))
    return rel(root, p)


def _sidecar_header(root: Path) -> str:
    p = root / RUNS / "option-selection/user-responses/user-response-option-selection-001.md"
    edit_text(p, "kind: user-response\n", "kind: user-response\nkind: user-response\n")
    return rel(root, p)


def _unknown_header_key(root: Path) -> str:
    p = root / RUNS / "option-selection/user-responses/user-response-option-selection-001.md"
    edit_text(p, "kind: user-response\n", "kind: user-response\nextra-key: 1\n")
    return rel(root, p)


def _request_template_version(root: Path) -> str:
    p = one(root, f"{RUNS}/implementation-planning/design-prep-requests/design-prep-request-*.md")
    edit_text(p, "template-version: 1\n", "template-version: 7\n")
    return rel(root, p)


def _project_fields_absent(root: Path) -> str:
    meta = one(root, f"{RUNS}/analysis/prompts/*-worker-prompt-analysis-001.md.meta.json")
    edit_json(meta, lambda d: d.pop("publishedAt"))
    return rel(root, meta)


def _foreign_task_key(root: Path) -> str:
    p = root / TASK / "history/timeline.json"
    edit_json(p, lambda d: d.update(taskKey="demo-shop:payments:other"))
    return rel(root, p)


def _no_catalog(root: Path) -> str:
    p = root / ".okstra/discovery/task-catalog.json"
    p.unlink()
    return rel(root, p)


def _manifest_key(root: Path) -> str:
    p = root / TASK / "task-manifest.json"
    edit_json(p, lambda d: d.update(taskKey="demo-shop:payments:retry"))
    return rel(root, p)


def _uncatalogued(root: Path) -> str:
    p = root / ".okstra/discovery/task-catalog.json"
    edit_json(p, lambda d: d.update(tasks=[t for t in d["tasks"] if t["taskId"] != "retry-policy"]))
    return TASK


def _missing_manifest(root: Path) -> str:
    p = root / TASK / "task-manifest.json"
    p.unlink()
    return rel(root, p)


def _latest_elsewhere(root: Path) -> str:
    p = root / ".okstra/discovery/latest-task.json"
    edit_json(p, lambda d: d.update(taskKey="demo-shop:nowhere:nothing"))
    return rel(root, p)


def _absolute_path(root: Path) -> str:
    p = root / TASK / "task-manifest.json"
    edit_json(p, lambda d: d.update(runsPath=str(root / TASK / "runs")))
    return rel(root, p)


def _missing_path(root: Path) -> str:
    p = root / TASK / "task-manifest.json"
    edit_json(p, lambda d: d.update(taskBriefPath=f"{TASK}/instruction-set/no-such-brief.md"))
    return rel(root, p)


def _ready_without_phase(root: Path) -> str:
    p = root / TASK / "task-manifest.json"
    edit_json(p, lambda d: d["workflow"].update(nextRecommendedPhase={"status": "ready", "rationale": "go"}))
    return rel(root, p)


def _bad_correction(root: Path) -> str:
    p = root / TASK / "task-manifest.json"
    pointer = {"phase": "implementation", "status": "pending", "rationale": "x"}
    edit_json(
        p, lambda d: d["workflow"].update(nextRecommendedPhaseCorrection={"authored": pointer, "applied": pointer})
    )
    return rel(root, p)


def _fix_cycles(root: Path) -> str:
    p = root / ".okstra/tasks/search/stale-cache/task-manifest.json"
    edit_json(p, lambda d: d["fixCycles"].update(count=5))
    return rel(root, p)


def _timeline_missing_run(root: Path) -> str:
    p = root / TASK / "history/timeline.json"
    edit_json(
        p, lambda d: d["entries"][0].update(runManifestPath=f"{RUNS}/analysis/manifests/run-manifest-analysis-042.json")
    )
    return rel(root, p)


def _prompt_without_meta(root: Path) -> str:
    meta = one(root, f"{RUNS}/analysis/prompts/*-worker-prompt-analysis-001.md.meta.json")
    meta.unlink()
    return rel(root, meta.with_name(meta.name.removesuffix(".meta.json")))


def _meta_without_prompt(root: Path) -> str:
    meta = one(root, f"{RUNS}/analysis/prompts/*-worker-prompt-analysis-001.md.meta.json")
    meta.with_name(meta.name.removesuffix(".meta.json")).unlink()
    return rel(root, meta)


def _meta_back_reference(root: Path) -> str:
    meta = one(root, f"{RUNS}/analysis/prompts/*-worker-prompt-analysis-001.md.meta.json")
    edit_json(meta, lambda d: d.update(runManifestPath=f"{RUNS}/analysis/manifests/run-manifest-analysis-077.json"))
    return rel(root, meta)


def _unknown_assignment(root: Path) -> str:
    meta = one(root, f"{RUNS}/analysis/prompts/*-worker-prompt-analysis-001.md.meta.json")
    edit_json(meta, lambda d: d.update(assignmentRef="assignment-that-never-was"))
    return rel(root, meta)


def _prompt_digest(root: Path) -> str:
    meta = one(root, f"{RUNS}/analysis/prompts/*-worker-prompt-analysis-001.md.meta.json")
    prompt = meta.with_name(meta.name.removesuffix(".meta.json"))
    prompt.write_bytes(prompt.read_bytes() + b"\nedited after publication\n")
    return rel(root, meta)


def _duty_drift(root: Path) -> str:
    duty = one(root, f"{RUNS}/analysis/prompts/duty-contracts-analysis-001/lead.md")
    duty.write_bytes(duty.read_bytes() + b"drift\n")
    return rel(root, duty)


def _duplicate_dispatch(root: Path) -> str:
    p = one(root, f"{RUNS}/analysis/state/team-state-analysis-001.json")
    edit_json(p, lambda d: d["workerDispatches"].append(dict(d["workerDispatches"][0])))
    return rel(root, p)


def _link_not_exclusive(root: Path) -> str:
    p = one(root, f"{RUNS}/analysis/state/team-state-analysis-001.json")

    def change(d: dict) -> None:
        link = dict(d["agentResultLinks"][0])
        other = next(w["dispatchId"] for w in d["workerDispatches"] if w.get("dispatchId") != link["dispatchId"])
        d["agentResultLinks"].append({**link, "dispatchId": other})

    edit_json(p, change)
    return rel(root, p)


def _link_missing_result(root: Path) -> str:
    p = one(root, f"{RUNS}/analysis/state/team-state-analysis-001.json")
    edit_json(
        p,
        lambda d: d["agentResultLinks"][0].update(
            resultPath=f"{RUNS}/analysis/worker-results/ghost-result-analysis-001.md"
        ),
    )
    return rel(root, p)


def _link_outside_roots(root: Path) -> str:
    p = one(root, f"{RUNS}/analysis/state/team-state-analysis-001.json")
    edit_json(p, lambda d: d["agentResultLinks"][0].update(resultPath=f"{TASK}/instruction-set/task-brief.md"))
    return rel(root, p)


def _bad_provenance(root: Path) -> str:
    meta = one(root, f"{RUNS}/analysis/prompts/*-worker-prompt-analysis-001.md.meta.json")
    edit_json(meta, lambda d: d["instructionProvenance"][0].update(path="/opt/okstra/templates/x.md"))
    return rel(root, meta)


def _sidecar_digest(root: Path) -> str:
    p = root / RUNS / "option-selection/user-responses/user-response-option-selection-001.md"
    text = p.read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("source-data-sha256: "))
    p.write_text(text.replace(line, 'source-data-sha256: "' + "0" * 64 + '"'))
    return rel(root, p)


def _snapshot_digest(root: Path) -> str:
    p = root / TASK / "instruction-set/selected-direction.json"
    edit_json(p, lambda d: d.update(sourceDataSha256="0" * 64))
    return rel(root, p)


def _snapshot_option(root: Path) -> str:
    p = root / TASK / "instruction-set/selected-direction.json"
    edit_json(p, lambda d: d.update(optionId="IO-999"))
    return rel(root, p)


def _planning_ref(root: Path) -> str:
    p = one(root, f"{RUNS}/implementation-planning/reports/final-report-implementation-planning-002.data.json")
    edit_json(p, lambda d: d.update(selectedDirectionRef=f"{TASK}/instruction-set/other.json"))
    return rel(root, p)


def _request_status(root: Path) -> str:
    p = root / RUNS / "implementation-planning/design-prep-requests/design-prep-request-002-PREP-001.md"
    edit_text(p, "item-status: provisional", "item-status: blocked")
    return rel(root, p)


def _input_revision(root: Path) -> str:
    p = one(root, f"{RUNS}/implementation-planning/design-prep-inputs/design-prep-input-002-PREP-001-r2-*.md")
    edit_text(p, "revision: 2", "revision: 7")
    return rel(root, p)


def _deliverable(root: Path) -> str:
    p = one(root, f"{RUNS}/analysis/reports/final-report-analysis-*.data.json")
    edit_json(p, lambda d: d.pop("analysisFindings"))
    return rel(root, p)


def _report_version(root: Path) -> str:
    p = one(root, f"{RUNS}/analysis/reports/final-report-analysis-*.data.json")
    edit_json(p, lambda d: d.update(schemaVersion="9.9"))
    return rel(root, p)


def _stale_reading_copy(root: Path) -> str:
    from okstra_core.reading import load_report
    from okstra_core.render.markdown import render_markdown

    data = one(root, f"{RUNS}/analysis/reports/final-report-analysis-*.data.json")
    report = load_report(data)
    md = data.with_name(data.name.replace(".data.json", ".md"))
    md.write_text(render_markdown(report).replace("\n", "\nhand edit\n", 1), encoding="utf-8")  # type: ignore[arg-type]
    return rel(root, md)


def _carry_backlink(root: Path) -> str:
    p = root / RUNS / "implementation/carry/stage-1.json"
    edit_json(
        p,
        lambda d: d.update(
            runManifestPath=f"{RUNS}/implementation/stage-1/manifests/run-manifest-implementation-099.json"
        ),
    )
    return rel(root, p)


def _consumer_backlink(root: Path) -> str:
    p = root / RUNS / "implementation-planning/consumers.jsonl"
    lines = p.read_text().splitlines()
    first = json.loads(lines[0])
    first["consumerRunDir"] = f"{RUNS}/implementation/stage-9"
    p.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    return rel(root, p)


def _final_version(root: Path) -> str:
    p = root / RUNS / "analysis/state/convergence-analysis-001.json"
    edit_json(p, lambda d: d.update(schemaVersion="1.1"))
    return rel(root, p)


def _round_gap(root: Path) -> str:
    state = root / RUNS / "analysis/state"
    for kind in ("plan", "results"):
        (state / f"convergence-round-2-{kind}-analysis-001.json").rename(
            state / f"convergence-round-3-{kind}-analysis-001.json"
        )
    return rel(root, state / "convergence-work-analysis-001.json")


def _missing_results(root: Path) -> str:
    state = root / RUNS / "analysis/state"
    (state / "convergence-round-2-results-analysis-001.json").unlink()
    return rel(root, state / "convergence-work-analysis-001.json")


def _valid_final_replaced(root: Path) -> str:
    state = root / RUNS / "analysis/state"
    (state / "migrations").mkdir()
    p = state / "migrations/convergence-analysis-001.json.20261130T000000000000Z.orig"
    shutil.copy(state / "convergence-analysis-001.json", p)
    return rel(root, p)


INV = ".okstra/agent-invocations/schedule-verification/schedule-2026-w48"


def _envelope_binding(root: Path) -> str:
    p = root / f"{INV}.prompt.md.meta.json"
    edit_json(p, lambda d: d.update(purpose="code-review"))
    return rel(root, p)


def _completion_digest(root: Path) -> str:
    p = root / f"{INV}.prompt.md.completion.json"
    edit_json(p, lambda d: d.update(envelopeSha256="0" * 64))
    return rel(root, p)


def _cross_link(root: Path) -> str:
    p = root / f"{INV}.result.json"
    other = ".okstra/agent-invocations/code-review/review-retry-policy-branch.prompt.md.meta.json"
    edit_json(p, lambda d: d.update(promptMetaPath=other))
    return rel(root, p)


def _incomplete(root: Path) -> str:
    (root / f"{INV}.instructions.md").unlink()
    return f"{INV}.prompt.md.completion.json"


def _unknown_status(root: Path) -> str:
    p = one(root, f"{RUNS}/analysis/status/final-analysis-*.status")
    p.write_text("done\n")
    return rel(root, p)


def _project_root_missing(root: Path) -> str:
    p = root / HOME / "projects.json"
    edit_json(p, lambda d: d["projects"][0].update(projectRoot=str(root / "moved-away")))
    return rel(root, p)


def _child_context(root: Path) -> str:
    p = root / HOME / "task-groups/q4-release/payments-hardening/child-context/unknown-child.md"
    p.write_text("# context\n")
    return rel(root, p)


def _manager_identity(root: Path) -> str:
    p = root / HOME / "manager.json"
    edit_json(p, lambda d: d.update(managerId="another-manager"))
    return rel(root, p)


CASES: dict[str, Mutation] = {
    "OKS001": _binary_index,
    "OKS002": _escaping_symlink,
    "OKS003": _dangling_symlink,
    "OKS004": _truncated_json,
    "OKS005": _unknown_file,
    "OKS007": _repeated_key,
    "OKS010": _unknown_folder,
    "OKS011": _bad_name,
    "OKS012": _bad_seq,
    "OKS013": _shared_seq,
    "OKS014": _wrong_task_type,
    "OKS015": _stage_in_non_stage_type,
    "OKS016": _carry_in_stage,
    "OKS018": _non_slug_group,
    "OKS019": _unknown_type,
    "OKS020": _schema,
    "OKS021": _bad_jsonl_line,
    "OKS022": _partial_v2,
    "OKS023": _sidecar_header,
    "OKS024": _foreign_task_key,
    "OKS025": _unknown_header_key,
    "OKS026": _project_fields_absent,
    "OKS030": _no_catalog,
    "OKS031": _manifest_key,
    "OKS032": _uncatalogued,
    "OKS033": _missing_manifest,
    "OKS034": _latest_elsewhere,
    "OKS035": _absolute_path,
    "OKS036": _missing_path,
    "OKS037": _ready_without_phase,
    "OKS038": _bad_correction,
    "OKS039": _fix_cycles,
    "OKS040": _timeline_missing_run,
    "OKS050": _prompt_without_meta,
    "OKS051": _meta_without_prompt,
    "OKS052": _meta_back_reference,
    "OKS053": _unknown_assignment,
    "OKS054": _prompt_digest,
    "OKS055": _duty_drift,
    "OKS060": _duplicate_dispatch,
    "OKS061": _link_not_exclusive,
    "OKS062": _link_missing_result,
    "OKS063": _link_outside_roots,
    "OKS064": _bad_provenance,
    "OKS070": _sidecar_digest,
    "OKS071": _snapshot_digest,
    "OKS072": _snapshot_option,
    "OKS073": _planning_ref,
    "OKS080": _request_status,
    "OKS081": _input_revision,
    "OKS085": _request_template_version,
    "OKS090": _deliverable,
    "OKS091": _report_version,
    "OKS092": _stale_reading_copy,
    "OKS100": _carry_backlink,
    "OKS101": _consumer_backlink,
    "OKS110": _final_version,
    "OKS111": _round_gap,
    "OKS112": _missing_results,
    "OKS113": _valid_final_replaced,
    "OKS120": _envelope_binding,
    "OKS121": _completion_digest,
    "OKS122": _cross_link,
    "OKS123": _incomplete,
    "OKS130": _unknown_status,
    "OKS140": _project_root_missing,
    "OKS141": _child_context,
    "OKS142": _manager_identity,
}

#: Rules shown by the clean demo itself (see test_clean_demo) or by a dedicated test.
ELSEWHERE = {
    "OKS009": "test_internal_error_becomes_a_finding",
    "OKS017": "test_clean_demo::test_demo_warnings_are_the_intended_ones",
    "OKS082": "test_clean_demo::test_demo_warnings_are_the_intended_ones",
    "OKS083": "test_clean_demo::test_demo_warnings_are_the_intended_ones",
    "OKS084": "test_clean_demo::test_demo_warnings_are_the_intended_ones",
    "OKS006": "tests/core/test_hostile_store.py::test_checker_reports_leftover_temp_files_with_their_writer",
    **{rule: "test_cross_file::test_breaks_then_mended_is_silent" for rule in CROSS_FILE_RULES},
}


def test_every_rule_has_a_test() -> None:
    assert {r.id for r in RULES} == set(CASES) | set(ELSEWHERE)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule(rule: str, fresh_demo: Path) -> None:
    path = CASES[rule](fresh_demo)
    report = check(fresh_demo)
    found = findings_of(report, rule)
    assert any(f.path == path for f in found), (path, found, [f for f in report.findings if f.severity == "error"][:5])


def test_internal_error_becomes_a_finding(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from okstra_core.check.rules import team_state

    def boom(scope: object, run: object) -> None:
        raise KeyError("unexpected")

    monkeypatch.setattr(team_state, "check_run", boom)
    found = findings_of(check(fresh_demo), "OKS009")
    assert found and all("team-state" in f.message and "KeyError" in f.message for f in found)


#: Key parts of a message that names what was expected and what was found, per rule.
MESSAGES: dict[str, tuple[str, ...]] = {
    "OKS003": ("points to 'does-not-exist.md', which does not exist",),
    "OKS010": ("scratch/ is not a category folder", "expected one of: manifests, state, prompts"),
    "OKS011": ("'summary.json' is not a name of any reports/ artifact", "expected final-report-{task_type}-{seq}"),
    "OKS015": ("stage folder stage-1/ under task type 'analysis'", "stages belong to implementation"),
    "OKS018": ("'Payments_Old' is not a canonical slug (expected 'payments-old')",),
    "OKS020": ("currentStatus: Input should be a valid string (found 123)",),
    "OKS021": ("stage:", "(found 'one')"),
    "OKS026": ("lacks fields this project's writers add", ": publishedAt"),
    "OKS038": ("authored and applied are both status 'pending', phase 'implementation'",),
    "OKS053": ("'assignment-that-never-was'", "expected one of: assign-01-lead"),
    "OKS054": ("digests.prompt is ", "hash to "),
    "OKS055": ("catalog.json records sha256 ", "the file's bytes hash to "),
    "OKS064": ("instructionProvenance.0.path: not in the expected form (found '/opt/okstra/templates/x.md')",),
    "OKS072": ("optionId 'IO-999' is not a candidate (expected one of: IO-001",),
    "OKS110": ("schemaVersion: Input should be '1.2' (found '1.1')",),
    "OKS130": ("status 'done' is not a known status (expected one of: prepared",),
}


@pytest.mark.parametrize("rule", sorted(MESSAGES))
def test_message_says_expected_and_found(rule: str, fresh_demo: Path) -> None:
    path = CASES[rule](fresh_demo)
    messages = [f.message for f in findings_of(check(fresh_demo), rule) if f.path == path]
    assert any(all(part in m for part in MESSAGES[rule]) for m in messages), messages
    assert all("None" not in m and "\n" not in m for m in messages), messages


def test_missing_field_says_missing(fresh_demo: Path) -> None:
    p = fresh_demo / TASK / "task-manifest.json"
    edit_json(p, lambda d: d.pop("taskKey"))
    messages = [f.message for f in findings_of(check(fresh_demo), "OKS020") if f.path == rel(fresh_demo, p)]
    assert any("taskKey: missing" in m for m in messages), messages


def test_next_phase_correction_names_both_pointers(fresh_demo: Path) -> None:
    p = fresh_demo / TASK / "task-manifest.json"
    authored = {"phase": "analysis", "status": "pending", "rationale": "x"}
    applied = {"phase": "implementation", "status": "pending", "rationale": "y"}
    edit_json(
        p, lambda d: d["workflow"].update(nextRecommendedPhaseCorrection={"authored": authored, "applied": applied})
    )
    messages = [f.message for f in findings_of(check(fresh_demo), "OKS038")]
    assert any(
        "applied is status 'pending', phase 'implementation', not the stored nextRecommendedPhase (status " in m
        for m in messages
    ), messages


def test_missing_duty_catalog_names_the_manifest(fresh_demo: Path) -> None:
    catalog = one(fresh_demo, f"{RUNS}/analysis/prompts/duty-contracts-analysis-001/catalog.json")
    catalog.unlink()
    found = [f for f in findings_of(check(fresh_demo), "OKS055") if f.path == rel(fresh_demo, catalog)]
    assert found and all(
        "is missing from the duty snapshot that agentContract.dutyRoot names in " in f.message for f in found
    )
    assert any("run-manifest-analysis-001.json" in f.message for f in found), found


def test_project_fields_absent_names_nested_rows_once_per_file(fresh_demo: Path) -> None:
    p = one(fresh_demo, f"{RUNS}/analysis/state/team-state-analysis-001.json")

    def strip(d: dict) -> None:
        for row in d["workerDispatches"]:
            row.pop("dispatchedAt", None)
        for link in d["agentResultLinks"]:
            link.pop("acceptedAt", None)

    edit_json(p, strip)
    found = [f for f in findings_of(check(fresh_demo), "OKS026") if f.path == rel(fresh_demo, p)]
    assert len(found) == 1 and found[0].severity == "info", found
    assert "workerDispatches[].dispatchedAt" in found[0].message
    assert "agentResultLinks[].acceptedAt" in found[0].message
