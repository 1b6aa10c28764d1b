"""The catalog's rows: the plain listing for the first paint, the validated reading, folders it misses, phases."""

from __future__ import annotations

import gc
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from okstra_core import layout
from okstra_core.collector import paused
from okstra_core.errors import LoadError
from okstra_core.store import CatalogListing, CatalogListingEntry, Project, TaskRef, listed_entries

if TYPE_CHECKING:
    from okstra_core.store_index import StoreIndex
    from okstra_core.workflows.inbox_items import Inbox

_T = TypeVar("_T")

#: A row's task key, read in C over many rows (``map(ROW_KEY, rows)``).
ROW_KEY = operator.attrgetter("entry.task_key")
#: A row's task group, read in C.
ROW_GROUP = operator.attrgetter("entry.task_group")
#: A listing entry's task key, read in C.
ENTRY_KEY = operator.attrgetter("task_key")


def shared_key_prefix(keys: Iterable[str]) -> str:
    """The ``project:`` part every key starts with, or "" (the group and task parts are never shared away).

    Only the smallest and the largest key are looked at: every key sorted between two that start with the
    same ``project:`` starts with it too (the comparisons run in C, over 10,000 catalog keys at first paint).
    """
    listed = keys if isinstance(keys, list) else list(keys)
    if not listed:
        return ""
    low, high = min(listed), max(listed)
    head, sep, rest = low.partition(":")
    prefix = head + sep
    if not sep or not rest or not high.startswith(prefix) or high == prefix:
        return ""
    return prefix


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
        return self.entry.task_type or ""

    @property
    def status(self) -> str:
        return self.entry.current_status or ""

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

    def place(self, root: Path) -> None:
        """Make *root* this row's task folder (one breaking the slug rule that stands for it)."""
        self._root = root

    def folder_names(self) -> tuple[str, str]:
        """The names of this row's group folder and task folder (no path built)."""
        root = self._root
        if root is not None:
            return root.parent.name, root.name
        return layout.task_folder_names(self.group, self.task_id)

    def folder(self) -> Path:
        """:attr:`root`, built afresh when it is not kept yet and not kept then: for the passes over every row
        (100,000 kept paths would be tens of megabytes for the few rows ever opened)."""
        root = self._root
        return root if root is not None else layout.task_root(self.project.root, self.group, self.task_id)

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
    #: Folders under ``.okstra/tasks/`` that could not be listed (the rows may lack the tasks inside them).
    unlisted: list[LoadError] = field(default_factory=list)
    #: Caches the listing these rows came from, for the next start (``None``: cached already, or not cacheable).
    save_listing: Callable[[], None] | None = None


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
    rows = [CatalogRow(project, e, latest=e.task_key == latest_key) for e in listed_entries(catalog)]
    return CatalogData(rows, None, latest_key, latest_error)


class FirstListing:
    """The catalog's plain listing before its rows are built: what the first frame needs.

    The listing comes as columns from the user's cache when the catalog has not changed since it was cached
    (:mod:`okstra_tui.data.listing_cache`). The first frame shows only the rows in view (:meth:`row` builds one);
    :meth:`data` builds every row once that frame is shown: at 100,000 tasks a row per task is tens of
    milliseconds that the first frame does not wait for.
    """

    __slots__ = ("latest", "listing", "project", "save")

    def __init__(
        self, project: Project, listing: CatalogListing, latest: str | None, save: Callable[[], None] | None
    ) -> None:
        self.project = project
        self.listing = listing
        self.latest = latest
        self.save = save

    def __len__(self) -> int:
        return len(self.listing)

    @property
    def keys(self) -> list[str]:
        return self.listing.columns[0]

    @property
    def groups(self) -> list[str]:
        """Each task's group, in catalog order (one string object per distinct group)."""
        return self.listing.columns[1]

    def row(self, index: int) -> CatalogRow:
        """The row of the task at *index*, as :meth:`data` builds it."""
        entry = self.listing.entry(index)
        return CatalogRow(self.project, entry, latest=entry.task_key == self.latest)

    def data(self) -> CatalogData:
        """Every row (from :data:`SETTLE_ROWS` rows on, frozen out of the collector's later passes, as
        :func:`settle_collector` does once the catalog is read and undoes on the next reading)."""
        # A tuple and a row object per task, no cycles among them: each collection their allocation set off
        # would walk every row built so far (about 40 % of listing 100,000 tasks).
        with paused(freeze=len(self.listing) >= SETTLE_ROWS):
            entries = self.listing.entries
            latest = self.latest
            # map feeds the rows from C (no comprehension step per task; each row's __init__ still runs).
            is_latest = map(operator.eq, map(ENTRY_KEY, entries), repeat(latest))
            rows = list(map(CatalogRow, repeat(self.project), entries, is_latest))
        return CatalogData(rows, None, latest, None, save_listing=self.save)


