"""What the A/B benchmark scripts share: another revision of this checkout, checked out for the length of a run."""

from __future__ import annotations

import argparse
import compileall
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent


@contextmanager
def other_revision(revision: str, who: str) -> Iterator[Path]:
    """*revision* checked out into a temporary worktree (its path), removed again when the block ends.

    *who* names the script in the one-line error when the revision cannot be checked out.
    """
    with tempfile.TemporaryDirectory(prefix="okstra-ab-") as tmp:
        other = Path(tmp) / "other"
        added = subprocess.run(
            ["git", "-C", str(CHECKOUT), "worktree", "add", "-q", "--detach", str(other), revision],
            capture_output=True,
            text=True,
            check=False,
        )
        if added.returncode != 0:
            raise SystemExit(f"{who}: cannot check out {revision!r}: {added.stderr.strip()}")
        try:
            yield other
        finally:
            subprocess.run(["git", "-C", str(CHECKOUT), "worktree", "remove", "--force", str(other)], check=False)


def byte_compiled(*sources: Path) -> None:
    """Byte-compile the packages of each checkout in *sources*, as an installed copy is: run from source where
    ``PYTHONDONTWRITEBYTECODE`` is set, every start would compile every module again."""
    for source in sources:
        for package in ("okstra_core", "okstra_tui"):
            compileall.compile_dir(str(source / package), quiet=1)


def ab_arguments(doc: str, rounds: int) -> argparse.ArgumentParser:
    """The arguments every A/B script takes: ``--root`` (a demo project), ``--against`` (the revision to compare
    with, default ``HEAD``) and ``--rounds`` (default *rounds*); *doc*'s first line describes the script."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--root", type=Path, required=True, help="a demo project (okstra demo DIR --tasks N)")
    parser.add_argument("--against", default="HEAD", help="the revision to compare with (default: HEAD)")
    parser.add_argument("--rounds", type=int, default=rounds)
    return parser
