"""Phase 7: derive the readable siblings of a report data file.

``final-report-<task-type>-<seq>.html`` (always) and the reading copy
``final-report-<task-type>-<seq>.md`` (unless a Markdown file is already
there) are written beside the data, create-only, inside the project root.
The data file is only read. An existing reading copy with other bytes (for
instance the report writer's own narrative Markdown) is kept as it is and
reported, never overwritten; an existing HTML file with other bytes is a
refusal, because the HTML is derived from immutable data and a difference
means something else wrote it.
"""

from __future__ import annotations

from pathlib import Path

from .. import layout, reading
from ..errors import LoadError, ValidationFailed, WriteRefused
from ..writes import Outcome, create_only
from .html import render_html
from .markdown import render_markdown
from .source import report_stem_of, validate_report

KEPT = "kept"


def derive_siblings(project_root: Path, data_path: Path, *, markdown: bool = True) -> dict[str, str]:
    """Write the HTML (and reading-copy) siblings of *data_path*; returns ``{file name: outcome}``.

    Raises :class:`ValidationFailed` when the data cannot be read or fails its
    schema, :class:`WriteRefused` when a different HTML file is already there.
    """
    data = reading.read_bytes(data_path, root=project_root)
    if isinstance(data, LoadError):
        raise ValidationFailed(data.path, data.reason)
    text = reading.decode_text(data_path, data)
    value = text if isinstance(text, LoadError) else reading.parse_json(data_path, text)
    if isinstance(value, LoadError):
        raise ValidationFailed(value.path, value.reason)
    report = validate_report(data_path, value)
    if isinstance(report, LoadError):
        raise ValidationFailed(report.path, report.reason)
    stem = report_stem_of(data_path)
    rel = layout.rel(Path(data_path).absolute(), Path(project_root).absolute())
    folder = data_path.parent
    outcomes: dict[str, str] = {}
    html_name = f"{stem}.html"
    outcomes[html_name] = create_only(
        project_root, folder / html_name, render_html(report, data, rel, stem).encode()
    ).value
    if markdown:
        md_name = f"{stem}.md"
        try:
            outcomes[md_name] = create_only(project_root, folder / md_name, render_markdown(report).encode()).value
        except WriteRefused:
            outcomes[md_name] = KEPT
    return outcomes


__all__ = ["KEPT", "Outcome", "derive_siblings"]