def first_listing(project: Project) -> FirstListing | None:
    """The catalog's plain listing (its cached columns, or a plain JSON parse), for the first paint; None when
    it cannot list.

    The listing skips the models (and importing them), so a 10,000-task
    catalog paints in a fraction of the validated read's time; the caller
    confirms it with :func:`load_catalog` and replaces it when they disagree.
    """
    from okstra_tui.data.listing_cache import read_listing

    with paused():
        listing, save = read_listing(project)
    if isinstance(listing, LoadError):
        return None
    latest = project.latest_task_key_listing()
    if isinstance(latest, LoadError):
        return None
    return FirstListing(project, listing, latest, save)


def list_catalog(project: Project) -> CatalogData | None:
    """Every row of :func:`first_listing`; None when it cannot list."""
    first = first_listing(project)
    return first.data() if first is not None else None


#: From this many rows on, the catalog's objects are kept out of the collector's full passes once read.
SETTLE_ROWS = 20_000


def settle_collector(rows: int) -> bool:
    """After a catalog of *rows* rows is read: collect what is garbage now, then freeze the rest out of the
    collector's later full passes (``gc.freeze()``); True when it did. Below :data:`SETTLE_ROWS` it does
    nothing: a full pass over a smaller catalog costs a few milliseconds.

    At 100,000 rows each full pass walks every row again, up to about 200 ms on the UI thread at a moment no
    one chose. The frozen objects live as long as the rows; one that becomes garbage later (a closed view)
    is collected by the next settling, which unfreezes everything first, so a workbench kept open all day
    does not keep what it closed.
    """
    if rows < SETTLE_ROWS:
        return False
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    return True


def same_catalog(a: CatalogData, b: CatalogData) -> bool:
    """True when two readings of the catalog show the same rows, pointer and errors."""
    if a.error is not None or b.error is not None or a.latest_error is not None or b.latest_error is not None:
        return False
    if a.latest_key != b.latest_key or len(a.rows) != len(b.rows):
        return False
    return all(_shown(x) == _shown(y) for x, y in zip(a.rows, b.rows, strict=False))


def _shown(row: CatalogRow) -> tuple[str, ...]:
    """What a row shows, as :func:`same_catalog` and :func:`fingerprint` compare it."""
    return (row.key, row.group, row.task_id, row.task_type, row.status, row.updated, row.title)


def uncatalogued_rows(
    project: Project, known: list[CatalogRow], placed: list[CatalogRow] | None = None
) -> list[CatalogRow]:
    """Task folders under ``.okstra/tasks/`` that no row of *known* (the catalog's rows) stands for, sorted.

    The folders are the core's (:meth:`okstra_core.store.Project.task_folders`, the listing
    :attr:`~okstra_core.store.Project.task_refs` is built from): a folder that cannot be listed is recorded in
    ``project.unlisted`` (see :func:`unlisted_folders`), never taken for an empty one. Which folder each row
    stands for is the core's rule (:class:`okstra_core.layout.TaskFolders`): a row whose slug folder is missing
    is given the folder breaking the slug rule that stands for it, as every reader of the store does. The
    catalog is not read again: the rows stand for it. The rows given a folder that way are added to *placed*
    (what was read of them before came from their missing slug folder).
    """
    base = layout.tasks_dir(project.root)
    folders = project.task_folder_rule()
    # Compared by folder names, so that no path is built for the 100,000 rows of a large catalog.
    claimed: set[tuple[str, str]] = set()
    for row in known:
        shown = row.folder_names()
        names = folders.of_names(shown)
        if names != shown:
            row.place(base / names[0] / names[1])
            if placed is not None:
                placed.append(row)
        claimed.add(names)
    out: list[CatalogRow] = []
    for group, task in folders.unclaimed(claimed):
        root = base / group / task
        entry = CatalogListingEntry(f"{group}/{task}", group, task, "?", "not in catalog", None, None, None)
        out.append(CatalogRow(project, entry, catalogued=False, root=root))
    return sorted(out, key=lambda row: (row.group, row.task_id))


