"""Reports for people, derived from the store and never its source.

* :func:`render_markdown`: the reading copy of a final report (``.md``);
* :func:`render_html`: the self-contained HTML report with the Export button;
* :func:`render_task_index`: ``task-index.md`` from the task manifest;
* :func:`log_report`: prompt and transcript sizes of a run dir;
* :func:`derive_siblings`: Phase 7, the HTML (and reading copy) beside a data file;
* :func:`is_reading_copy_stale`: whether a stored reading copy differs from a fresh render.

Rendering is deterministic (same data, same bytes) and never writes; the CLI
(:mod:`okstra_core.commands.render`) writes its output create-only.
"""

from __future__ import annotations

from pathlib import Path

from .. import reading
from ..errors import LoadError
from .html import render_html
from .log_report import LogPair, LogReport, log_report
from .markdown import render_markdown
from .siblings import derive_siblings
from .source import ReportSource, load_source
from .task_index import render_task_index


def is_reading_copy_stale(md_path: Path, data_path: Path) -> bool | LoadError:
    """True when the reading copy at *md_path* differs from a fresh render of *data_path*.

    A LoadError when either file cannot be read or the data fails its schema.
    """
    source = load_source(data_path)
    if isinstance(source, LoadError):
        return source
    current = reading.read_bytes(md_path)
    if isinstance(current, LoadError):
        return current
    return current != render_markdown(source.report).encode("utf-8")


__all__ = [
    "LogPair",
    "LogReport",
    "ReportSource",
    "derive_siblings",
    "is_reading_copy_stale",
    "load_source",
    "log_report",
    "render_html",
    "render_markdown",
    "render_task_index",
]
