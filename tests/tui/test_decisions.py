"""The workbench's table of decision kinds: exactly one row per kind the core's inbox finds, none for another."""

from __future__ import annotations

from typing import get_args

from okstra_core.workflows.inbox import KINDS, InboxKind
from okstra_tui.screens.decisions import DECISIONS


def test_the_core_names_each_kind_once() -> None:
    assert len(set(KINDS)) == len(KINDS)
    assert set(get_args(InboxKind)) == set(KINDS)


def test_every_core_kind_has_exactly_one_row_and_no_other_kind_has_one() -> None:
    # A dict holds a key once: the rows are the kinds, in the core's order, and nothing else.
    assert list(DECISIONS) == list(KINDS)


def test_every_row_says_what_the_decision_asks() -> None:
    for kind, row in DECISIONS.items():
        assert row.label and row.style and callable(row.wizard), kind
