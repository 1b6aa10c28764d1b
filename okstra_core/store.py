"""The lazy read side: project -> catalog -> tasks -> run dirs -> artifacts.

Opening a task reads its manifest and directory listings only; artifacts are
parsed when asked for. Every loader returns a model or a :class:`LoadError`.
Nothing here writes.

Importing this module stays light (no models, no name grammar until a run dir
is listed): the workbench paints its catalog from it before anything else.
"""

from __future__ import annotations

import importlib
import operator
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain, repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from . import layout, reading
from .errors import LoadError


class _LazyModels:
    """A models module imported on first attribute access.

    Building the pydantic models is most of the cost of importing the core, and
    a first look at a large catalog (:meth:`Project.catalog_listing`) needs none
    of them; everything else reaches them through these names unchanged.
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        value = getattr(importlib.import_module(self._name), attr)
        setattr(self, attr, value)
        return value


if TYPE_CHECKING:
    from pydantic import BaseModel

    from . import names
    from .models import invocation as imodels
    from .models import report as rmodels
    from .models import run as runmodels
    from .models import task as tmodels

    #: What :meth:`Artifact.load` returns: a model (a JSON document, report data, a duty catalog), JSONL lines,
    #: a sidecar, text, or why it could not be read.
    Content = BaseModel | reading.JsonlDoc | reading.LoadedSidecar | str | LoadError
else:
    imodels = _LazyModels("okstra_core.models.invocation")
    rmodels = _LazyModels("okstra_core.models.report")
    runmodels = _LazyModels("okstra_core.models.run")
    tmodels = _LazyModels("okstra_core.models.task")


def _listdir(path: Path, unlisted: dict[Path, LoadError] | None = None) -> list[str]:
    """The names in *path* (:func:`okstra_core.reading.list_folder`); a folder that cannot be listed reads as
    empty and, with *unlisted* (a project's :attr:`Project.unlisted`), is recorded there with its reason."""
    listed = reading.list_folder(path)
    if isinstance(listed, LoadError):
        if unlisted is not None:
            unlisted[path] = listed
        return []
    return listed


@dataclass(frozen=True, slots=True)
class Artifact:
    """One file (or the duty-contracts folder) in a run dir's category folder."""

    path: Path
    name: names.ParsedName
    run: RunDir

    @property
    def category(self) -> str:
        return self.name.category

    @property
    def kind(self) -> str:
        return self.name.kind

    @property
    def seq(self) -> int | None:
        return self.name.seq

    @property
    def spec(self) -> names.Kind:
        """The declaration of this artifact's kind: its grammar, folder, reader and document kind."""
        from . import names

        return names.KINDS_BY_NAME[self.kind]

    def load(self) -> Content:
        """The artifact's content, read as its kind declares (:attr:`names.Kind.reader`)."""
        root = self.run.task.project.root
        spec = self.spec
        model = spec.model
        if spec.reader == "report":
            return reading.load_report(self.path, root=root)
        if model is None:
            return reading.read_text(self.path, root=root)
        if spec.reader == "json":
            return reading.load_model(self.path, model, root=root)
        if spec.reader == "jsonl":
            return reading.load_jsonl(self.path, model, root=root)
        if spec.reader == "sidecar":
            return reading.load_sidecar(self.path, model, root=root)
        return reading.load_model(self.path / layout.DUTY_CATALOG_FILE, model, root=root)

    def model_of(self, value: Any) -> BaseModel | LoadError | None:
        """What :meth:`load` makes of this JSON artifact once its content is parsed (*value*): the model, or a
        :class:`LoadError` saying why it does not validate. None for a kind that is not a JSON document.

        For a reader that parsed the file already (a preview), so that it is not read and parsed again.
        """
        spec = self.spec
        if spec.reader == "json" and spec.model is not None:
            return reading.validate(self.path, value, spec.model)
        if spec.reader == "report":
            model = reading.report_model_for(value)
            return LoadError(self.path, model) if isinstance(model, str) else reading.validate(self.path, value, model)
        return None

    def jsonl_model(self) -> type[BaseModel] | None:
        """The model each line of this JSONL artifact must match (None for other kinds)."""
        spec = self.spec
        return spec.model if spec.reader == "jsonl" else None


@dataclass(slots=True)
class RunDir:
    """A resolved run dir: ``runs/<task-type>/`` or ``runs/<task-type>/stage-<n>/``."""

    task: Task
    path: Path
    task_type: str
    stage: int | None
    _listing: dict[str, list[Artifact]] | None = field(default=None, repr=False)
    #: Categories listed one at a time (before, or instead of, the whole run dir).
    _partial: dict[str, list[Artifact]] | None = field(default=None, repr=False)
    #: The run dir's own names, as the task's listing of its run dirs read them (None: not listed yet).
    _names: list[str] | None = field(default=None, repr=False)
    #: The status (``lstat``) of each flat legacy file :meth:`flat_legacy` looked at, by name.
    _flat_looks: dict[str, os.stat_result] = field(default_factory=dict, repr=False)

    @property
    def label(self) -> str:
        return self.task_type if self.stage is None else f"{self.task_type} / stage-{self.stage}"

    @property
    def rel(self) -> str:
        return layout.rel(self.path, self.task.project.root)

    def _scan_category(self, category: str) -> list[Artifact]:
        from . import names

        folder = self.path / category
        found = []
        for entry in _listdir(folder, self.task.project.unlisted):
            if layout.is_private_entry(entry):
                continue
            parsed = names.parse_in_category(category, entry)
            if parsed is not None:
                found.append(Artifact(folder / entry, parsed, self))
        found.sort(key=lambda a: (a.seq or 0, a.name.filename))
        return found

    def _scan(self) -> dict[str, list[Artifact]]:
        if self._listing is None:
            partial = self._partial or {}
            listing: dict[str, list[Artifact]] = {}
            # Only the category folders the run dir holds are listed (one absent lists as empty), as it holds
            # them now; a run dir that cannot be listed has each of its category folders listed on its own.
            unlisted = self.task.project.unlisted
            present = set(_listdir(self.path, unlisted))
            every = self.path in unlisted
            for category in layout.RUN_CATEGORIES:
                if not every and category not in present and category not in partial:
                    continue
                found = partial[category] if category in partial else self._scan_category(category)
                if found:
                    listing[category] = found
            self._listing = listing
            self._partial = None
        return self._listing

    def categories(self) -> list[str]:
        return list(self._scan())

    def artifacts(self, category: str | None = None) -> list[Artifact]:
        """Artifacts of one category folder (only that folder is listed), or of all of them."""
        if category is None:
            return [a for items in self._scan().values() for a in items]
        if self._listing is not None:
            return list(self._listing.get(category, []))
        if category not in layout.RUN_CATEGORIES:
            return []
        if self._partial is None:
            self._partial = {}
        if category not in self._partial:
            self._partial[category] = self._scan_category(category)
        return list(self._partial[category])

    def of_kind(self, kind: str) -> list[Artifact]:
        """Artifacts of one kind; only the kind's category folder is listed."""
        from . import names

        spec = names.KINDS_BY_NAME.get(kind)
        return [a for a in self.artifacts(spec.category if spec else None) if a.kind == kind]

    def latest(self, kind: str) -> Artifact | None:
        found = self.of_kind(kind)
        return found[-1] if found else None

    def unrecognised(self) -> list[Path]:
        """Entries in category folders that no kind's grammar accepts."""
        from . import names

        out = []
        for category in layout.RUN_CATEGORIES:
            folder = self.path / category
            for entry in _listdir(folder, self.task.project.unlisted):
                if category == layout.STATE_DIR and entry == layout.MIGRATIONS_DIR and reading.is_dir(folder / entry):
                    continue  # the contract's archive folder (see :meth:`migrations`)
                if not layout.is_private_entry(entry) and names.parse_in_category(category, entry) is None:
                    out.append(folder / entry)
        return out

    def own_names(self) -> list[str]:
        """The run dir's own names, sorted (listed once: the task's listing of its run dirs may have already)."""
        if self._names is None:
            self._names = _listdir(self.path, self.task.project.unlisted)
        return self._names

    def flat_legacy(self) -> list[tuple[Path, names.ParsedName]]:
        """Artifacts left flat at the top of the run dir (to be moved into their category folders)."""
        from . import names

        out = []
        for entry in self.own_names():
            if layout.is_private_entry(entry):
                continue
            parsed = names.classify_flat(entry)
            # Only a name an artifact could have is looked at (a category or stage folder has no such name).
            if parsed is not None and not self._is_folder(entry):
                out.append((self.path / entry, parsed))
        return out

    def _is_folder(self, name: str) -> bool:
        """Whether the entry *name* is a folder (a symlink to one too); its status is kept (:meth:`flat_looks`)."""
        try:
            st = reading.lstat(self.path / name)
        except (OSError, ValueError):
            return False
        if stat.S_ISLNK(st.st_mode):
            return reading.is_dir(self.path / name)
        self._flat_looks[name] = st
        return stat.S_ISDIR(st.st_mode)

    def flat_looks(self) -> dict[str, os.stat_result]:
        """The status of each flat legacy file :meth:`flat_legacy` looked at, by name (not looked at again)."""
        return dict(self._flat_looks)

    def load_latest(self, kind: str) -> Any:
        art = self.latest(kind)
        if art is None:
            return None
        return art.load()

    def executions(self) -> list[Execution]:
        """The executions of this run dir, oldest first, each with its files across categories.

        DECISIONS 1: every run-level JSON artifact records the run's
        ``runDateTimeSegment`` and the read side groups an execution's files by
        it. A seq that one document of a folder places in an execution brings
        every file of that seq in that folder (its prompt, its reading copy);
        a run context's ``pathHints.seqs``, when there is one, adds the folders
        whose files record no segment (status, sessions, worker results).
        A seq shared by two executions (the checker's OKS013) is left out.
        Reads the run dir's JSON documents.
        """
        from . import names

        grouped: dict[tuple[str, int], list[Artifact]] = {}
        rows: list[tuple[str, int, str, Artifact]] = []
        hints: dict[str, dict[str, str]] = {}
        for art in self.artifacts():
            if art.seq is None:
                continue
            grouped.setdefault((art.category, art.seq), []).append(art)
            if art.spec.reader not in ("json", "report"):
                continue
            doc = art.load()
            segment = None if isinstance(doc, LoadError) else runmodels.segment_of(doc)
            if segment is None:
                continue
            rows.append((art.category, art.seq, segment, art))
            path_hints = getattr(doc, "path_hints", None)
            if isinstance(path_hints, runmodels.PathHints):
                hints.setdefault(segment, {}).update(path_hints.seqs)
        seqs: dict[str, dict[str, str]] = {}
        for (category, seq), by_segment in runmodels.segments_by_seq(rows).items():
            if len(by_segment) == 1:
                seqs.setdefault(next(iter(by_segment)), {})[category] = names.format_seq(seq)
        for segment, hinted in hints.items():
            for category, seq_text in hinted.items():
                seqs.setdefault(segment, {}).setdefault(category, seq_text)
        out: list[Execution] = []
        for segment, by_category in seqs.items():
            files: list[Artifact] = []
            for category, seq_text in sorted(by_category.items()):
                if (value := names.seq_value(seq_text)) is not None:  # a hint is what an agent wrote
                    files.extend(grouped.get((category, value), []))
            out.append(Execution(segment, dict(sorted(by_category.items())), files))
        out.sort(key=lambda e: e.segment)
        return out

    def migrations(self) -> list[Path]:
        """Archives under ``state/migrations/``: byte-for-byte copies of state a Round 0 restart replaced."""
        folder = self.path / layout.STATE_DIR / layout.MIGRATIONS_DIR
        return [
            folder / name for name in _listdir(folder, self.task.project.unlisted) if not layout.is_private_entry(name)
        ]


@dataclass(frozen=True, slots=True)
class Execution:
    """One execution in a run dir: its ``runDateTimeSegment``, its seq per category, and its files."""

    segment: str
    seqs: dict[str, str]
    artifacts: list[Artifact]


@dataclass(slots=True)
class TaskRef:
    """A task as the catalog (or the folder tree) names it, before anything is opened."""

    project: Project
    task_group: str
    task_id: str
    root: Path
    entry: tmodels.TaskCatalogEntry | None = None
    #: The catalog's task key when the entry itself is not at hand (a task list kept by the store index).
    listed_key: str | None = None

    @property
    def key(self) -> str | None:
        return self.entry.task_key if self.entry else self.listed_key

    @property
    def catalogued(self) -> bool:
        return self.entry is not None or self.listed_key is not None

    def open(self) -> Task:
        return Task(self.project, self)

    def workflow_listing(self) -> WorkflowListing | LoadError:
        """The manifest's current phase and next-phase pointer from a plain JSON parse, without the models.

        A fast first look, as :meth:`Project.catalog_listing` is for the catalog:
        only the shape checked is that ``workflow`` is an object whose
        ``currentPhase`` and ``currentPhaseState`` are strings or absent and whose
        ``nextRecommendedPhase`` is an object with a string ``status`` (and a
        string or absent ``phase``); anything else is a ``LoadError``. A caller
        that shows it must confirm it with the validated :attr:`Task.manifest`.
        """
        path = layout.task_manifest_path(self.root)
        value = reading.load_json(path, root=self.project.root)
        if isinstance(value, LoadError):
            return value
        workflow = value.get("workflow") if isinstance(value, dict) else None
        pointer = workflow.get("nextRecommendedPhase") if isinstance(workflow, dict) else None
        if not isinstance(workflow, dict) or not isinstance(pointer, dict):
            return LoadError(path, "does not match TaskManifest: workflow.nextRecommendedPhase: not an object")
        fields = (workflow.get("currentPhase"), workflow.get("currentPhaseState"), pointer.get("phase"))
        status = pointer.get("status")
        if not isinstance(status, str) or not all(f is None or isinstance(f, str) for f in fields):
            return LoadError(path, "does not match TaskManifest: workflow: a phase field is not a string")
        current, state, phase = (f if isinstance(f, str) else None for f in fields)
        return WorkflowListing(current, state, phase, status)


class Task:
    """One task bundle; each part is read on first use and cached."""

    def __init__(self, project: Project, ref: TaskRef) -> None:
        self.project = project
        self.ref = ref
        self.root = ref.root

    def __repr__(self) -> str:
        return f"Task({self.root})"

    @property
    def rel(self) -> str:
        return layout.rel(self.root, self.project.root)

    def entries(self) -> list[str]:
        """The names in the task folder; when it cannot be listed, ``[]`` and the folder in :attr:`Project.unlisted`."""
        return _listdir(self.root, self.project.unlisted)

    @cached_property
    def manifest(self) -> tmodels.TaskManifest | LoadError:
        return reading.load_model(layout.task_manifest_path(self.root), tmodels.TaskManifest, root=self.project.root)

    @cached_property
    def timeline(self) -> tmodels.Timeline | LoadError:
        return reading.load_model(layout.timeline_path(self.root), tmodels.Timeline, root=self.project.root)

    def fix_cycles(self) -> reading.JsonlDoc | LoadError | None:
        path = layout.fix_cycles_path(self.root)
        if not reading.lexists(path):
            return None
        return reading.load_jsonl(path, tmodels.FixCycleEvent, root=self.project.root)

    def recap(self) -> reading.JsonlDoc | LoadError | None:
        path = layout.recap_log_path(self.root)
        if not reading.lexists(path):
            return None
        return reading.load_jsonl(path, tmodels.RecapEntry, root=self.project.root)

    def instruction_files(self) -> list[Path]:
        folder = layout.instruction_set_dir(self.root)
        return [folder / n for n in _listdir(folder, self.project.unlisted) if not layout.is_private_entry(n)]

    def selected_direction(self) -> rmodels.SelectedDirection | LoadError | None:
        path = layout.selected_direction_path(self.root)
        if not reading.lexists(path):
            return None
        return reading.load_model(path, rmodels.SelectedDirection, root=self.project.root)

    def notes(self) -> list[Path]:
        folder = layout.notes_dir(self.root)
        return [folder / n for n in _listdir(folder, self.project.unlisted)]

    @cached_property
    def run_dirs(self) -> list[RunDir]:
        """Every resolved run dir, by task type then stage."""
        from . import names

        out: list[RunDir] = []
        runs = layout.runs_dir(self.root)
        unlisted = self.project.unlisted
        for task_type in _listdir(runs, unlisted):
            if layout.is_private_entry(task_type):
                continue
            base = runs / task_type
            listed = reading.list_if_folder(base)
            if listed is None:
                continue
            if isinstance(listed, LoadError):
                unlisted[base] = listed
                listed = []
            entries = listed
            stages = sorted(s for s in (layout.parse_stage_dir(e) for e in entries) if s is not None)
            has_own = any(e in layout.RUN_CATEGORIES for e in entries) or any(names.classify_flat(e) for e in entries)
            if task_type != "implementation" and (has_own or not stages):
                out.append(RunDir(self, base, task_type, None, _names=entries))
            for stage in stages:
                out.append(RunDir(self, base / layout.stage_dir_name(stage), task_type, stage))
        return out

    def run_dir(self, task_type: str, stage: int | None = None) -> RunDir | None:
        for rd in self.run_dirs:
            if rd.task_type == task_type and rd.stage == stage:
                return rd
        return None

    def carry(self) -> list[tuple[Path, rmodels.CarryStage | LoadError]]:
        from . import names

        folder = layout.task_type_run_dir(self.root, "implementation") / layout.CARRY_DIR
        out = []
        for entry in _listdir(folder, self.project.unlisted):
            if names.parse_carry(entry) is not None:
                out.append(
                    (folder / entry, reading.load_model(folder / entry, rmodels.CarryStage, root=self.project.root))
                )
        return out

    def consumers(self) -> reading.JsonlDoc | LoadError | None:
        path = layout.consumers_path(self.root)
        if not reading.lexists(path):
            return None
        return reading.load_jsonl(path, rmodels.ConsumerLink, root=self.project.root)


@dataclass(slots=True)
class Invocation:
    """One ``(purpose, invocationId)`` agent invocation."""

    project: Project
    paths: layout.InvocationPaths
    purpose: str

    @property
    def invocation_id(self) -> str:
        return self.paths.invocation_id

    def meta(self) -> imodels.InvocationMeta | LoadError:
        return reading.load_model(self.paths.meta, imodels.InvocationMeta, root=self.project.root)

    def result(self) -> imodels.ResultEnvelope | LoadError:
        return reading.load_model(self.paths.result, imodels.ResultEnvelope, root=self.project.root)

    def completion(self) -> imodels.CompletionMarker | LoadError:
        return reading.load_model(self.paths.completion, imodels.CompletionMarker, root=self.project.root)


class WorkflowListing(NamedTuple):
    """A manifest's workflow pointer as :meth:`TaskRef.workflow_listing` reads it (not validated by the model)."""

    current_phase: str | None
    current_phase_state: str | None
    next_phase: str | None
    next_status: str


class CatalogListingEntry(NamedTuple):
    """One ``task-catalog.json`` entry as :meth:`Project.catalog_listing` reads it (not validated by the model).

    A named tuple: a 10,000-entry listing builds in a few milliseconds.
    """

    task_key: str
    task_group: str
    task_id: str
    task_type: str | None
    current_status: str | None
    title: str | None
    created_at: str | None
    updated_at: str | None


#: The contract lists bundles "by taskKey, taskGroup, and taskId"; the rest is read when present.
_LISTING_REQUIRED = ("taskKey", "taskGroup", "taskId")
_LISTING_OPTIONAL = ("taskType", "currentStatus", "title", "createdAt", "updatedAt")
#: For each field of :class:`CatalogListingEntry`, in order: whether it may be missing (``None``).
LISTING_OPTIONAL = (False,) * len(_LISTING_REQUIRED) + (True,) * len(_LISTING_OPTIONAL)
#: The fields whose values repeat across tasks (a few groups, types and statuses for thousands of tasks): one
#: string object each is kept, not one per task.
LISTING_SHARED = (1, 3, 4)


def listed_entries(catalog: tmodels.TaskCatalog) -> list[CatalogListingEntry]:
    """The validated catalog's entries in the listing's shape: what every reader shows of a task is one shape,
    whether it came from the plain parse (:meth:`Project.catalog_listing`) or from the models."""
    return [
        CatalogListingEntry(
            e.task_key, e.task_group, e.task_id, e.task_type, e.current_status, e.title, e.created_at, e.updated_at
        )
        for e in catalog.tasks
    ]


def shared_values(values: list[Any]) -> list[Any]:
    """*values* with equal ones made the same object (a parse makes a new string for each occurrence)."""
    canonical = {value: value for value in set(values)}
    return list(map(canonical.__getitem__, values))


def listing_entries(columns: list[list[Any]], shared: Iterable[int] = ()) -> list[CatalogListingEntry]:
    """Entries from one list per field (in :class:`CatalogListingEntry` order), repeated values shared (the
    columns numbered in *shared* are already)."""
    for index in set(LISTING_SHARED) - set(shared):
        columns[index] = shared_values(columns[index])
    # tuple.__new__ called from map: each entry is built in C (``_make`` is a Python call per entry).
    return list(map(tuple.__new__, repeat(CatalogListingEntry), zip(*columns, strict=True)))


class CatalogListing:
    """A catalog's listing, held as columns (one list per :class:`CatalogListingEntry` field, as the listing's
    cache keeps it) or as entries (as :meth:`Project.catalog_listing` reads them); each is made from the other
    only when asked.

    The first frame of a large catalog needs the columns (how many tasks, which groups, the rows in view);
    building an entry per task can wait until that frame is shown.
    """

    __slots__ = ("_columns", "_entries")

    def __init__(
        self, *, columns: list[list[Any]] | None = None, entries: list[CatalogListingEntry] | None = None
    ) -> None:
        if (columns is None) == (entries is None):
            raise TypeError("CatalogListing takes columns or entries")
        self._columns = columns
        self._entries = entries

    def __len__(self) -> int:
        return len(self._entries) if self._entries is not None else len(self.columns[0])

    @property
    def columns(self) -> list[list[Any]]:
        """One list per field, in :class:`CatalogListingEntry` order (repeated values shared)."""
        if self._columns is None:
            assert self._entries is not None
            entries = self._entries
            self._columns = [list(c) for c in zip(*entries, strict=True)] if entries else [[] for _ in LISTING_OPTIONAL]
        return self._columns

    @property
    def entries(self) -> list[CatalogListingEntry]:
        if self._entries is None:
            self._entries = listing_entries(list(self.columns), shared=LISTING_SHARED)
        return self._entries

    def entry(self, index: int) -> CatalogListingEntry:
        """The entry at *index*, without building the others."""
        if self._entries is not None:
            return self._entries[index]
        return tuple.__new__(CatalogListingEntry, [column[index] for column in self.columns])


def _listing_fast(tasks: list[Any]) -> list[CatalogListingEntry] | None:
    """Every entry at once when all are well formed (the usual case), else None.

    Each step runs over the whole list in C (item getters, type sets), which
    lists 10,000 entries several times faster than checking them one by one.
    """
    try:
        required = [list(map(operator.itemgetter(name), tasks)) for name in _LISTING_REQUIRED]
    except (KeyError, TypeError, IndexError):
        return None
    if set(map(type, chain.from_iterable(required))) != {str}:
        return None
    try:
        optional = [list(map(operator.itemgetter(name), tasks)) for name in _LISTING_OPTIONAL]
    except KeyError:  # an optional field left out: fill the gaps one entry at a time
        optional = [[e.get(name) for e in tasks] for name in _LISTING_OPTIONAL]
    if not set(map(type, chain.from_iterable(optional))) <= {str, type(None)}:
        return None
    return listing_entries(required + optional)


def _listing_entry(entry: Any) -> CatalogListingEntry | str:
    """The entry, or the first field (``field: reason``) that keeps it from being listed."""
    if not isinstance(entry, dict):
        return "(entry): not an object"
    values: list[str | None] = []
    for name in _LISTING_REQUIRED:
        value = entry.get(name)
        if not isinstance(value, str):
            return f"{name}: {'missing' if value is None else 'not a string'}"
        values.append(value)
    for name in _LISTING_OPTIONAL:
        value = entry.get(name)
        if value is not None and not isinstance(value, str):
            return f"{name}: not a string"
        values.append(value)
    return CatalogListingEntry(*values)  # type: ignore[arg-type]


class Project:
    """A project root holding ``.okstra/``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        #: Every folder of this project's tree that a listing through this object could not list, with why.
        #: The listing read as empty; a reader that must not take it for empty (the inbox) reports these.
        self.unlisted: dict[Path, LoadError] = {}

    @classmethod
    def open(cls, root: Path | str) -> Project | LoadError:
        path = Path(root)
        if not path.is_dir():
            return LoadError(path, "project root is not a directory")
        if not layout.store_is_folder(path):
            return LoadError(path, "no .okstra/ store in this folder")
        return cls(path)

    def forget(self) -> None:
        """Drop the readings this handle has kept (the validated catalog, the task list): the next use reads
        them again. For a long-lived handle whose caller keeps a leaner copy of what it needs."""
        for name in ("catalog", "latest_task", "task_refs"):
            self.__dict__.pop(name, None)

    @cached_property
    def catalog(self) -> tmodels.TaskCatalog | LoadError:
        return reading.load_model(layout.task_catalog_path(self.root), tmodels.TaskCatalog, root=self.root)

    @cached_property
    def latest_task(self) -> tmodels.LatestTask | LoadError | None:
        path = layout.latest_task_path(self.root)
        if not reading.lexists(path):
            return None
        return reading.load_model(path, tmodels.LatestTask, root=self.root)

    def catalog_listing(self) -> list[CatalogListingEntry] | LoadError:
        """The catalog's entries from a plain JSON parse, without the models: a fast first look.

        A 10,000-entry catalog lists in tens of milliseconds and without
        importing pydantic. Only the shape a listing needs is checked (an
        object whose ``tasks`` is a list, or the bare list, of objects with string
        ``taskKey``, ``taskGroup`` and ``taskId``); anything else is a
        ``LoadError``. :attr:`catalog` stays the validated reading: a caller
        that shows this listing must confirm it with ``catalog``.
        """
        path = layout.task_catalog_path(self.root)
        value = reading.load_json(path, root=self.root)
        if isinstance(value, LoadError):
            return value
        tasks = value if isinstance(value, list) else value.get("tasks", []) if isinstance(value, dict) else None
        if not isinstance(tasks, list):
            return LoadError(path, "does not match TaskCatalog: tasks: not a list")
        fast = _listing_fast(tasks)
        if fast is not None:
            return fast
        # Something is off: the entry-by-entry reading names the first field that keeps an entry out.
        out: list[CatalogListingEntry] = []
        for i, entry in enumerate(tasks):
            listed = _listing_entry(entry)
            if isinstance(listed, str):
                return LoadError(path, f"does not match TaskCatalog: tasks.{i}.{listed}")
            out.append(listed)
        return out

    def latest_task_key_listing(self) -> str | LoadError | None:
        """``latest-task.json``'s task key from a plain JSON parse (see :meth:`catalog_listing`); None when absent."""
        path = layout.latest_task_path(self.root)
        if not reading.lexists(path):
            return None
        value = reading.load_json(path, root=self.root)
        if isinstance(value, LoadError):
            return value
        key = value.get("taskKey") if isinstance(value, dict) else None
        if not isinstance(key, str):
            return LoadError(path, "does not match LatestTask: taskKey: not a string")
        return key

    def task_folders(self) -> list[tuple[str, str]]:
        """The ``(group, task)`` names of the entries two levels under ``.okstra/tasks/``, as listed now (no
        catalog read, nothing cached; a folder that cannot be listed is recorded in :attr:`unlisted`)."""
        base = layout.tasks_dir(self.root)
        unlisted = self.unlisted
        return [(group, task_id) for group in _listdir(base, unlisted) for task_id in _listdir(base / group, unlisted)]

    @cached_property
    def task_refs(self) -> list[TaskRef]:
        """Catalogued tasks in catalog order, then task folders the catalog does not name."""
        refs: list[TaskRef] = []
        claimed: set[tuple[str, str]] = set()
        base = layout.tasks_dir(self.root)
        folders = self.task_folder_rule()
        catalog = self.catalog
        if not isinstance(catalog, LoadError):
            for entry in catalog.tasks:
                names = folders.of(entry.task_group, entry.task_id)
                claimed.add(names)
                refs.append(TaskRef(self, entry.task_group, entry.task_id, base / names[0] / names[1], entry))
        for group, task_id in folders.unclaimed(claimed):
            refs.append(TaskRef(self, group, task_id, base / group / task_id, None))
        return refs

    def task_folder_rule(self) -> layout.TaskFolders:
        """Which folder holds each catalogued task, over the task folders as listed now (see
        :class:`~okstra_core.layout.TaskFolders`; each entry asked whether it is a folder only where it matters)."""
        base = layout.tasks_dir(self.root)
        return layout.TaskFolders(self.task_folders(), lambda names: reading.is_dir(base / names[0] / names[1]))

    def find_task(self, key_or_rel: str) -> Task | None:
        """A task by key (``project:group:task``), by ``group/task`` folder, or by task id."""
        for ref in self.task_refs:
            if ref.key == key_or_rel:
                return ref.open()
        for ref in self.task_refs:
            rel = f"{ref.root.parent.name}/{ref.root.name}"
            if key_or_rel in (rel, ref.task_id, ref.root.name):
                return ref.open()
        return None

    def invocations(self) -> list[Invocation]:
        base = layout.agent_invocations_dir(self.root)
        out = []
        for purpose in _listdir(base, self.unlisted):
            folder = base / purpose
            names = _listdir(folder, self.unlisted)
            ids = sorted({n.split(".", 1)[0] for n in names if not layout.is_private_entry(n)})
            for inv_id in ids:
                out.append(Invocation(self, layout.InvocationPaths(folder, inv_id), purpose))
        return out
