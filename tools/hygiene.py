"""Structural checks that ruff, mypy and import-linter do not make.

``long-functions``: no function or method in the packages is longer than
:data:`MAX_FUNCTION_LINES` lines (decorators, docstring and body included).

``cycles``: no import cycle between modules. Imports inside functions count;
imports guarded by ``if TYPE_CHECKING:`` do not.

Run ``python tools/hygiene.py`` for both; it prints one line per problem and
exits 1 when there is any.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("okstra_core", "okstra_tui")
MAX_FUNCTION_LINES = 80


def _modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of :data:`PACKAGES`."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def long_functions(root: Path) -> Iterator[str]:
    """One line per function longer than :data:`MAX_FUNCTION_LINES`."""
    for path in _modules(root).values():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - first + 1
                if length > MAX_FUNCTION_LINES:
                    where = path.relative_to(root).as_posix()
                    yield f"{where}:{node.lineno}: {node.name} is {length} lines (at most {MAX_FUNCTION_LINES})"


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                guarded.update(id(n) for n in ast.walk(inner))
    return guarded


def _imported(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: dict[str, Path]) -> set[str]:
    """The known modules an import statement binds, resolved to the nearest known module."""
    targets: list[str] = []
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            package = package[: len(package) - (node.level - 1)]
            base = ".".join([*package, *([node.module] if node.module else [])])
        targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
    resolved: set[str] = set()
    for target in targets:
        while target not in known and "." in target:
            target = target.rsplit(".", 1)[0]
        if target in known and target != module:
            resolved.add(target)
    return resolved


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules it imports at runtime (module level or inside functions)."""
    known = _modules(root)
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        guarded = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in guarded:
                graph[name] |= _imported(name, path.name == "__init__.py", node, known)
    return graph


def _is_ancestor(package: str, module: str) -> bool:
    return module.startswith(package + ".")


def cycles(root: Path) -> Iterator[str]:
    """One line per strongly connected group of modules that import each other.

    A package importing its own submodules (``__init__`` re-exports) is not a
    cycle by itself: edges from a package down into its own children are left out.
    """
    graph = {name: {t for t in targets if not _is_ancestor(name, t)} for name, targets in import_graph(root).items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    counter = 0
    groups: list[list[str]] = []

    def visit(start: str) -> None:
        nonlocal counter
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    for group in sorted(groups):
        yield "import cycle: " + ", ".join(group)


CHECKS = {"long-functions": long_functions, "cycles": cycles}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checks", nargs="*", metavar="CHECK", help=f"one of {', '.join(CHECKS)} (default: all)")
    parser.add_argument("--root", type=Path, default=ROOT, help="repository root (default: this checkout)")
    args = parser.parse_args(argv)
    unknown = [name for name in args.checks if name not in CHECKS]
    if unknown:
        parser.error(f"unknown check {unknown[0]!r}")
    problems = [line for name in (args.checks or list(CHECKS)) for line in CHECKS[name](args.root)]
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
