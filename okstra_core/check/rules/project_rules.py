"""Project-wide rules: the store's top level, discovery files, task folders, invocations, managers."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import overload

from ... import layout
from ...models.task import LatestTask, ProjectFile, TaskCatalog, TaskCatalogEntry
from ..catalog import (
    CATALOG_UNREADABLE,
    CATALOGUED_TASK_MISSING,
    LATEST_TASK_DANGLING,
    NON_CANONICAL_SLUG,
    TASK_KEY_INCONSISTENT,
    TASK_NOT_CATALOGUED,
    UNNAMED_ENTRY,
)
from ..unit import Unit
from . import invocations, managers

_TOP: dict[str, str] = {
    layout.PROJECT_FILE: "file",
    layout.DISCOVERY_DIR: "dir",
    layout.TASKS_DIR: "dir",
    layout.AGENT_INVOCATIONS_DIR: "dir",
}
_DISCOVERY = (layout.LATEST_TASK_FILE, layout.TASK_CATALOG_FILE)


class CatalogEntryKey:
    """What the checker keeps of a catalog entry through a whole check: the identity a task's rules compare,
    the folder it names, and a digest of the whole entry (a task's cached record holds while it is the same).

    The entries' models of a 100,000-task catalog would be about 180 megabytes held for the whole check; these
    hold only what the check compares: a task key and a task root path spelled from the entry's other values
    (the usual case) are not held, but made again when asked for, and the digest is held as its bytes.
    """

    __slots__ = ("__weakref__", "_digest", "_root", "_task_key", "project_id", "task_group", "task_id")

    def __init__(
        self,
        task_key: str,
        project_id: str | None,
        task_group: str,
        task_id: str,
        task_root_path: str | None,
        digest: str,
    ) -> None:
        self.project_id, self.task_group, self.task_id = project_id, task_group, task_id
        self._task_key = None if task_key == self._made_key() else task_key
        self._root: str | bool | None = True if task_root_path == self._made_root() else task_root_path
        self._digest = _as_bytes(digest)

    def _made_key(self) -> str | None:
        """The task key the contract spells from the entry's values (None without a project id)."""
        project_id = self.project_id
        return None if project_id is None else layout.task_key_text(project_id, self.task_group, self.task_id)

    def _made_root(self) -> str:
        return layout.task_root_rel(self.task_group, self.task_id)

    @property
    def task_key(self) -> str:
        return self._task_key if self._task_key is not None else self._made_key()  # type: ignore[return-value]

    @property
    def task_root_path(self) -> str | None:
        root = self._root
        return self._made_root() if root is True else root  # type: ignore[return-value]

    @property
    def digest(self) -> str:
        """``sha256`` of the entry's JSON as the model writes it, hex (what a cached record was kept under)."""
        digest = self._digest
        return digest.hex() if isinstance(digest, bytes) else digest

    def _fields(self) -> tuple[str, str | None, str, str, str | None, str]:
        return (self.task_key, self.project_id, self.task_group, self.task_id, self.task_root_path, self.digest)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CatalogEntryKey) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "CatalogEntryKey" + repr(self._fields())

    def __reduce__(self) -> tuple[type[CatalogEntryKey], tuple[str, str | None, str, str, str | None, str]]:
        return CatalogEntryKey, self._fields()

    def kept(self) -> list[str | bool | None]:
        """The entry as the project's kept record holds it (:func:`kept_tasks_text`): its identity values, its task
        key and root path (None: spelled from the others, as the usual entry does; ``False`` for a root path: none
        given) and its digest."""
        root = self._root
        return [
            self.project_id,
            self.task_group,
            self.task_id,
            self._task_key,
            None if root is True else False if root is None else root,
            self.digest,
        ]

    @classmethod
    def from_kept(cls, value: object, shared: Callable[[str, str], str]) -> CatalogEntryKey | None:
        """The entry :meth:`kept` wrote (None when *value* is not what it writes); *shared* keeps the values that
        repeat across tasks once."""
        if not isinstance(value, list) or len(value) != 6:
            return None
        project_id, group, task_id, task_key, root, digest = value
        if not (
            isinstance(group, str)
            and isinstance(task_id, str)
            and isinstance(digest, str)
            and isinstance(project_id, str | None)
            and isinstance(task_key, str | None)
            and (root is None or root is False or isinstance(root, str))
        ):
            return None
        made = cls.__new__(cls)
        made.project_id = None if project_id is None else shared(project_id, project_id)
        made.task_group, made.task_id = shared(group, group), task_id
        made._task_key = task_key
        made._root = True if root is None else None if root is False else root
        made._digest = _as_bytes(digest)
        if task_key is None and project_id is None:
            return None  # no key to spell: :meth:`kept` never writes this
        return made


