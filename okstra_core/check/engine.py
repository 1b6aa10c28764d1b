"""The check run: the project-wide rules in one :class:`~okstra_core.check.unit.Unit`, then each task.

Tasks are checked in units of their own, in worker processes when ``jobs`` > 1.
"""

from __future__ import annotations

import multiprocessing
import os
import stat
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from .. import layout, reading
from ..errors import OkstraError
from ..progress import Progress
from ..store_index import ChangedSince, LookedOnce
from ..workers import worker_pool
from . import cache
from .cache import CheckCache, KeptProject, KeptRecords, KeptRow, Record
from .catalog import expand
from .findings import CheckReport, Finding
from .rules import project_rules, task_rules
from .rules.project_rules import NO_ENTRY_DIGEST, CatalogEntryKey, KeptTasks
from .unit import Unit

_T = TypeVar("_T")


class CheckError(OkstraError):
    """The check could not run at all (no project, unreadable root)."""


# ------------------------------------------------------------------ the run


#: A task folder to check (project-relative) and what the checker keeps of its catalog entry (None: not listed).
CheckedTask = tuple[str, CatalogEntryKey | None]
#: One task checked: (folder, findings, files read, record to cache or None).
TaskResult = tuple[str, list[Finding], int, dict[str, Any] | None]


def _entry_key(entry: CatalogEntryKey | None) -> str:
    """What the task's rules take from its catalog entry, as a key."""
    return entry.digest if entry is not None else NO_ENTRY_DIGEST


def _reusable(root: str, rel: str, entry: CatalogEntryKey | None, old: dict[str, Any] | None) -> bool:
    """Whether a task's cached record still holds: the same catalog entry, tree and outside reads."""
    return (
        old is not None
        and old["entry"] == _entry_key(entry)
        and cache.tree_holds(os.path.join(root, rel), old["shape"], old["key"], old.get("split"))
        and cache.deps_hold(old["deps"])
    )


def _quiet(root: str, rel: str, entry: CatalogEntryKey | None, old: dict[str, Any] | None, look: ChangedSince) -> bool:
    """Whether a task's cached record holds without a look: the same catalog entry, no symlink in its tree, and
    the freshness source vouches that nothing changed in its tree nor at its outside reads.

    Watchman names the paths that changed, not the symlinks leading to them: a task whose tree holds a symlink
    (to a file or a folder elsewhere) is always confirmed by a look, which follows it."""
    return (
        old is not None
        and old["entry"] == _entry_key(entry)
        and not _links_in(old)
        and look.quiet(os.path.join(root, rel))
        and all(look.quiet(path) for path, _ in old["deps"])
    )


def _links_in(record: dict[str, Any]) -> bool:
    """Whether a cached record's task tree held a symlink."""
    split = record.get("split") or cache.split_shape(record["shape"])
    return bool(split[1])


def _task_chunk(
    root: str,
    home: str | None,
    tasks: list[CheckedTask],
    caching: bool = False,
    racy_after: int = 0,
    run: int | None = None,
) -> list[TaskResult]:
    """Worker entry point: check some tasks, return each one's findings and file count.

    With *caching*, each task also comes back with a record for the cache,
    unless one of its inputs changed after *racy_after* (nanoseconds since the
    epoch).
    """
    out: list[TaskResult] = []
    root_path = Path(root)
    home_path = Path(home) if home else None
    real, reals, looked = _shared_looks(root, home, run)
    for rel, entry in tasks:
        task_root = root_path / rel
        plain = False
        if caching:
            key, shape, newest, covered, plain = cache.tree_key(str(task_root))
        # The project unit listed every folder from the root down to the task as a usable
        # directory; the task's unit trusts that instead of listing (and re-reporting) them again.
        parts = rel.split("/")
        known = [os.path.join(root, *parts[: i + 1]) for i in range(len(parts))]
        unit = Unit(root_path, home_path, known, real, reals)
        if plain:
            unit.plain_folder(str(task_root))  # the tree key's walk just looked at it
        task_rules.check_task(unit, task_root, entry)
        record: dict[str, Any] | None = None
        if caching:
            deps, newest_dep = cache.deps_of(unit.touched(), covered, looked)
            if max(newest, newest_dep) < racy_after:
                record = {
                    "key": key,
                    "shape": shape,
                    "entry": _entry_key(entry),
                    "deps": deps,
                    "findings": cache.encode_findings(unit.findings),
                    "files": len(unit.files),
                }
        out.append((rel, unit.findings, len(unit.files), record))
    return out