def unlisted_folders(project: Project) -> list[LoadError]:
    """The folders of *project* that its listings could not list, sorted, each named once (not those below one).

    The same folders as ``okstra inbox`` reports, project-relative; the reason says each is a folder.
    """
    unlisted = project.unlisted
    out = []
    for path in sorted(unlisted):
        if any(parent in unlisted for parent in path.parents):
            continue
        try:
            shown = Path(layout.rel(path, project.root))
        except ValueError:
            shown = path
        out.append(LoadError(shown, unlisted[path].reason))
    return out


def listed_phase_summary(row: CatalogRow) -> PhaseSummary | None:
    """The phase columns from the manifest's plain listing (no models); None when it does not list.

    Fast enough to paint the rows in view right after the first frame; the
    validated :func:`phase_summary` follows and replaces it.
    """
    listed = row.ref.workflow_listing()
    if isinstance(listed, LoadError):
        return None
    return PhaseSummary(
        listed.current_phase or "", listed.current_phase_state or "", listed.next_phase or "", listed.next_status
    )


def phase_summary(row: CatalogRow) -> PhaseSummary:
    """Read one manifest; a broken one becomes a summary carrying its error."""
    manifest = row.ref.open().manifest
    if isinstance(manifest, LoadError):
        return PhaseSummary("", "", "", "", error=manifest.reason)
    wf = manifest.workflow
    if wf is None:
        return PhaseSummary("", "", "", "")
    nxt = wf.next_recommended_phase
    return PhaseSummary(
        wf.current_phase or "",
        wf.current_phase_state or "",
        nxt.phase or "" if nxt is not None else "",
        nxt.status if nxt is not None else "",
    )


#: From this many rows on, the validated catalog is read and the waiting decisions are counted in child
#: processes: each reads every task or entry (seconds on a large store) and would otherwise hold the
#: workbench's interpreter and leave its peak in the workbench's memory. Below it, reading here is quicker
#: than starting a child.
INBOX_CHILD_ROWS = 1_000


def waiting_counts(root: Path, rows: int, changed: frozenset[str] | None = None) -> dict[Path, int] | None:
    """Per task folder, the decisions waiting in it (the core's inbox, through the store index); ``None`` when the
    inbox cannot be read. *changed* names the paths changed since the last count, when they are known: only
    those are looked at."""
    counts = read_waiting(root, changed) if rows < INBOX_CHILD_ROWS else _waiting_from_child(root)
    return None if counts is None else {root / rel: n for rel, n in counts.items()}


#: At most this many paths changed since the store index was last brought up to date for the start's quick count
#: to look at them (more: the count waits for :func:`waiting_counts`).
KEPT_CHANGED_MAX = 256


class KeptWaiting:
    """The decisions waiting per task folder at a start, known before the first frame when the store index keeps
    the inbox and watchman says what changed since (so only those paths are looked at, not every file the inbox
    read). Read in a thread started as the workbench starts; :meth:`wait` gives it, or None when it is not there
    yet or cannot be had, and :meth:`then` hands over one that comes later. Without it the count comes from
    :func:`waiting_counts` as usual.

    *early*: when watchman cannot say (it does not run, is turned off, or too much changed) and the store is large,
    the counting child runs at once (:func:`early_waiting`) instead of once every row is listed, so that its
    answer is in by the first frame or soon after.

    Either answer is a look at the store as it was when read; the full count follows and confirms it (it waits
    for this one, so the two never read at once).
    """

    def __init__(self, root: Path, early: bool = False) -> None:
        import threading

        self.root = root
        self.early = early
        self.counts: dict[Path, int] | None = None
        #: Set once the kept count is read or known not to be had (the early count may still run).
        self._asked = threading.Event()
        #: Set once nothing more is read.
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._then: Callable[[dict[Path, int]], None] | None = None
        threading.Thread(target=self._read, name="okstra-kept-waiting", daemon=True).start()

    def wait(self, timeout: float) -> dict[Path, int] | None:
        """The kept counts, waiting at most *timeout* seconds for them (never for the early count: it comes through
        :meth:`then`)."""
        self._asked.wait(timeout)
        return self.counts

    def then(self, take: Callable[[dict[Path, int]], None]) -> dict[Path, int] | None:
        """Call *take* (from the reading thread) with the counts when they come; the counts, when they came
        already (then *take* is not called)."""
        with self._lock:
            if not self._done.is_set():
                self._then = take
                return None
            return self.counts

    def join(self, timeout: float | None = None) -> bool:
        """Wait until nothing more is read here (the early count ended, or never started), at most *timeout*
        seconds; whether it did."""
        return self._done.wait(timeout)

    def _read(self) -> None:
        counts: dict[Path, int] | None = None
        try:
            counts = kept_waiting(self.root)
            if counts is None and self.early:
                self._asked.set()
                counts = early_waiting(self.root)
        finally:
            with self._lock:
                self.counts = counts
                self._asked.set()
                self._done.set()
                take, self._then = self._then, None
        if take is not None and counts is not None:
            take(counts)


