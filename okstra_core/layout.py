"""Every path rule of the store, in one place.

Slugs, task keys, the task root, ``run_dir`` resolution, category folders and
per-category sequence allocation, the flat carry and consumers locations,
agent-invocation paths, discovery paths and manager paths. File *names* are
owned by :mod:`okstra_core.names`; this module owns the folders they live in.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from .errors import LayoutError

OKSTRA_DIR: Final = ".okstra"

ANALYSIS: Final = "analysis"
OPTION_SELECTION: Final = "option-selection"
IMPLEMENTATION_PLANNING: Final = "implementation-planning"
IMPLEMENTATION: Final = "implementation"
FINAL_VERIFICATION: Final = "final-verification"

KNOWN_TASK_TYPES: Final = (ANALYSIS, OPTION_SELECTION, IMPLEMENTATION_PLANNING, IMPLEMENTATION, FINAL_VERIFICATION)

#: Folders of a resolved run dir whose files carry a per-category ``<seq>``.
MANIFESTS_DIR: Final = "manifests"
STATE_DIR: Final = "state"
PROMPTS_DIR: Final = "prompts"
REPORTS_DIR: Final = "reports"
STATUS_DIR: Final = "status"
SESSIONS_DIR: Final = "sessions"
LOGS_DIR: Final = "logs"
WORKER_RESULTS_DIR: Final = "worker-results"
USER_RESPONSES_DIR: Final = "user-responses"
SEQ_CATEGORIES: Final = (
    MANIFESTS_DIR,
    STATE_DIR,
    PROMPTS_DIR,
    REPORTS_DIR,
    STATUS_DIR,
    SESSIONS_DIR,
    LOGS_DIR,
    WORKER_RESULTS_DIR,
    USER_RESPONSES_DIR,
)

#: Folders only an implementation-planning run dir has; their ``<seq>`` is the
#: seq of the approved planning report they derive from, not an allocation.
DESIGN_PREP_REQUESTS: Final = "design-prep-requests"
DESIGN_PREP_INPUTS: Final = "design-prep-inputs"
DESIGN_PREP_CATEGORIES: Final = (DESIGN_PREP_REQUESTS, DESIGN_PREP_INPUTS)

RUN_CATEGORIES: Final = SEQ_CATEGORIES + DESIGN_PREP_CATEGORIES

#: Hidden folder inside a category folder that holds one empty claim file per
#: allocated seq; the exclusive create of a claim is what takes a number.
SEQ_CLAIMS_DIR: Final = ".seq"

#: Private prefix of temporary files the write primitives create and rename.
TEMP_PREFIX: Final = ".okstra-tmp-"
LOCK_SUFFIX: Final = ".lock"
#: Private folder beside the resources it protects, holding their lock files (``.locks/<name>.lock``).
#: Lock files are never deleted (one another process waits on must keep its identity).
LOCKS_DIR: Final = ".locks"

#: Folder under a run dir's ``prompts/`` holding one reservation binding per invocation.
RESERVATIONS_DIR: Final = ".reservations"
#: Folder under a run dir's ``state/`` holding byte-for-byte archives of replaced convergence state.
MIGRATIONS_DIR: Final = "migrations"

CARRY_DIR: Final = "carry"
CONSUMERS_FILE: Final = "consumers.jsonl"
#: The catalog inside a duty-contracts folder.
DUTY_CATALOG_FILE: Final = "catalog.json"

#: The project's folders and files under ``.okstra/``.
TASKS_DIR: Final = "tasks"
DISCOVERY_DIR: Final = "discovery"
AGENT_INVOCATIONS_DIR: Final = "agent-invocations"
LATEST_TASK_FILE: Final = "latest-task.json"
TASK_CATALOG_FILE: Final = "task-catalog.json"
PROJECT_FILE: Final = "project.json"

#: A task folder's files and folders.
TASK_MANIFEST_FILE: Final = "task-manifest.json"
TASK_INDEX_FILE: Final = "task-index.md"
INSTRUCTION_SET_DIR: Final = "instruction-set"
TASK_BRIEF_FILE: Final = "task-brief.md"
SELECTED_DIRECTION_FILE: Final = "selected-direction.json"
CLARIFICATION_RESPONSE_FILE: Final = "clarification-response.md"
RUNS_DIR: Final = "runs"
HISTORY_DIR: Final = "history"
TIMELINE_FILE: Final = "timeline.json"
FIX_CYCLES_FILE: Final = "fix-cycles.jsonl"
RECAP_DIR: Final = "recap"
RECAP_LOG_FILE: Final = "recap-log.jsonl"
NOTES_DIR: Final = "notes"
#: Prefix of a stage folder, ``stage-<n>``.
STAGE_DIR_PREFIX: Final = "stage-"

SLUG_MAX: Final = 64

_SLUG_RUN = re.compile(r"[^a-z0-9]+")
_CANONICAL_SLUG = re.compile(r"^(?:[a-z0-9]+(?:-[a-z0-9]+)*|u-[0-9a-f]{12})$")
#: A value :func:`slug` leaves as it is, seen without the steps (every task folder's name, read at each check).
_PLAIN_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


# --------------------------------------------------------------------------- slugs


def is_writer_debris(name: str) -> bool:
    """Temp files, lock files (and their folder) and seq claims: the write primitives' own entries, never artifacts.

    A ``*.lock`` beside an artifact is what older writers left; it is still no artifact.
    """
    return name.startswith(TEMP_PREFIX) or name.endswith(LOCK_SUFFIX) or name in (SEQ_CLAIMS_DIR, LOCKS_DIR)


def temp_file_owner(name: str) -> str | None:
    """The file whose write left the temp file *name* (``.okstra-tmp-<name>.<random>``), or None."""
    if not name.startswith(TEMP_PREFIX):
        return None
    owner, _, _ = name[len(TEMP_PREFIX) :].rpartition(".")
    return owner or None


def lock_path(resource: Path) -> Path:
    """The lock file protecting *resource*: ``<folder>/.locks/<name>.lock``."""
    return resource.parent / LOCKS_DIR / (resource.name + LOCK_SUFFIX)


def is_private_entry(name: str) -> bool:
    """Entries of the store that are not artifacts: writer debris and the reservation folder."""
    return is_writer_debris(name) or name == RESERVATIONS_DIR


def slug(value: str) -> str:
    """Path-safe slug of *value* (DECISIONS section 2).

    NFKD, ASCII only, lowercase, runs of other characters become ``-``, trimmed,
    at most 64 characters; an empty result falls back to ``u-<12 hex digits>``.
    """
    if len(value) <= SLUG_MAX and _PLAIN_SLUG.fullmatch(value):
        return value
    ascii_text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode("ascii")
    text = _SLUG_RUN.sub("-", ascii_text.lower()).strip("-")
    text = text[:SLUG_MAX].rstrip("-")
    if not text:
        import hashlib

        return "u-" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:12]
    return text


def is_canonical_slug(value: str) -> bool:
    """True when *value* is already a slug (``slug(value) == value``)."""
    return len(value) <= SLUG_MAX and bool(_CANONICAL_SLUG.match(value)) and slug(value) == value


def not_a_slug(label: str, value: str) -> str:
    """Expected and found for a name that breaks the slug rule: ``label 'Found' is not ... (expected 'found')``."""
    return f"{label} {value!r} is not a canonical slug (expected {slug(value)!r})"


# ------------------------------------------------------------------------ task key


@dataclass(frozen=True, slots=True)
class TaskKey:
    """``project-id:task-group:task-id`` with the original, unslugged values."""

    project_id: str
    task_group: str
    task_id: str

    @classmethod
    def parse(cls, text: str) -> TaskKey:
        parts = text.split(":")
        if len(parts) != 3 or not all(parts):
            raise LayoutError(None, f"task key {text!r} is not 'project-id:task-group:task-id'")
        return cls(parts[0], parts[1], parts[2])

    def __str__(self) -> str:
        return task_key_text(self.project_id, self.task_group, self.task_id)


def task_key_text(project_id: str, task_group: str, task_id: str) -> str:
    """The task key the contract spells from a task's values: ``project-id:task-group:task-id``."""
    return f"{project_id}:{task_group}:{task_id}"


