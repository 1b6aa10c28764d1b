"""Display-ready summaries of core objects, computed off the UI thread.

Everything here reads through :mod:`okstra_core` (the read side and the safe
loaders); nothing parses a file itself. Functions return plain values or a
``LoadError`` so a view can show an inline error instead of failing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from okstra_core import layout, reading
from okstra_core.errors import LoadError
from okstra_core.store import Artifact, CatalogListingEntry, Project, RunDir, Task, TaskRef

if TYPE_CHECKING:
    from okstra_core.models.task import TaskManifest, Timeline
    from okstra_core.reading import JsonlDoc


# ------------------------------------------------------------------ catalog


class CatalogRow:
    """One task as the catalog lists it (no manifest read, no path built until asked).

    A thin wrapper over the core's listing entry: building 10,000 of them is
    part of the first paint, so it holds the entry rather than copying fields.
    """

    __slots__ = ("_ident", "_root", "catalogued", "entry", "latest", "project")

    def __init__(
        self,
        project: Project,
        entry: CatalogListingEntry,
        latest: bool = False,
        catalogued: bool = True,
        root: Path | None = None,
    ) -> None:
        self.project = project
        self.entry = entry
        self.latest = latest
        self.catalogued = catalogued
        self._root = root
        self._ident: str | None = None

    def __repr__(self) -> str:
        return f"CatalogRow({self.ident!r})"

    @property
    def key(self) -> str:
        return self.entry.task_key

    @property
    def group(self) -> str:
        return self.entry.task_group

    @property
    def task_id(self) -> str:
        return self.entry.task_id

    @property
    def task_type(self) -> str:
        return self.entry.task_type

    @property
    def status(self) -> str:
        return self.entry.current_status

    @property
    def updated(self) -> str:
        return self.entry.updated_at or self.entry.created_at or ""

    @property
    def title(self) -> str:
        return self.entry.title or ""

    @property
    def ident(self) -> str:
        """Stable identity of the row across reloads: ``group/task-id`` as the catalog spells them."""
        if self._ident is None:
            entry = self.entry
            ident = f"{entry.task_group}/{entry.task_id}"
            self._ident = ident if self.catalogued else f"(folder) {ident}"
        return self._ident

    @property
    def root(self) -> Path:
        if self._root is None:
            self._root = layout.task_root(self.project.root, self.group, self.task_id)
        return self._root

    @property
    def ref(self) -> TaskRef:
        return TaskRef(self.project, self.group, self.task_id, self.root)


@dataclass(frozen=True, slots=True)
class PhaseSummary:
    """The manifest facts the catalog shows: current phase and the next phase's status."""

    phase: str
    phase_state: str
    next_phase: str
    next_status: str
    error: str | None = None


@dataclass(slots=True)
class CatalogData:
    rows: list[CatalogRow]
    error: LoadError | None
    latest_key: str | None
    latest_error: LoadError | None


def load_catalog(project: Project) -> CatalogData:
    """The catalog's rows, straight from ``task-catalog.json`` (no folder is listed).

    Paths are built only for rows that are opened or come into view, so a
    10,000-task catalog costs one parse. :func:`uncatalogued_rows` adds the task
    folders the catalog does not name, in a second pass.
    """
    catalog = project.catalog
    latest = project.latest_task
    latest_error = latest if isinstance(latest, LoadError) else None
    latest_key = latest.task_key if latest is not None and not isinstance(latest, LoadError) else None
    if isinstance(catalog, LoadError):
        return CatalogData([], catalog, latest_key, latest_error)
    rows: list[CatalogRow] = []
    for entry in catalog.tasks:
        listed = CatalogListingEntry(
            entry.task_key,
            entry.task_group,
            entry.task_id,
            entry.task_type,
            entry.current_status,
            entry.title,
            entry.created_at,
            entry.updated_at,
        )
        rows.append(CatalogRow(project, listed, latest=entry.task_key == latest_key))
    return CatalogData(rows, None, latest_key, latest_error)


def list_catalog(project: Project) -> CatalogData | None:
    """The catalog's rows from the core's plain-JSON listing, for the first paint; None when it cannot list.

    The listing skips the models (and importing them), so a 10,000-task
    catalog paints in a fraction of the validated read's time; the caller
    confirms it with :func:`load_catalog` and replaces it when they disagree.
    """
    entries = project.catalog_listing()
    if isinstance(entries, LoadError):
        return None
    latest = project.latest_task_key_listing()
    if isinstance(latest, LoadError):
        return None
    rows = [CatalogRow(project, e, e.task_key == latest) for e in entries]
    return CatalogData(rows, None, latest, None)


