"""What compiling the checker's own modules with mypyc would give: the per-task loop, pure Python against compiled.

    python benchmarks/check_compiled.py --tree DIR [--rounds 5]

Needs mypy (the ``test`` extra), setuptools and a C compiler. The committed
tree of this checkout (``HEAD``) is checked out into a temporary worktree
and :data:`MODULES` are compiled there with mypyc (the same strict mypy
settings and pydantic plugin as ``make check``). Then the per-task part
of a check (``engine._task_chunk`` over every task of *DIR*, as each worker
runs it) is timed in fresh processes, this checkout and the compiled copy
alternating, the order reversed every other round (``okstra_core`` must have
no uncommitted change: the compiled copy is the committed tree); each process
takes the best of three passes. It prints the medians, the median of the per-round
ratios, and whether both found the same findings. ``reading`` is left out:
mypyc needs a dataclass's annotations at import time, and ``reading`` imports
pydantic only when a model is first needed. This is a measurement, not a
test: nothing here asserts. The product ships no compiled module;
docs/performance.md (Checker, run F) says why.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _checkout import CHECKOUT, other_revision

#: The checker's own modules: the unit, every rule, and the name, layout and digest owners they call.
MODULES = [
    "okstra_core/check/unit.py",
    "okstra_core/check/findings.py",
    "okstra_core/check/rules/*.py",
    "okstra_core/layout.py",
    "okstra_core/names.py",
    "okstra_core/digests.py",
]

SETUP = """
import glob, sys
from setuptools import setup
from mypyc.build import mypycify
modules = sorted(p for pattern in sys.argv[3:] for p in glob.glob(pattern))
del sys.argv[3:]
setup(name="okstra-compiled", packages=[], ext_modules=mypycify(modules, opt_level="3"))
"""

LOOP = """
import hashlib, sys, time
from pathlib import Path
from okstra_core import layout
from okstra_core.check import engine
from okstra_core.check.rules import project_rules
from okstra_core.check.unit import Unit
tree = Path(sys.argv[1])
home = layout.demo_home(tree)
tasks = project_rules.check_project(Unit(tree, home), home)
best = float("inf")
for _ in range(3):
    start = time.perf_counter()
    results = engine._task_chunk(str(tree), str(home), tasks)
    best = min(best, time.perf_counter() - start)
found = sorted(repr(f) for _task, findings, _files, _record in results for f in findings)
import okstra_core.check.unit as unit_module
digest = hashlib.sha256("\\n".join(found).encode()).hexdigest()[:16]
print(unit_module.__file__.rsplit(".", 1)[-1], best, digest, len(found))
"""


def build(into: Path) -> None:
    """:data:`MODULES` compiled in place in *into*, a worktree of the committed tree."""
    (into / "pyproject.toml").unlink()  # setuptools would try to discover its packages
    (into / "mypy.ini").write_text("[mypy]\nstrict = True\nplugins = pydantic.mypy\n", encoding="utf-8")
    cmd = [sys.executable, "-c", SETUP, "build_ext", "--inplace", *MODULES]
    made = subprocess.run(cmd, cwd=into, capture_output=True, text=True, check=False)
    if made.returncode != 0:
        raise SystemExit(f"check_compiled: mypyc failed: {made.stdout[-1500:]}{made.stderr[-1500:]}")
    compiled = sorted(p.relative_to(into).as_posix() for p in (into / "okstra_core").rglob("*.so"))
    print(f"compiled {len(compiled)} modules: " + ", ".join(c.split(".")[0] for c in compiled))


def timed(side: Path, tree: Path, compiled: bool) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": str(side)}
    proc = subprocess.run([sys.executable, "-c", LOOP, str(tree)], cwd=side, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"check_compiled: the loop failed in {side}: {proc.stderr[-1500:]}")
    suffix, best, digest, count = proc.stdout.split()
    if (suffix == "so") != compiled:
        raise SystemExit(f"check_compiled: {side} loaded the unit from a .{suffix} file")
    return float(best), f"{count} findings, {digest}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, required=True, help="a demo project (okstra demo DIR --tasks N)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    status = ["git", "-C", str(CHECKOUT), "status", "--porcelain", "--", "okstra_core"]
    if subprocess.run(status, capture_output=True, text=True, check=True).stdout.strip():
        raise SystemExit("check_compiled: okstra_core has uncommitted changes; both sides must be the same code")
    with other_revision("HEAD", "check_compiled") as compiled:
        build(compiled)
        sides = {"pure": CHECKOUT, "compiled": compiled}
        times: dict[str, list[float]] = {name: [] for name in sides}
        found: dict[str, str] = {}
        for n in range(args.rounds):
            for name in list(sides) if n % 2 == 0 else reversed(list(sides)):
                elapsed, found[name] = timed(sides[name], args.tree, name == "compiled")
                times[name].append(elapsed)
            print(json.dumps({"round": n + 1, **{k: round(v[-1], 3) for k, v in times.items()}}), file=sys.stderr)
    ratio = statistics.median(c / p for c, p in zip(times["compiled"], times["pure"], strict=True))
    medians = ", ".join(f"{name} {statistics.median(v):.2f} s" for name, v in times.items())
    print(f"per-task loop, best of 3 per process, medians of {args.rounds} rounds: {medians}")
    print(f"compiled / pure, median per-round ratio: {ratio:.3f}")
    print("findings: " + ("the same" if found["pure"] == found["compiled"] else f"DIFFERENT: {found}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
