"""``direction select``, ``planning prepare``, ``user-response export`` and ``clarification attach``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from okstra_core import layout, reading, sidecar
from okstra_core.store import Project
from okstra_core.workflows import user_response
from okstra_core.workflows.reports import report_by_path

from .helpers import REFUND, RETRY, ROUNDING, diff, okstra, refuses, snapshot

OPT = ".okstra/tasks/payments/retry-policy/runs/option-selection"
OPT_REPORT = f"{OPT}/reports/final-report-option-selection-001.data.json"
OPT_SIDECAR = f"{OPT}/user-responses/user-response-option-selection-001.md"
RETRY_SD = ".okstra/tasks/payments/retry-policy/instruction-set/selected-direction.json"
ROUNDING_SD = ".okstra/tasks/payments/currency-rounding/instruction-set/selected-direction.json"
REFUND_REPORT = ".okstra/tasks/payments/refund-ledger/runs/analysis/reports/final-report-analysis-001.data.json"
REFUND_SIDECAR = ".okstra/tasks/payments/refund-ledger/runs/analysis/user-responses/user-response-analysis-001.md"


def _header(path: Path) -> dict[str, object]:
    return sidecar.parse(path.read_text(encoding="utf-8")).header


# ------------------------------------------------------------------ direction select


def test_select_records_choice_and_digest_without_touching_report(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (fresh_demo / RETRY_SD).unlink()  # the choice is still open: no planning run consumed it yet
    report_before = (fresh_demo / OPT_REPORT).read_bytes()
    result = okstra(capsys, "direction", "select", fresh_demo, "--task", RETRY, "--option", "IO-002")
    assert result.code == 0, result.err
    assert OPT_SIDECAR in result.out and "IO-002" in result.out
    header = _header(fresh_demo / OPT_SIDECAR)
    assert header["selected-option"] == "IO-002"
    assert header["mode"] == "comparison"
    assert header["source-data-sha256"] == hashlib.sha256(report_before).hexdigest()
    assert (fresh_demo / OPT_REPORT).read_bytes() == report_before
    superseded = list((fresh_demo / OPT / "user-responses").glob("*.superseded-*.md"))
    assert len(superseded) == 1 and _header(superseded[0])["selected-option"] == "IO-001"  # the earlier choice is kept


def test_select_same_choice_again_is_a_no_op(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(fresh_demo)
    assert okstra(capsys, "direction", "select", fresh_demo, "--task", RETRY, "--option", "IO-001").code == 0
    assert diff(before, snapshot(fresh_demo)) == []


def test_select_refusals(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refuses(
        capsys,
        fresh_demo,
        "direction",
        "select",
        fresh_demo,
        "--task",
        RETRY,
        "--option",
        "IO-009",
        names="final-report-option-selection-001.data.json",
    )
    # planning prepare already consumed IO-001: the choice is fixed now
    refuses(
        capsys,
        fresh_demo,
        "direction",
        "select",
        fresh_demo,
        "--task",
        RETRY,
        "--option",
        "IO-002",
        names="selected-direction.json",
    )
    refuses(
        capsys,
        fresh_demo,
        "direction",
        "select",
        fresh_demo,
        "--task",
        ROUNDING,
        "--option",
        "IO-002",
        names="final-report-option-selection-001.data.json",
    )  # preselected-validation needs no sidecar
    refuses(
        capsys,
        fresh_demo,
        "direction",
        "select",
        fresh_demo,
        "--task",
        "demo-shop:nope:nope",
        "--option",
        "IO-001",
        names="task-catalog.json",
    )
    refuses(
        capsys,
        fresh_demo,
        "direction",
        "select",
        fresh_demo,
        "--task",
        RETRY,
        "--option",
        "IO-001",
        "--report",
        f"{OPT}/manifests/run-manifest-option-selection-001.json",
        names="run-manifest-option-selection-001.json",
    )
    refuses(
        capsys,
        fresh_demo,
        "direction",
        "select",
        fresh_demo / "missing",
        "--task",
        RETRY,
        "--option",
        "IO-001",
        names="missing",
    )


# ------------------------------------------------------------------ planning prepare


def test_planning_prepare_writes_snapshot_with_verified_digest(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (fresh_demo / RETRY_SD).unlink()
    result = okstra(capsys, "planning", "prepare", fresh_demo, "--task", RETRY)
    assert result.code == 0, result.err
    snap = json.loads((fresh_demo / RETRY_SD).read_text())
    assert snap["optionId"] == "IO-001"
    assert snap["sourceDataSha256"] == hashlib.sha256((fresh_demo / OPT_REPORT).read_bytes()).hexdigest()
    assert snap["userResponsePath"] == OPT_SIDECAR
    # a re-run with the same choice is a no-op
    before = snapshot(fresh_demo)
    assert okstra(capsys, "planning", "prepare", fresh_demo, "--task", RETRY).code == 0
    assert diff(before, snapshot(fresh_demo)) == []


def test_planning_prepare_preselected_validation_needs_no_sidecar(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (fresh_demo / ROUNDING_SD).unlink()
    assert okstra(capsys, "planning", "prepare", fresh_demo, "--task", ROUNDING).code == 0
    snap = json.loads((fresh_demo / ROUNDING_SD).read_text())
    assert snap["optionId"] == "IO-002" and snap["mode"] == "preselected-validation" and "userResponsePath" not in snap
    assert not list(fresh_demo.glob(".okstra/tasks/payments/currency-rounding/runs/*/user-responses/*"))


def test_planning_prepare_refuses_digest_mismatch(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (fresh_demo / RETRY_SD).unlink()
    path = fresh_demo / OPT_SIDECAR
    text = path.read_text()
    digest = _header(path)["source-data-sha256"]
    path.write_text(text.replace(str(digest), "0" * 64))
    refuses(
        capsys,
        fresh_demo,
        "planning",
        "prepare",
        fresh_demo,
        "--task",
        RETRY,
        names="user-response-option-selection-001.md",
    )


def test_planning_prepare_refuses_missing_sidecar_and_other_direction(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sd = fresh_demo / RETRY_SD
    value = json.loads(sd.read_text())
    value["optionId"] = "IO-003"
    sd.write_text(json.dumps(value, indent=2) + "\n")
    refuses(capsys, fresh_demo, "planning", "prepare", fresh_demo, "--task", RETRY, names="selected-direction.json")
    sd.unlink()
    (fresh_demo / OPT_SIDECAR).unlink()
    refuses(
        capsys,
        fresh_demo,
        "planning",
        "prepare",
        fresh_demo,
        "--task",
        RETRY,
        names="user-response-option-selection-001.md",
    )


# ------------------------------------------------------------------ user-response export


def _answers(tmp_path: Path, value: object, name: str = "answers.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value) if not isinstance(value, str) else value)
    return path


def test_export_is_byte_for_byte_the_shared_rendering(
    fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = {"CQ-001": "Yes,\r\nall of them.  \n\n", "CQ-002": "gateway"}
    earlier = (fresh_demo / REFUND_SIDECAR).read_bytes()
    result = okstra(
        capsys,
        "user-response",
        "export",
        fresh_demo,
        "--task",
        REFUND,
        "--report",
        REFUND_REPORT,
        "--answers",
        _answers(tmp_path, answers),
    )
    assert result.code == 0, result.err
    project = Project(fresh_demo)
    task = project.find_task(REFUND)
    assert task is not None
    report = report_by_path(task, fresh_demo / REFUND_REPORT)
    want = user_response.render_sidecar(
        user_response.ExportInput(report.model, report.rel(), report.stem, report.sha256), answers
    )
    assert (fresh_demo / REFUND_SIDECAR).read_bytes() == want.encode()
    kept = list((fresh_demo / REFUND_SIDECAR).parent.glob("*.superseded-*.md"))
    assert [p.read_bytes() for p in kept] == [earlier]  # the earlier export is never destroyed
    # identical answers again: nothing changes
    before = snapshot(fresh_demo)
    again = okstra(
        capsys,
        "user-response",
        "export",
        fresh_demo,
        "--task",
        REFUND,
        "--report",
        REFUND_REPORT,
        "--answers",
        _answers(tmp_path, answers),
    )
    assert again.code == 0 and "unchanged" in again.out
    assert diff(before, snapshot(fresh_demo)) == []


def test_export_refusals(fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ("user-response", "export", fresh_demo, "--task", REFUND, "--report", REFUND_REPORT, "--answers")
    refuses(capsys, fresh_demo, *base, _answers(tmp_path, {"CQ-009": "x"}), names="final-report-analysis-001.data.json")
    refuses(capsys, fresh_demo, *base, _answers(tmp_path, ["CQ-001"], "list.json"), names="list.json")
    refuses(capsys, fresh_demo, *base, _answers(tmp_path, "{not json", "bad.json"), names="bad.json")
    refuses(capsys, fresh_demo, *base, _answers(tmp_path, {"CQ-001": 3}, "num.json"), names="num.json")
    refuses(capsys, fresh_demo, *base, tmp_path / "absent.json", names="absent.json")
    refuses(
        capsys,
        fresh_demo,
        *base,
        _answers(tmp_path, {"CQ-001": "x"}),
        "--option",
        "IO-001",
        names="final-report-analysis-001.data.json",
    )  # no option comparison in an analysis report
    refuses(
        capsys,
        fresh_demo,
        "user-response",
        "export",
        fresh_demo,
        "--task",
        RETRY,
        "--report",
        OPT_REPORT,
        "--answers",
        _answers(tmp_path, {}),
        "--option",
        "IO-003",
        names="selected-direction.json",
    )


# ------------------------------------------------------------------ clarification attach


def test_attach_is_idempotent_and_picks_up_new_exports(
    fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = layout.clarification_response_path(fresh_demo / ".okstra/tasks/payments/refund-ledger")
    before = snapshot(fresh_demo)
    result = okstra(capsys, "clarification", "attach", fresh_demo, "--task", REFUND)
    assert result.code == 0 and "up to date" in result.out
    assert diff(before, snapshot(fresh_demo)) == []
    okstra(
        capsys,
        "user-response",
        "export",
        fresh_demo,
        "--task",
        REFUND,
        "--report",
        REFUND_REPORT,
        "--answers",
        _answers(tmp_path, {"CQ-001": "Re-book all.", "CQ-002": "gateway"}),
    )
    old_text = target.read_text()
    result = okstra(capsys, "clarification", "attach", fresh_demo, "--task", REFUND)
    assert result.code == 0 and "attached" in result.out
    text = target.read_text()
    assert text.startswith(old_text) and "Re-book all." in text  # earlier text kept, new answers appended
    assert okstra(capsys, "clarification", "attach", fresh_demo, "--task", REFUND).code == 0
    assert target.read_text() == text


def test_attach_until_the_reader_limit_refuses_the_last_attach(
    fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each attach appends the current sidecar; the one that would pass the reader's limit is refused whole."""
    target = layout.clarification_response_path(fresh_demo / ".okstra/tasks/payments/refund-ledger")
    export = ("user-response", "export", fresh_demo, "--task", REFUND, "--report", REFUND_REPORT, "--answers")
    answer = "All of them. " * (5 * 1024 * 1024 // 13)  # about 5 MB: three attaches fit, a fourth does not
    for n in range(4):
        answers = _answers(tmp_path, {"CQ-001": f"{n}: {answer}", "CQ-002": "gateway"})
        assert okstra(capsys, *export, answers).code == 0
        if n < 3:
            result = okstra(capsys, "clarification", "attach", fresh_demo, "--task", REFUND)
            assert result.code == 0 and "attached" in result.out, result.err
            assert target.stat().st_size <= reading.MAX_BYTES
    kept = target.read_bytes()
    line = refuses(
        capsys, fresh_demo, "clarification", "attach", fresh_demo, "--task", REFUND, names="clarification-response.md"
    )
    assert f"over the reader's limit of {reading.MAX_BYTES} bytes" in line, line
    assert target.read_bytes() == kept
    assert not isinstance(reading.read_text(target), reading.LoadError)  # the file stays readable


def test_attach_refuses_unknown_task(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refuses(capsys, fresh_demo, "clarification", "attach", fresh_demo, "--task", "nope", names="task-catalog.json")


def test_user_response_sidecar_loads(fresh_demo: Path) -> None:
    from okstra_core.models.sidecars import UserResponseHeader

    loaded = reading.load_sidecar(fresh_demo / OPT_SIDECAR, UserResponseHeader, root=fresh_demo)
    assert not isinstance(loaded, reading.LoadError), loaded
    assert isinstance(loaded.header, UserResponseHeader)
    # The header the export wrote, key by key: it answers the exact bytes of the report it names.
    assert loaded.header.model_dump(exclude_none=True) == {
        "kind": "user-response",
        "format_version": 1,
        "task_key": "demo-shop:payments:retry-policy",
        "task_type": "option-selection",
        "report": OPT_REPORT,
        "source_data_sha256": hashlib.sha256((fresh_demo / OPT_REPORT).read_bytes()).hexdigest(),
        "mode": "comparison",
        "selected_option": json.loads((fresh_demo / RETRY_SD).read_text(encoding="utf-8"))["optionId"],
    }
    assert loaded.body.startswith("# User response: final-report-option-selection-001\n")


@pytest.mark.parametrize(
    ("preselected", "expected"),
    [
        ({"optionId": "IO-999"}, "upstream confirmed 'IO-999', which is not a candidate (expected one of: IO-0"),
        (None, "preselected names no option (expected one of: IO-0"),
    ],
)
def test_preselected_confirmation_says_expected_and_found(
    fresh_demo: Path, preselected: dict[str, str] | None, expected: str
) -> None:
    from okstra_core.workflows.direction import check_chain

    reports = sorted(
        fresh_demo.glob(".okstra/tasks/payments/currency-rounding/runs/option-selection/reports/*.data.json")
    )
    data = json.loads(reports[-1].read_text(encoding="utf-8"))
    assert data["optionCandidates"]["mode"] == "preselected-validation"
    if preselected is None:
        data["optionCandidates"].pop("preselected", None)
    else:
        data["optionCandidates"]["preselected"] = {**data["optionCandidates"]["preselected"], **preselected}
    reports[-1].write_text(json.dumps(data), encoding="utf-8")
    project = Project.open(fresh_demo)
    assert isinstance(project, Project)
    task = next(r.open() for r in project.task_refs if r.task_id == "currency-rounding")
    step = next(c for c in check_chain(task) if c.step == "preselected confirmation")
    assert not step.ok and expected in step.detail and "None" not in step.detail


def _refund_export(demo_root: Path) -> tuple[user_response.ExportInput, list[str]]:
    """What a user-response export of the refund task's report is made from, and its clarification item ids."""
    task = Project(demo_root).find_task(REFUND)
    assert task is not None
    report = report_by_path(task, demo_root / REFUND_REPORT)
    inp = user_response.ExportInput(report.model, report.rel(), report.stem, report.sha256)
    return inp, [item.item_id for item in report.model.clarification_items]


def test_read_answers_reads_back_what_render_body_wrote(demo_root: Path) -> None:
    inp, ids = _refund_export(demo_root)
    assert len(ids) >= 2
    cases = [
        {ids[0]: "Yes,\r\nall of them.  \n\n", ids[1]: "> quoted\n## not a heading\n\nlast"},
        {ids[0]: "", ids[1]: "   "},  # both written as _(no answer)_
        {ids[0]: "only the first"},  # the second is written unanswered too
    ]
    for answers in cases:
        body = sidecar.parse(user_response.render_sidecar(inp, answers)).body
        want = {i: user_response.normalise_answer(answers.get(i, "")) for i in ids}
        want = {i: "" if a == user_response.NO_ANSWER else a for i, a in want.items()}
        assert user_response.read_answers(body, ids) == want
    # An item the body has no block for is left out; a selected option's block is not an answer.
    body = "# User response: x\n\n## Selected option\n\nIO-002\n\n## CQ-009\n\n> q\n\nanswer\n"
    assert user_response.read_answers(body, ["CQ-001", "CQ-009"]) == {"CQ-009": "answer"}


def test_read_answers_keeps_answer_lines_that_look_like_headings(demo_root: Path) -> None:
    inp, ids = _refund_export(demo_root)
    answers = {
        ids[0]: f"As pasted:\n{user_response.SELECTED_OPTION_HEADING}\nIO-001",
        ids[1]: f"See the first answer:\n## {ids[0]}\nand this one:\n## {ids[1]}\nend",
    }
    body = sidecar.parse(user_response.render_sidecar(inp, answers)).body
    assert user_response.read_answers(body, ids) == answers, "a heading-like line inside an answer stays in it"
