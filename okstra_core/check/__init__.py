"""The contract checker: ``okstra check`` / ``okstra-tui --check`` and the workbench's Checks view.

``run_check(project_root)`` returns a :class:`CheckReport` of plain
:class:`Finding` dataclasses; the rule catalog lives in :mod:`.catalog`.
"""

from __future__ import annotations

from .catalog import RULES, RULES_BY_ID, Rule
from .engine import CheckError, run_check
from .findings import CheckReport, Finding

__all__ = ["RULES", "RULES_BY_ID", "CheckError", "CheckReport", "Finding", "Rule", "run_check"]
