"""Verbs: ``render-final-report``, ``render-task-index`` and ``log-report``.

Output goes to stdout, or create-only to ``-o OUT`` (relative to the working
folder, resolved by :mod:`.output` as for every verb with ``-o``): identical
existing bytes are fine, different bytes are refused and nothing is
overwritten. Inputs are only read.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import layout, reading
from ..errors import LoadError, OkstraError, ValidationFailed
from ..text import visible
from .common import write_json, write_stdout

# The renderers, models and writers are imported by the verb that runs, not at every command's start.


def write_output(text: str, out: Path | str | None) -> None:
    """Print *text*, or create *out* with it (never overwriting different bytes); see :mod:`.output`."""
    from ..writes import Outcome
    from .output import write_output_file

    if out is None:
        write_stdout(text)  # exact bytes to a pipe or file; control characters made visible on a terminal
        return
    data = text.encode("utf-8")
    outcome = write_output_file(out, data)
    what = "already up to date" if outcome is Outcome.IDENTICAL else "written"
    print(f"{visible(str(out))}: {what} ({len(data)} bytes)", file=sys.stderr)


def _refuse(error: LoadError) -> OkstraError:
    return ValidationFailed(error.path, error.reason if error.line is None else f"line {error.line}: {error.reason}")


def cmd_render_final_report(args: argparse.Namespace) -> int:
    from ..render.html import render_html
    from ..render.markdown import render_markdown
    from ..render.source import load_source

    source = load_source(Path(args.data_json))
    if isinstance(source, LoadError):
        raise _refuse(source)
    if args.html:
        text = render_html(source.report, source.data, source.report_rel, source.report_stem)
    else:
        text = render_markdown(source.report)
    write_output(text, args.output)
    return 0


def cmd_render_task_index(args: argparse.Namespace) -> int:
    from ..models.task import TaskManifest
    from ..render.task_index import render_task_index

    manifest = reading.load_model(layout.task_manifest_path(Path(args.task_root)), TaskManifest)
    if isinstance(manifest, LoadError):
        raise _refuse(manifest)
    write_output(render_task_index(manifest), args.output)
    return 0


def cmd_log_report(args: argparse.Namespace) -> int:
    from ..render.log_report import log_report

    report = log_report(Path(args.run_dir))
    if report.problems:
        raise OkstraError(report.run_dir, "; ".join(report.problems))
    if args.json:
        doc: dict[str, Any] = report.to_json()
        write_json(doc)
    else:
        write_stdout(report.to_text())
    return 0


def register(subparsers: Any) -> None:
    """Add the rendering verbs to the ``okstra`` command."""
    p = subparsers.add_parser(
        "render-final-report",
        help="render a final-report data.json as its Markdown reading copy or HTML report",
        description="Render final-report-<task-type>-<seq>.data.json (schema 3.0 or 2.0). "
        "Data failing its schema is refused with every error listed.",
    )
    p.add_argument("data_json", metavar="DATA_JSON", help="the final-report data file")
    p.add_argument("--html", action="store_true", help="the self-contained HTML report instead of Markdown")
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="write to OUT (create-only; relative to the current folder) instead of stdout",
    )
    p.set_defaults(func=cmd_render_final_report)

    p = subparsers.add_parser(
        "render-task-index",
        help="render task-index.md from a task root's task-manifest.json",
    )
    p.add_argument("task_root", metavar="TASK_ROOT", help="the task folder holding task-manifest.json")
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="write to OUT (create-only; relative to the current folder) instead of stdout",
    )
    p.set_defaults(func=cmd_render_task_index)

    p = subparsers.add_parser(
        "log-report",
        help="prompt and transcript sizes of a run dir (pairs each .log with its .md)",
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="a resolved run dir, e.g. runs/analysis or runs/implementation")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_log_report)