# ------------------------------------------------------------------- project paths


def okstra_dir(project_root: Path) -> Path:
    return project_root / OKSTRA_DIR


#: Within :func:`store_looked_once`, each store folder's ``lstat`` (None: nothing there), by its absolute path.
_STORE_LOOKS: ContextVar[dict[str, os.stat_result | None] | None] = ContextVar("okstra_store_looks", default=None)


@contextmanager
def store_looked_once() -> Iterator[None]:
    """Within the block (one command's run), the store folder of each project is looked at once, whoever asks
    what it is (a folder, a symlink) or where it really is: opening the project, checking the cache folder lies
    outside it, asking watchman about it. Worker processes forked within the block share the look. A block
    nested in it looks afresh: a command that keeps watching opens one per reading."""
    token = _STORE_LOOKS.set({})
    try:
        yield
    finally:
        _STORE_LOOKS.reset(token)


def store_look(project_root: Path | str) -> os.stat_result | None:
    """The ``lstat`` of the project's store folder (None: nothing there, or it cannot be looked at); taken once
    within :func:`store_looked_once`, at each call outside it."""
    store = os.path.abspath(okstra_dir(Path(project_root)))
    kept = _STORE_LOOKS.get()
    if kept is not None and store in kept:
        return kept[store]
    try:
        found: os.stat_result | None = os.lstat(store)
    except (OSError, ValueError):
        found = None
    if kept is not None:
        kept[store] = found
    return found


