"""How many times each okstra command looks at each file of the store in one process start, counted with strace.

    python benchmarks/stat_count.py [--tasks 2000] [--tree DIR] [--write-doc]

Makes (or reuses, ``--tree``) a demo tree of ``--tasks`` tasks, starts a watchman daemon of its own (as
``benchmarks/index_watchman.py`` does), and runs each of ``okstra inbox --json``, ``okstra check --format json``,
``okstra search QUERY --json`` and ``okstra stats --json`` under ``strace -f`` in three states, each a fresh
process with a cache folder of its own:

* **cold**: an empty cache folder (the store index and the check cache are made);
* **warm, stat pass**: the same command again, without watchman (``--no-watchman`` or ``OKSTRA_WATCHMAN=off``);
* **warm, watchman**: again, asking the daemon what changed since the index was kept.

Every call of the ``stat`` family that names a path (``stat``, ``lstat``, ``newfstatat``, ``statx``,
``access``, ``readlink``) is counted per path under the store (``.okstra/``), beside the number of files and
folders the store holds. The target is at most one such look per store entry per process start: the table gives
the looks per entry, the paths looked at more than once, and the most any one path was looked at. Opening a file
to read it (``openat``) and ``fstat`` of an open file are not looks of this kind and are not counted. A
measurement, not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parent))

from _timing import write_section  # noqa: E402
from index_watchman import _okstra, _private_daemon  # noqa: E402

DOC = HERE.parent.parent / "docs" / "performance.md"
SECTION = "## Looks at each store file per process start"
#: The system calls counted: each names a path and looks at its metadata (or whether it exists).
CALLS = ("stat", "lstat", "newfstatat", "statx", "access", "faccessat", "faccessat2", "readlink", "readlinkat")
_LINE = re.compile(r'^(?:\[pid\s+\d+\]\s+|\d+\s+)?(\w+)\((?:AT_FDCWD|\d+)?,?\s*"((?:[^"\\]|\\.)*)"')


def commands(tree: Path) -> dict[str, list[str]]:
    okstra = _okstra()
    return {
        "okstra inbox --json": [*okstra, "inbox", str(tree), "--json"],
        "okstra check --format json": [*okstra, "check", str(tree), "--format", "json", "--quiet"],
        "okstra search --json": [*okstra, "search", str(tree), "approval", "--json"],
        "okstra stats --json": [*okstra, "stats", str(tree), "--json"],
    }


def looks(trace: Path, store: str) -> Counter[str]:
    """The paths under *store* each counted call named in the strace output *trace*, with how often."""
    counted: Counter[str] = Counter()
    with trace.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            match = _LINE.match(line)
            if match and match.group(1) in CALLS:
                path = os.path.normpath(match.group(2))
                if path == store or path.startswith(store + os.sep):
                    counted[path] += 1
    return counted


def store_entries(store: Path) -> int:
    return 1 + sum(len(dirs) + len(files) for _, dirs, files in os.walk(store))


def traced(cmd: list[str], env: dict[str, str], out: Path) -> None:
    proc = subprocess.run(
        ["strace", "-f", "-qq", "-s", "4096", "-e", "trace=" + ",".join(CALLS), "-o", str(out), *cmd],
        capture_output=True,
        text=True,
        env=env,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd[:3])} failed ({proc.returncode}): {proc.stderr[-2000:]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--tree", type=Path, default=None)
    parser.add_argument("--write-doc", action="store_true")
    parser.add_argument("--detail", type=int, default=0, help="print the N paths looked at most, per row")
    args = parser.parse_args()
    if shutil.which("strace") is None:
        raise SystemExit("strace is not installed (apt-get install strace)")
    scratch = Path(tempfile.mkdtemp(prefix="okstra-stat-count-"))
    tree = None if args.tree is None else Path(os.path.realpath(args.tree))  # as okstra names the paths it looks at
    if tree is None:
        from okstra_core.demo import generate

        tree = scratch / "tree"
        generate(tree, tasks=args.tasks)
    store = tree / ".okstra"
    entries = store_entries(store)
    tasks = sum(1 for _ in (store / "tasks").glob("*/*"))
    how = f"--tasks {args.tasks}`" if args.tree is None else f"--tree DEMO` on a demo of {tasks:,} tasks"

    daemon_bin = _private_daemon(scratch / "watchman")
    rows: list[str] = []
    try:
        for name, cmd in commands(tree).items():
            cache = scratch / f"cache-{len(rows)}"
            base = {**os.environ, "XDG_CACHE_HOME": str(cache), "PATH": f"{daemon_bin}{os.pathsep}{os.environ['PATH']}"}
            states = {
                "cold": {**base, "OKSTRA_WATCHMAN": "off"},
                "warm, stat pass": {**base, "OKSTRA_WATCHMAN": "off"},
                "warm, watchman": {**base, "OKSTRA_WATCHMAN": "on"},
            }
            subprocess.run(cmd, env=states["warm, watchman"], capture_output=True)  # the daemon watches the tree
            shutil.rmtree(cache, ignore_errors=True)
            for state, env in states.items():
                if state == "warm, watchman":  # the index keeps watchman's clock from now on
                    subprocess.run(cmd, env=env, capture_output=True)
                out = scratch / "trace.txt"
                traced(cmd, env, out)
                counted = looks(out, os.fspath(store))
                total = sum(counted.values())
                if state == "cold" and not total:
                    raise SystemExit(f"stat_count: no look under {store} was traced for {name}: nothing to count")
                twice = sum(1 for n in counted.values() if n > 1)
                most = max(counted.values(), default=0)
                rows.append(f"| {name} | {state} | {total:,} | {total / entries:.2f} | {twice:,} | {most} |")
                print(rows[-1], flush=True)
                if args.detail:
                    for path, n in counted.most_common(args.detail):
                        print(f"    {n:>5}  {os.path.relpath(path, tree)}", flush=True)
    finally:
        subprocess.run([str(daemon_bin / "watchman"), "shutdown-server"], capture_output=True)
    text = "\n".join(
        [
            SECTION,
            "",
            f"`python benchmarks/stat_count.py {how}: the store holds {entries:,} files and folders. "
            "Looks are the calls of the stat family naming a path under `.okstra/` (see the script), counted with "
            "`strace -f` over the whole process.",
            "",
            "| command | state | looks | per store entry | paths looked at more than once | most looks at one path |",
            "|---|---|---:|---:|---:|---:|",
            *rows,
            "",
        ]
    )
    print(text)
    if args.write_doc:
        write_section(DOC, SECTION, text)
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
