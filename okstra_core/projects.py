"""The projects a person works on: the registry behind ``--all`` and the workbench's home.

Three sources name projects, read in this order:

* **managers**: every ``projects.json`` of every manager under the manager home
  (``<okstra home>/managers/*/projects.json``), each registration's
  ``projectId`` and ``projectRoot``;
* **remembered**: the roots opened in the workbench before, kept in the user's
  state folder (:func:`remembered_path`, never in a store nor in the manager
  home) by :func:`remember_root`;
* **named**: roots given on the command line.

Everything read is untrusted. Each root becomes one :class:`ProjectEntry` with
a stable id (the manager's ``projectId`` when a manager registers it, else the
folder's name and a short digest of its real path), its real root, every
source that named it, and a :data:`Health`:

``ok``
    a folder holding a ``.okstra/`` folder; read.
``nested``
    like ``ok``, but inside another project's root (a service folder of a
    monorepo); read, since its store is its own, and said once.
``missing``
    nothing there (or a symlink to nothing).
``unreadable``
    something that cannot be used as a project root: a file or FIFO instead of
    a folder, a relative ``projectRoot``, a folder that cannot be looked at.
``no-store``
    a folder without ``.okstra/``.
``duplicate``
    a project id already taken by another root: not read, so that ``--project
    ID`` always means one project.

A root reached through a symlink is followed once and resolved: the entry's
root is the real folder, and ``symlink`` names what was given. Every read of a
project then stays inside that real root. Two sources that name the same real
folder make one entry naming both. The registry's reads are bounded: a
``projects.json`` larger than :data:`REGISTRY_MAX_BYTES`, more than
:data:`MAX_MANAGERS` managers or more than :data:`MAX_PROJECTS` projects are
cut short with one note saying so. Looking writes nothing anywhere.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from . import layout, reading, times
from .errors import LoadError, OkstraError
from .manager_home import list_managers
from .models import manager as mmodels

Health = Literal["ok", "nested", "missing", "unreadable", "no-store", "duplicate"]
#: The healths whose projects are read.
READABLE: Final[frozenset[str]] = frozenset({"ok", "nested"})
SourceKind = Literal["manager", "remembered", "named"]

#: A ``projects.json`` (or the remembered-roots file) larger than this is not read.
REGISTRY_MAX_BYTES: Final = 1024 * 1024
#: At most this many managers are read (sorted by folder name).
MAX_MANAGERS: Final = 256
#: At most this many projects make the registry (in source order).
MAX_PROJECTS: Final = 1000
#: The remembered-roots file keeps the most recently opened this many roots.
MAX_REMEMBERED: Final = 200
REMEMBERED_VERSION: Final = 1
LOCK_TIMEOUT: Final = 10.0


@dataclass(frozen=True, slots=True)
class Source:
    """One place that named a project: a manager (``where`` is its id), the remembered roots or the command line."""

    kind: SourceKind
    where: str
    #: The root as this source gave it.
    given: str

    def describe(self) -> str:
        if self.kind == "manager":
            return f"manager {self.where}"
        return "opened in the workbench" if self.kind == "remembered" else "named on the command line"

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "where": self.where, "given": self.given}


@dataclass(slots=True)
class ProjectEntry:
    """One project of the registry."""

    project_id: str
    #: The real folder (symlinks resolved); the root as given when it cannot be resolved.
    root: Path
    sources: list[Source]
    health: Health
    #: Why the health is not ``ok``, one line without the root (see :meth:`line`).
    reason: str | None = None
    #: The path given when it was a symlink to :attr:`root`.
    symlink: str | None = None
    #: Other project ids that managers register this root under.
    aliases: list[str] = field(default_factory=list)

    @property
    def readable(self) -> bool:
        return self.health in READABLE

    def line(self) -> str:
        """One line about the entry when it has something to say (its health, a symlink); else None-ish ``""``."""
        parts = []
        if self.reason is not None:
            parts.append(self.reason)
        if self.symlink is not None:
            parts.append(f"given as {self.symlink}, a symlink; read at its target")
        if self.aliases:
            parts.append("also registered as " + ", ".join(repr(a) for a in self.aliases))
        if not parts:
            return ""
        return f"project {self.project_id!r} ({self.root}): " + "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "project": self.project_id,
            "projectRoot": str(self.root),
            "health": self.health,
            "reason": self.reason,
            "symlink": self.symlink,
            "aliases": list(self.aliases),
            "sources": [s.to_json() for s in self.sources],
        }


@dataclass(slots=True)
class Registry:
    """Every project the person works on, and one note per thing that could not be taken in."""

    entries: list[ProjectEntry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Projects past :data:`MAX_PROJECTS`, not taken in.
    left_out: int = 0

    def find(self, project_id: str) -> ProjectEntry | None:
        """The entry of *project_id* (or one of its aliases)."""
        for entry in self.entries:
            if entry.project_id == project_id or project_id in entry.aliases:
                return entry
        return None

    def select(self, project_ids: Sequence[str]) -> tuple[list[ProjectEntry], list[str]]:
        """The entries named by *project_ids* (all when empty), in registry order, and the ids no entry has."""
        if not project_ids:
            return list(self.entries), []
        wanted = {id(e) for pid in project_ids if (e := self.find(pid)) is not None}
        unknown = [pid for pid in project_ids if self.find(pid) is None]
        return [e for e in self.entries if id(e) in wanted], unknown

    def problems(self) -> list[str]:
        """One line per note and per entry with something to say, in order."""
        return [*self.notes, *(line for e in self.entries if (line := e.line()))]


# ------------------------------------------------------------------ sources


def manager_roots(home: Path, notes: list[str]) -> list[tuple[Source, str]]:
    """``(source, projectId)`` of every registration of every manager under *home*, bounded."""
    managers = sorted(list_managers(home), key=lambda m: m.folder.name)
    if len(managers) > MAX_MANAGERS:
        notes.append(f"{layout.managers_dir(home)}: {len(managers)} managers; only the first {MAX_MANAGERS} are read")
        managers = managers[:MAX_MANAGERS]
    out: list[tuple[Source, str]] = []
    for manager in managers:
        path = manager.folder / layout.MANAGER_PROJECTS
        for project, problem in _registrations(path, home):
            if problem is not None:
                notes.append(problem)
            if project is not None:
                out.append((Source("manager", manager.manager_id, project.project_root), project.project_id))
    return out


def _registrations(path: Path, home: Path) -> Iterable[tuple[mmodels.RegisteredProject | None, str | None]]:
    """Each registration of the ``projects.json`` at *path*; a bad one gives a one-line problem instead."""
    if not reading.lexists(path):
        return
    value = _bounded_json(path, home)
    if isinstance(value, LoadError):
        yield None, str(value)
        return
    projects = value.get("projects") if isinstance(value, dict) else None
    if not isinstance(projects, list):
        yield None, f"{path}: has no list of projects"
        return
    if len(projects) > MAX_PROJECTS:
        yield None, f"{path}: {len(projects)} projects; only the first {MAX_PROJECTS} are read"
    for number, raw in enumerate(projects[:MAX_PROJECTS], 1):
        entry = reading.validate(path, raw, mmodels.RegisteredProject)
        if isinstance(entry, LoadError):
            yield None, f"{path}: project {number} is left out: {entry.reason}"
        else:
            yield entry, None


def _bounded_json(path: Path, root: Path | None) -> Any:
    data = reading.read_bytes(path, root=root, max_bytes=REGISTRY_MAX_BYTES)
    if isinstance(data, LoadError):
        return data
    text = reading.text_of_bytes(path, data, max_bytes=REGISTRY_MAX_BYTES)
    return text if isinstance(text, LoadError) else reading.parse_json(path, text)


def remembered_path() -> Path:
    """The file of roots opened in the workbench (in the user's state folder)."""
    return layout.okstra_state_dir() / layout.WORKBENCH_PROJECTS


def remembered_roots(notes: list[str] | None = None) -> list[tuple[str, str]]:
    """``(root, when)`` of each root opened in the workbench, most recent first; an unusable file adds a note."""
    path = remembered_path()
    opened = reading.open_own_file(path)  # never follows a symlink, never waits on a FIFO
    if opened is None:
        return []
    if isinstance(opened, LoadError):
        _note(notes, f"{opened}; no remembered project is read")
        return []
    fd, st = opened
    if st.st_size > REGISTRY_MAX_BYTES:
        os.close(fd)
        _note(notes, f"{path}: larger than {REGISTRY_MAX_BYTES:,} bytes; no remembered project is read")
        return []
    try:
        with open(fd, "rb") as fh:
            data = fh.read(REGISTRY_MAX_BYTES + 1)
    except OSError as exc:
        _note(notes, f"{path}: cannot be read ({exc.strerror or exc}); no remembered project is read")
        return []
    roots = _parse_remembered(data)
    if roots is None:
        _note(notes, f"{path}: not a version {REMEMBERED_VERSION} list of projects; it will be replaced")
        return []
    return roots


def _note(notes: list[str] | None, text: str) -> None:
    if notes is not None:
        notes.append(text)


def _parse_remembered(data: bytes) -> list[tuple[str, str]] | None:
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("version") != REMEMBERED_VERSION or not isinstance(doc.get("roots"), list):
        return None
    out = []
    for item in doc["roots"][:MAX_REMEMBERED]:
        if isinstance(item, dict) and isinstance(item.get("root"), str) and isinstance(item.get("at"), str):
            out.append((item["root"], item["at"]))
    return out


def remember_root(root: Path, *, now: dt.datetime | None = None) -> None:
    """Remember that *root* was opened in the workbench (its real path, most recent first).

    Under a lock, merged into the file as it is, so two workbenches never lose
    each other's roots; the file keeps the :data:`MAX_REMEMBERED` most recent.
    An unusable file is replaced. Raises :class:`~okstra_core.errors.OkstraError`
    when it cannot be written (a folder or FIFO in its place, a full disk).
    """
    import filelock

    from . import writes_outside

    path = remembered_path()
    real = os.path.realpath(root)
    at = times.iso(now or dt.datetime.now(dt.UTC))
    try:
        os.makedirs(path.parent, exist_ok=True)
        with filelock.FileLock(str(path) + layout.LOCK_SUFFIX, timeout=LOCK_TIMEOUT):
            roots = [(r, when) for r, when in remembered_roots() if r != real]
            roots = [(real, at), *roots][:MAX_REMEMBERED]
            doc = {"version": REMEMBERED_VERSION, "roots": [{"root": r, "at": when} for r, when in roots]}
            data = (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode("utf-8", "surrogateescape")
            writes_outside.replace_file(path, data, max_bytes=REGISTRY_MAX_BYTES)
    except filelock.Timeout:
        raise OkstraError(path, f"is locked by another workbench for over {LOCK_TIMEOUT:.0f} s") from None
    except OSError as exc:
        raise OkstraError(path, f"cannot be written ({exc.strerror or exc})") from None


# ------------------------------------------------------------------ health


@dataclass(frozen=True, slots=True)
class _Look:
    """What is at a given root: its real path, its health and why, the symlink given."""

    key: str
    health: Health
    reason: str | None
    symlink: str | None


def look_at(given: str) -> _Look:
    """The health of the root *given* (absolute), without reading anything inside its store."""
    if not os.path.isabs(given):
        return _Look(given, "unreadable", "the root is not an absolute path", None)
    plain = os.path.normpath(given)
    try:
        st = os.lstat(plain)
    except FileNotFoundError:
        return _Look(plain, "missing", "the root does not exist", None)
    except OSError as exc:
        return _Look(plain, "unreadable", f"the root cannot be looked at ({_why(exc)})", None)
    real = os.path.realpath(plain)
    symlink = plain if real != plain else None
    if stat.S_ISLNK(st.st_mode) or symlink is not None:
        try:
            st = os.stat(real)
        except FileNotFoundError:
            return _Look(real, "missing", f"the root is a symlink to {real}, which does not exist", plain)
        except OSError as exc:
            return _Look(real, "unreadable", f"the root cannot be looked at ({_why(exc)})", plain)
    if not stat.S_ISDIR(st.st_mode):
        return _Look(real, "unreadable", f"the root is {reading.describe_mode(st.st_mode)}, not a folder", symlink)
    store = Path(real) / layout.OKSTRA_DIR
    try:
        store_st = os.lstat(store)
    except FileNotFoundError:
        return _Look(real, "no-store", f"no {layout.OKSTRA_DIR}/ store in this folder", symlink)
    except OSError as exc:
        return _Look(real, "unreadable", f"the root cannot be listed ({_why(exc)})", symlink)
    if not stat.S_ISDIR(store_st.st_mode):
        what = reading.describe_mode(store_st.st_mode)
        return _Look(real, "unreadable", f"its {layout.OKSTRA_DIR} is {what}, not a folder", symlink)
    listed = reading.list_folder(store)
    if isinstance(listed, LoadError):
        return _Look(real, "unreadable", f"its store {listed.reason}", symlink)
    return _Look(real, "ok", None, symlink)


def _why(exc: OSError) -> str:
    return exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))