#: What the tasks of one check share above them, in the process checking them: the real paths of the project
#: root and home, of the folders their walks started from and those above, and the metadata of project files
#: their rules touched, by the check (root, home and start) they belong to. Kept for that check's chunks only.
_SHARED: dict[tuple[str, str | None, int | None], tuple[tuple[str, str | None], dict[str, str], LookedOnce[Any]]] = {}


def _shared_looks(
    root: str, home: str | None, run: int | None
) -> tuple[tuple[str, str | None], dict[str, str], LookedOnce[Any]]:
    """What the chunks of the check *run* (its start; None: this chunk alone) share in this process: each is
    looked at once per process and check, not once per chunk of tasks."""
    key = (root, home, run)
    shared = None if run is None else _SHARED.get(key)
    if shared is None:
        real = Unit.resolve(Path(root), Path(home) if home else None)
        shared = (real, {}, LookedOnce(cache.stat_text))
        if run is not None:
            _SHARED.clear()
            _SHARED[key] = shared
    return shared


def _share_above_tasks(unit: Unit, root: str, home: str | None, run: int) -> None:
    """Before the workers fork: what the tasks of the check *run* share above them (:func:`_shared_looks`), with
    the real paths of the store's tasks folder and its groups as the project's own listing (*unit*) saw them, so
    that no worker looks at them again."""
    real, reals, _ = _shared_looks(root, home, run)
    store = os.path.join(root, layout.OKSTRA_DIR)
    tasks = os.path.join(store, layout.TASKS_DIR)
    plain = [e.text for e in unit.listed(store) or () if e.text == tasks and e.kind == "dir" and not e.link]
    if plain:
        plain += [e.text for e in unit.listed(tasks) or () if e.kind == "dir" and not e.link]
    Unit(Path(root), Path(home) if home else None, (), real, reals).real_folders_known(plain)


class _Records(dict[str, Record | KeptRow]):
    """A check's records by task, the tasks of one layout sharing one list of its shape: a cold check of a large
    store holds every task's record until it saves them (and the save digests each shape object once)."""

    def __init__(self) -> None:
        super().__init__()
        self._shapes: dict[tuple[str, ...], list[str]] = {}

    def keep(self, task: str, record: dict[str, Any]) -> None:
        record["shape"] = self._shapes.setdefault(tuple(record["shape"]), record["shape"])
        self[task] = record


