"""What the workflow verbs share: opening the project and task, reading inputs, naming refusals.

Every workflow verb addresses a project root and (mostly) a task by key
(``project:group:task``) or folder (``group/task``). It prints what it wrote,
or refuses with one line naming the file and the reason (an
:class:`~okstra_core.errors.OkstraError`; ``okstra_core.cli`` prints it and
exits 1). Inputs are read and checked before anything is written, so a
refusal changes nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import layout, reading, times
from ..errors import OkstraError, ValidationFailed
from ..store import Project, RunDir, Task
from ..text import json_escaped, visible

if TYPE_CHECKING:
    from ..store_index import StatPass, StoreIndex
    from ..workflows.common import Clock
    from ..workflows.inbox import InboxTold
    from ..write_log import Input, Verb

Handler = Callable[[argparse.Namespace], int]


def open_project(args: argparse.Namespace) -> Project:
    """The project named by ``args.project``, opened at its real path."""
    opened = Project.open(Path(args.project))
    if isinstance(opened, reading.LoadError):
        raise OkstraError(opened.path, opened.reason)
    # Paths inside the store are compared and printed against the real root.
    return Project(Path(os.path.realpath(opened.root)))


def open_task(project: Project, key: str) -> Task:
    """The task named by *key* (key, ``group/task`` folder or task id), or a refusal naming the catalog."""
    task = project.find_task(key)
    if task is None:
        catalog = project.catalog
        if isinstance(catalog, reading.LoadError) and os.path.lexists(catalog.path):
            # The key may well be in the catalog: say why it could not be read, not that the task is absent.
            raise OkstraError(catalog.path, f"cannot look up task {key!r}: {catalog.reason}")
        raise OkstraError(
            layout.task_catalog_path(project.root), f"no task {key!r} (by key, group/task folder or task id)"
        )
    return task


def rel(project: Project, path: Path) -> str:
    """*path* as printed by the verbs: project-relative POSIX text, or as given when outside the project."""
    try:
        return layout.rel(path, project.root)
    except ValueError:
        return str(path)


def input_path(project: Project, text: str) -> Path:
    """A path given on the command line: as given (absolute or from the working folder), else project-relative."""
    given = Path(text)
    if given.is_absolute() or given.exists():
        return Path(os.path.realpath(given))
    return Path(os.path.realpath(project.root / given))


def read_input(path: Path, what: str) -> str:
    """The text of an input file (``-``: standard input); *what* names it in a refusal.

    A leading byte-order mark (editors on some systems add one) is dropped, as git does for its config.
    """
    return _read_input(path, what).removeprefix("\ufeff")


def _read_input(path: Path, what: str) -> str:
    if str(path) == "-":
        # Bytes, checked like a file the reader opens: the size limit, strict UTF-8, no NUL.
        data = sys.stdin.buffer.read(reading.MAX_BYTES + 1)
        decoded = reading.text_of_bytes(Path("-"), data)
        if isinstance(decoded, reading.LoadError):
            raise OkstraError(Path("<stdin>"), f"{what}: {decoded.reason}")
        return decoded
    text = reading.read_text(path)
    if isinstance(text, reading.LoadError):
        raise OkstraError(path, f"{what}: {text.reason}")
    return text


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    """An input file that must hold one JSON object."""
    text = read_input(path, what)
    value = reading.parse_json(path, text, unique_keys=True)
    if isinstance(value, reading.LoadError):
        raise ValidationFailed(path, f"{what}: {value.reason}")
    if not isinstance(value, dict):
        raise ValidationFailed(path, f"{what} must be a JSON object")
    return value


@contextmanager
def named(path: Path) -> Iterator[None]:
    """Give a refusal that names no file the file it is about."""
    try:
        yield
    except OkstraError as exc:
        if exc.path is None:
            raise type(exc)(path, exc.reason) from None
        raise


def find_run_dir(task: Task, task_type: str | None, stage: int | None) -> RunDir:
    """The task's run dir of *task_type* (default: the task's own type) and *stage*, or a refusal."""
    if task_type is None:
        manifest = task.manifest
        if isinstance(manifest, reading.LoadError):
            raise OkstraError(manifest.path, manifest.reason)
        task_type = manifest.task_type
        if task_type is None:
            raise OkstraError(
                layout.task_manifest_path(task.root), "task manifest names no taskType; give the task type"
            )
    rd = task.run_dir(task_type, stage)
    if rd is None:
        where = layout.run_dir(task.root, task_type, stage)
        raise OkstraError(where, "run dir does not exist (no run of this type/stage yet)")
    return rd


def find_artifact(rd: RunDir, kind: str, seq: int | None) -> Path:
    """The newest artifact of *kind* in *rd* (of *seq* when given), or a refusal."""
    found = rd.of_kind(kind)
    if seq is not None:
        found = [a for a in found if a.seq == seq]
    if not found:
        label = f"{kind} seq {seq:03d}" if seq is not None else kind
        raise OkstraError(rd.path, f"no {label} in this run dir")
    return found[-1].path


def add_task_args(p: argparse.ArgumentParser) -> None:
    """The project root and ``--task`` arguments."""
    p.add_argument("project", type=Path, help="project root holding .okstra/")
    p.add_argument("--task", required=True, metavar="KEY", help="task key project:group:task (or group/task folder)")


def add_run_args(p: argparse.ArgumentParser) -> None:
    """``--run-type`` and ``--stage``, which pick a run dir of the task."""
    p.add_argument(
        "--run-type", default=None, metavar="TYPE", help="task type of the run dir (default: the task's type)"
    )
    p.add_argument(
        "--stage",
        type=int,
        default=None,
        metavar="N",
        help="stage of an implementation or single-stage final-verification run",
    )


def write_stdout(text: str, *, one_line: bool = False, end: str = "") -> None:
    """Write store text to standard output: to a pipe or a file, its exact bytes; on a terminal, made visible.

    A report, a returned body or a path from the store may hold escape
    sequences (``ESC ]52;…BEL`` sets the clipboard). A terminal gets every
    control character as a visible stand-in (:func:`okstra_core.text.visible`;
    newlines and tabs kept unless *one_line*), as ``git`` and ``less`` show
    what they print; a pipe or a file gets the bytes unchanged, so
    ``> copy.md`` keeps the document exact. *end* is written after, as is.
    """
    out = sys.stdout
    if out.isatty():
        text = visible(text, multiline=not one_line)
    out.flush()  # anything print() buffered goes first
    binary = getattr(out, "buffer", None)
    if binary is None:  # a stream without bytes beneath it (a capture): its text is all there is
        out.write(text + end)
        return
    binary.write((text + end).encode("utf-8", "surrogateescape"))
    out.flush()


def write_json(value: Any) -> None:
    """Print *value* as indented JSON: non-ASCII kept, every control character a ``\\u`` escape."""
    write_stdout(json_escaped(json.dumps(value, indent=2, ensure_ascii=False)) + "\n")


def say(line: str) -> None:
    """Print one line of a verb's report (a path from the store shown safely on a terminal)."""
    write_stdout(line, one_line=True, end="\n")


