"""Benchmark: ``okstra check`` against the floor and check-jsonschema on one demo tree.

    python benchmarks/check.py [--tasks 10000] [--tree DIR] [--jobs N] [--write-docs]

Makes (or reuses) a demo tree of ``--tasks`` tasks with
``okstra_core.demo.generate``, then times, in one run and on the same files:

* **checker**: ``okstra check TREE --format json`` as a fresh process, every rule;
* **floor**: one fresh process that only reads every file of the store and
  JSON-parses every ``.json`` file and ``.jsonl`` line, checking nothing;
* **check-jsonschema**: the ``check-jsonschema`` package (install the ``bench``
  extra) validating the same JSON documents against the project's generated
  schemas in ``schemas/``, one invocation per schema (JSONL files, which it
  cannot read, are left out: it does strictly less work than the checker).

The contenders run in ``--repeat`` rounds (each round runs each contender
once, in the order above), so that a busy moment of a shared machine hits
every contender alike. Each timing reported is the median over the rounds;
each ratio is the median of the ratios taken within a round. ``--write-docs``
replaces the "Checker" section of ``docs/performance.md`` with the table,
keeping other sections.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _timing import timed_run

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

FLOOR = r"""
import json, os, sys
files = parsed = 0
for base in sys.argv[1:]:
    for folder, dirs, names in os.walk(base):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as fh:
                data = fh.read()
            files += 1
            if name.endswith(".json"):
                json.loads(data)
                parsed += 1
            elif name.endswith(".jsonl"):
                for line in data.splitlines():
                    if line.strip():
                        json.loads(line)
                parsed += 1