def derived_id(root: str) -> str:
    """The id of a project no manager names: its folder's name and a short digest of its real path."""
    return f"{layout.slug(os.path.basename(root) or 'root')}-{layout.project_digest(Path(root))[:8]}"


# ------------------------------------------------------------------ the registry


def discover(
    home: Path | None = None,
    *,
    named: Sequence[Path | str] = (),
    remembered: bool = True,
) -> Registry:
    """The registry: every project of every manager under *home* (default :func:`okstra_home`), the roots
    opened in the workbench (unless *remembered* is False) and the roots *named* (relative ones are taken
    from the working folder). Never raises for anything it reads; reads nothing inside a store but the
    listing of ``.okstra/``."""
    registry = Registry()
    found: list[tuple[Source, str | None]] = list(manager_roots(layout.okstra_home(home), registry.notes))
    if remembered:
        found += [(Source("remembered", str(remembered_path()), r), None) for r, _ in remembered_roots(registry.notes)]
    found += [(Source("named", "command line", os.path.abspath(p)), None) for p in named]
    by_key: dict[str, ProjectEntry] = {}
    by_id: dict[str, ProjectEntry] = {}
    for source, project_id in found:
        _add(registry, (by_key, by_id), source, project_id)
    if registry.left_out:
        registry.notes.append(
            f"{MAX_PROJECTS + registry.left_out} projects; only the first {MAX_PROJECTS} are read "
            f"({registry.left_out} left out)"
        )
    _mark_nested(registry.entries)
    return registry


