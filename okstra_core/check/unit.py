"""The checker's window on the project: a read-only, symlink-safe view of the store.

A :class:`Unit` lists folders without following symlinks out of the root,
reads each file at most once (through :mod:`okstra_core.reading`), validates
documents with the models that own their shape, and collects findings. Rules
(:mod:`okstra_core.check.rules`) take a unit; :mod:`okstra_core.check.engine`
runs them.
"""

from __future__ import annotations

import bisect
import errno
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Final, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from .. import layout, reading
from ..errors import LoadError
from ..models.base import ABSENT_ROWS_SEEN, IdentityMismatch, absent_added
from ..models.convergence import ConvergenceFinal
from ..models.report import DeliverableMismatch
from ..sidecar import parse_lenient as parse_sidecar_lenient
from .catalog import (
    BAD_JSONL_LINE,
    BAD_PROVENANCE,
    BAD_SIDECAR_HEADER,
    CONVERGENCE_FINAL_VERSION,
    DUPLICATE_KEY,
    FILE_UNREADABLE,
    INVALID_JSON,
    LEFTOVER_TEMP_FILE,
    MIXED_IDENTITY,
    PROJECT_FIELDS_ABSENT,
    RULE_FAILED,
    RULES_BY_ID,
    SCHEMA_MISMATCH,
    SYMLINK_DANGLING,
    SYMLINK_ESCAPES,
    UNKNOWN_HEADER_KEY,
    WRONG_DELIVERABLE,
)
from .findings import Finding

M = TypeVar("M", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)
K = TypeVar("K")

_MISSING = object()


class _AsText(bytes):
    """Marks a file's bytes as the UTF-8 of its text, kept once as text (:meth:`Unit.text`)."""


#: Kept for a file's bytes once they decoded as UTF-8: the bytes are its text encoded again, never held twice.
_AS_TEXT: Final = _AsText()


class _LetGo(str):
    """Marks a file's text as read and let go (:meth:`Unit._let_go`)."""


#: Kept for a file's text once a reading has taken all it needs of it: the file counts as read, and its text is
#: read again only should it be asked for again.
_LET_GO: Final = _LetGo()
#: A document this long or longer is not kept parsed once validated: its model is (a catalog of 100,000 tasks is
#: tens of megabytes of text, and its parsed JSON about three times that beside the model).
PARSED_KEPT_BELOW: Final = 1 << 20


class Entry:
    """One folder entry as the checker sees it; ``bad`` entries were reported and are never read.

    ``text`` is the path as a string; ``path`` builds the :class:`Path` only when a
    rule asks for it (constructing one per listed entry dominated the profile).
    ``link`` marks an entry reached through a symlink that stays inside the project.
    """

    __slots__ = ("_path", "kind", "link", "name", "text")

    def __init__(self, name: str, text: str, kind: Literal["file", "dir", "bad"], link: bool = False) -> None:
        self.name = name
        self.text = text
        self.kind = kind
        self.link = link
        self._path: Path | None = None

    @property
    def path(self) -> Path:
        """The entry's path (built on first use)."""
        path = self._path
        if path is None:
            path = self._path = Path(self.text)
        return path

    def __repr__(self) -> str:
        return f"Entry({self.name!r}, {self.text!r}, {self.kind!r})"


def _validation_rule(model: type[BaseModel], err: Any) -> str:
    """Which rule a pydantic error belongs to, from its structured data (never its message text).

    The models' own validators carry the contract and raise typed errors, which pydantic keeps in
    ``ctx["error"]``; the rest is decided by the error's location.
    """
    loc = tuple(str(p) for p in err.get("loc", ()))
    raised = (err.get("ctx") or {}).get("error")
    if isinstance(raised, IdentityMismatch):
        return MIXED_IDENTITY
    if "instructionProvenance" in loc:
        return BAD_PROVENANCE
    if isinstance(raised, DeliverableMismatch):
        return WRONG_DELIVERABLE
    if model is ConvergenceFinal and loc == ("schemaVersion",):
        return CONVERGENCE_FINAL_VERSION
    return SCHEMA_MISMATCH


#: Archives of state replaced by a Round 0 restart live under ``state/migrations/``.
MIGRATIONS_PART = f"{os.sep}state{os.sep}{layout.MIGRATIONS_DIR}{os.sep}"


