"""Loading report data for rendering: exact bytes, validated model, every schema error.

Rendering needs the exact bytes (the HTML page carries their SHA-256), the
project-relative path and the report stem (both name the user-response
sidecar). Data that fails its schema is refused with *every* error listed as
``path-in-document: reason``, so nothing is rendered half-way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .. import layout, names, reading
from ..digests import sha256_bytes
from ..errors import LoadError
from ..models.report import FinalReportV2, FinalReportV3

Report = FinalReportV3 | FinalReportV2


@dataclass(frozen=True, slots=True)
class ReportSource:
    """One report data file as read for rendering."""

    path: Path
    data: bytes
    report: Report
    report_rel: str
    report_stem: str

    @property
    def sha256(self) -> str:
        return sha256_bytes(self.data)


def document_path(loc: tuple[Any, ...]) -> str:
    """A pydantic error location as a path inside the JSON document: ``analysisFindings[0].severity``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(document)"


def schema_errors(exc: ValidationError) -> list[str]:
    """Every validation error as ``path: reason``, in document order."""
    return [f"{document_path(tuple(e['loc']))}: {reading.describe_problem(e)}" for e in exc.errors()]


def validate_report(path: Path, value: Any) -> Report | LoadError:
    """The report model *value* declares, validated, or a LoadError listing every error."""
    model = reading.report_model_for(value)
    if isinstance(model, str):
        return LoadError(path, model)
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        errors = schema_errors(exc)
        version = value.get("schemaVersion") if isinstance(value, dict) else None
        return LoadError(
            path,
            f"fails the final-report {version} schema ({len(errors)} error"
            f"{'' if len(errors) == 1 else 's'}): " + "; ".join(errors),
        )
    except RecursionError:
        return LoadError(path, "nesting too deep")


def project_root_of(path: Path) -> Path | None:
    """The project root above *path*: the parent of its nearest ``.okstra`` ancestor."""
    absolute = Path(path).absolute()
    for parent in absolute.parents:
        if parent.name == layout.OKSTRA_DIR:
            return parent.parent
    return None


def report_rel_of(path: Path) -> str:
    """Project-relative POSIX path of a data file; its name alone outside any project."""
    root = project_root_of(path)
    absolute = Path(path).absolute()
    if root is None:
        return absolute.name
    return layout.rel(absolute, root)


def report_stem_of(path: Path) -> str:
    """``final-report-<task-type>-<seq>`` from the data file's name (its bare stem when it has another name)."""
    return names.report_stem(path.name)


def load_source(path: Path) -> ReportSource | LoadError:
    """Read a report data file once, validate it, and name it for the sidecar."""
    data = reading.read_bytes(path)
    if isinstance(data, LoadError):
        return data
    text = reading.decode_text(path, data)
    if isinstance(text, LoadError):
        return text
    value = reading.parse_json(path, text)
    if isinstance(value, LoadError):
        return value
    report = validate_report(path, value)
    if isinstance(report, LoadError):
        return report
    return ReportSource(path, data, report, report_rel_of(path), report_stem_of(path))


def load_report_model(path: Path) -> Report | LoadError:
    """Just the validated model (see :func:`load_source`)."""
    source = load_source(path)
    return source if isinstance(source, LoadError) else source.report
