"""The default demo holds an open decision of every kind; each one made through its verb leaves the inbox."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from okstra_core.workflows.inbox import KINDS

from .helpers import REFUND, okstra

FRAUD = "demo-shop:checkout:fraud-rules"
ADDRESS = "demo-shop:checkout:address-validation"
TAX = "demo-shop:checkout:tax-export"
CARDS = "demo-shop:checkout:saved-cards"
RECEIPTS = "demo-shop:checkout:receipt-emails"
CHECKOUT = ".okstra/tasks/checkout"
TAX_REPORT = f"{CHECKOUT}/tax-export/runs/analysis/reports/final-report-analysis-001.data.json"
TAX_SIDECAR = f"{CHECKOUT}/tax-export/runs/analysis/user-responses/user-response-analysis-001.md"
CARDS_PLAN = f"{CHECKOUT}/saved-cards/runs/implementation-planning"

#: The demo's open decisions: (kind, task, item, detail-free path).
OPEN = [
    (
        "direction-choice",
        FRAUD,
        None,
        f"{CHECKOUT}/fraud-rules/runs/option-selection/reports/final-report-option-selection-001.data.json",
    ),
    (
        "planning-prepare",
        ADDRESS,
        "IO-002",
        f"{CHECKOUT}/address-validation/runs/option-selection/user-responses/user-response-option-selection-001.md",
    ),
    ("clarification", TAX, None, TAX_REPORT),
    ("design-prep", CARDS, "PREP-001", f"{CARDS_PLAN}/design-prep-requests/design-prep-request-002-PREP-001.md"),
    ("design-prep", CARDS, "PREP-002", f"{CARDS_PLAN}/design-prep-requests/design-prep-request-002-PREP-002.md"),
    ("approval", RECEIPTS, None, f"{CHECKOUT}/receipt-emails/task-manifest.json"),
    ("approval", REFUND, None, ".okstra/tasks/payments/refund-ledger/task-manifest.json"),
]


def _items(capsys: pytest.CaptureFixture[str], root: Path) -> list[dict[str, Any]]:
    result = okstra(capsys, "inbox", root, "--json")
    assert result.code == 0, result.err
    items: list[dict[str, Any]] = json.loads(result.out)["items"]
    return items


def _keys(items: list[dict[str, Any]]) -> list[tuple[str, str, str | None, str]]:
    return [(i["kind"], i["task"], i["item"], i["path"]) for i in items]


def _checks_clean(capsys: pytest.CaptureFixture[str], root: Path) -> None:
    result = okstra(capsys, "check", root, "--home", root / ".okstra-home", "-j", "1")
    assert result.code == 0 and "\n0 errors," in "\n" + result.out.splitlines()[-1], result.out[-2000:]


def test_default_demo_lists_every_kind(demo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = _items(capsys, demo_root)
    assert {i["kind"] for i in items} == set(KINDS)
    assert sorted(_keys(items)) == sorted(OPEN)
    assert [i["since"] for i in items] == sorted((i["since"] for i in items), reverse=True)
    by = {(i["task"], i["item"]): i for i in items}
    assert "IO-002 recommended" in by[(FRAUD, None)]["summary"]
    assert "duplicate" in by[(CARDS, "PREP-001")]["summary"] and "[provisional]" in by[(CARDS, "PREP-001")]["summary"]
    assert (
        "older assessment" in by[(CARDS, "PREP-002")]["summary"] and "[blocked]" in by[(CARDS, "PREP-002")]["summary"]
    )
    # The clarification report lists options for one of its questions.
    report = json.loads((demo_root / TAX_REPORT).read_text(encoding="utf-8"))
    assert [bool(q.get("options")) for q in report["clarificationItems"]] == [True, False]


def test_each_decision_made_through_its_verb_leaves_the_inbox(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = fresh_demo
    remaining = list(OPEN)

    def made(*gone: tuple[str, str, str | None, str]) -> list[dict[str, Any]]:
        for key in gone:
            remaining.remove(key)
        items = _items(capsys, root)
        _checks_clean(capsys, root)
        return items

    assert okstra(capsys, "direction", "select", root, "--task", FRAUD, "--option", "IO-001").code == 0
    items = made(OPEN[0])
    # The choice now waits for planning prepare, which takes it next.
    fraud_prepare = [k for k in _keys(items) if k[1] == FRAUD]
    assert [(k[0], k[2]) for k in fraud_prepare] == [("planning-prepare", "IO-001")]
    remaining.extend(fraud_prepare)
    assert sorted(_keys(items)) == sorted(remaining)

    for task in (ADDRESS, FRAUD):
        assert okstra(capsys, "planning", "prepare", root, "--task", task).code == 0
    items = made(OPEN[1], *fraud_prepare)
    assert sorted(_keys(items)) == sorted(remaining)

    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"CQ-001": "gross", "CQ-002": "Yes, to the old quarter."}), encoding="utf-8")
    result = okstra(
        capsys, "user-response", "export", root, "--task", TAX, "--report", TAX_REPORT, "--answers", answers
    )
    assert result.code == 0, result.err
    items = made(OPEN[2])
    # Answered: what is left is attaching the answers to clarification-response.md.
    (attach,) = [i for i in items if i["task"] == TAX]
    assert (attach["kind"], attach["path"]) == ("clarification", TAX_SIDECAR) and "attach" in attach["summary"]
    assert okstra(capsys, "clarification", "attach", root, "--task", TAX).code == 0
    items = made()
    assert sorted(_keys(items)) == sorted(remaining)

    for prep_id, body, key in (
        ("PREP-001", "## vault\n\nThe provider's vault\n\n## rationale\n\nNo card data here.\n", OPEN[3]),
        ("PREP-002", "## retention\n\n18 months\n\n## deletion\n\nOn card expiry\n", OPEN[4]),
    ):
        answer = tmp_path / f"{prep_id}.md"
        answer.write_text(body, encoding="utf-8")
        result = okstra(capsys, "design-prep", "confirm", root, "--task", CARDS, "--item", prep_id, "--input", answer)
        assert result.code == 0, result.err
        items = made(key)
        assert sorted(_keys(items)) == sorted(remaining)

    # Approvals have no verb: the contract defines no approval file.
    assert {i["kind"] for i in items} == {"approval"}


def test_reading_the_inbox_looks_at_each_store_path_at_most_once(
    demo_root: Path, store_looks: Callable[[Path], Counter[str]]
) -> None:
    """The demo holds every kind of decision, recorded choices among them (a sidecar's time is shown from the one
    look that found it): no path of the store is looked at twice by one reading, recorded or not."""
    from okstra_core import reading
    from okstra_core.store import Project
    from okstra_core.workflows.inbox import read_inbox

    looks = store_looks(demo_root / ".okstra")
    for recorded in (False, True):
        looks.clear()
        if recorded:
            with reading.recording():
                items = read_inbox(Project(demo_root))
        else:
            items = read_inbox(Project(demo_root))
        assert items.items and looks
        twice = {path: n for path, n in looks.items() if n > 1}
        assert not twice, f"looked at more than once ({'recorded' if recorded else 'unrecorded'}): {twice}"