def store_is_link(project_root: Path | str) -> bool:
    """Whether the project's store folder is a symlink (:func:`store_look`)."""
    found = store_look(project_root)
    return found is not None and stat.S_ISLNK(found.st_mode)


def store_is_folder(project_root: Path | str) -> bool:
    """Whether the project's store is a folder, or a symlink leading to one (:func:`store_look`)."""
    found = store_look(project_root)
    if found is None:
        return False
    if stat.S_ISLNK(found.st_mode):
        return os.path.isdir(okstra_dir(Path(project_root)))
    return stat.S_ISDIR(found.st_mode)


def real_store(project_root: Path | str) -> str:
    """The real path of the project's store (symlinks resolved): the project's real path and the store's name,
    unless the store is itself a symlink (:func:`store_look`: its folder is not looked at again)."""
    root = Path(project_root)
    if store_is_link(root):
        return os.path.realpath(okstra_dir(root))
    return os.path.join(os.path.realpath(root), OKSTRA_DIR)


#: How an absolute path under a store shows it: the store's folder between separators.
_STORE_MARK: Final = os.sep + OKSTRA_DIR + os.sep


def store_of(path: str) -> str | None:
    """The store folder the absolute *path* lies in (its first ``.okstra`` folder, with a trailing separator),
    or None outside any store."""
    at = path.find(_STORE_MARK)
    return None if at < 0 else path[: at + len(_STORE_MARK)]


def tasks_dir(project_root: Path) -> Path:
    return okstra_dir(project_root) / TASKS_DIR


def discovery_dir(project_root: Path) -> Path:
    return okstra_dir(project_root) / DISCOVERY_DIR


def latest_task_path(project_root: Path) -> Path:
    return discovery_dir(project_root) / LATEST_TASK_FILE


def task_catalog_path(project_root: Path) -> Path:
    return discovery_dir(project_root) / TASK_CATALOG_FILE


def project_json_path(project_root: Path) -> Path:
    return okstra_dir(project_root) / PROJECT_FILE


def task_folder_names(task_group: str, task_id: str) -> tuple[str, str]:
    """The names of a task's group folder and task folder: ``(slug(group), slug(task-id))``."""
    return slug(task_group), slug(task_id)


def task_root(project_root: Path, task_group: str, task_id: str) -> Path:
    """``.okstra/tasks/<slug(group)>/<slug(task-id)>/``."""
    group, task = task_folder_names(task_group, task_id)
    return tasks_dir(project_root) / group / task


def task_root_rel(task_group: str, task_id: str) -> str:
    """The task root relative to the project root, POSIX."""
    return f"{OKSTRA_DIR}/{TASKS_DIR}/{slug(task_group)}/{slug(task_id)}"


