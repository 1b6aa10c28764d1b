"""Fail when a store folder name, file name or artifact suffix is spelled inline in the packages.

Paths and folder names come from :mod:`okstra_core.layout` and file names from
:mod:`okstra_core.names`; every other module uses their constants and functions.
The names this tool looks for are read from those two modules at run time: every
public string constant, and every string of a public tuple constant, less
:data:`NOT_PATHS`.

A string literal is a finding when

* it is, or has a ``/``-separated part that is, a compound name (``task-manifest.json``,
  ``instruction-set``) of the store, anywhere;
* a ``/``-separated part of it is a one-word folder name (``runs``, ``state``) and it
  has a ``/``, or it stands where a path is built or matched: an operand of ``/``,
  an argument of :data:`PATH_CALLS`, an operand of a comparison (``==``, ``in``);
* it ends with an artifact suffix (a ``*_SUFFIX`` constant) or starts with a
  ``*_PREFIX`` constant.

Docstrings are skipped, and so is text with whitespace in it (messages, help and
rule texts for a person; store names never hold whitespace). A one-word folder name
used as a mapping key or a plain value is not seen: it reads the same as a JSON
field or a view name.
``python tools/path_literals.py`` prints one ``file:line: message`` per finding and
exits 1 when there is any; ``make check`` runs it.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("okstra_core", "okstra_tui")
#: The modules that own the names.
OWNERS = ("okstra_core/layout.py", "okstra_core/names.py")

#: Constants of the owners that are no path names, each with why.
NOT_PATHS = {
    "KNOWN_TASK_TYPES": "task types are values of the contract (taskType, phases) before they are run-dir names",
    "ANALYSIS": "a task type (see KNOWN_TASK_TYPES)",
    "OPTION_SELECTION": "a task type (see KNOWN_TASK_TYPES)",
    "IMPLEMENTATION_PLANNING": "a task type (see KNOWN_TASK_TYPES)",
    "IMPLEMENTATION": "a task type (see KNOWN_TASK_TYPES)",
    "FINAL_VERIFICATION": "a task type (see KNOWN_TASK_TYPES)",
    "STAGED_TASK_TYPES": "task types (see KNOWN_TASK_TYPES)",
    "CACHE_DIR_ENV": "the name of an environment variable",
}

#: Literals allowed where they stand, by file and literal, each with why.
ALLOWED = {
    ("okstra_core/demo/content.py", "logs/2026-10-29-double-charge.txt"): (
        "evidence path of the demo's fictional codebase, quoted in a canned finding"
    ),
    ("okstra_core/render/html.py", "reports/final-report.template.html"): "a template resource, not a store path",
    ("okstra_core/render/html.py", "reports/final-report.css"): "a template resource, not a store path",
    ("okstra_core/render/html.py", "reports/final-report.js"): "a template resource, not a store path",
    ("okstra_core/render/markdown.py", "reports/final-report-v2.template.md"): "a template resource, not a store path",
    ("okstra_core/check/settings.py", "check"): "the [check] settings table, not the cache folder",
    ("okstra_tui/widgets/preview.py", "status"): "a preview format (a status file's), not the folder",
}

#: Callables whose string arguments are path parts or path patterns.
PATH_CALLS = frozenset(
    {
        "Path",
        "PurePath",
        "PurePosixPath",
        "joinpath",
        "glob",
        "rglob",
        "with_name",
        "category_dir",
        "seqs",
        "index",
        "parse_in_category",
    }
)


def vocabulary() -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """Names, suffixes and prefixes of the store, each mapped to the constant that owns it."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from okstra_core import layout, names

    words: dict[str, str] = {}
    suffixes: dict[str, str] = {}
    prefixes: dict[str, str] = {}
    for module in (layout, names):
        short = module.__name__.rpartition(".")[2]
        for const, value in vars(module).items():
            if not const.isupper() or const.startswith("_") or const in NOT_PATHS:
                continue
            values = [value] if isinstance(value, str) else list(value) if isinstance(value, tuple) else []
            table = suffixes if const.endswith("_SUFFIX") else prefixes if const.endswith("_PREFIX") else words
            for text in values:
                if isinstance(text, str):
                    table.setdefault(text, f"{short}.{const}")
    return words, suffixes, prefixes


def _docstrings(tree: ast.AST) -> set[int]:
    """Strings standing alone as statements: docstrings of modules, classes, functions and attributes."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }


def _path_places(tree: ast.AST) -> set[int]:
    """Nodes standing where a path is built or matched: operands of ``/`` and comparisons, path-call arguments."""
    found: set[int] = set()
    for node in ast.walk(tree):
        operands: list[ast.expr] = []
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            operands = [node.left, node.right]
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            operands = list(node.args) if name in PATH_CALLS else []
        for operand in operands:
            found.add(id(operand))
            if isinstance(operand, ast.Tuple | ast.List | ast.Set):
                found.update(id(e) for e in operand.elts)
    return found


def _problem(text: str, in_path_place: bool, vocab: tuple[dict[str, str], dict[str, str], dict[str, str]]) -> str:
    """Why *text* spells a store name inline ("" when it does not)."""
    words, suffixes, prefixes = vocab
    parts = text.split("/")
    for part in parts:
        owner = words.get(part)
        if owner and (not part.isalpha() or len(parts) > 1 or in_path_place):
            return f"{part!r} is spelled inline; use {owner}"
        for prefix, owner in prefixes.items():
            # The prefix alone (an f-string's piece), or followed by a number or a glob: ``stage-``, ``stage-2``.
            rest = part[len(prefix) :]
            if part.startswith(prefix) and (rest in ("", "*") or rest.isdigit()):
                return f"{prefix!r} is spelled inline; use {owner}"
    for suffix, owner in suffixes.items():
        if text.endswith(suffix):
            return f"{suffix!r} is spelled inline; use {owner}"
    return ""


def path_literals(root: Path = ROOT) -> Iterator[str]:
    """One ``file:line: message`` per string literal that spells a store name outside its owner."""
    vocab = vocabulary()
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            where = path.relative_to(root).as_posix()
            if where in OWNERS:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            docstrings, places = _docstrings(tree), _path_places(tree)
            found: set[tuple[int, str]] = set()
            for node in ast.walk(tree):
                if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in docstrings:
                    continue
                text = node.value
                if any(c.isspace() for c in text) or (where, text) in ALLOWED:
                    continue
                problem = _problem(text, id(node) in places, vocab)
                if problem:
                    found.add((node.lineno, problem))
            for lineno, problem in sorted(found):
                yield f"{where}:{lineno}: {problem}"


def main() -> int:
    problems = list(path_literals())
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
