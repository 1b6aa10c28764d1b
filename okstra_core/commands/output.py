"""``-o FILE``: where every verb with an output file writes, resolved in one place.

A relative FILE is relative to the current working folder, as git's
``--output`` and ruff's ``--output-file`` read it; never to the project, the
store or the file's own folder. The file is written where the user's shell
would find it, and messages name it as the user gave it. The folder must exist
(nothing is created above the file); the write is create-only (identical bytes
already there are a success), or with *replace* a whole-file replacement of a
regular file. Never through a symlink.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import OkstraError, WriteRefused
from ..writes import Outcome


def output_path(given: Path | str) -> Path:
    """The absolute path ``-o`` *given* names: a relative one joined to the current working folder.

    Symlinks are not resolved here: the writers refuse one in the last component and follow the folders'.
    """
    return Path(os.path.abspath(given))


def names_no_file(given: Path | str) -> bool:
    """Whether *given* cannot name a file to write (empty, ``.``, ``..``, or ending in a separator)."""
    text = os.fspath(given)
    return not text or text.endswith(("/", os.sep)) or Path(text).name in ("", ".", "..")


def write_output_file(given: Path | str, data: bytes, *, replace: bool = False) -> Outcome:
    """Write *data* to the file ``-o`` *given* names; a refusal names *given* as the user wrote it.

    Create-only unless *replace* (then the file, when present, must be regular and is replaced whole).
    """
    from .. import writes, writes_outside

    if names_no_file(given):
        raise WriteRefused(None, f"{os.fspath(given)}: does not name a file")  # a Path would drop a final "/"
    target = output_path(given)
    if not target.parent.is_dir():
        raise WriteRefused(Path(given), "output folder does not exist")
    try:
        if replace:
            return writes_outside.replace_file(target, data)
        # The folder is the authorised root and the target its direct child: nothing is created above it.
        # A report for people and CI tools, never read back by a store loader: no store size limit.
        return writes.create_only(target.parent, target, data, max_bytes=None)
    except OkstraError as exc:
        raise type(exc)(Path(given), exc.reason) from exc
