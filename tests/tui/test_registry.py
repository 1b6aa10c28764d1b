"""The view registry: every view has a screen that names it and rebuilds from its location."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import okstra_tui
from okstra_tui.navigation import Location, View
from okstra_tui.views import SCREENS, screen_class


@pytest.mark.parametrize("view", list(View))
def test_every_view_has_a_screen_that_names_it(view: View) -> None:
    assert view in SCREENS
    assert screen_class(view).VIEW_NAME is view


def test_a_location_names_its_view_by_enum_or_by_value() -> None:
    assert Location("design-prep", Path("t")).view is View.DESIGN_PREP  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Location("no-such-view")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a task"):
        _ = Location(View.RUNS).task_root


def test_screens_and_widgets_never_import_the_app() -> None:
    """Screens post navigation messages instead (function-local imports count)."""
    package = Path(okstra_tui.__file__).parent
    offenders = []
    for folder in ("screens", "widgets"):
        for path in sorted((package / folder).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.level and node.module in ("app", "views"):
                    offenders.append(f"{folder}/{path.name}:{node.lineno}")
    assert offenders == []
