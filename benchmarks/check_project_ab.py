"""The checker's project rules (the catalog validated, the task list made) against another revision, in one run.

    python benchmarks/check_project_ab.py --root PROJECT [--against REF] [--rounds 5]

Each run is a fresh process of one side's code that runs what a check runs before any task's rules: the
project's unit is made, ``check_project`` runs on it and the unit is released; it prints the project's findings
and, for every task folder to check, its folder and the digest of its catalog entry, which must be the same
bytes on both sides. Its wall time and its peak resident size (from ``wait4``) are reported as medians with this
checkout's over *REF*'s (see ``children_ab.py`` for how the sides alternate). Nothing is cached: the project's
rules run in full at every check, warm or cold. This is a measurement, not a test: nothing here asserts.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _checkout import CHECKOUT, ab_arguments, byte_compiled, other_revision  # noqa: E402
from children_ab import pair, report  # noqa: E402

PROJECT = """
import hashlib, json, sys
from pathlib import Path
from okstra_core import layout
from okstra_core.check.rules.project_rules import check_project
from okstra_core.check.unit import Unit

root = Path(sys.argv[1])
home = layout.okstra_home()
unit = Unit(root, home if home.is_dir() else None)
tasks = check_project(unit, home)
unit.release()

def digest(entry):
    if entry is None:
        return None
    kept = getattr(entry, "digest", None)
    return kept if kept is not None else hashlib.sha256(entry.model_dump_json().encode()).hexdigest()

findings = sorted((f.rule, f.path, f.message) for f in unit.findings)
print(json.dumps({"findings": findings, "tasks": [[rel, digest(entry)] for rel, entry in tasks]}))
"""


def main() -> int:
    args = ab_arguments(__doc__, rounds=5).parse_args()
    argv = ["-c", PROJECT, str(args.root.resolve())]
    with other_revision(args.against, "check_project_ab") as other, tempfile.TemporaryDirectory() as tmp:
        sides = {"this": (CHECKOUT, Path(tmp) / "this"), "ref": (other, Path(tmp) / "ref")}
        byte_compiled(*(source for source, _ in sides.values()))
        report("the project's rules", [pair(sides, argv, i % 2 == 1, fresh=False) for i in range(args.rounds)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