def kept_waiting(root: Path) -> dict[Path, int] | None:
    """Per task folder, the decisions waiting in it as the store index keeps them, when watchman vouches for what
    changed since the index was brought up to date; None otherwise (never raises, keeps nothing)."""
    from okstra_core.watchman import setting

    if setting() == "off":
        return None
    import sqlite3

    from okstra_core.check.cache import open_store_index
    from okstra_core.errors import OkstraError
    from okstra_core.store_index import ChangedSince
    from okstra_core.workflows.inbox import kept_counts

    try:
        index = open_store_index(root, watchman=True)
        if isinstance(index, str):
            return None
        try:
            look = index.look
            changed = look.changed if isinstance(look, ChangedSince) else None
            if changed is None or len(changed) > KEPT_CHANGED_MAX:
                return None
            counts = kept_counts(root, index)
        finally:
            index.close(keep=False)
    except (OkstraError, OSError, sqlite3.Error):
        return None
    return None if counts is None else {root / rel: n for rel, n in counts.items()}


def early_waiting(root: Path) -> dict[Path, int] | None:
    """Per task folder, the decisions waiting in it, counted by the counting child on a store of
    :data:`INBOX_CHILD_ROWS` task folders or more; None on a smaller one (counted in a moment once its rows are
    listed) or when it cannot be counted."""
    try:
        if len(Project(root).task_folders()) < INBOX_CHILD_ROWS:
            return None
    except OSError:
        return None
    counts = _waiting_from_child(root)
    return None if counts is None else {root / rel: n for rel, n in counts.items()}


#: Per project root, the MAC this process's latest count of what waits (here or in its counting child) left the
#: inbox kept with in the store index (None: no index was used): see :func:`counted_kept`.
_COUNTED_KEPT: dict[Path, str | None] = {}


def counted_kept(root: Path) -> str | None:
    """The MAC the latest count of what waits in the project at *root* left the inbox kept with (None: not known).
    A change feed whose first look found the inbox kept with it has told every change since that count."""
    return _COUNTED_KEPT.get(root)


def read_waiting(root: Path, changed: frozenset[str] | None = None) -> dict[str, int] | None:
    """The decisions waiting per task folder (project-relative), read here as :func:`current_inbox` reads; None
    when the inbox cannot be read."""
    _COUNTED_KEPT.pop(root, None)  # a count under way: whatever was kept before it says nothing of it
    counted = _read_waiting_kept(root, changed)
    if counted is None:
        return None
    _COUNTED_KEPT[root] = counted[1]
    return counted[0]


def _read_waiting_kept(root: Path, changed: frozenset[str] | None) -> tuple[dict[str, int], str | None] | None:
    """:func:`read_waiting`'s counts and the MAC they left the inbox kept with; None when it cannot be read."""
    from okstra_core.errors import OkstraError
    from okstra_core.workflows.inbox import waiting_and_kept

    try:
        return through_index(root, changed, waiting_and_kept)
    except (OkstraError, OSError):
        return None


def current_inbox(root: Path, changed: frozenset[str] | None = None) -> Inbox:
    """The inbox of the project at *root* as it is now, through the store index (afresh when there is none).
    *changed* names the paths changed since the index was last brought up to date, when they are known: only those
    are looked at (else watchman is asked, unless turned off). Raises ``OkstraError`` or ``OSError`` when the
    store cannot be read."""
    from okstra_core.workflows.inbox import read_inbox

    return through_index(root, changed, read_inbox)


def through_index(root: Path, changed: frozenset[str] | None, read: Callable[[Project, StoreIndex | None], _T]) -> _T:
    """*read* of the project at *root* through its store index as :func:`current_index` gives it, closed after;
    afresh (no index) when there is none."""
    index = current_index(root, changed)
    if isinstance(index, str):
        return read(Project(root), None)
    with index:
        return read(Project(root), index)


