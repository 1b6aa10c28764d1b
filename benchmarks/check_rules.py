"""Where a one-process check's time goes, rule group by rule group; or this checkout's check against another revision.

    python benchmarks/check_rules.py --tree DIR [--rounds 3]
    python benchmarks/check_rules.py --tree DIR --against REF [--rounds 9]

Without ``--against``, in this process on one demo tree (``okstra demo DIR
--tasks N``): the per-task part of a check (the loop each worker runs,
``engine._task_chunk``, over every task) timed with every rule group on, with
none (the listing, and reading and decoding every file, remain), with each
group alone, and with each group after the document pass. Best of
``--rounds``. A group switched off is replaced by a function
that does nothing, so what it validates is validated by no one unless
another group asks for it: "alone" counts the documents a group validates
itself, "after documents" only its own work. Then the repeated-key pre-check
(``reading.repeated_key``) alone over every ``.json`` document of the tree,
parsed beforehand.

With ``--against REF``: ``okstra check --no-cache --jobs 1 --format json`` as
fresh processes, this checkout and *REF* (checked out into a temporary
worktree) alternating, the order reversed every other round; the medians of
wall time and user CPU, the per-round ratios, and whether the two reports are
the same bytes. This is a measurement, not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _checkout import CHECKOUT, other_revision

sys.path.insert(0, str(CHECKOUT))


def _groups() -> dict[str, list[tuple[Any, str]]]:
    """Each rule group: the functions that make it, as (module, name)."""
    from okstra_core.check.rules import (
        carry,
        convergence,
        design_prep,
        direction,
        documents,
        prompts,
        reports,
        runs,
        task_rules,
        team_state,
    )

    return {
        "documents": [(documents, "check_run")],
        "prompts": [(prompts, "check_run")],
        "team state": [(team_state, "check_run")],
        "reading copies": [(reports, "check_run")],
        "convergence": [(convergence, "check_run")],
        "design prep": [(design_prep, "check_run")],
        "direction": [(direction, "check_task")],
        "carry": [(carry, "check_task"), (carry, "check_verification_target")],
        "runs' ledger": [(runs, "check_task")],
        "task manifest": [(task_rules, "_manifest")],
        "timeline": [(task_rules, "_history")],
    }


def attribute(tree: Path, rounds: int) -> None:
    from okstra_core import layout, reading
    from okstra_core.check import engine
    from okstra_core.check.rules import project_rules
    from okstra_core.check.unit import Unit

    home = layout.demo_home(tree)
    tasks = project_rules.check_project(Unit(tree, home), home)
    groups = _groups()
    original = {(m, n): getattr(m, n) for parts in groups.values() for m, n in parts}

    def nothing(*_args: Any, **_kwargs: Any) -> None:
        return None

    def timed(off: set[str]) -> float:
        for group, parts in groups.items():
            for module, name in parts:
                setattr(module, name, nothing if group in off else original[(module, name)])
        best = float("inf")
        for _ in range(rounds):
            start = time.perf_counter()
            engine._task_chunk(str(tree), str(home), tasks)
            best = min(best, time.perf_counter() - start)
        return best

    every = set(groups)
    full, none = timed(set()), timed(every)
    docs = timed(every - {"documents"})
    print(f"{len(tasks)} tasks; best of {rounds}")
    print(f"every rule group: {full:.2f} s; none (listing, reading, decoding every file): {none:.2f} s")
    print("| group | alone, over none | after documents, over documents alone |")
    print("|---|---:|---:|")
    for group in groups:
        alone = timed(every - {group}) - none
        after = timed(every - {group, "documents"}) - docs if group != "documents" else alone
        print(f"| {group} | {alone:.2f} s | {after:.2f} s |")
    timed(set())  # every rule back

    texts: list[str] = []
    for folder, _dirs, names in os.walk(layout.okstra_dir(tree)):
        texts += [Path(folder, n).read_text(encoding="utf-8") for n in names if n.endswith(".json")]
    values = [json.loads(t) for t in texts]
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for text, value in zip(texts, values, strict=True):
            reading.repeated_key(text, value)
        best = min(best, time.perf_counter() - start)
    print(f"repeated-key pre-check over {len(texts)} documents: {best:.2f} s ({best / full:.1%} of every rule group)")


def compare(tree: Path, against: str, rounds: int) -> None:
    from okstra_core import layout

    home = layout.demo_home(tree)
    with other_revision(against, "check_rules") as other:
        sides = {"this": CHECKOUT, against: other}
        for side in sides.values():
            compileall.compile_dir(side / "okstra_core", quiet=1)
        wall: dict[str, list[float]] = {name: [] for name in sides}
        cpu: dict[str, list[float]] = {name: [] for name in sides}
        reports: dict[str, str] = {}
        for n in range(rounds):
            for name in list(sides) if n % 2 == 0 else reversed(list(sides)):
                cmd = [sys.executable, "-m", "okstra_core.cli", "check", str(tree), "--home", str(home)]
                cmd += ["--no-cache", "--jobs", "1", "--format", "json"]
                reports[name] = _timed(cmd, sides[name], wall[name], cpu[name])
    for label, values in (("wall", wall), ("user CPU", cpu)):
        ratio = statistics.median(a / b for a, b in zip(values["this"], values[against], strict=True))
        medians = ", ".join(f"{name} {statistics.median(v):.2f} s" for name, v in values.items())
        print(f"{label}: {medians}; this / {against}, median per-round ratio {ratio:.3f}")
    print("reports: " + ("the same bytes" if reports["this"] == reports[against] else "DIFFERENT"))


def _timed(cmd: list[str], cwd: Path, wall: list[float], cpu: list[float]) -> str:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    wall.append(time.perf_counter() - start)
    cpu.append(resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"check failed in {cwd}: {proc.stderr[-500:]}")
    return proc.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, required=True, help="a demo project (okstra demo DIR --tasks N)")
    parser.add_argument("--against", default=None, help="a revision to compare this checkout's check with")
    parser.add_argument("--rounds", type=int, default=None, help="default: 3 (attribution), 9 (--against)")
    args = parser.parse_args()
    if args.against is None:
        attribute(args.tree, args.rounds or 3)
    else:
        compare(args.tree, args.against, args.rounds or 9)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