class TaskFolders:
    """Which folder under ``.okstra/tasks/`` holds each catalogued task, and which folders no task claims: the
    one owner of that rule, for the checker, the readers and the workbench.

    A task's folder is the one its group and id slug to (:func:`task_folder_names`). When no such folder is
    listed but one that breaks the slug rule slugs to it, the task lies in that one (the checker reports the
    folder's name once, as a non-canonical slug). *folders* are the ``(group, task)`` names as listed; when they
    may name entries other than folders, *is_folder* tells, and is asked only where a folder breaking the slug
    rule could stand for the name (a file left at the slug name does not hide the task's real folder).
    """

    __slots__ = ("_aliases", "_is_folder", "_listed", "folders")

    def __init__(
        self, folders: Iterable[tuple[str, str]], is_folder: Callable[[tuple[str, str]], bool] | None = None
    ) -> None:
        self.folders = list(folders)
        self._is_folder = is_folder
        self._listed = set(self.folders)
        aliases: dict[tuple[str, str], tuple[str, str]] = {}
        for names in self.folders:
            slugged = (slug(names[0]), slug(names[1]))
            if slugged != names:
                aliases.setdefault(slugged, names)
        self._aliases = aliases

    def of(self, task_group: str, task_id: str) -> tuple[str, str]:
        """The folder names of the task with these catalog values: its slug folder, or the listed folder
        breaking the slug rule that stands for it when the slug folder is not there."""
        return self.of_names(task_folder_names(task_group, task_id))

    def of_names(self, names: tuple[str, str]) -> tuple[str, str]:
        """:meth:`of` for the slug folder's names."""
        alias = self._aliases.get(names) if self._aliases else None
        if alias is None:
            return names
        if names in self._listed and (self._is_folder is None or self._is_folder(names)):
            return names
        return alias

    def listed(self, names: tuple[str, str]) -> bool:
        return names in self._listed

    def unclaimed(self, claimed: set[tuple[str, str]]) -> list[tuple[str, str]]:
        """The listed folders not in *claimed* (the folders :meth:`of` gave the catalogued tasks), as listed;
        with *is_folder*, only the entries that are folders."""
        is_folder = self._is_folder or (lambda names: True)
        return [names for names in self.folders if names not in claimed and is_folder(names)]


def task_and_run_type(rel_path: str) -> tuple[str, str | None]:
    """``<group>/<task-id>`` of a project-relative path under ``.okstra/tasks/``, and the task type of the
    run dir it lies in (None when it lies in no ``runs/<task-type>/``)."""
    parts = rel_path.split("/")
    task = "/".join(parts[2:4])
    run_type = parts[5] if len(parts) > 6 and parts[4] == RUNS_DIR else None
    return task, run_type


def task_root_of(project_root: Path, path: Path) -> Path | None:
    """The task folder *path* lies in (or is), or None when it lies in no task folder."""
    tasks = tasks_dir(project_root)
    try:
        parts = path.relative_to(tasks).parts
    except ValueError:
        return None
    return tasks / parts[0] / parts[1] if len(parts) >= 2 else None


def task_manifest_path(root: Path) -> Path:
    return root / TASK_MANIFEST_FILE


def task_index_path(root: Path) -> Path:
    return root / TASK_INDEX_FILE


def instruction_set_dir(root: Path) -> Path:
    return root / INSTRUCTION_SET_DIR


def selected_direction_path(root: Path) -> Path:
    return instruction_set_dir(root) / SELECTED_DIRECTION_FILE


def clarification_response_path(root: Path) -> Path:
    return instruction_set_dir(root) / CLARIFICATION_RESPONSE_FILE


def runs_dir(root: Path) -> Path:
    return root / RUNS_DIR


def history_dir(root: Path) -> Path:
    return root / HISTORY_DIR


def timeline_path(root: Path) -> Path:
    return history_dir(root) / TIMELINE_FILE


def fix_cycles_path(root: Path) -> Path:
    return history_dir(root) / FIX_CYCLES_FILE


def recap_log_path(root: Path) -> Path:
    return root / RECAP_DIR / RECAP_LOG_FILE


def notes_dir(root: Path) -> Path:
    return root / NOTES_DIR


# ------------------------------------------------------------------------ run dirs


#: Task types whose runs may (implementation: must) live in ``stage-<n>/``.
STAGED_TASK_TYPES: Final = (IMPLEMENTATION, FINAL_VERIFICATION)


def is_staged_type(task_type: str) -> bool:
    """Task types whose runs may (implementation: must) live in ``stage-<n>/``."""
    return task_type in STAGED_TASK_TYPES


def task_type_run_dir(root: Path, task_type: str) -> Path:
    """``runs/<task-type>/``: the non-stage run dir, and the parent of stage dirs."""
    if not is_canonical_slug(task_type):
        raise LayoutError(None, not_a_slug("task type", task_type))
    return runs_dir(root) / task_type