class Unit:
    """Reads, caches and reports for one part of a check run."""

    def __init__(
        self,
        root: Path,
        home: Path | None = None,
        known_dirs: Iterable[str] = (),
        real: tuple[str, str | None] | None = None,
        reals: dict[str, str] | None = None,
    ) -> None:
        """*real* is the real paths of *root* and *home* when the caller already resolved them (once per worker);
        *reals*, the real paths of folders already resolved in this check (shared by the units of a worker)."""
        real_root, real_home = real if real is not None else Unit.resolve(root, home)
        self.root = root
        self.real_root = Path(real_root)
        self.home = home
        self.findings: list[Finding] = []
        # Caches are keyed by path text: hashing pathlib objects dominated the profile.
        self._bytes: dict[str, bytes | None] = {}
        #: Transcripts read from their end: what is kept of them may be a tail, never lent as a whole file.
        self._tails: set[str] = set()
        self._text: dict[str, str | None] = {}
        self._json: dict[str, Any] = {}
        self._docs: dict[tuple[str, type[BaseModel]], Any] = {}
        self._entries: dict[str, list[Entry]] = {}
        self._by_name: dict[str, dict[str, Entry]] = {}
        #: Every name of each listed folder (private ones too), sorted: the listing owners would read.
        self._names: dict[str, list[str]] = {}
        self._root_text = str(root)
        self._store_text = str(layout.okstra_dir(root))
        #: Real paths of the folders walked from and those above them (:meth:`_real_folder`).
        self._reals: dict[str, str] = {} if reals is None else reals
        self._home_text = str(home) if home is not None else None
        self._real_home = real_home
        self._reported: set[tuple[str, str, str]] = set()
        #: Regular files (not symlinks) as their folder's listing classified them: read without re-checking.
        self._regular: set[str] = set()
        #: Folders another unit already listed as usable directories (a task's ancestors): not listed again.
        self._known_dirs: set[str] = set(known_dirs)
        #: Folders seen in this check to be folders, not symlinks (:meth:`plain_folder`): not looked at again.
        self._plain: set[str] = set()
        self.files: set[str] = set()
        #: Paths looked at outside the listings and reads (:meth:`looked_at`).
        self._looked: set[str] = set()

    def release(self) -> None:
        """Drop what was read (bytes, texts, parsed documents, listings), keeping the findings and the files read:
        a project's unit holds the parsed catalog, which the tasks' checks after it do not read again."""
        for kept in (self._bytes, self._text, self._json, self._docs, self._entries, self._by_name, self._names):
            kept.clear()
        self._tails.clear()
        self._regular.clear()

    @staticmethod
    def resolve(root: Path, home: Path | None) -> tuple[str, str | None]:
        """The real paths of a unit's root and home, as :class:`Unit` takes them in *real*."""
        return os.path.realpath(root), (os.path.realpath(home) if home is not None else None)

    # ------------------------------------------------------------- reporting

    def rel(self, path: Path | str) -> str:
        """Project-relative POSIX text of *path* (``$OKSTRA_HOME/...`` for manager files outside)."""
        text = path if isinstance(path, str) else str(path)
        # String prefixes, not pathlib: this runs for every finding and every lookup.
        if text.startswith(self._root_text + os.sep):
            return text[len(self._root_text) + 1 :].replace(os.sep, "/")
        if self._home_text is not None and text.startswith(self._home_text + os.sep):
            return "$OKSTRA_HOME/" + text[len(self._home_text) + 1 :].replace(os.sep, "/")
        return Path(text).as_posix()

    def report(self, rule: str, path: Path | str, message: str, line: int | None = None) -> None:
        """Record a finding of *rule* at *path* (each exact finding once); a ``str`` path is already relative."""
        rel = path if isinstance(path, str) else self.rel(path)
        key = (rule, rel, message)
        if key in self._reported:
            return
        self._reported.add(key)
        self.findings.append(Finding(rule, RULES_BY_ID[rule].severity, rel, message, line))

    def _report_load(self, err: LoadError, path: Path) -> None:
        reason = err.reason
        if "escapes" in reason:
            rule = SYMLINK_ESCAPES
        elif "dangling" in reason or "loop" in reason:
            rule = SYMLINK_DANGLING
        else:
            rule = FILE_UNREADABLE
        self.report(rule, path, reason, err.line)

    # --------------------------------------------------------------- listing

    def entries(self, folder: Path | str) -> list[Entry]:
        """Sorted entries of *folder* (private debris left out); symlink problems are reported here."""
        key = folder if isinstance(folder, str) else str(folder)
        cached = self._entries.get(key)
        if cached is not None:
            return cached
        out: list[Entry] = []
        try:
            with os.scandir(key) as it:
                raw = {de.name: de for de in it}
        except FileNotFoundError:
            raw = {}
        except NotADirectoryError:
            raw = {}
        except OSError as exc:
            self.report(FILE_UNREADABLE, Path(key), f"folder cannot be listed: {exc.strerror or exc}")
            raw = {}
        names = sorted(raw)
        for name in names:
            if layout.is_writer_debris(name):
                owner = layout.temp_file_owner(name)
                if owner is not None:
                    self.report(
                        LEFTOVER_TEMP_FILE,
                        Path(key) / name,
                        f"temp file of an interrupted write of {owner} (the next write of {owner} removes it)",
                    )
                continue
            out.append(self._classify(name, raw[name]))
        self._names[key] = names
        self._entries[key] = out
        self._by_name[key] = {e.name: e for e in out}
        return out

    def _classify(self, name: str, de: os.DirEntry[str]) -> Entry:
        text = de.path
        try:
            if de.is_symlink():
                return self._classify_link(name, text)
            if de.is_dir(follow_symlinks=False):
                return Entry(name, text, "dir")
            if de.is_file(follow_symlinks=False):
                self.files.add(text)
                self._regular.add(text)
                return Entry(name, text, "file")
        except OSError as exc:
            self.report(FILE_UNREADABLE, Path(text), f"cannot stat: {exc.strerror or exc}")
            return Entry(name, text, "bad")
        # FIFO, socket, device: the safe reader names what it is without opening it blocking.
        path = Path(text)
        self.files.add(text)
        self._bytes[text] = None
        result = reading.read_bytes(path, root=self.root)
        if isinstance(result, LoadError):
            self._report_load(result, path)
        return Entry(name, text, "bad")

    def _classify_link(self, name: str, text: str) -> Entry:
        path = Path(text)
        self.files.add(text)
        try:
            real = Path(os.path.realpath(path, strict=True))
        except FileNotFoundError:
            self.report(SYMLINK_DANGLING, path, reading.dangling(path))
            self._bytes[text] = None
            return Entry(name, text, "bad")
        except (OSError, RuntimeError) as exc:
            reason = (
                "symlink loop"
                if isinstance(exc, RuntimeError) or getattr(exc, "errno", None) == errno.ELOOP
                else f"cannot resolve symlink: {exc}"
            )
            self.report(SYMLINK_DANGLING, path, reason)
            self._bytes[text] = None
            return Entry(name, text, "bad")
        if not real.is_relative_to(self.real_root) and not (self._real_home and real.is_relative_to(self._real_home)):
            in_home = self._home_text is not None and text.startswith(self._home_text + os.sep)
            where = "the manager home" if in_home else "the project root"
            self.report(SYMLINK_ESCAPES, path, f"symlink escapes {where} (to {real})")
            self._bytes[text] = None
            return Entry(name, text, "bad")
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            self.report(FILE_UNREADABLE, path, f"cannot stat: {exc.strerror or exc}")
            self._bytes[text] = None
            return Entry(name, text, "bad")
        if stat.S_ISDIR(mode):
            self.files.discard(text)
            return Entry(name, text, "dir", link=True)
        return Entry(name, text, "file", link=True)

    def _listing(self, folder: str) -> dict[str, Entry]:
        listing = self._by_name.get(folder)
        if listing is None:
            self.entries(folder)
            listing = self._by_name[folder]
        return listing

    def entry(self, path: Path | str) -> Entry | None:
        """The entry for *path* in its parent's listing, or None when absent."""
        parent, name = os.path.split(path if isinstance(path, str) else str(path))
        return self._listing(parent).get(name)

    def exists(self, path: Path | str) -> bool:
        """True when *path* names a usable entry inside the project (or home), through listings only.

        Escaping, dangling and looping symlinks were classified ``bad`` when
        listed, so they never count as existing and are never followed.
        """
        text = path if isinstance(path, str) else str(path)
        for base in (self._root_text, self._home_text):
            if base is not None and text.startswith(base + os.sep):
                return self._exists_under(base, text[len(base) + 1 :].split(os.sep))
        return False

    def _exists_under(self, base: str, parts: list[str]) -> bool:
        current = base
        last = len(parts) - 1
        known = self._known_dirs
        for i, part in enumerate(parts):
            if part in ("", ".", ".."):
                return False
            child = current + os.sep + part
            if child not in known:
                e = self._listing(current).get(part)
                if e is None or e.kind == "bad" or (e.kind == "file" and i < last):
                    return False
            current = child
        return True

    def absent(self, rel: str) -> str:
        """How a path that :meth:`rel_exists` refused is absent: missing, or there but unusable (a FIFO,
        a device, an escaping or dangling symlink: that entry has its own finding)."""
        parts = rel.split("/")
        folder = self._root_text + os.sep + os.sep.join(parts[:-1]) if len(parts) > 1 else self._root_text
        entry = self._listing(folder).get(parts[-1]) if layout.is_relative_posix(rel) else None
        if entry is not None and entry.kind == "bad":
            return "is not a usable file (see its own finding)"
        return "does not exist"

    def rel_exists(self, rel: str) -> bool:
        """Whether a project-relative POSIX path names something inside the project."""
        return layout.is_relative_posix(rel) and self._exists_under(self._root_text, rel.split("/"))

    def walk(self, folder: Path | str) -> Iterator[Entry]:
        """Every entry under *folder*, depth first; symlinked folders are entered once."""
        seen: set[str] = set()
        start = folder if isinstance(folder, str) else str(folder)
        # Only symlinked folders need resolving: a plain child's real path is its parent's plus its name.
        stack: list[tuple[str, str | None]] = [(start, None)]
        while stack:
            current, real = stack.pop()
            if real is None:
                real = self._real_folder(current)
            if real in seen:
                continue
            seen.add(real)
            children = self.entries(current)
            yield from children
            stack.extend(
                (e.text, None if e.link else os.path.join(real, e.name)) for e in reversed(children) if e.kind == "dir"
            )

    def listed(self, folder: str) -> list[Entry] | None:
        """*folder*'s entries when this unit has listed it already (None: it has not; nothing is listed here)."""
        return self._entries.get(folder)

    def real_folders_known(self, folders: Iterable[str]) -> None:
        """Resolve the real path of each of *folders* (plain folders, as a listing saw them) and those above."""
        for folder in folders:
            self._plain.add(folder)
            self._real_folder(folder)

    def plain_folder(self, folder: str) -> None:
        """*folder* was just seen (``lstat``) to be a folder, not a symlink: its real path is its parent's plus
        its name, with no look of its own."""
        self._plain.add(folder)

    def _real_folder(self, folder: str) -> str:
        """*folder*'s real path, each folder above it inside the project resolved once per check (every task's
        walk starts below the same few folders: resolving each from ``/`` looked at them once per task)."""
        known = self._reals.get(folder)
        if known is None:
            parent, name = os.path.split(folder)
            if folder == self._root_text:
                known = str(self.real_root)
            elif (
                len(folder) <= len(self._root_text)
                or name in ("", ".", "..")
                or (folder not in self._plain and self._is_link(folder))
            ):
                known = os.path.realpath(folder)
            else:
                known = os.path.join(self._real_folder(parent), name)
            self._reals[folder] = known
        return known

    def _is_link(self, folder: str) -> bool:
        """Whether *folder* is a symlink (the store folder as the check's one look at it found it)."""
        if folder == self._store_text:
            return layout.store_is_link(self.root)
        return os.path.islink(folder)

    # --------------------------------------------------------------- reading

    def _read_regular(self, key: str) -> bytes | None:
        """Bytes of a file its listing saw as a regular file; None sends the caller to the safe reader.

        The safe reader's ``lstat`` and symlink checks are already settled by the
        listing; ``O_NOFOLLOW`` and ``fstat`` catch a file swapped since then.
        """
        try:
            fd = os.open(key, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or not reading.within_limit(key, st.st_size):
                return None
            want = st.st_size + 1
            first = os.read(fd, want)
            if len(first) < want:
                # A short read of a regular file is its end: no second call to see EOF.
                return first
            chunks = [first]
            total = len(first)
            while chunk := os.read(fd, 1 << 20):
                total += len(chunk)
                if not reading.within_limit(key, total):  # it grew since fstat
                    return None
                chunks.append(chunk)
            return b"".join(chunks)
        except OSError:
            return None
        finally:
            os.close(fd)

    def data(self, path: Path | str) -> bytes | None:
        """The bytes of *path*, read once; a read problem is reported once and gives None."""
        key = path if isinstance(path, str) else str(path)
        cached = self._bytes.get(key, _MISSING)
        if cached is _AS_TEXT:
            return self._as_bytes(key)
        if cached is not _MISSING:
            return cached  # type: ignore[return-value]
        if key in self._regular:
            fast = self._read_regular(key)
            if fast is not None:
                self._bytes[key] = fast
                return fast
        p = Path(key)
        inside = key.startswith(self._root_text + os.sep)
        # A transcript (.log) grows without bound and is free text: past the read limit its tail is what is read.
        tail = key.endswith(".log")
        result = reading.read_bytes(p, root=self.root if inside else None, tail=tail)
        if tail:
            self._tails.add(key)
        if isinstance(result, LoadError):
            self._report_load(result, p)
            self._bytes[key] = None
            return None
        self.files.add(key)
        self._bytes[key] = result
        return result

    def text(self, path: Path | str) -> str | None:
        """UTF-8 text of *path* (binary and non-UTF-8 files are reported)."""
        key = path if isinstance(path, str) else str(path)
        cached = self._text.get(key, _MISSING)
        if cached is _LET_GO:
            del self._text[key]
        elif cached is not _MISSING:
            return cached  # type: ignore[return-value]
        raw = self.data(key)
        value: str | None = None
        if raw is not None:
            if b"\x00" not in raw:
                try:
                    value = raw.decode("utf-8")
                except UnicodeDecodeError:
                    value = None
                else:
                    if self._bytes.get(key) is raw:
                        self._bytes[key] = _AS_TEXT  # encoded again when asked: the same bytes
            if value is None:
                p = Path(key)
                decoded = reading.decode_text(p, raw)
                if isinstance(decoded, LoadError):
                    self._report_load(decoded, p)
                else:
                    value = decoded
        self._text[key] = value
        return value

    def _as_bytes(self, key: str) -> bytes:
        text = self._text[key]
        assert text is not None
        return text.encode("utf-8")

    def json(self, path: Path | str) -> Any:
        """The parsed JSON value of *path*, or None when unusable (the problem is reported)."""
        key = path if isinstance(path, str) else str(path)
        cached = self._json.get(key, _MISSING)
        if cached is not _MISSING:
            return cached
        text = self.text(key)
        value: Any = None
        if text is not None:
            try:
                value = json.loads(text)
            except (ValueError, RecursionError):
                # The safe parser words the problem (with its line) exactly as every reader does.
                p = Path(key)
                parsed = reading.parse_json(p, text)
                if isinstance(parsed, LoadError):
                    self.report(INVALID_JSON, p, parsed.reason, parsed.line)
                else:
                    value = parsed
            if value is not None:
                self._report_repeated(key, reading.repeated_key(text, value))
        self._json[key] = value
        return value

    def _report_repeated(self, key: str, repeated: str | None) -> None:
        if repeated is not None:
            self.report(
                DUPLICATE_KEY,
                Path(key),
                f"key {repeated!r} appears more than once in one object; "
                "readers disagree on which value counts (okstra's keep the last)",
            )

    def doc(self, path: Path | str, model: type[M]) -> M | None:
        """*path* validated as *model*; schema problems are reported (once) and give None."""
        text = path if isinstance(path, str) else str(path)
        key = (text, model)
        if key in self._docs:
            return self._docs[key]  # type: ignore[no-any-return]
        value = self.json(text)
        result: M | None = None
        if value is not None:
            try:
                result = model.model_validate(value)
            except (ValidationError, RecursionError):
                result = self.validate(Path(text), value, model)
        if result is not None and (absent := absent_added(result)):
            self._report_absent(Path(text), absent)
        self._docs[key] = result
        if result is not None and len(self._text.get(text) or "") >= PARSED_KEPT_BELOW:
            self._json.pop(text, None)  # parsed again from its text, should a rule ask for the JSON
        return result

    def doc_by_row(
        self, path: str, model: type[M], field: str, row: type[R], keep: Callable[[R], K]
    ) -> tuple[M, list[K]] | None:
        """*path* validated as *model* with its list *field* validated one *row* at a time, each kept only as *keep*
        makes it from its model; the head comes back with that field empty. None when the document is unusable.

        What is reported is what :meth:`doc` reports: a document this path cannot take (*field* not a list, a row
        or the head failing) goes through :meth:`doc` itself. The models of every row are never held at once, nor
        beside the parsed JSON: a 100,000-task catalog's models are about 180 megabytes. Only for a *model* that
        checks nothing across its rows: each row is validated alone, as its list would validate it.
        """
        value = self._json.pop(path, _MISSING)
        if value is _MISSING:
            streamed, answer = self._streamed_by_row(path, model, field, row, keep)
            if streamed:
                return answer
            value = self.json(path)
            self._json.pop(path, None)
        if value is None:
            return None  # unusable, and reported so
        alias = model.model_fields[field].alias or field
        rows = value if isinstance(value, list) else value.get(alias) if isinstance(value, dict) else None
        if not isinstance(rows, list):
            return self._whole_by_row(path, model, field, keep)
        head_value = {k: v for k, v in value.items() if k != alias} if isinstance(value, dict) else {}
        try:
            head = model.model_validate({**head_value, alias: []})
            kept: list[K] = []
            first: list[R] = []  # enough rows for the absent fields' info, which names those of the first ones
            for index, item in enumerate(rows):
                validated = row.model_validate(item)
                kept.append(keep(validated))
                if index < ABSENT_ROWS_SEEN:
                    first.append(validated)
                rows[index] = None  # its model is kept as *keep* made it; the parsed row is no longer needed
        except (ValidationError, RecursionError):
            return self._whole_by_row(path, model, field, keep)
        return self._by_row_answer(path, head, field, first, kept)

    def _by_row_answer(self, path: str, head: M, field: str, first: list[R], kept: list[K]) -> tuple[M, list[K]]:
        """The head (its *field* empty) and the rows as kept; the absent fields' info from the *first* rows."""
        setattr(head, field, first)
        self._report_absent(Path(path), absent_added(head))
        setattr(head, field, [])
        return head, kept

    def _streamed_by_row(
        self, path: str, model: type[M], field: str, row: type[R], keep: Callable[[R], K]
    ) -> tuple[bool, tuple[M, list[K]] | None]:
        """``(True, answer)``: :meth:`doc_by_row`'s answer with the document parsed a row at a time from its text
        (:func:`reading.object_rows`), only one parsed row held beside the text, never the whole list (about 80
        megabytes for a catalog of 100,000 tasks). ``(False, None)`` when the text is not an object this reads
        exactly, or a row or the head fails its model: the caller then parses it whole and reports what
        :meth:`doc` reports."""
        text = self.text(path)
        if text is None:
            return True, None  # unreadable, and reported so
        alias = model.model_fields[field].alias or field
        head_value: dict[str, Any] = {}
        kept: list[K] = []
        first: list[R] = []  # enough rows for the absent fields' info, which names those of the first ones
        keys = 1  # the list's own key
        try:
            for index, item in enumerate(reading.object_rows(text, alias, head_value)):
                keys += reading.count_keys(item)
                validated = row.model_validate(item)
                kept.append(keep(validated))
                if index < ABSENT_ROWS_SEEN:
                    first.append(validated)
            head = model.model_validate({**head_value, alias: []})
        except (ValueError, ValidationError, RecursionError):
            return False, None
        self._report_repeated(path, reading.repeated_key_of(text, keys + reading.count_keys(head_value)))
        del text
        self._let_go(path)
        return True, self._by_row_answer(path, head, field, first, kept)

    def _let_go(self, path: str) -> None:
        """Drop the text (and bytes) of *path*, read whole: it still counts as read (:meth:`read_remaining` does not
        read it again), and is read again only should a rule ask for it again. A catalog of 100,000 tasks is about
        30 megabytes of text, held otherwise beside everything the project's rules build from it."""
        if self._text.get(path) is not None:
            self._text[path] = _LET_GO
            self._bytes.pop(path, None)

    def _whole_by_row(
        self, path: str, model: type[M], field: str, keep: Callable[[Any], K]
    ) -> tuple[M, list[K]] | None:
        """:meth:`doc_by_row`'s answer from the whole document validated at once (parsed again from its text)."""
        whole = self.doc(path, model)
        if whole is None:
            return None
        return whole, [keep(r) for r in getattr(whole, field)]

    def _report_absent(self, path: Path, absent: list[str]) -> None:
        """One info (OKS026) naming the project-added fields a document lacks; nothing when it lacks none."""
        if not absent:
            return
        shown = ", ".join(absent[:12]) + (f" and {len(absent) - 12} more" if len(absent) > 12 else "")
        self.report(
            PROJECT_FIELDS_ABSENT,
            path,
            f"lacks fields this project's writers add (optional on read, not named by the contract): {shown}",
        )

    # ------------------------------------------------- a source for the owners

    def known_bytes(self, path: str) -> bytes | None:
        """Bytes already read from inside the project (see :class:`okstra_core.reading.Source`)."""
        if not path.startswith(self._root_text + os.sep):
            return None  # files outside were read without the root's symlink rule
        if path in self._tails:
            return None  # perhaps only its last lines: a reader wanting the whole file reads it
        found = self._bytes.get(path)
        return self._as_bytes(path) if found is _AS_TEXT else found

    def known_model(self, path: str, model: type[BaseModel]) -> BaseModel | None:
        """A document already validated from those bytes (see :class:`okstra_core.reading.Source`)."""
        if not path.startswith(self._root_text + os.sep):
            return None
        found: BaseModel | None = self._docs.get((path, model))
        return found

    def known_names(self, folder: str) -> list[str] | None:
        """A folder's names as already listed (see :class:`okstra_core.reading.Source`)."""
        if not folder.startswith(self._root_text + os.sep):
            return None
        return self._names.get(folder)

    def known_is_dir(self, path: str) -> bool | None:
        """Whether *path* is a folder (a symlink to one too), as its folder's listing classified it (see
        :class:`okstra_core.reading.Source`); None when that folder was not listed or the entry is not usable."""
        if not path.startswith(self._root_text + os.sep):
            return None
        parent, name = os.path.split(path)
        listing, names = self._by_name.get(parent), self._names.get(parent)
        if listing is None or names is None:
            return None
        entry = listing.get(name)
        if entry is None:
            # Not there at all, or a private entry (writer debris, the reservations folder) not classified.
            return None if name in names else False
        return None if entry.kind == "bad" else entry.kind == "dir"

    def known_lexists(self, path: str) -> bool | None:
        """Whether *path* names an entry, as its folder's listing has it (see
        :class:`okstra_core.reading.Source`); None when that folder was not listed."""
        if not path.startswith(self._root_text + os.sep):
            return None
        parent, name = os.path.split(path)
        names = self._names.get(parent)
        if names is None:
            return None
        at = bisect.bisect_left(names, name)  # sorted, as listed
        return at < len(names) and names[at] == name

    def looked_at(self, path: str) -> None:
        """Count *path*, looked at outside this unit's listings and reads (another project's file), among what
        its findings rest on (:meth:`touched`)."""
        self._looked.add(path)

    def is_dir_outside(self, path: str) -> bool:
        """Whether *path*, outside the project and home (another project's root), is a folder; looked at."""
        self.looked_at(path)
        return os.path.isdir(path)

    def touched(self) -> list[str]:
        """Every folder this unit listed, every file it read (or tried to) and every path it looked at: what its
        findings rest on."""
        # A text let go (:meth:`_let_go`) is among the texts only.
        return [*self._names, *self._bytes, *self._text, *self._looked]

    def owner(self) -> AbstractContextManager[None]:
        """A block in which owner functions read through this unit's cache."""
        return reading.use_source(self)

    def validate(self, path: Path, value: Any, model: type[M], line: int | None = None) -> M | None:
        """Validate a parsed value, reporting each rule's share of the errors in one finding."""
        try:
            return model.model_validate(value)
        except ValidationError as exc:
            self._report_validation(path, model, exc, line)
        except RecursionError:
            self.report(SCHEMA_MISMATCH, path, "nesting too deep to validate", line)
        return None

    def validate_quiet(self, value: Any, model: type[BaseModel]) -> bool:
        """Whether *value* validates as *model*, without reporting anything."""
        try:
            model.model_validate(value)
        except (ValidationError, RecursionError):
            return False
        return True

    def _report_validation(self, path: Path, model: type[BaseModel], exc: ValidationError, line: int | None) -> None:
        grouped: dict[str, list[Any]] = {}
        for err in exc.errors():
            grouped.setdefault(_validation_rule(model, err), []).append(err)
        for rule, errs in grouped.items():
            parts = [reading.describe_error(err) for err in errs[:3]]
            if len(errs) > 3:
                parts.append(f"and {len(errs) - 3} more")
            self.report(rule, path, f"does not match {model.__name__}: " + "; ".join(parts), line)

    def jsonl(self, path: Path, model: type[M]) -> list[tuple[int, M]]:
        """Valid records of a JSONL file with their line numbers; bad lines are reported (OKS021)."""
        text = self.text(path)
        if text is None:
            return []
        doc = reading.parse_jsonl(path, text, model)
        bad: set[int] = set()
        for err in doc.errors:
            self.report(BAD_JSONL_LINE, path, err.reason, err.line)
            if err.line is not None and "torn" not in err.reason:
                bad.add(err.line)
        total = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        good_lines = [n for n in range(1, total + 1) if n not in bad]
        # One info for the whole file: every field some line lacks, in field order.
        self._report_absent(path, list(dict.fromkeys(f for rec in doc.records for f in absent_added(rec))))
        return list(zip(good_lines, doc.records, strict=False))

    def sidecar(self, path: Path, header_model: type[M]) -> tuple[M, str] | None:
        """A Markdown sidecar's header and body (OKS023 for each bad header line, OKS025 for unknown keys).

        A bad line or a value of the wrong shape is reported and left out; the
        keys that did parse are still returned, so the rules that need only them
        (a digest, a fingerprint) still run. None when no usable header remains.
        """
        text = self.text(path)
        if text is None:
            return None
        parsed, errors = parse_sidecar_lenient(text)
        for err in errors:
            self.report(BAD_SIDECAR_HEADER, path, f"bad header: {err.reason}", err.line)
        if parsed is None:
            return None
        values = dict(parsed.header)
        for _ in range(len(values) + 1):
            try:
                header = header_model.model_validate(values)
            except ValidationError as exc:
                bad = {str(e["loc"][0]) for e in exc.errors() if e.get("loc") and str(e["loc"][0]) in values}
                self.report(BAD_SIDECAR_HEADER, path, f"bad header: {reading.format_validation(exc)}")
                if not bad:
                    return None  # a required key is missing: nothing to check against
                for key in bad:
                    values.pop(key)
                continue
            unknown = getattr(header, "unknown_keys", None)
            for key in unknown() if unknown is not None else []:
                self.report(UNKNOWN_HEADER_KEY, path, f"header key {key!r} is not one this checker knows; kept")
            if not errors and values == dict(parsed.header):
                self._report_absent(path, absent_added(header))  # a key left out for being bad is not "absent"
            return header, parsed.body
        return None

    def guard(self, rule_name: str, path: Path, fn: Callable[..., None], *args: Any) -> None:
        """Run ``fn(*args)``; an unexpected exception becomes an OKS009 finding, not a traceback."""
        try:
            fn(*args)
        except Exception as exc:
            self.report(RULE_FAILED, path, f"rule {rule_name} failed: {exc.__class__.__name__}: {exc}"[:500])

    def read_remaining(self, paths: Iterable[str]) -> None:
        """Read every listed file not read yet, so that unreadable or non-text files are reported."""
        done = self._text
        for path in paths:
            if path in done:
                continue
            if MIGRATIONS_PART in path:
                # Byte-for-byte archives of replaced (invalid) state: only reading them must work.
                self.data(path)
            else:
                self.text(path)
