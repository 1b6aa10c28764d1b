"""How close a check can get to the read floor: the floor, the floor plus validation, and the check.

    python benchmarks/check_bound.py --tree DIR [--rounds 5] [--jobs N]

On one demo tree (``okstra demo DIR --tasks N``), in rounds whose contenders
alternate, each a fresh process:

* **floor**: read every file, JSON-parse every ``.json`` file and ``.jsonl``
  line (``benchmarks/check.py``'s floor);
* **floor + validation**: the floor, and every document of a known kind
  validated by the model the checker validates it with (``model_validate`` on
  the parsed value: the checker's path). Nothing else: no listing rule, no
  name grammar, no digest, no cross-file rule, no report. Any checker that
  validates every document with those models in one process does at least
  this much work, so its ratio to the floor is the lowest a one-process check
  can reach;
* **floor + validation from bytes**: the same with ``model_validate_json``
  (pydantic parses and validates in one pass);
* **floor + validation, N processes**: the checker's path split over *N*
  forked workers (all cores by default), each listing and reading its own
  share of the tree's folders: the lowest a check on all cores can reach;
* **okstra check --no-cache --jobs 1** and **--jobs N** (all cores by default).

Each figure is the median over the rounds; each ratio the median of the
ratios taken within a round. Each round is written to standard error as one
JSON line. This is a measurement, not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from _timing import timed_run
from check import FLOOR, _doc_kinds, _machine

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

VALIDATE = r"""
import json, os, sys, traceback
from pydantic import ValidationError
from okstra_core.models import DOC_KINDS_BY_NAME
with open(sys.argv[1], encoding="utf-8") as fh:
    kinds = json.load(fh)
from_bytes = sys.argv[2] == "bytes"
jobs = int(sys.argv[3])
models = {name: DOC_KINDS_BY_NAME[name].model for name in set(kinds.values())}

def validate(path, name):
    # (validated, invalid) for one file
    with open(path, "rb") as fh:
        data = fh.read()
    kind = kinds.get(path)
    model = models[kind] if kind is not None else None
    if name.endswith(".json"):
        try:
            if model is None:
                json.loads(data)
                return 0, 0
            if from_bytes:
                model.model_validate_json(data)
            else:
                model.model_validate(json.loads(data))
            return 1, 0
        except (ValueError, ValidationError):
            return 0, 1
    invalid = 0
    if name.endswith(".jsonl"):
        for line in data.splitlines():
            if not line.strip():
                continue
            try:
                if model is None:
                    json.loads(line)
                elif from_bytes:
                    model.model_validate_json(line)
                else:
                    model.model_validate(json.loads(line))
            except (ValueError, ValidationError):
                invalid += 1
        return int(model is not None), invalid
    return 0, 0

files = validated = invalid = 0
if jobs == 1:
    for base in sys.argv[4:]:
        for folder, dirs, names in os.walk(base):
            for name in names:
                v, i = validate(os.path.join(folder, name), name)
                files += 1
                validated += v
                invalid += i
else:
    # Split the tree, not a list of its files: the workers list their own parts, as the checker's
    # workers list their own tasks. Folders are opened breadth first until there are plenty of
    # parts to deal out; the files met on the way are dealt out too.
    frontier, loose = list(sys.argv[4:]), []
    while frontier and len(frontier) < 64 * jobs:
        deeper = []
        for folder in frontier:
            with os.scandir(folder) as it:
                for de in it:
                    if not de.is_dir():
                        loose.append((de.path, de.name))
                    elif not de.is_symlink():  # as os.walk: a symlinked folder is neither entered nor read
                        deeper.append(de.path)
        frontier = deeper  # every file of the folders just opened is in loose: none is walked again
    readers = []
    for part in range(jobs):
        r, w = os.pipe()
        if os.fork() == 0:
            status = 1  # a worker never returns into the parent's code, whatever it raises
            try:
                os.close(r)
                for earlier in readers:
                    os.close(earlier)
                counts = [0, 0, 0]
                todo = loose[part::jobs]
                for top in frontier[part::jobs]:
                    todo += [(os.path.join(f, n), n) for f, _d, ns in os.walk(top) for n in ns]
                for path, name in todo:
                    v, i = validate(path, name)
                    counts[0] += 1
                    counts[1] += v
                    counts[2] += i
                os.write(w, " ".join(map(str, counts)).encode())
                status = 0
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(status)
        os.close(w)
        readers.append(r)
    for _ in range(jobs):  # each worker's counts fit in the pipe: waiting first cannot block it
        if os.wait()[1] != 0:
            print("a validation worker failed", file=sys.stderr)
            sys.exit(2)
    for r in readers:
        with os.fdopen(r, "rb") as fh:
            n, v, i = map(int, fh.read().split())
        files += n
        validated += v
        invalid += i
print(files, validated, invalid)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, required=True, help="a demo project (okstra demo DIR --tasks N)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=0, help="the all-cores check's workers (default: all cores)")
    args = parser.parse_args()

    from okstra_core import layout

    tree = args.tree
    home = layout.demo_home(tree)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
        json.dump(_doc_kinds(tree), fh)
        kinds_file = fh.name
    bases = [str(tree / ".okstra"), str(home)]
    check = [sys.executable, "-m", "okstra_core.cli", "check", str(tree), "--home", str(home), "--format", "json"]
    jobs = args.jobs or os.cpu_count() or 1
    validate = [sys.executable, "-c", VALIDATE, kinds_file]
    contenders = {
        "floor": [sys.executable, "-c", FLOOR, *bases],
        "floor + validation": [*validate, "python", "1", *bases],
        "floor + validation from bytes": [*validate, "bytes", "1", *bases],
        f"floor + validation, {jobs} processes": [*validate, "python", str(jobs), *bases],
        "check --jobs 1": [*check, "--no-cache", "--jobs", "1"],
        f"check --jobs {jobs}": [*check, "--no-cache", "--jobs", str(jobs)],
    }
    outputs: dict[str, str] = {}
    for cmd in contenders.values():
        timed_run(cmd)  # warm every file and every byte-compiled module
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for n in range(args.rounds):
        for name, cmd in contenders.items():
            elapsed, outputs[name] = timed_run(cmd)
            times[name].append(elapsed)
        print(json.dumps({"round": n + 1, **{k: round(v[-1], 3) for k, v in times.items()}}), file=sys.stderr)
    os.unlink(kinds_file)

    def ratio(name: str) -> float:
        return statistics.median(t / f for t, f in zip(times[name], times["floor"], strict=True))

    files, _parsed = outputs["floor"].split()
    _, validated, invalid = outputs["floor + validation"].split()
    split = outputs[f"floor + validation, {jobs} processes"].split()
    if split != [files, validated, invalid]:
        print(f"the {jobs}-process split read {split[0]} files and validated {split[1]}: not the same work")
    summary = json.loads(outputs["check --jobs 1"])["summary"]
    print(f"tree {tree}: {files} files, {validated} documents validated ({invalid} invalid)")
    print(f"check: {summary['files']} files, {summary['errors']} errors, {summary['warnings']} warnings")
    print(f"machine: {_machine()}; load average {os.getloadavg()[0]:.1f} at the end")
    print("| contender | wall time | vs floor |")
    print("|---|---:|---:|")
    for name in contenders:
        print(f"| {name} | {statistics.median(times[name]):.2f} s | {ratio(name):.2f}x |")
    print("All rounds (s): " + "; ".join(f"{k} " + ", ".join(f"{t:.2f}" for t in v) for k, v in times.items()) + ".")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
