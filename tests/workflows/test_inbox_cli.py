"""``okstra inbox PROJECT [--json]``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .helpers import REFUND, RETRY, okstra

RETRY_ROOT = ".okstra/tasks/payments/retry-policy"
OPT_REPORT = f"{RETRY_ROOT}/runs/option-selection/reports/final-report-option-selection-001.data.json"
OPT_SIDECAR = f"{RETRY_ROOT}/runs/option-selection/user-responses/user-response-option-selection-001.md"
RETRY_SD = f"{RETRY_ROOT}/instruction-set/selected-direction.json"
REFUND_MANIFEST = ".okstra/tasks/payments/refund-ledger/task-manifest.json"


def _open_choice(root: Path) -> None:
    (root / RETRY_SD).unlink()
    (root / OPT_SIDECAR).unlink()


def test_json_lists_items_newest_first(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _open_choice(fresh_demo)
    result = okstra(capsys, "inbox", fresh_demo, "--json")
    assert result.code == 0 and result.err == ""
    doc = json.loads(result.out)
    assert doc["version"] == 1 and doc["project"] == str(fresh_demo.resolve())
    items = [i for i in doc["items"] if ":checkout:" not in i["task"]]  # checkout's decisions are open on purpose
    assert [(i["kind"], i["task"]) for i in items] == [("direction-choice", RETRY), ("approval", REFUND)]
    assert all(list(i) == ["kind", "task", "path", "item", "summary", "since"] for i in items)
    assert items[0]["path"] == OPT_REPORT and items[1]["item"] is None
    assert items[0]["since"] > items[1]["since"]


def test_text_groups_by_task(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _open_choice(fresh_demo)
    for path in (fresh_demo / RETRY_ROOT / "runs/implementation-planning/design-prep-inputs").glob("*PREP-001*.md"):
        path.unlink()
    result = okstra(capsys, "inbox", fresh_demo)
    assert result.code == 0
    lines = result.out.splitlines()
    headers = [line for line in lines if line and not line.startswith(" ") and ":checkout:" not in line]
    assert headers[:2] == [f"{RETRY} (2 waiting)", f"{REFUND} (1 waiting)"]
    assert headers[-1] == "9 decisions waiting in 7 tasks"  # with the 6 open ones of the 5 checkout tasks
    retry = lines[lines.index(headers[0]) + 1 : lines.index(headers[1])]
    assert any("direction-choice:" in line for line in retry) and any("design-prep PREP-001:" in line for line in retry)
    assert f"      {OPT_REPORT}" in retry


def test_nothing_waiting_still_exits_0(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.rmtree(fresh_demo / ".okstra/tasks/checkout")
    path = fresh_demo / REFUND_MANIFEST
    value = json.loads(path.read_text(encoding="utf-8"))
    value["workflow"]["awaitingApproval"] = False
    path.write_text(json.dumps(value), encoding="utf-8")
    result = okstra(capsys, "inbox", fresh_demo)
    assert (result.code, result.out) == (0, "nothing is waiting for you\n")
    result = okstra(capsys, "inbox", fresh_demo, "--json")
    assert result.code == 0 and json.loads(result.out)["items"] == []


def test_store_text_reaches_the_terminal_inert(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _open_choice(fresh_demo)
    path = fresh_demo / OPT_REPORT
    value = json.loads(path.read_text(encoding="utf-8"))
    value["title"] = "safe \x1b[31mred\x1b[0m \u202eevil\x07"
    path.write_text(json.dumps(value), encoding="utf-8")
    for argv in ((), ("--json",)):
        result = okstra(capsys, "inbox", fresh_demo, *argv)
        assert result.code == 0
        assert not any(c in result.out for c in "\x1b\u202e\x07")
    text = okstra(capsys, "inbox", fresh_demo).out
    assert "safe \u241b[31mred\u241b[0m \\u202eevil\u2407" in text  # ESC and BEL as control pictures
    assert okstra(capsys, "inbox", fresh_demo, "--json").out.isascii()


def test_not_a_project_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = okstra(capsys, "inbox", tmp_path)
    assert result.code == 1 and result.out == ""
    assert result.err.count("\n") == 1 and "no .okstra/ store" in result.err


def _break_two(root: Path) -> list[str]:
    """Make the open direction choice's report and the approval's manifest unreadable; their paths, sorted."""
    _open_choice(root)
    (root / OPT_REPORT).write_text("{", encoding="utf-8")
    (root / REFUND_MANIFEST).write_bytes(b"\xff\xfe not utf-8")
    return sorted([OPT_REPORT, REFUND_MANIFEST])


def test_text_counts_the_files_it_could_not_read(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = okstra(capsys, "inbox", fresh_demo).out
    assert "could not be read" not in whole, "a readable store gets no such line"
    _break_two(fresh_demo)
    result = okstra(capsys, "inbox", fresh_demo)
    assert result.code == 1 and result.err == "", "the list may be incomplete: exit 1"
    lines = result.out.splitlines()
    assert lines[-1] == f"2 files could not be read; run okstra check {fresh_demo}"
    assert lines[-2] == "6 decisions waiting in 5 tasks", "the list is what could be read: checkout's open ones"
    assert RETRY not in result.out and REFUND not in result.out


def test_json_counts_and_lists_the_files_it_could_not_read(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = json.loads(okstra(capsys, "inbox", fresh_demo, "--json").out)
    assert (doc["unreadable"], doc["unreadablePaths"]) == (0, [])
    broken = _break_two(fresh_demo)
    doc = json.loads(okstra(capsys, "inbox", fresh_demo, "--json").out)
    assert list(doc) == ["version", "project", "items", "unreadable", "unreadablePaths"]
    assert doc["version"] == 1 and all(
        list(i) == ["kind", "task", "path", "item", "summary", "since"] for i in doc["items"]
    )
    assert (doc["unreadable"], doc["unreadablePaths"]) == (2, broken)
    from okstra_core.commands import inbox_output

    monkeypatch.setattr(inbox_output, "UNREADABLE_PATHS_MAX", 1)
    doc = json.loads(okstra(capsys, "inbox", fresh_demo, "--json").out)
    assert (doc["unreadable"], doc["unreadablePaths"]) == (2, broken[:1]), "the list is capped, the count is not"


def test_nothing_waiting_but_a_file_unreadable(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.rmtree(fresh_demo / ".okstra/tasks/checkout")
    (fresh_demo / REFUND_MANIFEST).write_text("{", encoding="utf-8")
    result = okstra(capsys, "inbox", fresh_demo)
    assert (result.code, result.out) == (
        1,
        f"nothing is waiting in what could be read\n1 file could not be read; run okstra check {fresh_demo}\n",
    )


def test_unreadable_sidecar_is_counted_and_its_choice_listed(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (fresh_demo / RETRY_SD).unlink()  # the sidecar is read again: its choice is not consumed yet
    (fresh_demo / OPT_SIDECAR).write_bytes(b"\x00\x01 not a sidecar")
    result = okstra(capsys, "inbox", fresh_demo)
    assert result.code == 1
    assert "direction-choice [sidecar-invalid]" in result.out
    assert result.out.splitlines()[-1] == f"1 file could not be read; run okstra check {fresh_demo}"
    assert json.loads(okstra(capsys, "inbox", fresh_demo, "--json").out)["unreadablePaths"] == [OPT_SIDECAR]
