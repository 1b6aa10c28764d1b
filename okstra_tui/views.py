"""The view registry: every navigable view and the screen class that shows it.

A new view is one line here (and a member of :class:`~okstra_tui.navigation.View`);
its screen class builds itself from a :class:`~okstra_tui.navigation.Location`
(``ViewScreen.from_location``). A view's module is imported the first time the
view is opened, so start-up only pays for the catalog.
"""

from __future__ import annotations

import importlib

from .navigation import Location, View
from .screens.base import ViewScreen

#: View -> ``"module:Class"`` of the screen that shows it.
SCREENS: dict[View, str] = {
    View.HOME: "okstra_tui.screens.home:HomeScreen",
    View.CATALOG: "okstra_tui.screens.catalog:CatalogScreen",
    View.TASK: "okstra_tui.screens.task:TaskScreen",
    View.RUNS: "okstra_tui.screens.runs:RunsScreen",
    View.FILE: "okstra_tui.screens.file:FileScreen",
    View.DIFF: "okstra_tui.screens.diff:DiffScreen",
    View.CONVERGENCE: "okstra_tui.screens.convergence:ConvergenceScreen",
    View.DESIGN_PREP: "okstra_tui.screens.design_prep:DesignPrepScreen",
    View.REPORTS: "okstra_tui.screens.reports:ReportsScreen",
    View.CHECKS: "okstra_tui.screens.checks:ChecksScreen",
    View.MANAGERS: "okstra_tui.screens.managers:ManagersScreen",
    View.INBOX: "okstra_tui.screens.inbox:InboxScreen",
    View.ACTIVITY: "okstra_tui.screens.activity:ActivityScreen",
    View.RUNNING: "okstra_tui.screens.running:RunningScreen",
    View.SEARCH: "okstra_tui.screens.search:SearchScreen",
    View.INSIGHTS: "okstra_tui.screens.insights:InsightsScreen",
    View.WRITE_LOG: "okstra_tui.screens.write_log:WriteLogScreen",
    View.SEARCH_ALL: "okstra_tui.screens.search_all:SearchAllScreen",
    View.INSIGHTS_ALL: "okstra_tui.screens.insights_all:InsightsAllScreen",
}


def screen_class(view: View) -> type[ViewScreen]:
    """The screen class of *view*, importing its module on first use."""
    module_name, _, class_name = SCREENS[view].partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    if not (isinstance(cls, type) and issubclass(cls, ViewScreen)):
        raise TypeError(f"{SCREENS[view]} is not a view screen")
    return cls


def build_screen(location: Location) -> ViewScreen:
    """A new screen showing *location*."""
    return screen_class(location.view).from_location(location)
