"""Models and their JSON Schemas: they agree, valid examples pass, invalid ones fail in both."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Annotated, Any

import jsonschema
import pytest
from pydantic import ValidationError

from okstra_core import resources
from okstra_core.models import DOC_KINDS, DOC_KINDS_BY_NAME
from okstra_core.models.base import ADDED, Model, absent_added, model_attr
from okstra_core.models.report import FinalReportV3
from okstra_core.models.run import PromptMeta, TeamState
from okstra_core.models.schemas import schema_text
from okstra_core.models.task import FixCycleEvent, NextRecommendedPhase, derive_fix_cycles


def _validator(kind: str) -> Any:
    schema = json.loads(resources.read_schema_text(DOC_KINDS_BY_NAME[kind].schema_file))
    return jsonschema.validators.validator_for(schema)(schema)


@pytest.mark.parametrize("kind", [k.name for k in DOC_KINDS])
def test_committed_schema_equals_model(kind: str) -> None:
    """A schema that drifts from its model fails here; regenerate with `python -m okstra_core.models.schemas`."""
    assert resources.read_schema_text(DOC_KINDS_BY_NAME[kind].schema_file) == schema_text(DOC_KINDS_BY_NAME[kind])


def test_final_report_schema_names() -> None:
    names = {k.schema_file for k in DOC_KINDS}
    assert {"final-report-v3.0.schema.json", "final-report-v2.0.schema.json"} <= names


# ---------------------------------------------------------------- examples from the demo


def _examples(demo_root: Path) -> dict[str, list[Any]]:
    from conftest import classify_documents, document_values

    from okstra_core.layout import demo_home
    from okstra_core.store import Project

    project = Project.open(demo_root)
    assert isinstance(project, Project)
    out: dict[str, list[Any]] = {}
    for _path, doc_kind, value in document_values(classify_documents(project, demo_home(demo_root))):
        out.setdefault(doc_kind, []).append(value)
    return out


@pytest.fixture(scope="module")
def examples(demo_root: Path) -> dict[str, list[Any]]:
    return _examples(demo_root)


def test_every_kind_has_a_demo_example(examples: dict[str, list[Any]]) -> None:
    assert set(examples) == {k.name for k in DOC_KINDS}


def _agree(kind: str, value: Any) -> bool:
    model = DOC_KINDS_BY_NAME[kind].model
    try:
        model.model_validate(value)
        model_ok = True
    except ValidationError:
        model_ok = False
    schema_ok = not list(_validator(kind).iter_errors(value))
    assert model_ok == schema_ok, (
        f"{kind}: model says {model_ok}, schema says {schema_ok} for {json.dumps(value)[:300]}"
    )
    return model_ok


@pytest.mark.parametrize("kind", [k.name for k in DOC_KINDS])
def test_required_fields_are_required_by_both(kind: str, examples: dict[str, list[Any]]) -> None:
    value = examples[kind][0]
    assert _agree(kind, value)
    schema = json.loads(resources.read_schema_text(DOC_KINDS_BY_NAME[kind].schema_file))
    for field in schema.get("required", []):
        broken = copy.deepcopy(value)
        broken.pop(field, None)
        assert not _agree(kind, broken), f"{kind} accepts a document without {field}"
    wrong = copy.deepcopy(value)
    first = schema.get("required", [None])[0]
    if first is not None:
        wrong[first] = {"unexpected": ["object"]}
        assert not _agree(kind, wrong)
    # A document is an object; the list documents (catalog, timeline) may also be the bare list of entries.
    if not hasattr(DOC_KINDS_BY_NAME[kind].model, "BARE_LIST_ITEM"):
        assert not _agree(kind, [value])


# -------------------------------------------------------------------- v1 / v2 identity

V2 = {
    "participantRef": "participant:a",
    "roleExecutionRef": "role:analysis:1",
    "invocationRef": "invocation:x",
    "attempt": 1,
    "executionLabel": "a #1",
}


def _team(version: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schemaVersion": version,
        "taskKey": "p:g:t",
        "taskType": "analysis",
        "runDateTimeSegment": "2026-11-30T04:15:00Z",
        "workerDispatches": rows,
    }


def _row(i: int, **extra: Any) -> dict[str, Any]:
    return {"dispatchId": f"d{i}", "workerId": "w", "dispatchedAt": "2026-11-30T04:15:00Z", **extra}


def test_v1_and_v2_payloads() -> None:
    assert _agree("team-state", _team("1.0", [_row(1), _row(2)]))
    assert _agree("team-state", _team("2.0", [_row(1, **V2), _row(2, **V2)]))


def test_partial_v2_payload_is_rejected() -> None:
    partial = {k: v for k, v in V2.items() if k != "attempt"}
    assert not _agree("team-state", _team("2.0", [_row(1, **partial)]))
    with pytest.raises(ValidationError, match="partial v2 payload"):
        TeamState.model_validate(_team("2.0", [_row(1, **partial)]))


def test_mixed_payload_is_rejected() -> None:
    assert not _agree("team-state", _team("2.0", [_row(1, **V2), _row(2)]))
    assert not _agree("team-state", _team("1.0", [_row(1, **V2)]))
    with pytest.raises(ValidationError, match="mixed v1/v2"):
        TeamState.model_validate(_team("2.0", [_row(1, **V2), _row(2)]))


def test_v2_fields_are_read_as_stored(examples: dict[str, list[Any]]) -> None:
    meta = PromptMeta.model_validate(examples["prompt-meta"][0])
    assert meta.is_v2
    # Stored values are authoritative, even when workerId would suggest something else.
    changed = {**examples["prompt-meta"][0], "participantRef": "participant:someone-else"}
    assert PromptMeta.model_validate(changed).participant_ref == "participant:someone-else"


# ------------------------------------------------------------------------ report rules


def test_exactly_one_matching_deliverable(examples: dict[str, list[Any]]) -> None:
    analysis = next(v for v in examples["final-report-v3.0"] if v["taskType"] == "analysis")
    assert _agree("final-report-v3.0", analysis)
    two = {**analysis, "verificationVerdict": {"verdict": "pass"}}
    assert not _agree("final-report-v3.0", two)
    none = {k: v for k, v in analysis.items() if k != "analysisFindings"}
    assert not _agree("final-report-v3.0", none)
    wrong_type = {**analysis, "taskType": "implementation"}
    assert not _agree("final-report-v3.0", wrong_type)
    # A task type this project does not know has no known deliverable to demand (DECISIONS 1: info, not error).
    unknown = {**analysis, "taskType": "custom"}
    assert _agree("final-report-v3.0", unknown)
    absent = {k: v for k, v in analysis.items() if k != "taskType"}  # the file name carries the type
    assert _agree("final-report-v3.0", absent)
    with pytest.raises(ValidationError, match="exactly one task-type deliverable"):
        FinalReportV3.model_validate(two)


def test_v2_report_is_not_v3(examples: dict[str, list[Any]]) -> None:
    v2 = examples["final-report-v2.0"][0]
    assert _agree("final-report-v2.0", v2)
    assert not _agree("final-report-v3.0", v2)


# ------------------------------------------------------------------------- task rules


def test_next_recommended_phase_shape() -> None:
    assert NextRecommendedPhase(phase="analysis", status="ready").launchable
    pending = NextRecommendedPhase(phase="analysis", status="pending")  # prepare keeps the phase
    assert not pending.launchable
    with pytest.raises(ValidationError):
        NextRecommendedPhase.model_validate({"phase": "x", "status": "later"})
    # Extra keys are kept and never an error (DECISIONS 5a).
    assert NextRecommendedPhase.model_validate({"phase": "x", "status": "ready", "extra": 1}).model_extra == {
        "extra": 1
    }


def test_fix_cycles_derivation() -> None:
    events = [
        FixCycleEvent(event="opened", cycle_id="a", cycle=1, symptom="s1", at="2026-11-30T01:00:00Z"),
        FixCycleEvent(event="closed", cycle_id="a", cycle=1, at="2026-11-30T02:00:00Z"),
        FixCycleEvent(
            event="opened", cycle_id="b", cycle=2, symptom="s2", target_report="r", at="2026-11-30T03:00:00Z"
        ),
    ]
    summary = derive_fix_cycles(events)
    assert summary.count == 2 and summary.open_cycle_id == "b"
    assert summary.latest is not None and summary.latest.cycle == 2 and summary.latest.closed_at is None
    closed = derive_fix_cycles(
        [*events, FixCycleEvent(event="closed", cycle_id="b", cycle=2, at="2026-11-30T04:00:00Z")]
    )
    assert (
        closed.open_cycle_id is None and closed.latest is not None and closed.latest.closed_at == "2026-11-30T04:00:00Z"
    )
    assert derive_fix_cycles([]).count == 0


def test_provenance_paths_are_relative_posix(examples: dict[str, list[Any]]) -> None:
    meta = copy.deepcopy(examples["prompt-meta"][0])
    for bad in ("/abs/path.md", "../up.md", "a\\b.md", "a//b.md"):
        meta["instructionProvenance"] = [{"kind": "project", "path": bad}]
        assert not _agree("prompt-meta", meta)
    meta["instructionProvenance"] = []
    assert not _agree("prompt-meta", meta)
    meta["instructionProvenance"] = [{"kind": "vendor", "path": "a.md"}]
    assert not _agree("prompt-meta", meta)


class _Leaf(Model):
    kept: str | None = None
    added: Annotated[str | None, ADDED] = None


class _Branch(Model):
    leaves: list[_Leaf] | None = None
    leaf: _Leaf | None = None
    tags: list[str] | None = None
    anything: Any = None
    added: Annotated[int | None, ADDED] = None


def test_absent_added_walks_every_field_that_can_hold_a_model() -> None:
    doc = _Branch.model_validate(
        {"leaves": [{"kept": "a"}, {"added": "b"}, {}], "leaf": {}, "tags": ["x", "y"], "anything": {"added": 1}}
    )
    # In field order, each name once; a plain value (a dict under Any, strings in a list) is no model to walk.
    assert absent_added(doc) == ["leaves[].added", "leaf.added", "added"]
    assert absent_added(_Branch.model_validate({"added": 3, "leaf": {"added": "z"}})) == []


class _Plain(Model):
    kept: str | None = None


class _Mid(Model):
    plain: _Plain | None = None
    leaf: _Leaf | None = None


class _Outer(Model):
    mid: _Mid | None = None
    rows: list[_Plain] | None = None
    again: _Outer | None = None


def test_absent_added_finds_a_field_several_models_deep_and_through_a_cycle() -> None:
    # _Plain holds nothing added (never walked); _Leaf is reached through _Mid, and again through _Outer itself.
    doc = _Outer.model_validate({"mid": {"plain": {}, "leaf": {}}, "rows": [{}], "again": {"mid": {"leaf": {}}}})
    assert absent_added(doc) == ["mid.leaf.added", "again.mid.leaf.added"]
    assert absent_added(_Outer.model_validate({"rows": [{"kept": "x"}], "mid": {"plain": {}}})) == []


class _Named(Model):
    field: str | None = None

    @property
    def shown(self) -> str:
        return "shown"

    def method(self) -> str:
        return "called"


@pytest.mark.parametrize("name", ["field", "shown", "method", "extra_key", "extraKey", "missing", "model_fields_set"])
def test_model_attr_reads_as_getattr_does(name: str) -> None:
    doc = _Named.model_validate({"field": "f", "extra_key": {"x": 1}})
    expected = getattr(doc, name, None)
    found = model_attr(doc, name)
    assert found == expected if not callable(expected) else found() == expected()


@pytest.mark.parametrize("value", ["2026-11-31T10:15:00Z", "2026-02-30T00:00:00Z", "2026-11-30T25:00:00Z", "soon"])
def test_a_time_that_is_no_real_time_is_refused(value: str) -> None:
    """Time fields and runDateTimeSegment hold real moments: 31 November is refused by every model."""
    from okstra_core.models.run import RunManifest
    from okstra_core.models.task import TimelineEntry

    with pytest.raises(ValidationError, match="is not a real time"):
        RunManifest.model_validate({"runDateTimeSegment": value})
    with pytest.raises(ValidationError, match="is not a real time"):
        TimelineEntry.model_validate({"runTimestamp": value})
    assert RunManifest.model_validate({"runDateTimeSegment": "2026-11-30T10:15:00Z"})
    assert RunManifest.model_validate({"runDateTimeSegment": "2026-11-30T10:15:00.123+01:00"})