def kept_tasks_text(tasks: list[tuple[str, CatalogEntryKey | None]]) -> str | None:
    """The task folders :func:`check_project` found and their catalog entries, as the project's kept record holds
    them: one JSON line per task. None when one entry's digest could not be kept (its task is checked afresh at
    every check: so the project's rules run again too)."""
    lines = []
    for rel, entry in tasks:
        if entry is not None and entry.digest.startswith(UNKEPT_DIGEST_PREFIX):
            return None
        lines.append(json.dumps([rel] if entry is None else [rel, entry.kept()], separators=(",", ":")))
    return "\n".join(lines)


class KeptTasks(Sequence[tuple[str, CatalogEntryKey | None]]):
    """The task folders and catalog entries of a kept project record, each made from its line when asked for:
    the lines of 100,000 tasks are about 19 megabytes, their folders and entry keys held made about 40."""

    def __init__(self, lines: list[str]) -> None:
        self._lines = lines
        self._shared: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._lines)

    @overload
    def __getitem__(self, index: int) -> tuple[str, CatalogEntryKey | None]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[str, CatalogEntryKey | None]]: ...

    def __getitem__(
        self, index: int | slice
    ) -> tuple[str, CatalogEntryKey | None] | list[tuple[str, CatalogEntryKey | None]]:
        if isinstance(index, slice):
            return list(map(self._task, self._lines[index]))
        return self._task(self._lines[index])

    def __iter__(self) -> Iterator[tuple[str, CatalogEntryKey | None]]:
        return map(self._task, self._lines)

    @classmethod
    def checked(cls, lines: list[str]) -> KeptTasks | None:
        """The tasks of *lines*, once each is seen to be one; None when one is not."""
        tasks = cls(lines)
        return None if any(tasks._parsed(line) is None for line in lines) else tasks

    def clear(self) -> None:
        """Let every line go."""
        self._lines.clear()

    def _task(self, line: str) -> tuple[str, CatalogEntryKey | None]:
        task = self._parsed(line)
        if task is None:  # never: every line was checked when the record was read (:func:`kept_tasks`)
            raise ValueError("a kept task line is not one")
        return task

    def _parsed(self, line: str) -> tuple[str, CatalogEntryKey | None] | None:
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            return None
        if not isinstance(value, list) or not 1 <= len(value) <= 2 or not isinstance(value[0], str):
            return None
        if len(value) == 1:
            return value[0], None
        entry = CatalogEntryKey.from_kept(value[1], self._shared.setdefault)
        return None if entry is None else (value[0], entry)


def kept_tasks(text: str) -> KeptTasks | None:
    """The tasks :func:`kept_tasks_text` wrote; None when *text* is not what it writes (each line is checked)."""
    return KeptTasks.checked(text.split("\n") if text else [])


def _as_bytes(digest: str) -> bytes | str:
    """A hex digest as its bytes, when they spell it again exactly; any other text as it is."""
    try:
        raw = bytes.fromhex(digest)
    except ValueError:
        return digest
    return raw if raw.hex() == digest else digest


#: The digest standing for a task folder the catalog does not name.
NO_ENTRY_DIGEST = hashlib.sha256(b"").hexdigest()
#: How the digest of an entry that cannot be written again begins (never a hex digest's start).
UNKEPT_DIGEST_PREFIX = "unkept:"


class _EntryKeys:
    """Makes each :class:`CatalogEntryKey`, the values that repeat across tasks (project, group) held once."""

    def __init__(self) -> None:
        self._shared: dict[str, str] = {}

    def __call__(self, entry: TaskCatalogEntry) -> CatalogEntryKey:
        shared = self._shared.setdefault
        project_id = entry.project_id
        try:
            digest = hashlib.sha256(entry.model_dump_json().encode()).hexdigest()
        except (ValueError, RecursionError):
            # A field it keeps unread is nested too deep to be written again: a digest no record was kept under,
            # so its task is checked afresh at every check.
            digest = UNKEPT_DIGEST_PREFIX + os.urandom(16).hex()
        return CatalogEntryKey(
            entry.task_key,
            None if project_id is None else shared(project_id, project_id),
            shared(entry.task_group, entry.task_group),
            entry.task_id,
            entry.task_root_path,
            digest,
        )


