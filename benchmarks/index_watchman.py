"""Benchmark: a warm ``okstra inbox`` through the store index, with watchman and without, against a fresh look.

    python benchmarks/index_watchman.py [--tasks 2000] [--tree DIR] [--repeat 9]

Makes (or reuses, ``--tree``) a demo tree of ``--tasks`` tasks, starts a watchman daemon of its own (its
socket, state and log in a temporary folder, reached through a ``watchman`` program put first on PATH, as the
tests reach theirs; stopped at the end), warms two store indexes in two cache folders, then times, alternating,
as fresh processes:

* **watchman**: ``okstra inbox TREE --json`` asking the daemon what changed (``OKSTRA_WATCHMAN=on``);
* **stat pass**: ``okstra inbox TREE --json --no-watchman`` (one ``stat`` per recorded path);
* **no cache**: ``okstra inbox TREE --json --no-cache`` (the inbox read afresh).

Each time is the median of ``--repeat`` rounds; each ratio is the median of the ratios taken within each round.
The three commands must print the same bytes. Then, in this process, the same three reads without the
interpreter's start and imports (opening the index and reading the inbox), with the number of paths the index
looked at. Prints Markdown for ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _timing import byte_compile  # noqa: E402


def _okstra() -> list[str]:
    exe = Path(sys.executable).parent / "okstra"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "okstra_core.cli"]


def _timed(cmd: list[str], env: dict[str, str], warming: bool = False) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or (proc.stderr and not warming):
        raise SystemExit(f"{' '.join(cmd[:3])} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def _private_daemon(folder: Path) -> Path:
    """A ``watchman`` program in *folder*/bin that runs a daemon of the benchmark's own."""
    program = shutil.which("watchman")
    if program is None:
        raise SystemExit("watchman is not installed (apt-get install watchman)")
    options = " ".join(f"--{name}={folder / name}" for name in ("sockname", "statefile", "logfile", "pidfile"))
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True)
    wrapper = bin_dir / "watchman"
    wrapper.write_text(f'#!/bin/sh\nexec {program} {options} "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    return bin_dir


def measure(tree: Path, repeat: int, work: Path) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    bin_dir = _private_daemon(work / "watchman")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "OKSTRA_WATCHMAN": "on"}
    env.pop("WATCHMAN_SOCK", None)
    okstra = [*_okstra(), "inbox", str(tree), "--json"]
    commands = {
        "watchman": [*okstra, "--cache-dir", str(work / "cache-watchman")],
        "stat pass": [*okstra, "--cache-dir", str(work / "cache-stat"), "--no-watchman"],
        "no cache": [*okstra, "--no-cache"],
    }
    try:
        # Build, then keep a clock watchman vouches for (its first crawl of a large tree may outlast a call).
        for _ in range(4):
            for name in ("watchman", "stat pass"):
                _timed(commands[name], env, warming=True)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(repeat):
            outputs = set()
            for name, cmd in commands.items():
                elapsed, out = _timed(cmd, env)
                times[name].append(elapsed)
                outputs.add(out)
            if len(outputs) != 1:
                raise SystemExit("the three commands printed different answers")
        os.environ.update(PATH=env["PATH"], OKSTRA_WATCHMAN="on")
        os.environ.pop("WATCHMAN_SOCK", None)
        inside, looked = measure_in_process(tree, repeat, work)
    finally:
        subprocess.run([str(bin_dir / "watchman"), "--no-spawn", "shutdown-server"], capture_output=True)
    print("Paths looked at in one read, in process: " + ", ".join(f"{k} {v:,}" for k, v in looked.items()))
    return times, inside


def measure_in_process(tree: Path, repeat: int, work: Path) -> tuple[dict[str, list[float]], dict[str, int]]:
    """The same reads in this process (the index opened anew each time): seconds, and paths looked at."""
    sys.path.insert(0, str(REPO))
    from okstra_core.check.cache import cache_key, checker_fingerprint
    from okstra_core.store import Project
    from okstra_core.store_index import ChangedSince, StatPass, StoreIndex
    from okstra_core.workflows.inbox import read_inbox

    key, scope = cache_key(), checker_fingerprint()
    times: dict[str, list[float]] = {"watchman": [], "stat pass": [], "no cache": []}
    looked: dict[str, int] = {}
    for _ in range(repeat):
        for name, cache in (("watchman", "cache-watchman"), ("stat pass", "cache-stat"), ("no cache", None)):
            start = time.perf_counter()
            if cache is None:
                read_inbox(Project(tree))
            else:
                with StoreIndex(tree, work / cache, key=key, scope=scope, watchman=name == "watchman") as index:
                    read_inbox(Project(tree), index)
                look = index.look
                stats = look.looks if isinstance(look, ChangedSince) else look
                if name == "watchman" and not (isinstance(look, ChangedSince) and look.changed is not None):
                    raise SystemExit(f"watchman's answer was not used ({index.watchman_problem or 'not trusted'})")
                looked[name] = stats.stats if isinstance(stats, StatPass) else -1
            times[name].append(time.perf_counter() - start)
    return times, looked


def report(tree: Path, times: dict[str, list[float]]) -> str:
    med = {name: statistics.median(values) for name, values in times.items()}
    rounds = range(len(times["no cache"]))

    def ratio(a: str, b: str) -> float:
        return statistics.median(times[a][i] / times[b][i] for i in rounds)

    files = sum(len(f) for _, _, f in os.walk(tree / ".okstra"))
    lines = [
        f"Tree: {tree} ({files:,} files under .okstra/); {len(times['no cache'])} rounds, load average "
        f"{os.getloadavg()[0]:.1f} at the end; {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}.",
        "",
        "| command | median | / no cache |",
        "|---|---:|---:|",
    ]
    for name in ("watchman", "stat pass", "no cache"):
        lines.append(f"| `okstra inbox --json`, {name} | {med[name]:.2f} s | {ratio(name, 'no cache'):.2f} |")
    lines += ["", f"watchman / stat pass: {ratio('watchman', 'stat pass'):.2f}", ""]
    for name, values in times.items():
        lines.append(f"{name}: " + ", ".join(f"{v:.2f}" for v in values) + " s")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--tree", type=Path, default=None, help="reuse this demo tree (made when missing)")
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    byte_compile()  # as an installed copy runs: not compiling the sources at each start
    with tempfile.TemporaryDirectory(prefix="okstra-index-watchman-") as tmp:
        work = Path(tmp)
        tree = args.tree or work / "tree"
        if not (tree / ".okstra").exists():
            subprocess.run([*_okstra(), "demo", str(tree), "--tasks", str(args.tasks), "--quiet"], check=True)
        processes, inside = measure(tree, args.repeat, work)
        print("\nAs fresh processes:\n")
        print(report(tree, processes))
        print("\nIn process (opening the index and reading the inbox):\n")
        print(report(tree, inside))


if __name__ == "__main__":
    main()