def same_catalog(a: CatalogData, b: CatalogData) -> bool:
    """True when two readings of the catalog show the same rows, pointer and errors."""
    if a.error is not None or b.error is not None or a.latest_error is not None or b.latest_error is not None:
        return False
    if a.latest_key != b.latest_key or len(a.rows) != len(b.rows):
        return False
    return all(
        (x.key, x.group, x.task_id, x.task_type, x.status, x.updated, x.title)
        == (y.key, y.group, y.task_id, y.task_type, y.status, y.updated, y.title)
        for x, y in zip(a.rows, b.rows, strict=False)
    )


def uncatalogued_rows(project: Project, known: list[CatalogRow]) -> list[CatalogRow]:
    """Task folders under ``.okstra/tasks/`` that no catalog entry names."""
    base = layout.tasks_dir(project.root)
    seen = {(layout.slug(r.group), layout.slug(r.task_id)) for r in known}
    out: list[CatalogRow] = []
    try:
        groups = sorted(os.scandir(base), key=lambda e: e.name)
    except OSError:
        return out
    for group in groups:
        if not group.is_dir():
            continue
        try:
            tasks = sorted(os.scandir(group.path), key=lambda e: e.name)
        except OSError:
            continue
        for task in tasks:
            if task.is_dir() and (group.name, task.name) not in seen:
                entry = CatalogListingEntry(
                    f"{group.name}/{task.name}", group.name, task.name, "?", "not in catalog", None, None, None
                )
                out.append(CatalogRow(project, entry, catalogued=False, root=Path(task.path)))
    return out


def phase_summary(row: CatalogRow) -> PhaseSummary:
    """Read one manifest; a broken one becomes a summary carrying its error."""
    manifest = row.ref.open().manifest
    if isinstance(manifest, LoadError):
        return PhaseSummary("", "", "", "", error=manifest.reason)
    wf = manifest.workflow
    nxt = wf.next_recommended_phase
    return PhaseSummary(wf.current_phase or "", wf.current_phase_state or "", nxt.phase or "", nxt.status)


# --------------------------------------------------------------------- task


@dataclass(slots=True)
class TaskOverview:
    task: Task
    manifest: TaskManifest | LoadError
    timeline: Timeline | LoadError
    fix_cycles: JsonlDoc | LoadError | None
    instruction_files: list[Path]
    notes: list[Path]
    run_dirs: list[RunDir]


def load_task(task: Task) -> TaskOverview:
    return TaskOverview(
        task, task.manifest, task.timeline, task.fix_cycles(), task.instruction_files(), task.notes(), task.run_dirs
    )


# --------------------------------------------------------------------- runs


@dataclass(frozen=True, slots=True)
class PreviewTarget:
    """What the preview pane shows: a file (or folder), and the artifact it is, when it is one."""

    path: Path
    label: str
    artifact: Artifact | None = None
    kind: str = "file"

    @property
    def fmt(self) -> str:
        if self.artifact is not None:
            return self.artifact.name.fmt
        name = self.path.name
        for suffix, fmt in (
            (".jsonl", "jsonl"),
            (".json", "json"),
            (".md", "md"),
            (".log", "log"),
            (".status", "status"),
            (".html", "html"),
            (".sh", "sh"),
            (".txt", "text"),
        ):
            if name.endswith(suffix):
                return fmt
        return "text"


@dataclass(slots=True)
class LoadedPreview:
    """The preview pane's content, loaded in a worker."""

    target: PreviewTarget
    text: str | None = None
    error: LoadError | None = None
    model: Any = None
    pretty: str | None = None
    problems: list[str] = field(default_factory=list)


#: How much of a growing ``.log`` transcript the preview shows.
LOG_TAIL_LINES = 400