def read_answers(path: Path) -> dict[str, str]:
    """An answers file: a JSON object of string answers keyed by clarification id."""
    value = read_json_object(path, "answers file")
    bad = [k for k, v in value.items() if not isinstance(v, str)]
    if bad:
        raise ValidationFailed(path, f"answers file: the answer to {bad[0]!r} is not a string")
    return value


def _moment(text: str) -> dt.datetime:
    moment = times.parse_time(text)
    if moment is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time (e.g. 2026-12-02T07:41:05.123456Z)")
    return moment


def add_at_option(parser: argparse.ArgumentParser) -> None:
    """``--at TIME``: record this moment instead of now (the workbench's write log gives it, to repeat a write)."""
    parser.add_argument(
        "--at",
        type=_moment,
        default=None,
        metavar="TIME",
        help="the moment to record (ISO 8601; default: now); a write repeated with it makes the same bytes",
    )


def clock_of(args: argparse.Namespace) -> Clock:
    """The clock a write verb records its times with: stopped at ``--at``, else the system's."""
    from ..workflows.common import SYSTEM_CLOCK, Clock

    return SYSTEM_CLOCK if args.at is None else Clock.at(args.at)


def answers_input(answers: Mapping[str, str]) -> Input:
    """The ``--answers`` file of a logged command line: the answers as :func:`read_answers` reads them."""
    from ..write_log import Input

    return Input("--answers", ".json", json.dumps(dict(answers), ensure_ascii=False, indent=1) + "\n")


def task_verb(
    words: tuple[str, ...], task: str, *options: tuple[str, str], inputs: tuple[Input, ...] = (), timed: bool = True
) -> Verb:
    """A logged command line of a verb that takes ``--task``: *task* is the ``group/task`` folder."""
    from ..write_log import Verb

    return Verb(words, (("--task", task), *options), inputs, timed)


def named_refusals(func: Handler) -> Handler:
    """Every refusal names a file: one that names none is pinned to the project root."""

    def run(args: argparse.Namespace) -> int:
        with named(Path(args.project)):
            return func(args)

    run.__doc__ = func.__doc__
    return run