def stage_dir_name(stage: int) -> str:
    if stage < 1:
        raise LayoutError(None, f"stage {stage} is not a positive integer")
    return f"{STAGE_DIR_PREFIX}{stage}"


_STAGE_RE = re.compile(r"^stage-([1-9][0-9]*)$")


def parse_stage_dir(name: str) -> int | None:
    """``stage-<n>`` -> n; anything else (``stage-01``, ``stage-0``) -> None."""
    match = _STAGE_RE.match(name)
    return int(match.group(1)) if match else None


def run_dir(root: Path, task_type: str, stage: int | None = None) -> Path:
    """Resolve ``run_dir`` for a run of *task_type* (and *stage*).

    * non-stage types: ``runs/<task-type>/`` (a stage is refused);
    * ``implementation``: ``runs/implementation/stage-<n>/`` (a stage is required);
    * ``final-verification``: single-stage ``runs/final-verification/stage-<n>/``,
      whole-task ``runs/final-verification/``.
    """
    base = task_type_run_dir(root, task_type)
    if task_type == "implementation":
        if stage is None:
            raise LayoutError(None, "an implementation run needs a stage")
        return base / stage_dir_name(stage)
    if task_type == "final-verification":
        return base if stage is None else base / stage_dir_name(stage)
    if stage is not None:
        raise LayoutError(None, f"task type {task_type!r} has no stages")
    return base


def carry_path(root: Path, stage: int) -> Path:
    """``runs/implementation/carry/stage-<n>.json``: flat, never under ``stage-<n>/``."""
    return task_type_run_dir(root, "implementation") / CARRY_DIR / f"{stage_dir_name(stage)}.json"


def consumers_path(root: Path) -> Path:
    """``runs/implementation-planning/consumers.jsonl``."""
    return task_type_run_dir(root, "implementation-planning") / CONSUMERS_FILE


def category_dir(run_directory: Path, category: str) -> Path:
    if category not in RUN_CATEGORIES:
        raise LayoutError(None, f"{category!r} is not a run category folder")
    return run_directory / category


def seqs_in_use(folder: Path) -> int:
    """Highest seq named by any artifact or claim in a category folder (``writes.allocate_seq`` takes the next)."""
    from .names import parse_in_category, seq_value  # here: the name grammar is not needed to read a store's layout

    highest = 0
    category = folder.name
    try:
        entries = os.listdir(folder)
    except FileNotFoundError:
        return 0
    for entry in entries:
        parsed = parse_in_category(category, entry)
        if parsed is not None and parsed.seq is not None:
            highest = max(highest, parsed.seq)
    try:
        claims = os.listdir(folder / SEQ_CLAIMS_DIR)
    except FileNotFoundError:
        claims = []
    for claim in claims:
        value = seq_value(claim)
        if value is not None:
            highest = max(highest, value)
    return highest


# --------------------------------------------------------------- agent invocations


#: The files of one agent invocation, ``<invocation-id><suffix>``, in publication order.
INVOCATION_INSTRUCTIONS_SUFFIX: Final = ".instructions.md"
INVOCATION_PROMPT_SUFFIX: Final = ".prompt.md"
INVOCATION_META_SUFFIX: Final = ".prompt.md.meta.json"
INVOCATION_RESULT_SUFFIX: Final = ".result.json"
INVOCATION_COMPLETION_SUFFIX: Final = ".prompt.md.completion.json"


@dataclass(frozen=True, slots=True)
class InvocationPaths:
    """The exact immutable paths of one ``(purpose, invocationId)`` pair."""

    folder: Path
    invocation_id: str

    def _p(self, suffix: str) -> Path:
        return self.folder / f"{self.invocation_id}{suffix}"

    @property
    def instructions(self) -> Path:
        return self._p(INVOCATION_INSTRUCTIONS_SUFFIX)

    @property
    def prompt(self) -> Path:
        return self._p(INVOCATION_PROMPT_SUFFIX)

    @property
    def meta(self) -> Path:
        return self._p(INVOCATION_META_SUFFIX)

    @property
    def result(self) -> Path:
        return self._p(INVOCATION_RESULT_SUFFIX)

    @property
    def completion(self) -> Path:
        return self._p(INVOCATION_COMPLETION_SUFFIX)

    @property
    def tmp(self) -> Path:
        return self._p(".tmp")


