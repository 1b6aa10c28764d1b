"""What the benchmark scripts share: timing one command run as a fresh process."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def byte_compile() -> None:
    """Byte-compile the product's own modules, as installing the package does.

    Every dependency is imported from byte code written at install time; an editable checkout (or
    ``PYTHONDONTWRITEBYTECODE``) would otherwise make each ``okstra`` or workbench start compile its sources
    and measure that instead.
    """
    import compileall

    for package in ("okstra_core", "okstra_tui"):
        compileall.compile_dir(REPO / package, quiet=1)


def timed_run(cmd: list[str], ok: tuple[int, ...] = (0, 1)) -> tuple[float, str]:
    """Run *cmd*; its wall time in seconds and its standard output. Any other exit status stops the benchmark."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd[:3])} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def write_section(doc_path: Path, section: str, text: str) -> None:
    """Replace the section headed *section* (a ``## `` line) of *doc_path* with *text*, or append it."""
    doc = doc_path.read_text(encoding="utf-8")
    if section in doc:
        start = doc.index(section)
        nxt = doc.find("\n## ", start + len(section))
        doc = doc[:start] + text + (doc[nxt + 1 :] if nxt != -1 else "")
    else:
        doc = doc.rstrip("\n") + "\n\n" + text
    doc_path.write_text(doc, encoding="utf-8")
