"""Fail when a function or method of the packages is longer than :data:`MAX_LINES` lines.

Length counts from the first decorator to the last line of the body, docstring
included. ``python tools/function_length.py`` prints one line per long function
and exits 1 when there is any; ``make check`` runs it.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("okstra_core", "okstra_tui")
MAX_LINES = 80


def long_functions(root: Path = ROOT, limit: int = MAX_LINES) -> Iterator[str]:
    """One ``file:line: name is N lines`` per function longer than *limit*."""
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - first + 1
                if length > limit:
                    where = path.relative_to(root).as_posix()
                    yield f"{where}:{node.lineno}: {node.name} is {length} lines (at most {limit})"


def main() -> int:
    problems = list(long_functions())
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