def agent_invocations_dir(project_root: Path) -> Path:
    return okstra_dir(project_root) / AGENT_INVOCATIONS_DIR


def invocation_paths(project_root: Path, purpose: str, invocation_id: str) -> InvocationPaths:
    """Paths of one agent invocation; both values must be canonical slugs."""
    for label, value in (("purpose", purpose), ("invocation id", invocation_id)):
        if not is_canonical_slug(value):
            raise LayoutError(None, not_a_slug(label, value))
    return InvocationPaths(agent_invocations_dir(project_root) / purpose, invocation_id)


# ------------------------------------------------------------------------ managers


def okstra_home(override: Path | str | None = None) -> Path:
    """Manager state root: *override*, else ``$OKSTRA_HOME``, else ``~/.okstra``."""
    if override is not None:
        return Path(override)
    env = os.environ.get("OKSTRA_HOME")
    if env:
        return Path(env)
    return Path.home() / OKSTRA_DIR


#: The manager home the demo writes inside its project folder (use ``DIR/.okstra-home`` as ``OKSTRA_HOME``).
DEMO_HOME_DIR: Final = ".okstra-home"


def demo_home(project_root: Path) -> Path:
    """The manager home that belongs to a demo project."""
    return project_root / DEMO_HOME_DIR


#: The checker's settings files at a project root, in the order they are looked for (the first found wins),
#: as ruff looks for ``.ruff.toml``, ``ruff.toml`` and ``pyproject.toml``; ``pyproject.toml`` counts only
#: when it has a ``[tool.okstra]`` table.
OKSTRA_TOML_HIDDEN: Final = ".okstra.toml"
OKSTRA_TOML: Final = "okstra.toml"
PYPROJECT_TOML: Final = "pyproject.toml"
CHECK_SETTINGS_FILES: Final = (OKSTRA_TOML_HIDDEN, OKSTRA_TOML, PYPROJECT_TOML)


def check_settings_candidates(project_root: Path) -> list[Path]:
    """Where the checker looks for its settings at *project_root*, in order."""
    return [project_root / name for name in CHECK_SETTINGS_FILES]


#: Moves the cache folder (as ruff's ``RUFF_CACHE_DIR``: over a settings file's ``cache-dir``, under ``--cache-dir``).
CACHE_DIR_ENV: Final = "OKSTRA_CACHE_DIR"


def okstra_cache_dir(override: Path | str | None = None) -> Path:
    """The user's cache folder for okstra (never inside a store): *override*, else ``$OKSTRA_CACHE_DIR``,
    else ``$XDG_CACHE_HOME/okstra``, else ``~/.cache/okstra``."""
    if override is not None:
        return Path(override)
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):  # the XDG spec: a relative value is invalid and ignored
        return Path(xdg) / "okstra"
    return Path.home() / ".cache" / "okstra"


def misplaced_cache(cache_dir: Path, project_root: Path, home: Path | None = None) -> str | None:
    """Why *cache_dir* may not hold okstra's caches (the check cache, the search index) for *project_root*:
    it is, or lies inside, the project's store or the manager home (*home*, else :func:`okstra_home`), which
    okstra's caches never write into. None when it may. Symlinks are resolved."""
    real = os.path.realpath(cache_dir)
    bases = ((real_store(project_root), "the store"), (os.path.realpath(home or okstra_home()), "the manager home"))
    for base, name in bases:
        if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
            return f"the cache folder is inside {name}; okstra never keeps a cache there"
    return None


def okstra_state_dir() -> Path:
    """The user's state folder for okstra (never inside a store): ``$OKSTRA_STATE_DIR``, else
    ``$XDG_STATE_HOME/okstra``, else ``~/.local/state/okstra``. It holds what must outlive the cache and
    must not sit beside it (the key that signs the check cache)."""
    env = os.environ.get("OKSTRA_STATE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_STATE_HOME")
    if xdg and os.path.isabs(xdg):  # the XDG spec: a relative value is invalid and ignored
        return Path(xdg) / "okstra"
    return Path.home() / ".local" / "state" / "okstra"


def okstra_config_dir() -> Path:
    """The user's configuration folder for okstra (never inside a store): ``$XDG_CONFIG_HOME/okstra``, else
    ``~/.config/okstra``. It holds what the person chose (the workbench's view preferences)."""
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg and os.path.isabs(xdg):  # the XDG spec: a relative value is invalid and ignored
        return Path(xdg) / "okstra"
    return Path.home() / ".config" / "okstra"


