"""The workbench's view preferences, per user: ``workbench.json`` in the user's configuration folder.

``$XDG_CONFIG_HOME/okstra/workbench.json`` (else ``~/.config/okstra/``; never
inside a store) holds ``{"version": 1, "theme": NAME}``: what the person chose
in one session comes back in the next. Keys this version does not know (a later
one's) are kept when the file is written again.

The file is the person's, so reading it is tolerant: a missing file is the
defaults, silently; a file that cannot be read, is not JSON, is not an object
or holds a value of the wrong type is the defaults with one warning (one line
naming the file and the reason), and is replaced at the next change. Writing
replaces it whole (temp file, fsync, rename), never through a symlink, so a
crash leaves the old file or the new one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from . import layout, reading
from .errors import LoadError, OkstraError

PREFERENCES_VERSION: Final = 1
#: A preferences file larger than this is not read (it holds a few short values).
MAX_BYTES: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class Preferences:
    """The view preferences; None where the person chose nothing (the workbench's default)."""

    theme: str | None = None
    #: Keys of the file this version does not know, written back as they were.
    other: dict[str, Any] = field(default_factory=dict)

    def with_theme(self, theme: str) -> Preferences:
        return replace(self, theme=theme)


@dataclass(frozen=True, slots=True)
class Loaded:
    """The preferences read, and the one-line warning when the file could not serve (defaults then)."""

    preferences: Preferences
    warning: str | None = None


def preferences_path() -> Path:
    """Where the preferences are kept."""
    return layout.okstra_config_dir() / layout.PREFERENCES_FILE


def load(path: Path | None = None) -> Loaded:
    """The preferences at *path* (default :func:`preferences_path`); never raises."""
    path = path or preferences_path()
    opened = reading.open_own_file(path)
    if opened is None:
        return Loaded(Preferences())
    if isinstance(opened, LoadError):
        return _unusable(path, opened.reason)
    fd, st = opened
    try:
        if st.st_size > MAX_BYTES:
            return _unusable(path, f"larger than {MAX_BYTES // 1024} KiB")
        data = os.read(fd, MAX_BYTES + 1)
    except OSError as exc:
        return _unusable(path, f"cannot be read ({exc.strerror or exc})")
    finally:
        os.close(fd)
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return _unusable(path, "is not valid JSON")
    if not isinstance(doc, dict):
        return _unusable(path, "is not a JSON object")
    theme = doc.get("theme")
    if theme is not None and (not isinstance(theme, str) or not theme):
        return _unusable(path, "theme: expected the name of a theme")
    other = {k: v for k, v in doc.items() if k not in ("version", "theme")}
    return Loaded(Preferences(theme=theme, other=other))


def _unusable(path: Path, reason: str) -> Loaded:
    return Loaded(Preferences(), f"{path}: {reason}; using the default preferences")


def save(preferences: Preferences, path: Path | None = None) -> str | None:
    """Replace the preferences file with *preferences*, whole; one line saying why not, or None."""
    from . import writes_outside

    path = path or preferences_path()
    doc: dict[str, Any] = {**preferences.other, "version": PREFERENCES_VERSION}
    if preferences.theme is not None:
        doc["theme"] = preferences.theme
    data = (json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    try:
        writes_outside.replace_file(path, data, max_bytes=MAX_BYTES)
    except (OkstraError, OSError) as exc:
        reason = exc.reason if isinstance(exc, OkstraError) else (exc.strerror or str(exc))
        return f"{path}: cannot keep the preferences: {reason}"
    return None
