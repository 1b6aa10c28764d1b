"""The name grammar: every kind builds and parses back to the same parts."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from okstra_core import names

SLUG = st.from_regex(r"[a-z0-9]{1,6}(-[a-z0-9]{1,6}){0,2}", fullmatch=True)
TASK_TYPES = st.sampled_from(
    ["analysis", "option-selection", "implementation-planning", "implementation", "final-verification", "custom-type"]
)


@given(
    kind=st.sampled_from([k.name for k in names.KINDS]),
    task_type=TASK_TYPES,
    seq=st.integers(1, 20000),
    worker=SLUG,
    rnd=st.integers(0, 40),
    prep=st.integers(0, 999),
    rev=st.integers(1, 500),
    stamp=st.datetimes(dt.datetime(2000, 1, 1), dt.datetime(2099, 12, 31)).map(
        lambda m: m.strftime("%Y%m%dT%H%M%S%fZ")
    ),
)
def test_round_trip(
    kind: str, task_type: str, seq: int, worker: str, rnd: int, prep: int, rev: int, stamp: str
) -> None:
    k = names.KINDS_BY_NAME[kind]
    filename = names.build(
        kind,
        task_type=task_type,
        seq=seq,
        worker_id=worker,
        round=rnd,
        prep_id=f"PREP-{prep:03d}",
        revision=rev,
        stamp=stamp,
    )
    parsed = names.parse_in_category(k.category, filename)
    assert parsed is not None and parsed.kind == kind and parsed.category == k.category
    assert parsed.seq == seq
    if "{task_type}" in k.template:
        assert parsed.task_type == task_type
    if "{worker_id}" in k.template:
        assert parsed.worker_id == worker
    if "{round}" in k.template:
        assert parsed.round == rnd
    if "{prep_id}" in k.template:
        assert parsed.prep_id == f"PREP-{prep:03d}"
    if "{revision}" in k.template:
        assert parsed.revision == rev
    if "{stamp}" in k.template:
        assert parsed.stamp == stamp


@pytest.mark.parametrize(
    ("category", "filename", "kind", "parts"),
    [
        (
            "prompts",
            "lead-execution-prompt-implementation-planning-002.md",
            "lead-prompt",
            {"task_type": "implementation-planning", "seq": 2},
        ),
        (
            "prompts",
            "codex-analyser-reverify-r2-analysis-001.md.meta.json",
            "reverify-prompt-meta",
            {"worker_id": "codex-analyser", "round": 2, "task_type": "analysis"},
        ),
        (
            "prompts",
            "claude-analyser-worker-prompt-final-verification-013.log",
            "worker-prompt-log",
            {"worker_id": "claude-analyser", "task_type": "final-verification", "seq": 13},
        ),
        ("state", "convergence-round-0-plan-analysis-001.json", "convergence-round-plan", {"round": 0}),
        ("state", "convergence-analysis-001.json", "convergence-final", {"task_type": "analysis"}),
        (
            "design-prep-inputs",
            "design-prep-input-002-PREP-002-r3-20261130T041500123456Z.md",
            "design-prep-input",
            {"seq": 2, "prep_id": "PREP-002", "revision": 3, "stamp": "20261130T041500123456Z"},
        ),
        ("reports", "final-report-analysis-1000.data.json", "final-report-data", {"seq": 1000}),
    ],
)
def test_examples(category: str, filename: str, kind: str, parts: dict[str, object]) -> None:
    parsed = names.parse_in_category(category, filename)
    assert parsed is not None and parsed.kind == kind
    for key, value in parts.items():
        assert getattr(parsed, key) == value


@pytest.mark.parametrize(
    ("category", "filename"),
    [
        ("reports", "final-report-analysis-01.data.json"),  # seq needs three digits
        ("reports", "final-report-analysis.data.json"),
        ("prompts", "lead-execution-prompt-analysis-001.txt"),
        ("state", "convergence-round-01-plan-analysis-001.json"),  # round is unpadded
        ("design-prep-inputs", "design-prep-input-001-PREP-1-r1-20261130T041500Z.md"),
        ("design-prep-inputs", "design-prep-input-001-PREP-001-r0-20261130T041500Z.md"),
        ("manifests", "team-state-analysis-001.json"),  # right name, wrong folder
        ("reports", "Final-Report-analysis-001.data.json"),
    ],
)
def test_rejects(category: str, filename: str) -> None:
    assert names.parse_in_category(category, filename) is None


def test_flat_classification_and_carry() -> None:
    parsed = names.classify_flat("run-manifest-analysis-007.json")
    assert parsed is not None and parsed.category == "manifests" and parsed.seq == 7
    assert names.classify_flat("notes.txt") is None
    carry = names.parse_carry("stage-3.json")
    assert carry is not None and carry.stage == 3
    assert names.parse_carry("stage-03.json") is None
    assert names.meta_name_for("a-worker-prompt-analysis-001.md") == "a-worker-prompt-analysis-001.md.meta.json"
    assert names.log_name_for("a-worker-prompt-analysis-001.md") == "a-worker-prompt-analysis-001.log"


@pytest.mark.parametrize(
    "stamp",
    ["20261131T101500000000Z", "20260230T101500Z", "20261130T246000Z", "20261130T101560Z", "20261300T101500Z"],
)
def test_a_stamp_that_is_no_real_time_is_no_name(stamp: str) -> None:
    """31 November, 30 February, hour 24, second 60, month 13: the grammar refuses each, so every reader does."""
    for category, name in (
        ("design-prep-inputs", f"design-prep-input-001-PREP-001-r1-{stamp}.md"),
        ("user-responses", f"user-response-analysis-001.superseded-{stamp}.md"),
    ):
        assert names.parse_in_category(category, name) is None, name
    assert names.parse_note(f"{stamp}-idea.md") is None
    good = "20261130T101500000000Z"
    assert names.parse_in_category("design-prep-inputs", f"design-prep-input-001-PREP-001-r1-{good}.md") is not None
    assert names.parse_note(f"{good}-idea.md") is not None