def check_project(unit: Unit, home: Path) -> list[tuple[str, CatalogEntryKey | None]]:
    """Check everything outside task folders; return the task folders to check, with their catalog entries."""
    root = unit.root
    store = layout.okstra_dir(root)
    for e in unit.entries(store):
        expected = _TOP.get(e.name)
        if e.kind != "bad" and expected != e.kind:
            unit.report(UNNAMED_ENTRY, e.path, "not part of the store's contract; not read")
    project_file = layout.project_json_path(root)
    if unit.entry(project_file) is not None:
        unit.doc(project_file, ProjectFile)

    disc = layout.discovery_dir(root)
    for e in unit.entries(disc):
        if e.kind != "bad" and (e.name not in _DISCOVERY or e.kind != "file"):
            unit.report(UNNAMED_ENTRY, e.path, "not part of the store's contract; not read")

    folders = _task_folders(unit)
    catalog_path = layout.task_catalog_path(root)
    catalog: tuple[TaskCatalog, list[CatalogEntryKey]] | None = None
    if unit.entry(catalog_path) is None:
        if folders:
            unit.report(CATALOG_UNREADABLE, catalog_path, "task-catalog.json is missing but the store has task folders")
    else:
        catalog = unit.doc_by_row(str(catalog_path), TaskCatalog, "tasks", TaskCatalogEntry, _EntryKeys())

    entries: dict[str, CatalogEntryKey] = {}
    if catalog is not None:
        head, listed = catalog
        unit.guard("catalog", catalog_path, lambda: _check_catalog(unit, head, listed, entries, folders))
    latest_path = layout.latest_task_path(root)
    if unit.entry(latest_path) is not None:
        latest = unit.doc(latest_path, LatestTask)
        if latest is not None and catalog is not None:
            _check_latest(unit, latest_path, latest, catalog[1])
    out: list[tuple[str, CatalogEntryKey | None]] = []
    for rel in folders:
        entry = entries.get(rel)
        if catalog is not None and entry is None:
            unit.report(
                TASK_NOT_CATALOGUED, root / rel, "task folder is not listed in .okstra/discovery/task-catalog.json"
            )
        out.append((rel, entry))

    inv_dir = layout.agent_invocations_dir(root)
    unit.guard("invocations", inv_dir, lambda: invocations.check_invocations(unit, inv_dir))
    if unit.home is not None:
        unit.guard("managers", home, lambda: managers.check_managers(unit, home))
    prefixes = (str(store) + os.sep,) + ((str(unit.home) + os.sep,) if unit.home is not None else ())
    # A task's files are its own unit's to read (a pointer check may have listed one task's folder here).
    in_tasks = tuple(str(root / rel) + os.sep for rel in folders)
    unit.files = {p for p in unit.files if p.startswith(prefixes) and not p.startswith(in_tasks)}
    unit.read_remaining(sorted(unit.files))
    return out


def _task_folders(unit: Unit) -> list[str]:
    base = layout.tasks_dir(unit.root)
    out = []
    for group in unit.entries(base):
        if group.kind != "dir":
            if group.kind == "file":
                unit.report(UNNAMED_ENTRY, group.path, "not part of the store's contract; not read")
            continue
        if not layout.is_canonical_slug(group.name):
            unit.report(NON_CANONICAL_SLUG, group.path, layout.not_a_slug("task group folder", group.name))
        for task in unit.entries(group.path):
            if task.kind != "dir":
                if task.kind == "file":
                    unit.report(UNNAMED_ENTRY, task.path, "not part of the store's contract; not read")
                continue
            if not layout.is_canonical_slug(task.name):
                unit.report(NON_CANONICAL_SLUG, task.path, layout.not_a_slug("task id folder", task.name))
            out.append(unit.rel(task.text))  # text, not a Path: this runs once per task of the store
    return out