#: The workbench's view preferences (its theme), in :func:`okstra_config_dir`.
PREFERENCES_FILE: Final = "workbench.json"

#: The roots opened in the workbench, in :func:`okstra_state_dir` (:func:`okstra_core.projects.remember_root`).
WORKBENCH_PROJECTS: Final = "workbench-projects.json"


def project_digest(project_root: Path) -> str:
    """How per-user state names a project: a digest of its real path (the same project, however reached)."""
    real = os.path.realpath(project_root)
    return hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:24]


#: The check cache's signing key, in :func:`okstra_state_dir`.
CACHE_KEY_FILE: Final = "check-cache.key"
#: The check cache's folder of per-project files, in :func:`okstra_cache_dir`.
CHECK_CACHE_DIR: Final = "check"
#: Beside a project's check cache file: the verdict of the last full check of that project.
CHECK_VERDICT_SUFFIX: Final = ".verdict"
#: The manager home's folder of managers.
MANAGERS_DIR: Final = "managers"


def managers_dir(home: Path) -> Path:
    return home / MANAGERS_DIR


def root_name(root: Path | str) -> str:
    """How a message names the containment root of a read or a write: "the project root" or "the manager home".

    A root is the manager home when it is :func:`okstra_home` or holds
    ``managers/`` and no ``.okstra/``; any other root is a project root.
    Called only when a refusal is worded, never on the read path.
    """
    base = Path(root)
    if os.path.isdir(okstra_dir(base)):
        return "the project root"
    if os.path.isdir(managers_dir(base)) or os.path.realpath(base) == os.path.realpath(okstra_home()):
        return "the manager home"
    return "the project root"


def manager_dir(home: Path, manager_id: str) -> Path:
    return managers_dir(home) / slug(manager_id)


def manager_task_dir(home: Path, manager_id: str, task_group: str, task_id: str) -> Path:
    return manager_dir(home, manager_id) / MANAGER_TASK_GROUPS / slug(task_group) / slug(task_id)


def child_context_name(project_id: str, child_task_id: str) -> str:
    """``<project-id>-<child-task-id>.md`` with both parts slugged."""
    return f"{slug(project_id)}-{slug(child_task_id)}.md"


#: A manager's folder: its identity, the projects it manages and one folder per task group.
MANAGER_INFO: Final = "manager.json"
MANAGER_PROJECTS: Final = "projects.json"
MANAGER_TASK_GROUPS: Final = "task-groups"
MANAGER_FILES: Final = (MANAGER_INFO, MANAGER_PROJECTS)

#: A manager task's folder: its manifest, children, ledgers and the child-context folder.
MANAGER_TASK_MANIFEST: Final = "manifest.json"
MANAGER_CHILDREN: Final = "children.json"
MANAGER_DIRECTIVES: Final = "directives.jsonl"
MANAGER_SNAPSHOTS: Final = "snapshots.json"
MANAGER_EVENTS: Final = "events.jsonl"
MANAGER_CHILD_CONTEXT: Final = "child-context"
MANAGER_TASK_FILES: Final = (
    MANAGER_TASK_MANIFEST,
    MANAGER_CHILDREN,
    MANAGER_DIRECTIVES,
    MANAGER_SNAPSHOTS,
    MANAGER_EVENTS,
)


# ---------------------------------------------------------------------- relpaths


def rel(path: Path | str, root: Path | str) -> str:
    """*path* relative to *root* (usually the project root) as POSIX text, without resolving.

    Raises :class:`ValueError` when *path* is not under *root*. A path below *root* is cut as text (an index
    build asks this of every file of the store); any other is left to :meth:`pathlib.PurePath.relative_to`.
    """
    text = os.fspath(path)
    prefix = os.path.join(os.fspath(root), "")
    if text.startswith(prefix) and len(text) > len(prefix):
        return text[len(prefix) :].replace(os.sep, "/")
    return Path(path).relative_to(root).as_posix()


def is_relative_posix(text: str) -> bool:
    """A normalised POSIX relative path: no leading ``/``, no ``..``, no ``\\``, no empty parts."""
    if not text or text.startswith("/") or "\\" in text:
        return False
    parts = text.split("/")
    return all(p not in ("", ".", "..") for p in parts)
