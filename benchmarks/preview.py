"""Benchmark: previews of large artifacts in the workbench (time to the painted preview, worker time, memory).

    python benchmarks/preview.py [--rows 25000] [--repeat 3] [--compare DIR] [--write-doc]

Makes a demo (``okstra_core.demo.generate``) and grows two artifacts of its
``payments/retry-policy`` task: the analysis team-state to ``--rows`` worker
dispatches (15 MB at 25,000 rows) and the analysis errors log to four times as
many lines, and writes 40 kB of Markdown notes (headings, short paragraphs,
two-item lists) in its history folder. Each preview is measured in a fresh, headless workbench process:
the catalog is left to settle, then the file view of the artifact is opened,
and the time runs until the preview's content is mounted and the frame after
it painted. The worker time is the time spent in ``load_preview``; memory is
the process's peak RSS (the small team-state's row shows what the workbench
itself takes).

Baselines measured in the same run, in fresh processes too: the same preview
of the demo's own small team-state, and a floor that reads the large file and
parses it with ``json.loads`` (JSONL: line by line), what any preview that
shows the whole parsed document must at least do. With ``--compare DIR``
(another checkout of this repository, for example the code before a change)
every case is measured with that code as well, alternating with this one.
Figures are medians of ``--repeat`` rounds; ratios are taken within a round.
``--write-doc`` replaces the table of the "Previews" section of ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SECTION = "## Previews"
TASK = ".okstra/tasks/payments/retry-policy"
TEAM_STATE = f"{TASK}/runs/analysis/state/team-state-analysis-001.json"
SMALL_TEAM_STATE = f"{TASK}/runs/analysis/state/team-state-analysis-002.json"
ERRORS_LOG = f"{TASK}/runs/analysis/logs/errors-analysis-001.jsonl"
NOTES = f"{TASK}/history/long-notes.md"

CHILD = r"""
import asyncio, json, resource, sys, time
from pathlib import Path

root, rel, task = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
import okstra_tui
from okstra_core.store import Project
from okstra_tui.app import OkstraApp
from okstra_tui.navigation import Location, View
from okstra_tui.widgets import preview as widget
from textual.worker import WorkerCancelled

spent = []
load = widget.load_preview

def timed(*args, **kwargs):
    start = time.perf_counter()
    result = load(*args, **kwargs)
    spent.append(time.perf_counter() - start)
    return result

widget.load_preview = timed

async def settle(app, pilot):
    for _ in range(3):
        for worker in list(app.workers):
            try:
                await worker.wait()
            except WorkerCancelled:
                pass
        await pilot.pause()

async def main():
    app = OkstraApp(Project.open(root))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        start = time.perf_counter()
        app.navigate(Location(View.FILE, root / task, root / rel))
        while not spent or len(app.screen.query_one(widget.ArtifactPreview).children) < 2:
            await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        painted = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"painted": painted, "worker": spent[0], "rss_mb": peak / 1024, "code": okstra_tui.__file__}))

asyncio.run(main())
"""

FLOOR = r"""
import json, sys, time
path = sys.argv[1]
start = time.perf_counter()
with open(path, "rb") as fh:
    data = fh.read()
text = data.decode("utf-8")
if path.endswith(".jsonl"):
    rows = [json.loads(line) for line in text.splitlines()]
else:
    value = json.loads(text)
