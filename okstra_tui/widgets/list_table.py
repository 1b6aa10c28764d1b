"""A ``DataTable`` of rows that moves with the workbench's list keys (Home is the first row, not the left edge)."""

from __future__ import annotations

from typing import Any

from textual.widgets import DataTable, OptionList

from .list_keys import with_list_keys


class ListTable(DataTable[Any], inherit_bindings=False):
    """A row-cursor table: the shared list keys, Enter selects."""

    BINDINGS = with_list_keys(DataTable.BINDINGS)

    def action_first(self) -> None:
        self.action_scroll_top()

    def action_last(self) -> None:
        self.action_scroll_bottom()


class ListOptions(OptionList, inherit_bindings=False):
    """An option list with the shared list keys (``j``/``k`` too)."""

    BINDINGS = with_list_keys(OptionList.BINDINGS)