print(files, parsed)
"""


def _doc_kinds(tree: Path) -> dict[str, str]:
    """The document kind (``okstra_core.models.DOC_KINDS_BY_NAME``) of each JSON and JSONL document of the tree."""
    from okstra_core import layout, names
    from okstra_core.models import FINAL_REPORT_VERSIONS

    by_name = {
        "task-catalog.json": "task-catalog",
        "latest-task.json": "latest-task",
        "project.json": "project",
        "task-manifest.json": "task-manifest",
        "timeline.json": "timeline",
        "selected-direction.json": "selected-direction",
        "catalog.json": "duty-catalog",
        "fix-cycles.jsonl": "fix-cycles",
        "recap-log.jsonl": "recap-log",
        "consumers.jsonl": "consumers",
    }
    kinds: dict[str, str] = {}
    store = layout.okstra_dir(tree)
    for folder, _dirs, files in os.walk(store):
        here = Path(folder)
        for name in files:
            if not name.endswith((".json", ".jsonl")):
                continue
            kind: str | None = by_name.get(name)
            parsed = names.parse_in_category(here.name, name)
            if parsed is not None:
                spec = names.KINDS_BY_NAME[parsed.kind]
                kind = spec.doc if spec.reader in ("json", "jsonl") else None
                if parsed.kind == "final-report-data":
                    version = json.loads((here / name).read_bytes()).get("schemaVersion")
                    kind = FINAL_REPORT_VERSIONS.get(version)
            elif here.name == "carry":
                kind = "carry"
            elif here.parent.name == "agent-invocations":
                kind = {
                    ".prompt.md.meta.json": "invocation-meta",
                    ".result.json": "invocation-result",
                    ".prompt.md.completion.json": "invocation-completion",
                }.get(name[name.index(".") :])
            if kind is not None:
                kinds[str(here / name)] = kind
    return kinds


def _schema_groups(tree: Path) -> dict[str, list[str]]:
    """JSON documents of the tree grouped by the schema file that owns them."""
    from okstra_core.models import DOC_KINDS_BY_NAME

    groups: dict[str, list[str]] = {}
    for path, kind in _doc_kinds(tree).items():
        spec = DOC_KINDS_BY_NAME[kind]
        if not spec.jsonl:
            groups.setdefault(spec.schema_file, []).append(path)
    return groups


def _check_jsonschema(groups: dict[str, list[str]]) -> float:
    exe = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent)) or shutil.which("check-jsonschema")
    if exe is None:
        raise SystemExit("check-jsonschema is not installed: pip install -e '.[bench]'")
    total = 0.0
    for schema, files in sorted(groups.items()):
        for i in range(0, len(files), 2000):  # keep command lines under the OS limit
            cmd = [
                exe,
                "--schemafile",
                str(REPO / "schemas" / schema),
                "--regex-variant",
                "python",
                *files[i : i + 2000],
            ]
            total += timed_run(cmd, ok=(0, 1))[0]
    return total


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()} {platform.release()}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=10000)
    parser.add_argument("--tree", type=Path, default=None, help="reuse (or create) the demo tree here")
    parser.add_argument("--jobs", type=int, default=0, help="checker worker processes (default: all cores)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()

    tree = args.tree or Path(tempfile.mkdtemp(prefix="okstra-bench-")) / "project"
    generated = ""
    if not (tree / ".okstra").is_dir():
        from okstra_core.demo import generate

        start = time.perf_counter()
        generate(tree, tasks=args.tasks)
        generated = f"{time.perf_counter() - start:.1f} s"
    from okstra_core import layout

    home = layout.demo_home(tree)
    okstra = [sys.executable, "-m", "okstra_core.cli"]

    floor_cmd = [sys.executable, "-c", FLOOR, str(tree / ".okstra"), str(home)]
    check_cmd = [*okstra, "check", str(tree), "--home", str(home), "--format", "json", "--no-cache"]
    groups = _schema_groups(tree)
    cjs_files = sum(len(v) for v in groups.values())
    timed_run(floor_cmd)  # warm the page cache so every contender reads from memory
    times: dict[str, list[float]] = {"floor": [], "checker": [], "checker1": [], "cjs": []}
    for _ in range(args.repeat):
        elapsed, floor_out = timed_run(floor_cmd)
        times["floor"].append(elapsed)
        elapsed, out = timed_run([*check_cmd, "--jobs", str(args.jobs)])
        times["checker"].append(elapsed)
        times["checker1"].append(timed_run([*check_cmd, "--jobs", "1"])[0])
        times["cjs"].append(_check_jsonschema(groups))
    files, parsed = (int(x) for x in floor_out.split())
    summary = json.loads(out)["summary"]
    floor, checker, checker1, cjs = (statistics.median(times[k]) for k in ("floor", "checker", "checker1", "cjs"))

    def ratio(num: str, den: str) -> float:
        """The median over the rounds of the ratio taken within each round."""
        return statistics.median(n / d for n, d in zip(times[num], times[den], strict=True))

    jobs = args.jobs or os.cpu_count() or 1
    rows = [
        (
            "floor: read every file, JSON-parse every .json/.jsonl (1 process)",
            floor,
            f"{files} files read, {parsed} parsed",
        ),
        (
            f"okstra check --jobs {jobs}",
            checker,
            f"{summary['files']} files, every rule; {summary['errors']} errors, {summary['warnings']} warnings",
        ),
        ("okstra check --jobs 1", checker1, "same"),
        (
            "check-jsonschema (schema only)",
            cjs,
            f"{cjs_files} JSON documents, {len(groups)} schemas, JSONL not checked",
        ),
    ]
    lines = [
        "## Checker",
        "",
        f"`python benchmarks/check.py --tasks {args.tasks} --repeat {args.repeat}` on a demo tree of {args.tasks} tasks"
        + (f" (generated in {generated})" if generated else "")
        + f"; medians of {args.repeat} rounds, each ratio taken within its round.",
        f"Machine: {_machine()}; load average {os.getloadavg()[0]:.1f} at the end of the run.",
        "",
        "| contender | wall time | vs floor | what it did |",
        "|---|---:|---:|---|",
    ]
    keys = ("floor", "checker", "checker1", "cjs")
    lines += [
        f"| {name} | {t:.2f} s | {ratio(k, 'floor'):.2f}x | {what} |"
        for k, (name, t, what) in zip(keys, rows, strict=True)
    ]
    lines += [
        "",
        f"Checker / floor: **{ratio('checker', 'floor'):.2f}x** (target at most 2.0x). "
        f"check-jsonschema / checker: **{ratio('cjs', 'checker'):.1f}x** (target at least 3x), while the checker also "
        "runs every cross-file rule (digests, back-references, layout, names) that a schema cannot express.",
        "All rounds (s): " + "; ".join(f"{k} " + ", ".join(f"{t:.2f}" for t in times[k]) for k in keys) + ".",
        "",
        "Where the checker's time goes, beyond the floor's one read and one `json.loads` per file: every "
        "document is validated by its pydantic model; every folder is listed once and every name parsed by "
        "the name grammar; every file a digest names is hashed; reading copies are rendered afresh to "
        "compare. The owners it calls (`design_prep.resolve`, `direction.check_chain`, "
        "`invocations.invocation_problems`) take the checker's bytes, listings and validated documents "
        "through `reading.use_source()` instead of reading again. Tasks go to the worker processes 32 at "
        "a time. The machine is shared with other work: absolute times vary from run to run, the ratios "
        "measured in one run are what count.",
        "",
    ]
    table = "\n".join(lines)
    print(table)
    if args.write_docs:
        _write_section(REPO / "docs" / "performance.md", table)
    return 0


def _write_section(path: Path, section: str) -> None:
    """Replace (or append) the ``## Checker`` section, keeping every other section."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Performance\n\n"
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.strip() == "## Checker"), None)
    if start is None:
        new = text.rstrip("\n") + "\n\n" + section
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        new = "".join(lines[:start]) + section + ("\n" + "".join(lines[end:]) if end < len(lines) else "")
    path.write_text(new.rstrip("\n") + "\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
