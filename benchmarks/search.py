"""Benchmark: the search index against ``okstra check --no-cache`` and ``grep -rli``, on one demo tree.

    python benchmarks/search.py [--tasks 2000] [--tree DIR] [--write-docs]

Makes (or reuses, ``--tree``) a demo tree, then measures in one run, each command a fresh process unless said:

* **check**: ``okstra check TREE --no-cache`` (every rule, every core);
* **build**: ``okstra search TREE --reindex`` (the whole index, from nothing);
* **after an edit**: one task's brief edited and a note added, then ``okstra search TREE WORD`` (the update
  of the index included), median of 5 rounds;
* **grep**: ``grep -rli WORD TREE/.okstra`` for each of :data:`WORDS` (20 words, from every task to none);
* **query in process**: :meth:`SearchIndex.search` on the up-to-date index, for the same words;
* **end to end**: ``okstra search TREE WORD`` on the up-to-date index (process start and the freshness look
  included), for the same words, once without watchman (``OKSTRA_WATCHMAN=off``: the look stats every walked
  folder and indexed file) and, where watchman is installed, once asking a daemon of the benchmark's own what
  changed (``OKSTRA_WATCHMAN=on``; the search's clock kept by a few warm-up runs first);
* the index's size on disk against the text it holds and the bytes of the files it read.

Targets: build / check at most 1.0; after an edit / build at most 0.05; query / grep at most 0.01; end to end /
grep at most 0.05 with watchman and 0.3 without (medians over the 20 words). ``--write-docs`` replaces the
"Search" section of ``docs/performance.md``.
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

from _timing import byte_compile, timed_run, write_section

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SECTION = "## Search"
#: Rounds of "edit one task, search": the median is the figure.
EDIT_ROUNDS = 5
#: Words of every selectivity: in every task, in some, in the rich tasks only, in none.
WORDS = (
    "gateway",
    "retry",
    "idempotency",
    "analysis",
    "worker",
    "ledger",
    "tenant",
    "rounding",
    "outbox",
    "vat",
    "fraud",
    "receipt",
    "backoff",
    "latency",
    "alias",
    "observability",
    "currency",
    "address",
    "wombatfjord",
    "zzqqxx",
)


def _okstra() -> list[str]:
    exe = Path(sys.executable).parent / "okstra"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "okstra_core.cli"]


def _edit_one_task(tree: Path) -> tuple[Path, bytes, Path]:
    from okstra_core import layout

    task = sorted((layout.tasks_dir(tree)).glob("*/*"))[len(WORDS)]
    brief = layout.instruction_set_dir(task) / "task-brief.md"
    before = brief.read_bytes()
    brief.write_bytes(before + b"\nAdded for the benchmark: wombatfjord.\n")
    note = layout.notes_dir(task)
    note.mkdir(exist_ok=True)
    added = note / "20261201T120000Z-benchmark.md"
    added.write_text("A note about the wombatfjord.\n")
    return brief, before, added


def measure(tree: Path) -> dict[str, object]:
    from okstra_core.search.index import SearchIndex
    from okstra_core.search.query import parse

    okstra = _okstra()
    os.environ["OKSTRA_WATCHMAN"] = "off"  # the figures without watchman; those with it are asked for below
    out: dict[str, object] = {"load_start": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix="okstra-search-bench-") as cache:
        base = ["--cache-dir", cache, "-q"]
        out["check"] = timed_run([*okstra, "check", str(tree), "--no-cache", "--quiet", "--format", "json"])[0]
        out["build"] = timed_run([*okstra, "search", str(tree), "--reindex", *base], (0,))[0]
        out["after_edit"] = _edited_search([*okstra, "search", str(tree)], base, tree)
        greps, queries, ends, hits = [], [], [], []
        # The look as `okstra search` takes it: shared out between every core.
        with SearchIndex(tree, Path(cache), jobs=os.cpu_count() or 1) as index:
            looks = []
            for _ in range(5):
                start = time.perf_counter()
                index.update()
                looks.append(time.perf_counter() - start)
            out["look"] = statistics.median(looks)
            out["start"] = timed_run([*okstra, "--version"], (0,))[0]
            for word in WORDS:
                start = time.perf_counter()
                subprocess.run(["grep", "-rli", word, str(tree / ".okstra")], capture_output=True)
                greps.append(time.perf_counter() - start)
                query = parse(word)
                start = time.perf_counter()
                found = index.search(query, limit=50)
                queries.append(time.perf_counter() - start)
                hits.append(found.total)
                ends.append(timed_run([*okstra, "search", str(tree), word, "--limit", "50", *base])[0])
            stats = index.stats()
        if shutil.which("watchman") is not None:
            out["end_watchman"], out["grep_watchman"], out["after_edit_watchman"] = _with_watchman(
                [*okstra, "search", str(tree)], base, Path(cache), tree
            )
    out.update(grep=greps, query=queries, end=ends, hits=hits, stats=stats, load_end=os.getloadavg()[0])
    return out


def _edited_search(search: list[str], base: list[str], tree: Path) -> float:
    """Median over :data:`EDIT_ROUNDS` of ``okstra search`` after one task's brief was edited and a note added
    (each round puts the task back and brings the index up to date again)."""
    from okstra_core.search import index as search_index

    edits = []
    for _ in range(EDIT_ROUNDS):
        time.sleep(search_index.RACY_NS / 1e9)  # what was just indexed is settled
        brief, before, added = _edit_one_task(tree)
        time.sleep(search_index.RACY_NS / 1e9)
        try:
            edits.append(timed_run([*search, "wombatfjord", *base])[0])
        finally:
            brief.write_bytes(before)
            added.unlink()
        time.sleep(search_index.RACY_NS / 1e9)
        timed_run([*search, "x", *base])  # up to date again
    return statistics.median(edits)


def _with_watchman(
    search: list[str], base: list[str], work: Path, tree: Path
) -> tuple[list[float], list[float], float]:
    """``okstra search WORD`` for each word asking a watchman daemon of the benchmark's own what changed, and
    ``grep -rli WORD`` run just before each (the baseline of the same moment); then the search after one edit
    asking the daemon."""
    from index_watchman import _private_daemon

    bin_dir = _private_daemon(work / "watchman")
    saved = dict(os.environ)
    os.environ.update(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", OKSTRA_WATCHMAN="on")
    os.environ.pop("WATCHMAN_SOCK", None)
    try:
        for _ in range(3):  # the first run keeps a clock; the daemon's first crawl of a large tree may outlast a call
            timed_run([*search, "x", *base])
        ends, greps = [], []
        for word in WORDS:
            greps.append(timed_run(["grep", "-rli", word, str(tree / ".okstra")])[0])
            ends.append(timed_run([*search, word, "--limit", "50", *base])[0])
        return ends, greps, _edited_search(search, base, tree)
    finally:
        subprocess.run([str(bin_dir / "watchman"), "--no-spawn", "shutdown-server"], capture_output=True)
        os.environ.clear()
        os.environ.update(saved)


def table(r: dict[str, object], tasks: int) -> str:
    check, build, edit = (float(r[k]) for k in ("check", "build", "after_edit"))  # type: ignore[arg-type]
    grep = statistics.median(r["grep"])  # type: ignore[arg-type]
    query = statistics.median(r["query"])  # type: ignore[arg-type]
    end = statistics.median(r["end"])  # type: ignore[arg-type]
    end_watchman = statistics.median(r["end_watchman"]) if "end_watchman" in r else None  # type: ignore[arg-type]
    grep_watchman = statistics.median(r["grep_watchman"]) if "grep_watchman" in r else grep  # type: ignore[arg-type]
    stats = r["stats"]
    assert isinstance(stats, dict)
    hits = r["hits"]
    assert isinstance(hits, list)
    cpu = platform.processor() or platform.machine()
    rows = [
        ("build / `okstra check --no-cache`", build / check, 1.0),
        ("next query after one task edited / build", edit / build, 0.05),
        ("query in process / `grep -rli`", query / grep, 0.01),
        ("`okstra search` end to end, without watchman / `grep -rli`", end / grep, 0.3),
    ]
    edit_watchman = float(r["after_edit_watchman"]) if "after_edit_watchman" in r else None  # type: ignore[arg-type]
    if end_watchman is not None:
        rows.append(("`okstra search` end to end, with watchman / `grep -rli`", end_watchman / grep_watchman, 0.05))
    if edit_watchman is not None:
        rows.insert(2, ("next query after one task edited, with watchman / build", edit_watchman / build, 0.05))
    return "\n".join(
        [
            SECTION,
            "",
            f"`python benchmarks/search.py --tree DEMO` on a demo tree of {tasks:,} tasks, every figure from one run",
            f"(machine: {cpu}, {os.cpu_count()} cores, shared; load average {r['load_start']:.1f} at the start, "
            f"{r['load_end']:.1f} at the end; Python {platform.python_version()}, SQLite "
            f"{__import__('sqlite3').sqlite_version}).",
            "",
            "| what | wall time |",
            "|---|---:|",
            f"| `okstra check --no-cache` (every core) | {check:.2f} s |",
            f"| `okstra search --reindex` (build from nothing) | {build:.2f} s |",
            f"| `okstra search WORD` after one task's brief was edited and a note added, median of 5 | {edit:.2f} s |",
            f"| `grep -rli WORD .okstra`, median of {len(WORDS)} words | {grep:.3f} s |",
            f"| query in process on the up-to-date index, median of {len(WORDS)} words | {query * 1000:.1f} ms |",
            f"| `okstra search WORD` end to end, without watchman, median of {len(WORDS)} words | {end:.3f} s |",
            *(
                [
                    f"| `okstra search WORD` end to end, with watchman, median of {len(WORDS)} words "
                    f"| {end_watchman:.3f} s |",
                    f"| `grep -rli WORD .okstra` run alternately with those, median of {len(WORDS)} words "
                    f"| {grep_watchman:.3f} s |",
                ]
                if end_watchman is not None
                else []
            ),
            *(
                [f"| the same search after one task edited, with watchman, median of 5 | {edit_watchman:.2f} s |"]
                if edit_watchman is not None
                else []
            ),
            "| of which: the look at an up-to-date store, in process, on every core (median of 5) "
            f"| {float(r['look']):.3f} s |",  # type: ignore[arg-type]
            f"| of which: interpreter start, `okstra --version` | {float(r['start']):.3f} s |",  # type: ignore[arg-type]
            "",
            "| ratio | measured | target |",
            "|---|---:|---:|",
            *(f"| {name} | {value:.3f} | {target:g} |" for name, value, target in rows),
            "",
            f"Hits per word ({', '.join(WORDS)}): {', '.join(str(h) for h in hits)}.",
            f"The index holds {stats['files']:,} files as {stats['sections']:,} sections, "
            f"{stats['chars']:,} characters of text, in {stats['bytes']:,} bytes on disk "
            f"({stats['bytes'] / max(stats['chars'], 1):.1f} bytes per character indexed; FTS5 keeps the text "
            "itself for snippets, plus its inverted index).",
            "",
        ]
    )


def write_docs(text: str) -> None:
    write_section(REPO / "docs" / "performance.md", SECTION, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--tree", type=Path, default=None, help="reuse (or create) the demo tree here")
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    from okstra_core.demo import generate

    byte_compile()
    with tempfile.TemporaryDirectory(prefix="okstra-search-tree-") as tmp:
        tree = args.tree or Path(tmp) / "project"
        if not (tree / ".okstra").is_dir():
            print(f"generating a demo of {args.tasks} tasks in {tree} ...", file=sys.stderr)
            generate(tree, tasks=args.tasks)
        tasks = sum(1 for _ in (tree / ".okstra" / "tasks").glob("*/*"))
        result = measure(tree.resolve())
        text = table(result, tasks)
    print(text)
    if args.write_docs:
        write_docs(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