def current_index(root: Path, changed: frozenset[str] | None = None) -> StoreIndex | str:
    """The store index of the project at *root*, brought up to date as the workbench's readers use it: only the
    paths *changed* names are looked at when they are known, else watchman is asked where it runs and the
    setting allows it (as for the okstra commands), else every recorded path is looked at. A string says why
    there is none (then read afresh)."""
    from okstra_core.check.cache import open_store_index
    from okstra_core.store_index import ChangedSince
    from okstra_core.watchman import setting

    if changed is not None:
        return open_store_index(root, look=ChangedSince(set(changed)))
    return open_store_index(root, watchman=setting() != "off")


def _waiting_from_child(root: Path) -> dict[str, int] | None:
    """The decisions waiting per task folder, counted in a child (:func:`print_waiting_counts`)."""
    import json

    from ..children import run_child

    _COUNTED_KEPT.pop(root, None)
    out = run_child("waiting", root)
    if out is None:
        return None
    try:
        value = json.loads(out)
        counts = {str(rel): int(count) for rel, count in value["counts"].items()}
        kept = value["kept"]
    except (ValueError, TypeError, AttributeError, KeyError):
        return None
    _COUNTED_KEPT[root] = kept if isinstance(kept, str) else None
    return counts


def print_waiting_counts(root: str) -> int:
    """The counting child's work: ``{"counts": {"<task folder, project-relative>": decisions waiting}, "kept":
    MAC}`` on stdout (a few bytes a task, where the decisions themselves would be hundreds; *kept*: the MAC the
    inbox is left kept with in the store index, or null); exit 1 when the inbox cannot be read."""
    import json

    counted = _read_waiting_kept(Path(root), None)
    if counted is None:
        return 1
    print(json.dumps({"counts": counted[0], "kept": counted[1]}, ensure_ascii=True))
    return 0


def fingerprint(data: CatalogData) -> str:
    """A digest of what :func:`same_catalog` compares: two readings with the same fingerprint show the same rows."""
    import hashlib
    import json

    digest = hashlib.sha256(json.dumps([data.latest_key]).encode())
    for row in data.rows:
        digest.update(json.dumps(_shown(row), ensure_ascii=True).encode())
    return digest.hexdigest()


def print_fingerprint(root: str) -> int:
    """The confirming child's work: the validated catalog's :func:`fingerprint` on stdout; exit 1 when the
    catalog or the latest-task pointer does not validate (the caller then reads them itself, to show why)."""
    found = through_index(Path(root), None, confirmed_fingerprint)
    if found is None:
        return 1
    print(found)
    return 0


#: The store index's fact of the validated catalog's fingerprint (its form's version in the name).
CONFIRMED_FACT = "catalog-fingerprint/1"


def confirmed_fingerprint(project: Project, index: StoreIndex | None = None) -> str | None:
    """The :func:`fingerprint` of the validated catalog, None when the catalog or the latest-task pointer does not
    validate. Through *index*, kept while the files it was read from (the catalog, the pointer) are as they were:
    a warm start validates no entry. A fingerprint kept by another version of these rows can only differ from
    the one of the listing on screen, and the caller then reads the catalog itself."""

    def validated() -> str | None:
        data = load_catalog(project)
        return None if data.error is not None or data.latest_error is not None else fingerprint(data)

    if index is None:
        return validated()
    return index.fact(CONFIRMED_FACT, validated, lambda v: [v], _kept_fingerprint)


def _kept_fingerprint(value: object) -> str | None:
    if not isinstance(value, list) or len(value) != 1 or not (value[0] is None or isinstance(value[0], str)):
        raise ValueError("not a kept fingerprint")
    return value[0]


def confirm_catalog(project: Project, quick: CatalogData) -> CatalogData | None:
    """``None`` when the validated catalog shows the rows of *quick* (the plain listing on screen), else the
    validated reading that should replace them.

    From :data:`INBOX_CHILD_ROWS` rows on, the validation runs in a child process that prints only the
    :func:`fingerprint` of what it read: the models of every entry (a few kilobytes per task) never enter the
    workbench's memory, nor their building its interpreter. When the child disagrees or fails, the catalog is
    read here, as on a small store.
    """
    if len(quick.rows) >= INBOX_CHILD_ROWS:
        from ..children import run_child

        out = run_child("confirm", project.root)
        if out is not None and out.strip() == fingerprint(quick):
            return None
    data = load_catalog(project)
    return None if same_catalog(quick, data) else data