def _chunks(items: Sequence[Any], size: int) -> list[list[Any]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


#: Tasks per unit of work handed to a worker: small enough that the workers finish
#: together (tasks differ a lot in size), large enough that handing out is cheap.
CHUNK_TASKS = 32


#: Below this many tasks, worker processes cost more than they save.
PARALLEL_MIN_TASKS = 64


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform tells it, else all the machine's)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # no affinity on this platform
        return os.cpu_count() or 1


def worker_count(jobs: int, tasks: int) -> int:
    """The worker processes a check of *tasks* tasks starts for *jobs* (``0`` or less: all cores).

    Never more than the cores (more only compete for them) nor than the units of work
    (:data:`CHUNK_TASKS` tasks each): ``jobs = 120`` on 70 tasks starts 3 workers on a machine of 4 cores or more.
    """
    wanted = jobs if jobs > 0 else cores()
    return max(1, min(wanted, cores(), -(-tasks // CHUNK_TASKS)))


def _rule_sets(select: list[str] | None, ignore: list[str] | None) -> tuple[set[str] | None, set[str]]:
    """The rule ids *select* and *ignore* name (``None``: every rule), or a refusal naming the unknown one."""
    try:
        return (expand(select) if select else None), (expand(ignore) if ignore else set())
    except ValueError as exc:
        raise CheckError(None, str(exc)) from None


def _checked_root(project_root: Path) -> Path:
    """The absolute project root, once it is a readable folder holding a ``.okstra/`` store of its own (a
    symlink to a folder inside the project too)."""
    root = Path(os.path.abspath(project_root))
    if not root.is_dir():
        raise CheckError(root, "project root is not a directory")
    if not os.access(root, os.R_OK | os.X_OK):
        raise CheckError(root, "project root is not readable")
    store = layout.okstra_dir(root)
    look = layout.store_look(root)  # one look: a plain folder, the usual case, needs no other
    mode = look.st_mode if look is not None else 0
    if stat.S_ISLNK(mode):
        # A symlinked store is followed only while it stays inside the project.
        inside = Path(os.path.realpath(store)).is_relative_to(os.path.realpath(root))
        mode = stat.S_IFDIR if inside and store.is_dir() else 0
    if not stat.S_ISDIR(mode):
        raise CheckError(root, "no .okstra/ store in this folder")
    return root


def _kept(findings: list[Finding], selected: set[str] | None, ignored: set[str]) -> list[Finding]:
    """The selected, not ignored findings, sorted, each exact finding once."""
    if selected is not None:
        findings = [f for f in findings if f.rule in selected]
    findings = sorted((f for f in findings if f.rule not in ignored), key=Finding.sort_key)
    # Each exact finding once, also across units (a folder outside a task may be listed by more than one).
    return list(dict.fromkeys(findings))


@contextmanager
def _pool(jobs: int) -> Iterator[ProcessPoolExecutor | None]:
    """Worker processes for one check (forked where the platform can, so they inherit what is loaded), each
    ending with this process (:func:`~okstra_core.workers.worker_pool`)."""
    if jobs <= 1:
        yield None
        return
    with worker_pool(jobs) as pool:
        yield pool


def _run_chunks(
    tasks: Tasks,
    arguments: Callable[[list[CheckedTask]], tuple[Any, ...]],
    collect: Callable[[list[TaskResult]], None],
    pool: ProcessPoolExecutor | None,
) -> None:
    """Check *tasks* a chunk at a time, in *pool*'s worker processes when there is one, handing each result to
    *collect*. *tasks* is emptied: checked here, each chunk (and its tasks' catalog entries) is let go once checked,
    so that a large store's entries are not all held until the check ends."""
    chunks = _chunks(tasks, CHUNK_TASKS)
    tasks.clear()
    if pool is None:
        chunks.reverse()
        while chunks:
            collect(_task_chunk(*arguments(chunks.pop())))
        return
    futures = [pool.submit(_task_chunk, *arguments(chunk)) for chunk in chunks]
    # Collected as they finish (for progress); the findings are sorted afterwards, so order does not matter.
    for fut in as_completed(futures):
        collect(fut.result())


#: The task folders to check, with their catalog entries: listed by the project's rules, or from its kept record.
Tasks = list[CheckedTask] | KeptTasks

#: What the reuse check's workers read, set before they are forked: (root, cached records, tasks, the places of
#: those to look at).
_REUSE: tuple[str, KeptRecords, Tasks, list[int]] | None = None


def _reusable_at(root: str, tasks: Tasks, index: int, previous: KeptRecords) -> bool:
    rel, entry = tasks[index]
    return _reusable(root, rel, entry, previous.get(rel))


def _reusable_range(start: int, stop: int) -> list[bool]:
    """Worker entry point: whether each task at ``which[start:stop]`` may reuse its cached record."""
    assert _REUSE is not None
    root, previous, tasks, which = _REUSE
    return [_reusable_at(root, tasks, index, previous) for index in which[start:stop]]


def _reusable_all(
    root: str, tasks: Tasks, which: list[int], previous: KeptRecords, pool: ProcessPoolExecutor | None
) -> list[bool]:
    """Whether each task at the places *which* may reuse its cached record; the ``lstat`` calls are shared out
    between *pool*'s workers.

    Workers forked from this process see *previous* and *tasks* without them being sent; on a platform without
    ``fork``, or without a pool, the check runs here.
    """
    global _REUSE
    if pool is None or "fork" not in multiprocessing.get_all_start_methods():
        return [_reusable_at(root, tasks, index, previous) for index in which]
    _REUSE = (root, previous, tasks, which)
    try:
        size = max(1, -(-len(which) // (4 * (os.cpu_count() or 1))))
        ranges = [(i, min(i + size, len(which))) for i in range(0, len(which), size)]
        return [ok for part in pool.map(_reusable_range, *zip(*ranges, strict=True)) for ok in part]
    finally:
        _REUSE = None


def _reuse_cached(
    root: Path,
    tasks: Tasks,
    previous: KeptRecords,
    check_cache: CheckCache,
    findings: list[Finding],
    records: dict[str, Record | KeptRow],
    step: Callable[[int], None],
    pool: ProcessPoolExecutor | None,
    look: ChangedSince | None = None,
) -> tuple[list[CheckedTask], int, int]:
    """Take the cached findings of every unchanged task; return the tasks still to check, the files reused and
    how many tasks the freshness source did not vouch for.

    A task the freshness source *look* vouches for is reused without a look; the others are confirmed by
    ``lstat`` calls only, shared out between the workers when there are any.
    """
    pending = []
    reused = files = 0
    quiet = [look is not None and _quiet(str(root), rel, entry, previous.get(rel), look) for rel, entry in tasks]
    which = [index for index, q in enumerate(quiet) if not q]  # places, not tasks: kept tasks are made when read
    looked = iter(_reusable_all(str(root), tasks, which, previous, pool))
    del which
    for (rel, entry), ok in zip(tasks, (q or next(looked) for q in quiet), strict=True):
        old = previous.get(rel)
        if old is None or not ok:
            pending.append((rel, entry))
            continue
        findings.extend(cache.decode_findings(old["findings"]))
        files += old["files"]
        records[rel] = previous.kept_row(rel)  # what saving it again reads, held already: nothing is made per task
        check_cache.hits += 1
        reused += 1
        if reused % CHUNK_TASKS == 0:
            step(CHUNK_TASKS)
    step(reused % CHUNK_TASKS)
    return pending, files, len(quiet) - sum(quiet)


def _ask_first(
    root: Path, home_text: str | None, check_cache: CheckCache | None, watchman: bool
) -> ChangedSince | None:
    """With *watchman* and a cache, what changed since the clock the cached records are kept as of (their clock
    alone is read here). Asked before anything is read: a change made while the check reads is named by the next
    answer."""
    if check_cache is None or not watchman:
        return None
    check_cache.clock = check_cache.kept_clock(str(root), home_text)
    return _ask_watchman(root, check_cache)


def _load(
    root: Path, home_text: str | None, check_cache: CheckCache | None, look: ChangedSince | None
) -> tuple[KeptRecords | None, ChangedSince | None]:
    """The cached records (None without a cache), read once the project's own rules have let go of what they read
    (the two are never held together), and *look* when it was asked since the clock they hold as of (another
    run may have kept its records since it was asked: then every task is confirmed by a look)."""
    if check_cache is None:
        return None, None
    asked = check_cache.clock
    previous = check_cache.load(str(root), home_text)
    return previous, look if look is not None and check_cache.clock == asked else None


#: A run whose freshness source did not vouch for more than this share of the tasks (nor for more than
#: :data:`UPDATE_MOST_CHANGED` paths) signs its records afresh under the clock it asked with; below it, the
#: records stay under the clock they were kept with, and only those that differ are written.
UPDATE_MOST_SHARE = 1 / 64
#: See :data:`UPDATE_MOST_SHARE`: every path changed since the kept clock is named again by each later query.
UPDATE_MOST_CHANGED = 4096


def _save(
    root: Path,
    home_text: str | None,
    check_cache: CheckCache,
    previous: KeptRecords | None,
    records: dict[str, Record | KeptRow],
    look: ChangedSince | None,
    unvouched: int,
) -> None:
    """Keep this run's records (when they differ from those loaded) with the watchman clock they hold as of.

    While watchman vouches for nearly every task since the kept clock, the records stay under that clock and
    only the rows that differ are written (a save of 10,000 signed rows costs more than the rest of a cached
    run); past :data:`UPDATE_MOST_SHARE`, they are all signed afresh under the clock asked with now, so that
    the tasks confirmed by a look do not pile up.
    """
    clock = check_cache.watchman_token
    changed = look.changed if look is not None else None
    if (
        previous
        and clock is not None
        and changed is not None
        and not check_cache.rejected  # a row that failed its MAC goes only with a whole save
        and len(changed) <= UPDATE_MOST_CHANGED
        and unvouched <= max(1, len(records) * UPDATE_MOST_SHARE)
        and check_cache.update(str(root), home_text, records, previous)
    ):
        return
    if check_cache.misses or records.keys() != (previous or {}).keys() or clock != check_cache.clock:
        check_cache.save(str(root), home_text, records, clock)


def _ask_watchman(root: Path, check_cache: CheckCache) -> ChangedSince | None:
    """What watchman says changed under ``.okstra/`` since the clock kept with the cache (None: it cannot be
    asked); the clock it gives now goes in :attr:`CheckCache.watchman_token`, why it could not be asked in
    :attr:`CheckCache.watchman_problem`."""
    from .. import watchman

    since = watchman.changed_since(root, check_cache.clock)
    check_cache.watchman_token, check_cache.watchman_problem = since.token, since.problem
    if since.token is None:
        return None
    return ChangedSince(since.changed, within=os.fspath(layout.okstra_dir(root)))


def _project_part(
    unit: Unit, home: Path, check_cache: CheckCache | None, started: int, only_tasks: Collection[str] | None
) -> tuple[list[Finding], int, Tasks]:
    """The project part's findings, files read and task folders (with their catalog entries; those inside
    *only_tasks* when given): as kept, while every path its rules rested on is as it was then; else from its
    rules, whose record is then kept (unless one of those paths changed after :func:`cache.racy_after` the check's
    start, *started*, nanoseconds since the epoch). A narrowed run has no *check_cache*: it neither reads
    nor keeps one. What the unit read is let go before the tasks are checked, and before the record is made."""
    root, home_text = str(unit.root), str(unit.home) if unit.home else None
    kept = None
    if check_cache is not None:
        check_cache.project_reused = False
        kept = check_cache.load_project(root, home_text)
    held = project_rules.kept_tasks(kept.tasks) if kept is not None and cache.deps_hold(kept.deps) else None
    if kept is not None and held is not None and check_cache is not None:
        check_cache.project_reused = True
        unit.release()  # nothing was read: released all the same, as the parts after expect
        return cache.decode_findings(kept.findings), kept.files, held
    del kept
    # What the rules read through the shared readers (another project's files, a path looked at) is recorded
    # beside what the unit listed and read itself.
    with reading.recording() as reads:
        tasks = _narrowed(project_rules.check_project(unit, home), only_tasks)
    deps, newest = cache.deps_of([*unit.touched(), *reads.paths], set()) if check_cache is not None else ([], 0)
    _share_above_tasks(unit, root, home_text, started)
    unit.release()  # before the workers fork: the parsed catalog is not read again (100 MB at 100,000 tasks)
    findings, files = list(unit.findings), len(unit.files)
    if check_cache is not None:
        text = None if newest >= cache.racy_after(started) else project_rules.kept_tasks_text(tasks)
        record = None if text is None else KeptProject(deps, cache.encode_findings(findings), files, text)
        check_cache.save_project(root, home_text, record)
    return findings, files, tasks


def _narrowed(items: list[_T], only_tasks: Collection[str] | None) -> list[_T]:
    """The task folders (``(rel, entry)``) or findings inside *only_tasks*; all of them when it is None."""
    if only_tasks is None:
        return items
    inside = tuple(t + "/" for t in only_tasks)

    def rel(item: _T) -> str:
        return item.path if isinstance(item, Finding) else str(item[0])  # type: ignore[index]

    return [i for i in items if rel(i) in only_tasks or rel(i).startswith(inside)]


def run_check(
    project_root: Path,
    *,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    jobs: int = 1,
    home: Path | None = None,
    progress: Progress | None = None,
    check_cache: CheckCache | None = None,
    only_tasks: Collection[str] | None = None,
    watchman: bool = False,
) -> CheckReport:
    """Check the store of *project_root* and return every finding.

    *select* / *ignore* take rule ids or prefixes; *jobs* is the number of worker
    processes for the per-task part (``0`` or less: all cores; bounded by :func:`worker_count`); *home* is the
    manager state root (default :func:`okstra_core.layout.okstra_home`), checked only when it exists; *progress*,
    when given, is called with ``(tasks checked, tasks)`` as the per-task part goes on. With *check_cache*, a task
    whose inputs are unchanged since the cached run reuses its findings (see :mod:`.cache`); the report is the
    same. *only_tasks* (task folders, project-relative) checks those tasks only and keeps only their findings.
    With *watchman*, a task watchman says nothing changed in since the cache was kept is reused without a look.
    Raises :class:`CheckError` when the check cannot run (no project folder, no ``.okstra/``, an unknown rule id).
    """
    from ..render import markdown as _markdown  # noqa: F401 - imported once here, inherited by forked workers

    selected, ignored = _rule_sets(select, ignore)
    root = _checked_root(project_root)
    home_path = Path(os.path.abspath(home if home is not None else layout.okstra_home()))
    if check_cache is not None and (misplaced := layout.misplaced_cache(check_cache.directory, root, home_path)):
        raise CheckError(check_cache.directory, misplaced)
    if only_tasks is not None:
        check_cache = None  # a narrowed run sees some tasks only: it neither reads nor rewrites the cache

    started = time.time_ns()
    unit = Unit(root, home_path if home_path.is_dir() else None)
    home_text = str(unit.home) if unit.home else None
    look = _ask_first(root, home_text, check_cache, watchman)
    racy_after = cache.racy_after(started)
    findings, files, tasks = _project_part(unit, home_path, check_cache, started, only_tasks)
    total = len(tasks)
    records, done = _Records(), 0

    def step(count: int) -> None:
        nonlocal done
        done += count
        if progress is not None:
            progress(done, total)

    def collect(results: list[TaskResult]) -> None:
        nonlocal files
        for rel, found, n, record in results:
            findings.extend(found)
            files += n
            if check_cache is not None:
                check_cache.misses += 1
            if record is not None:
                records.keep(rel, record)
        step(len(results))

    step(0)  # progress starts at 0 of all tasks

    def work(chunk: list[CheckedTask]) -> tuple[Any, ...]:
        return (str(root), home_text, chunk, check_cache is not None, racy_after, started)

    previous, look = _load(root, home_text, check_cache, look)
    with _pool(worker_count(jobs, total) if total >= PARALLEL_MIN_TASKS else 1) as pool:
        pending, unvouched = tasks, total
        if previous is not None and check_cache is not None:
            pending, reused_files, unvouched = _reuse_cached(
                root, tasks, previous, check_cache, findings, records, step, pool, look
            )
            files += reused_files
            tasks.clear()  # the reused tasks' catalog entries are not asked for again
        _run_chunks(pending, work, collect, pool if len(pending) >= PARALLEL_MIN_TASKS else None)
    if check_cache is not None:
        _save(root, home_text, check_cache, previous, records, look, unvouched)
    problems = check_cache.problems() if check_cache is not None else []
    return CheckReport(str(root), _kept(_narrowed(findings, only_tasks), selected, ignored), files, problems)
