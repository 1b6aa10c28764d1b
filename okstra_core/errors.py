"""Error values and the few exceptions the core raises at its edges."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class LoadError:
    """A file that could not be read or did not validate, as a value.

    ``path`` is the file as the caller named it; ``reason`` is one line.
    """

    path: Path
    reason: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else str(self.path)
        return f"{where}: {self.reason}"


class OkstraError(Exception):
    """Base class for refusals that the CLI turns into one-line messages."""

    def __init__(self, path: Path | str | None, reason: str) -> None:
        self.path = Path(path) if path is not None else None
        self.reason = reason
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}" if self.path is not None else self.reason

    def line(self, project_root: Path) -> str:
        """The refusal as one line, naming the file relative to *project_root* when it lies inside."""
        if self.path is None:
            return self.reason
        where = self.path.relative_to(project_root).as_posix() if self.path.is_relative_to(project_root) else self.path
        return f"{where}: {self.reason}"


class WriteRefused(OkstraError):
    """A write that would break a contract rule; nothing was changed."""


class ReadOnly(WriteRefused):
    """A write attempted under the read-only guard (``okstra-tui --read-only``, ``OKSTRA_READ_ONLY``)."""


class PathEscape(WriteRefused):
    """A target outside its authorised root, or reached through a symlink escape."""


class WriteFailed(OkstraError, OSError):
    """The operating system failed a write (disk full, I/O error); no partial file is visible.

    It is also an :class:`OSError`, so callers that handle I/O errors keep working.
    """


class LockTimeout(OkstraError):
    """A lock could not be taken in time."""


class ValidationFailed(OkstraError):
    """Input failed its model or schema."""


class LayoutError(OkstraError):
    """A request for a path or name that the contract does not allow."""
