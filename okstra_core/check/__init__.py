"""The contract checker: ``okstra check`` / ``okstra-tui --check`` and the workbench's Checks view.

``run_check(project_root)`` returns a :class:`CheckReport` of plain
:class:`Finding` dataclasses; the rule catalog lives in :mod:`.catalog`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .catalog import RULES, RULES_BY_ID, Rule
from .findings import CheckReport, Finding

if TYPE_CHECKING:
    from .engine import CheckError, run_check

__all__ = ["RULES", "RULES_BY_ID", "CheckError", "CheckReport", "Finding", "Rule", "run_check"]


def __getattr__(name: str) -> Any:
    """``run_check`` and ``CheckError``, importing the engine (its rules and models) on first use.

    A program that only needs the rule catalog or the report formats (``okstra`` builds its parser
    from them for every verb) does not pay for the engine.
    """
    if name in ("CheckError", "run_check"):
        from . import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