def add_group(sub: Any, name: str, help_text: str) -> Any:
    """Add a verb group (``okstra NAME VERB``) and return its subparsers."""
    parser = sub.add_parser(name, help=help_text)
    return parser.add_subparsers(dest=f"{name}_verb", metavar="VERB", required=True)


def add_index_args(p: argparse.ArgumentParser) -> None:
    """``--no-cache``, ``--reindex``, ``--cache-dir`` and ``--no-watchman``: how a verb that answers through the
    store index uses it."""
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="read the store afresh, without reading or writing the store index (the answer is the same)",
    )
    p.add_argument("--reindex", action="store_true", help="drop what the store index keeps and build it afresh")
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="where the store index is kept (default: $OKSTRA_CACHE_DIR, else $XDG_CACHE_HOME/okstra, else "
        "~/.cache/okstra); never inside the store",
    )
    p.add_argument(
        "--no-watchman",
        action="store_true",
        help="look at every file of the store index instead of asking watchman what changed (also "
        "OKSTRA_WATCHMAN=off; without watchman installed, every file is looked at anyway)",
    )


def open_index(args: argparse.Namespace, project: Project, verb: str) -> StoreIndex | None:
    """The store index of *project* for a verb's answer (None with ``--no-cache``); its notices go to stderr."""
    if getattr(args, "no_cache", False):
        return None
    from ..check.cache import cache_key, checker_fingerprint
    from ..store_index import StoreIndex
    from ..watchman import setting

    wanted = "off" if getattr(args, "no_watchman", False) else setting()
    try:
        key: bytes | None = cache_key()
    except (OkstraError, OSError) as exc:
        print(f"okstra {verb}: notice: store index not used: {visible(str(exc))}", file=sys.stderr)
        return None
    index = StoreIndex(
        project.root,
        layout.okstra_cache_dir(getattr(args, "cache_dir", None)),
        key=key,
        scope=checker_fingerprint(),
        reindex=getattr(args, "reindex", False),
        watchman=wanted != "off",
    )
    if wanted == "on" and index.watchman_problem is not None:
        index.notices.append(f"watchman not used ({index.watchman_problem}): looking at every file")
    say_index_notices(index, verb)
    return index


def say_index_notices(index: StoreIndex, verb: str) -> None:
    """The index's notices not yet said, one stderr line each."""
    for notice in index.notices:
        print(f"okstra {verb}: notice: {visible(notice)}", file=sys.stderr)
    index.notices.clear()


def polled(args: argparse.Namespace, root: Path) -> tuple[Callable[[], list[str]], InboxTold]:
    """For a verb's watcher of the project at *root* that polls: what it looks at itself (nothing) and what it
    asks, which of what the inbox reads changed (:func:`inbox_told`, with the verb's ``--cache-dir`` and
    ``--no-cache``)."""
    no_cache = bool(getattr(args, "no_cache", False))
    return (list, inbox_told(root, getattr(args, "cache_dir", None), no_cache=no_cache))


def inbox_told(
    root: Path, cache_dir: Path | None = None, *, no_cache: bool = False, ready: Callable[[], object] | None = None
) -> InboxTold:
    """What changed among what the inbox of the project at *root* reads, asked of its store index in *cache_dir*
    (with *no_cache*, a baseline of what a fresh reading read is kept instead), so that a polling watcher's full
    look reads no task again and keeps no baseline of every path; it first waits for *ready* when given."""
    from ..check.cache import open_store_index
    from ..workflows.inbox import InboxTold

    def opened(look: StatPass) -> StoreIndex | str:
        return open_store_index(root, cache_dir, look=look)

    return InboxTold(root, None if no_cache else opened, ready)


class Stopped(Exception):
    """A second SIGINT or SIGTERM: the verb ends at once (see :class:`StopAsked`)."""


#: The longest a watching loop waits before it looks whether it was asked to stop.
STOP_STEP = 0.5


class StopAsked:
    """SIGINT and SIGTERM while a verb watches (``okstra inbox --watch``): the first signal is only noted, and the
    verb's loop ends at its next wait (within :data:`STOP_STEP`, or once a look in progress ends); a second one
    raises :class:`Stopped` at once. A handler that raised at the first signal could raise wherever the main thread
    was, between taking a lock another thread waits on and the ``try`` that releases it, or part-way through a
    line printed.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.asked = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopAsked:
        self._previous = {sig: signal.signal(sig, self._handle) for sig in self.SIGNALS}
        return self

    def _handle(self, signum: int, frame: object) -> None:
        if self.asked:
            raise Stopped
        self.asked = True

    def closing(self) -> None:
        """From now on a signal is ignored: the verb is closing its watchers (a signal then would end it with a
        traceback part-way)."""
        for sig in self._previous:
            signal.signal(sig, signal.SIG_IGN)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
