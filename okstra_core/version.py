"""The installed package's version, read from its metadata, and the ``--version`` flag that prints it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

#: The distribution that ships ``okstra_core`` and ``okstra_tui``.
DISTRIBUTION = "okstra-workbench"


def version() -> str:
    """The installed version of :data:`DISTRIBUTION` (``"unknown"`` when run from an uninstalled copy)."""
    from importlib import metadata  # imported when asked: it costs every command's start otherwise

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


class VersionAction(argparse.Action):
    """``--version``: print ``PROG VERSION`` on stdout and exit 0 (the metadata is read only when asked)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        kwargs.setdefault("help", "print the version and exit")
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        sys.stdout.write(f"{parser.prog} {version()}\n")
        sys.stdout.flush()
        parser.exit(0)