def load_preview(target: PreviewTarget, root: Path) -> LoadedPreview:
    """Read a preview target through the core's loaders."""
    out = LoadedPreview(target)
    path = target.path
    if (target.artifact is not None and target.artifact.kind == "duty-contracts") or (
        path.is_dir() and not path.is_symlink()
    ):
        try:
            entries = sorted(os.listdir(path))
        except OSError as exc:
            out.error = LoadError(path, f"cannot list folder: {exc.strerror or exc}")
            return out
        out.text = "\n".join(entries) or "(empty folder)"
        if target.artifact is not None:
            loaded = target.artifact.load()
            if isinstance(loaded, LoadError):
                out.problems.append(str(loaded))
            else:
                out.model = loaded
        return out
    text = reading.read_text(path, root=root)
    if isinstance(text, LoadError):
        out.error = text
        return out
    fmt = target.fmt
    if fmt == "log":
        lines = text.splitlines()
        if len(lines) > LOG_TAIL_LINES:
            out.problems.append(f"showing the last {LOG_TAIL_LINES} of {len(lines)} lines")
            lines = lines[-LOG_TAIL_LINES:]
        out.text = "\n".join(lines)
        return out
    out.text = text
    if fmt == "json":
        value = reading.parse_json(path, text)
        if isinstance(value, LoadError):
            out.error = value
            return out
        from okstra_core.digests import pretty_json

        out.pretty = pretty_json(value).decode("utf-8")
    if target.artifact is not None:
        loaded = target.artifact.load()
        if isinstance(loaded, LoadError):
            # The bytes read but do not validate: show them, and say why.
            out.problems.append(loaded.reason)
        elif isinstance(loaded, reading.JsonlDoc):
            out.model = loaded
            out.problems.extend(
                str(e.reason if e.line is None else f"line {e.line}: {e.reason}") for e in loaded.errors
            )
        else:
            out.model = loaded
    return out


def seq_groups(artifacts: list[Artifact]) -> list[tuple[int | None, list[Artifact]]]:
    """Artifacts of one category grouped by seq, in seq order."""
    groups: dict[int | None, list[Artifact]] = {}
    for art in artifacts:
        groups.setdefault(art.seq, []).append(art)
    return sorted(groups.items(), key=lambda item: (item[0] is not None, item[0] or 0))


def task_label(task: Task) -> str:
    manifest = task.manifest
    if isinstance(manifest, LoadError):
        return f"{task.ref.task_group}/{task.ref.task_id}"
    return manifest.task_key


def home_dir() -> Path:
    return layout.okstra_home()


def artifact_for(project: Project, path: Path) -> Artifact | None:
    """The artifact a path names when it sits in a run dir's category folder (else None)."""
    from okstra_core import names

    try:
        rel = path.relative_to(layout.tasks_dir(project.root))
    except ValueError:
        return None
    parts = rel.parts
    # <group>/<task>/runs/<type>[/stage-<n>]/<category>/<file>
    if len(parts) < 6 or parts[2] != "runs":
        return None
    task_root = layout.tasks_dir(project.root) / parts[0] / parts[1]
    stage = layout.parse_stage_dir(parts[4]) if len(parts) >= 7 else None
    category, filename = parts[-2], parts[-1]
    parsed = names.parse_in_category(category, filename)
    if parsed is None:
        return None
    ref = TaskRef(project, parts[0], parts[1], task_root)
    run = RunDir(ref.open(), path.parent.parent, parts[3], stage)
    return Artifact(path, parsed, run)


# -------------------------------------------------------------- convergence


@dataclass(slots=True)
class ConvergenceTrail:
    """One execution's convergence files (they share the ``state/`` seq)."""

    run: RunDir
    seq_text: str
    groups: Any = None
    work: Any = None
    plans: dict[int, Any] = field(default_factory=dict)
    results: dict[int, Any] = field(default_factory=dict)
    final: Any = None
    migrations: list[Path] = field(default_factory=list)
    paths: list[Path] = field(default_factory=list)


CONVERGENCE_KINDS = (
    "convergence-groups",
    "convergence-work",
    "convergence-round-plan",
    "convergence-round-results",
    "convergence-final",
)


def load_convergence(task: Task) -> list[ConvergenceTrail]:
    """Every convergence trail of the task, by run dir and seq."""
    trails: list[ConvergenceTrail] = []
    for rd in task.run_dirs:
        by_seq: dict[str, ConvergenceTrail] = {}
        for art in rd.artifacts("state"):
            if art.kind not in CONVERGENCE_KINDS:
                continue
            seq_text = art.name.seq_text or "?"
            trail = by_seq.setdefault(seq_text, ConvergenceTrail(rd, seq_text))
            trail.paths.append(art.path)
            loaded = art.load()
            if art.kind == "convergence-groups":
                trail.groups = loaded
            elif art.kind == "convergence-work":
                trail.work = loaded
            elif art.kind == "convergence-final":
                trail.final = loaded
            elif art.kind == "convergence-round-plan":
                trail.plans[art.name.round or 0] = loaded
            else:
                trail.results[art.name.round or 0] = loaded
        migrations = rd.path / "state" / layout.MIGRATIONS_DIR
        archived = sorted(migrations.iterdir()) if migrations.is_dir() else []
        for trail in by_seq.values():
            trail.migrations = archived
        if archived and not by_seq:
            trail = ConvergenceTrail(rd, "-")
            trail.migrations = archived
            by_seq["-"] = trail
        trails.extend(by_seq[k] for k in sorted(by_seq))
    return trails