def _add(
    registry: Registry,
    index: tuple[dict[str, ProjectEntry], dict[str, ProjectEntry]],
    source: Source,
    project_id: str | None,
) -> None:
    """Take in one source's root: merged into the entry of the same real root, else a new entry (*index*:
    the entries by real root and by every id and alias they answer to)."""
    by_key, by_id = index
    look = look_at(source.given)
    entry = by_key.get(look.key)
    if entry is not None:
        entry.sources.append(source)
        if project_id is not None and project_id != entry.project_id:
            if entry.sources[0].kind == "manager" or project_id in by_id:
                if project_id not in entry.aliases:
                    entry.aliases.append(project_id)
            else:  # first named only by the person: the manager's id is the one to use
                entry.project_id = project_id
            by_id.setdefault(project_id, entry)
        if entry.symlink is None:
            entry.symlink = look.symlink
        return
    if len(registry.entries) >= MAX_PROJECTS:
        registry.left_out += 1
        return
    pid = project_id if project_id is not None else derived_id(look.key)
    entry = ProjectEntry(pid, Path(look.key), [source], look.health, look.reason, look.symlink)
    taken = by_id.get(pid)
    if taken is not None:
        entry.project_id = f"{pid}-{layout.project_digest(Path(look.key))[:8]}"
        entry.health = "duplicate"
        entry.reason = f"project id {pid!r} is already used by {taken.root}; this registration is not read"
    registry.entries.append(entry)
    by_key[look.key] = entry
    by_id.setdefault(entry.project_id, entry)


def _mark_nested(entries: list[ProjectEntry]) -> None:
    """Mark each readable project that lies inside another readable project's root (its folders above are
    looked up, so a thousand projects cost a thousand short walks, not a million comparisons)."""
    readable = {e.root: e for e in entries if e.readable}
    for entry in list(readable.values()):
        outer = next((readable[p] for p in entry.root.parents if p in readable), None)
        if outer is not None:
            entry.health = "nested"
            entry.reason = f"inside project {outer.project_id!r} ({outer.root}); its own store is read"