print(json.dumps({"floor": time.perf_counter() - start}))
"""


def grow(root: Path, rows: int) -> None:
    """The team-state with *rows* worker dispatches, the errors log with four times as many lines."""
    path = root / TEAM_STATE
    value = json.loads(path.read_text(encoding="utf-8"))
    row = value["workerDispatches"][0]
    value["workerDispatches"] = [{**row, "dispatchId": f"d-{i}"} for i in range(rows)]
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    log = root / ERRORS_LOG
    line = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    with open(log, "w", encoding="utf-8") as fh:
        for i in range(rows * 4):
            fh.write(json.dumps({**line, "message": f"provider throttled ({i})"}) + "\n")
    # Notes as a person or an agent writes them: headings, short paragraphs, lists; 40 kB.
    sections = (f"## Step {i}\n\nWhat was done in step {i}, and why.\n\n- checked\n- recorded\n" for i in range(10**4))
    text = "".join(sections)[:40_000]
    (root / NOTES).write_text(text[: text.rfind("\n") + 1], encoding="utf-8")


def _run(script: str, args: list[str], code: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    # Run from the code folder: "python -c" puts the working folder first on the import path.
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, cwd=code)
    if proc.returncode != 0:
        raise SystemExit(f"measurement failed: {proc.stderr[-2000:]}")
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    if "code" in result and not str(result["code"]).startswith(str(code)):
        raise SystemExit(f"the child imported {result['code']}, not the code under {code}")
    return result


def measure(root: Path, repeat: int, codes: dict[str, Path]) -> dict[str, dict[str, list[float]]]:
    cases = {
        "team-state": TEAM_STATE,
        "errors log": ERRORS_LOG,
        "Markdown notes": NOTES,
        "small team-state": SMALL_TEAM_STATE,
    }
    out: dict[str, dict[str, list[float]]] = {}
    for round_ in range(repeat):
        for case, rel in cases.items():
            if case in ("team-state", "errors log"):
                floor = _run(FLOOR, [str(root / rel)], REPO)
                out.setdefault(f"{case}|floor", {}).setdefault("floor", []).append(float(floor["floor"]))  # type: ignore[arg-type]
            for label, code in codes.items():
                got = _run(CHILD, [str(root), rel, TASK], code)
                slot = out.setdefault(f"{case}|{label}", {})
                for key in ("painted", "worker", "rss_mb"):
                    slot.setdefault(key, []).append(float(got[key]))  # type: ignore[arg-type]
            print(f"round {round_ + 1}/{repeat}: {case} done", file=sys.stderr)
    return out


def _median(values: list[float]) -> float:
    return statistics.median(values)


def table(results: dict[str, dict[str, list[float]]], labels: list[str], rows: int, root: Path) -> str:
    sizes = {
        case: (root / rel).stat().st_size for case, rel in (("team-state", TEAM_STATE), ("errors log", ERRORS_LOG))
    }
    rounds = len(results["small team-state|" + labels[-1]]["painted"])
    lines = [
        SECTION,
        "",
        f"`python benchmarks/preview.py --rows {rows}` on the demo, headless, 120x40, on {os.cpu_count()} CPU(s) "
        f"({platform.machine()}), Python {platform.python_version()}; load average at the end "
        f"{os.getloadavg()[0]:.1f}. Medians of {rounds} rounds; each figure is a fresh workbench process.",
        "",
        "| preview | code | painted | of which the worker | peak RSS | painted / floor | painted / small |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for case in ("team-state", "errors log"):
        floor = results[f"{case}|floor"]["floor"]
        what = f"{case}, {rows if case == 'team-state' else rows * 4:,} rows, {sizes[case] / 1e6:.1f} MB"
        lines.append(
            f"| {what}: floor (read + `json.loads`) | - | {_median(floor) * 1000:,.0f} ms | - | - | 1.0x | - |"
        )
        for label in labels:
            got = results[f"{case}|{label}"]
            ratio = _median([p / f for p, f in zip(got["painted"], floor, strict=False)])
            base = results[f"small team-state|{label}"]["painted"]
            small = _median([p / b for p, b in zip(got["painted"], base, strict=False)])
            lines.append(
                f"| {what} | {label} | {_median(got['painted']) * 1000:,.0f} ms | "
                f"{_median(got['worker']) * 1000:,.0f} ms | {_median(got['rss_mb']):,.0f} MB | {ratio:.1f}x | "
                f"{small:.1f}x |"
            )
    notes = (root / NOTES).read_text(encoding="utf-8")
    what = f"Markdown notes, {len(notes) / 1000:.0f} kB, {notes.count(chr(10) + '- ')} list items"
    for label in labels:
        got = results[f"Markdown notes|{label}"]
        base = results[f"small team-state|{label}"]["painted"]
        small = _median([p / b for p, b in zip(got["painted"], base, strict=False)])
        lines.append(
            f"| {what} | {label} | {_median(got['painted']) * 1000:,.0f} ms | "
            f"{_median(got['worker']) * 1000:,.0f} ms | {_median(got['rss_mb']):,.0f} MB | - | {small:.1f}x |"
        )
    for label in labels:
        got = results[f"small team-state|{label}"]
        lines.append(
            f"| the demo's own team-state (reference) | {label} | {_median(got['painted']) * 1000:,.0f} ms | "
            f"{_median(got['worker']) * 1000:,.0f} ms | {_median(got['rss_mb']):,.0f} MB | - | 1.0x |"
        )
    return "\n".join(lines) + "\n"


def write_doc(text: str) -> None:
    """Put *text* (heading, one paragraph, table) in place of the section's own; the prose after its table stays."""
    path = REPO / "docs" / "performance.md"
    doc = path.read_text(encoding="utf-8")
    if SECTION not in doc:
        path.write_text(doc.rstrip("\n") + "\n\n" + text, encoding="utf-8")
        return
    start = doc.index(SECTION)
    end = doc.index("\n|", start)  # the table's first line
    while doc.startswith("\n|", end):
        end = doc.index("\n", end + 1)
    path.write_text(doc[:start] + text.rstrip("\n") + doc[end:], encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=25_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compare", type=Path, default=None, help="another checkout, measured as 'before'")
    parser.add_argument("--write-doc", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from okstra_core.demo import generate

    codes = {"before": args.compare.resolve()} if args.compare else {}
    codes["this code"] = REPO
    with tempfile.TemporaryDirectory(prefix="okstra-preview-bench-") as tmp:
        root = Path(tmp) / "project"
        generate(root)
        grow(root, args.rows)
        results = measure(root, args.repeat, codes)
        text = table(results, list(codes), args.rows, root)
    print(text)
    if args.write_doc:
        write_doc(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