def _check_catalog(
    unit: Unit,
    catalog: TaskCatalog,
    listed: list[CatalogEntryKey],
    entries: dict[str, CatalogEntryKey],
    folders: list[str],
) -> None:
    path = layout.task_catalog_path(unit.root)
    project_file = layout.project_json_path(unit.root)
    project = unit.doc(project_file, ProjectFile) if unit.entry(project_file) is not None else None
    if (
        project is not None
        and None not in (project.project_id, catalog.project_id)
        and project.project_id != catalog.project_id
    ):
        unit.report(
            TASK_KEY_INCONSISTENT,
            path,
            f"catalog projectId {catalog.project_id!r} differs from project.json ({project.project_id!r})",
        )
    seen: set[str] = set()
    # A folder that breaks the slug rule (reported once, as OKS018) still holds the task whose values slug to it.
    task_folders = layout.TaskFolders((group, task) for _, group, task in (f.rsplit("/", 2) for f in folders))
    tasks_rel = layout.rel(layout.tasks_dir(unit.root), unit.root)
    for index, entry in enumerate(listed):
        where = f"tasks[{index}]"
        project_id = entry.project_id
        expected_key = None if project_id is None else layout.task_key_text(project_id, entry.task_group, entry.task_id)
        if expected_key is not None and entry.task_key != expected_key:
            unit.report(
                TASK_KEY_INCONSISTENT,
                path,
                f"{where}: taskKey {entry.task_key!r} is not projectId:taskGroup:taskId ({expected_key!r})",
            )
        if entry.task_key in seen:
            unit.report(TASK_KEY_INCONSISTENT, path, f"{where}: taskKey {entry.task_key!r} is listed twice")
        seen.add(entry.task_key)
        names = task_folders.of(entry.task_group, entry.task_id)
        folder = f"{tasks_rel}/{names[0]}/{names[1]}"
        if entry.task_root_path is not None and entry.task_root_path != folder:
            unit.report(
                TASK_KEY_INCONSISTENT,
                path,
                f"{where}: taskRootPath {entry.task_root_path!r} is not the task's folder {folder!r}",
            )
        if not task_folders.listed(names):
            unit.report(CATALOGUED_TASK_MISSING, path, f"{where}: task {entry.task_key!r} has no folder {folder}/")
            continue
        if folder in entries:
            unit.report(TASK_KEY_INCONSISTENT, path, f"{where}: two catalog entries map to the folder {folder}/")
        entries[folder] = entry


def _check_latest(unit: Unit, path: Path, latest: LatestTask, listed: list[CatalogEntryKey]) -> None:
    def root_of(e: CatalogEntryKey) -> str:
        return e.task_root_path or layout.task_root_rel(e.task_group, e.task_id)

    if latest.task_key is not None:
        match = [e for e in listed if e.task_key == latest.task_key]
        what = f"taskKey {latest.task_key!r}"
    elif latest.task_root_path is not None or latest.task_manifest_path is not None:
        given = latest.task_root_path or (latest.task_manifest_path or "").removesuffix(f"/{layout.TASK_MANIFEST_FILE}")
        match = [e for e in listed if root_of(e) == given]
        what = f"task root {given!r}"
    else:
        unit.report(LATEST_TASK_DANGLING, path, "names no task (expected taskKey, taskRootPath or taskManifestPath)")
        return
    if not match:
        unit.report(LATEST_TASK_DANGLING, path, f"{what} is not a catalogued task")
        return
    entry = match[0]
    task_root = root_of(entry)
    if latest.task_root_path is not None and latest.task_root_path != task_root:
        unit.report(
            LATEST_TASK_DANGLING,
            path,
            f"taskRootPath {latest.task_root_path!r} is not the catalogued task root {task_root!r}",
        )
    expected = f"{task_root}/{layout.TASK_MANIFEST_FILE}"
    if latest.task_manifest_path is None:
        return
    if latest.task_manifest_path != expected:
        unit.report(LATEST_TASK_DANGLING, path, f"taskManifestPath {latest.task_manifest_path!r} is not {expected!r}")
    elif not unit.rel_exists(latest.task_manifest_path):
        unit.report(
            LATEST_TASK_DANGLING,
            path,
            f"taskManifestPath {latest.task_manifest_path!r} {unit.absent(latest.task_manifest_path)}",
        )
