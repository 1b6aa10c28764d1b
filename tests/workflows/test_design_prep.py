"""``design-prep materialize | confirm | resolve``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okstra_core import sidecar

from .helpers import INDEX, RETRY, diff, okstra, refuses, snapshot

PLAN = Path(".okstra/tasks/payments/retry-policy/runs/implementation-planning")
REQ1 = PLAN / "design-prep-requests/design-prep-request-002-PREP-001.md"
REQ2 = PLAN / "design-prep-requests/design-prep-request-002-PREP-002.md"
INPUTS = PLAN / "design-prep-inputs"


def test_materialize_recreates_identical_bytes_and_rerun_is_no_op(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = (fresh_demo / REQ1).read_bytes()
    (fresh_demo / REQ1).unlink()
    report = fresh_demo / PLAN / "reports/final-report-implementation-planning-002.data.json"
    report_bytes = report.read_bytes()
    result = okstra(capsys, "design-prep", "materialize", fresh_demo, "--task", RETRY)
    assert result.code == 0, result.err
    assert f"{REQ1.as_posix()}: written" in result.out and f"{REQ2.as_posix()}: unchanged" in result.out
    assert (fresh_demo / REQ1).read_bytes() == original  # deterministic
    assert report.read_bytes() == report_bytes  # the approved snapshot is never modified
    before = snapshot(fresh_demo)
    assert okstra(capsys, "design-prep", "materialize", fresh_demo, "--task", RETRY).code == 0
    assert diff(before, snapshot(fresh_demo)) == []


def test_materialize_refuses_different_content_and_writes_nothing(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (fresh_demo / REQ1).unlink()  # would be written ...
    (fresh_demo / REQ2).write_text("edited by hand\n")  # ... but this one differs, so nothing is
    refuses(capsys, fresh_demo, "design-prep", "materialize", fresh_demo, "--task", RETRY, names=REQ2.name)
    assert not (fresh_demo / REQ1).exists()


def test_materialize_markerless_plan_is_legacy_unassessed(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(fresh_demo)
    result = okstra(capsys, "design-prep", "materialize", fresh_demo, "--task", INDEX)
    assert result.code == 0 and "legacy-unassessed" in result.out
    assert diff(before, snapshot(fresh_demo)) == []


def _answer(tmp_path: Path, text: str, name: str = "answer.md") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_confirm_appends_next_revision(fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    existing = {p.name: p.read_bytes() for p in (fresh_demo / INPUTS).iterdir() if p.is_file()}
    result = okstra(
        capsys,
        "design-prep",
        "confirm",
        fresh_demo,
        "--task",
        RETRY,
        "--item",
        "PREP-001",
        "--input",
        _answer(tmp_path, "## format\n\nULID\n\n## rationale\n\nSortable.\n"),
        "--by",
        "carol",
    )
    assert result.code == 0, result.err
    assert "r3" in result.out
    new = [p for p in (fresh_demo / INPUTS).iterdir() if p.name not in existing and not p.name.startswith(".")]
    assert len(new) == 1 and "-PREP-001-r3-" in new[0].name
    header = sidecar.parse(new[0].read_text()).header
    assert header["revision"] == 3 and header["confirmed-by"] == "carol"
    # earlier revisions are never edited
    assert all((fresh_demo / INPUTS / n).read_bytes() == b for n, b in existing.items())
    resolved = json.loads(okstra(capsys, "design-prep", "resolve", fresh_demo, "--task", RETRY, "--json").out)
    item = next(i for i in resolved["items"] if i["prepId"] == "PREP-001")
    assert item["authoritativeRevision"] == 3


@pytest.mark.parametrize(
    ("text", "item", "names"),
    [
        ("## format\n\nULID\n", "PREP-001", "answer.md"),  # a field left unanswered
        ("## format\n\nx\n\n## rationale\n\ny\n\n## colour\n\nz\n", "PREP-001", "answer.md"),  # unknown field
        ("## format\n\nx\n\n## format\n\ny\n", "PREP-001", "answer.md"),  # answered twice
        (
            "---\nassessment-fingerprint: " + "0" * 64 + "\n---\n## format\n\nx\n\n## rationale\n\ny\n",
            "PREP-001",
            "answer.md",
        ),  # stale
        (
            "---\nprep-id: PREP-002\n---\n## format\n\nx\n\n## rationale\n\ny\n",
            "PREP-001",
            "answer.md",
        ),  # for another item
        (
            "## answer\n\nyes\n",
            "PREP-003",
            "final-report-implementation-planning-002.data.json",
        ),  # confirmed item takes no input
        ("## answer\n\nyes\n", "PREP-009", "final-report-implementation-planning-002.data.json"),  # no such item
    ],
)
def test_confirm_refusals(
    fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, item: str, names: str
) -> None:
    refuses(
        capsys,
        fresh_demo,
        "design-prep",
        "confirm",
        fresh_demo,
        "--task",
        RETRY,
        "--item",
        item,
        "--input",
        _answer(tmp_path, text),
        names=names,
    )


def test_confirm_refuses_missing_input_and_markerless_plan(
    fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refuses(
        capsys,
        fresh_demo,
        "design-prep",
        "confirm",
        fresh_demo,
        "--task",
        RETRY,
        "--item",
        "PREP-001",
        "--input",
        tmp_path / "absent.md",
        names="absent.md",
    )
    refuses(
        capsys,
        fresh_demo,
        "design-prep",
        "confirm",
        fresh_demo,
        "--task",
        INDEX,
        "--item",
        "PREP-001",
        "--input",
        _answer(tmp_path, "## answer\n\nx\n"),
        names="final-report-implementation-planning-001.data.json",
    )


def test_resolve_reports_authority_and_skips(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(fresh_demo)
    text = okstra(capsys, "design-prep", "resolve", fresh_demo, "--task", RETRY)
    assert text.code == 0
    assert "PREP-002 [blocked]" in text.out and ": r3 " in text.out
    assert text.out.count("duplicate-revision:") == 2 and text.out.count("stale-fingerprint:") == 1
    data = json.loads(okstra(capsys, "design-prep", "resolve", fresh_demo, "--task", RETRY, "--json").out)
    prep2 = next(i for i in data["items"] if i["prepId"] == "PREP-002")
    verdicts = sorted(v["verdict"] for v in prep2["inputs"])
    assert verdicts == ["authoritative", "duplicate-revision", "duplicate-revision", "stale-fingerprint"]
    legacy = okstra(capsys, "design-prep", "resolve", fresh_demo, "--task", INDEX)
    assert legacy.code == 0 and "legacy-unassessed" in legacy.out
    assert (
        json.loads(okstra(capsys, "design-prep", "resolve", fresh_demo, "--task", INDEX, "--json").out)[
            "legacyUnassessed"
        ]
        is True
    )
    assert diff(before, snapshot(fresh_demo)) == []  # the resolver never writes


def test_resolve_refuses_unknown_task(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refuses(capsys, fresh_demo, "design-prep", "resolve", fresh_demo, "--task", "x:y:z", names="task-catalog.json")


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9_-]{0,12}", fullmatch=True),
        st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=40)
        .map(str.strip)
        .filter(lambda v: v and not any(line.startswith("## ") for line in v.split("\n"))),
        min_size=1,
        max_size=4,
    )
)
def test_answers_text_reads_back_as_the_same_answers(answers: dict[str, str]) -> None:
    from okstra_core.workflows.design_prep import answers_text, parse_answers

    assert parse_answers(answers_text(answers)) == answers
