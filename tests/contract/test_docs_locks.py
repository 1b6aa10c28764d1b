"""The docs name lock files where the writers really make them: in a private ``.locks/`` folder."""

from __future__ import annotations

import os
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: A lock file named in backticks: ``design-prep-inputs/.locks/PREP-nnn.lock``, ``*.lock``.
NAMED_LOCK = re.compile(r"`([^`\s]*\.lock)`")


def test_every_lock_the_docs_name_is_in_a_locks_folder() -> None:
    wrong = [
        f"{page.name}: {name}"
        for page in sorted(DOCS.glob("*.md"))
        for name in NAMED_LOCK.findall(page.read_text(encoding="utf-8"))
        if name != "*.lock" and "/.locks/" not in f"/{name}"
    ]
    assert wrong == []


def test_the_design_prep_confirmation_lock_is_where_the_docs_say(demo_root: Path) -> None:
    made = sorted(
        os.path.relpath(os.path.join(folder, name), os.path.dirname(os.path.dirname(folder)))
        for folder, _, files in os.walk(demo_root / ".okstra")
        for name in files
        if name.endswith(".lock") and re.fullmatch(r"PREP-\d{3}\.lock", name)
    )
    assert made, "the demo confirms design-prep inputs"
    named = set(NAMED_LOCK.findall((DOCS / "writes.md").read_text(encoding="utf-8")))
    for path in made:
        assert re.sub(r"PREP-\d{3}", "PREP-nnn", path) in named, path
