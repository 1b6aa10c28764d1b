"""What the index reads: which folders and files of a store hold text a person searches, and that text.

A folder has a *role* (the tasks folder, a task, its instruction set, a run
dir's category folder …) that says which of its entries are walked and which
files are read, and as what kind (:data:`~.query.KINDS`). Reports, team-state
ledgers and the selected direction are read through the core's models and
split into sections (a finding, an option, a question, a dispatch), so a hit
names what it belongs to; other files are one section of text. Every file is
read up to :data:`~okstra_core.reading.PREVIEW_CHARS` characters (a ``.log``
transcript from its end, as the preview shows it), decoded leniently (an
invalid byte becomes U+FFFD) and made inert with
:func:`~okstra_core.text.visible`: what the index stores and shows never holds
a raw control character. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from .. import layout, names, reading
from ..errors import LoadError
from ..text import visible

if TYPE_CHECKING:
    from ..models.report import FinalReportV2, FinalReportV3
    from ..models.run import TeamState

#: Characters of one file that are indexed; a file cut there says so in its hits.
INDEX_CHARS: Final = reading.PREVIEW_CHARS

#: Bytes read to get :data:`INDEX_CHARS` characters of UTF-8 (at most four bytes each).
_INDEX_BYTES: Final = INDEX_CHARS * 4

#: Instruction-set files read as the task brief, and as the user's carried answers.
_BRIEF: Final = layout.TASK_BRIEF_FILE
_CARRIED_ANSWERS: Final = layout.clarification_response_path(Path()).name
_DIRECTION: Final = layout.selected_direction_path(Path()).name

#: Name-grammar kind -> search kind, for the files of a run dir's category folders.
_RUN_KINDS: Final[dict[str, str]] = {
    "final-report-data": "report",
    "team-state": "team-state",
    "lead-prompt": "prompt",
    "worker-prompt": "prompt",
    "reverify-prompt": "prompt",
    "lead-prompt-log": "log",
    "worker-prompt-log": "log",
    "reverify-prompt-log": "log",
    "worker-result": "worker-result",
    "worker-audit": "worker-result",
    "design-prep-request": "design-prep",
    "design-prep-input": "design-prep",
    "user-response": "user-response",
    "user-response-superseded": "user-response",
}

#: The category folders of a run dir that hold any of those.
_CATEGORIES: Final = frozenset(names.KINDS_BY_NAME[k].category for k in _RUN_KINDS)


@dataclass(slots=True)
class Section:
    """One searchable piece of a file: its kind, what it belongs to (a finding id …) and its text."""

    kind: str
    label: str | None
    text: str


@dataclass(slots=True)
class Extracted:
    """What the index keeps of one file."""

    sections: list[Section] = field(default_factory=list)
    #: True when the file was cut at :data:`INDEX_CHARS` characters.
    capped: bool = False
    #: Why it could not be read (one line), when it could not.
    error: str | None = None


def child_role(role: str, name: str, is_dir: bool) -> str | None:
    """The role of folder *name* found in a folder of *role* (None: not walked)."""
    if not is_dir or layout.is_private_entry(name):
        return None
    if role == layout.TASKS_DIR:
        return "group"
    if role == "group":
        return "task"
    if role == "task":
        return {layout.INSTRUCTION_SET_DIR: "iset", layout.NOTES_DIR: "notes", layout.RUNS_DIR: "runs"}.get(name)
    if role == layout.RUNS_DIR:
        return "type"
    if role in ("type", "stage"):
        if name in _CATEGORIES:
            return "cat:" + name
        if role == "type" and layout.parse_stage_dir(name) is not None:
            return "stage"
    return None


def file_kind(role: str, name: str) -> str | None:
    """The search kind of file *name* in a folder of *role* (None: not indexed)."""
    if layout.is_private_entry(name):
        return None
    if role.startswith("cat:"):
        parsed = names.parse_in_category(role[4:], name)
        return _RUN_KINDS.get(parsed.kind) if parsed is not None else None
    if role == "iset":
        if name == _BRIEF:
            return "brief"
        if name == _CARRIED_ANSWERS:
            return "user-response"
        if name == _DIRECTION:
            return "direction"
        return "instruction" if name.endswith((".md", ".txt")) else None
    if role == layout.NOTES_DIR:
        return "note" if names.parse_note(name) is not None else None
    return None


class _Budget:
    """Sections added until :data:`INDEX_CHARS` characters of text are kept."""

    def __init__(self, out: Extracted) -> None:
        self.out = out
        self.left = INDEX_CHARS

    def add(self, kind: str, label: str | None, parts: Iterable[Any]) -> None:
        text = "\n".join(str(p) for p in parts if p not in (None, "", []))
        if not text or self.left <= 0:
            self.out.capped = self.out.capped or bool(text)
            return
        if len(text) > self.left:
            text = text[: self.left]
            self.out.capped = True
        self.left -= len(text)
        shown = visible(label) if label is not None else None
        self.out.sections.append(Section(kind, shown, visible(text, multiline=True)))


def _lines(values: Iterable[Any]) -> list[str]:
    return [str(v) for v in values if isinstance(v, str | int | float) and not isinstance(v, bool)]


def _report(out: Extracted, doc: FinalReportV3 | FinalReportV2) -> None:
    add = _Budget(out).add
    parts: list[Any] = [doc.title, doc.summary]
    plan = doc.implementation_plan
    if plan is not None:
        for stage in plan.stages:
            parts += [stage.title, stage.goal, *stage.tasks]
    results = doc.implementation_results
    if results is not None:
        parts += [c.summary for c in results.changes] + [c.name for c in results.checks]
    verdict = doc.verification_verdict
    if verdict is not None:
        parts += [x for c in verdict.criteria for x in (c.criterion, c.evidence)]
    add("report", None, parts)
    for i, finding in enumerate(doc.analysis_findings or [], start=1):
        add("finding", finding.finding_id or f"finding {i}", [finding.title, finding.detail, *finding.evidence])
    if doc.option_candidates is not None:
        for option in doc.option_candidates.candidates:
            add("option", option.option_id, [option.title, option.summary, *option.pros, *option.cons])
    for item in doc.clarification_items:
        add("clarification", item.item_id, [item.question, item.context, *item.options])
    if plan is not None:
        for design in plan.design_items:
            add("design-prep", design.prep_id, [design.title, design.question, *design.fields])


def _team_state(out: Extracted, state: TeamState) -> None:
    add = _Budget(out).add
    rows: list[Any] = [*state.worker_dispatches, *state.agent_dispatches]
    for row in rows:
        extra = _lines((row.model_extra or {}).values())
        label = row.dispatch_id or row.worker_id
        add("team-state", label, [row.worker_id, row.status, row.prompt_path, *extra])
    links = [f"{link.dispatch_id} {link.result_path}" for link in state.agent_result_links]
    add("team-state", None, [state.spec_link_gate, *links, *_lines((state.model_extra or {}).values())])


def _plain(out: Extracted, path: Path, root: Path, kind: str, label: str | None) -> None:
    if kind == "log":
        data = reading.read_bytes(path, root=root, max_bytes=_INDEX_BYTES, tail=True)
        if isinstance(data, LoadError):
            out.error = data.reason
            return
        text = data.decode("utf-8", "replace")
        if len(text) > INDEX_CHARS:
            text = text[-INDEX_CHARS:]
            out.capped = True
        out.capped = out.capped or len(data) >= _INDEX_BYTES
    else:
        read = reading.read_prefix(path, root=root, max_bytes=_INDEX_BYTES)
        if isinstance(read, LoadError):
            out.error = read.reason
            return
        data, size = read
        text = data.decode("utf-8", "replace")
        if len(text) > INDEX_CHARS or size > len(data):
            text = text[:INDEX_CHARS]
            out.capped = True
    if text:
        out.sections.append(Section(kind, label, visible(text, multiline=True)))


def extract(path: Path, root: Path, kind: str) -> Extracted:
    """The sections of the file *path* (inside the project *root*) of search kind *kind*."""
    out = Extracted()
    if kind == "report":
        doc: Any = reading.load_report(path, root=root)
    elif kind == "team-state":
        doc = reading.load_doc(path, "team-state", root=root)
    elif kind == "direction":
        from ..models.report import SelectedDirection

        doc = reading.load_model(path, SelectedDirection, root=root)
    else:
        _plain(out, path, root, kind, _label_of(path.name, kind))
        return out
    if isinstance(doc, LoadError):
        # Text that does not validate is still what an agent wrote: searchable as it is.
        _plain(out, path, root, kind, "does not validate")
        return out
    if kind == "report":
        _report(out, doc)
    elif kind == "team-state":
        _team_state(out, doc)
    else:
        _Budget(out).add("direction", doc.option_id, [doc.option_id, doc.title, doc.summary])
    return out


def _label_of(filename: str, kind: str) -> str | None:
    if kind != "design-prep":
        return None
    for category in layout.DESIGN_PREP_CATEGORIES:
        parsed = names.parse_in_category(category, filename)
        if parsed is not None:
            return parsed.prep_id
    return None
