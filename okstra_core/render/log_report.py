"""``okstra log-report``: prompt snapshots and their execution transcripts, sized separately.

Each wrapper ``.log`` beside a persisted prompt ``.md`` is a growing
transcript, not another prompt snapshot. The report pairs the siblings by
name (:func:`okstra_core.names.log_name_for`), gives the prompt bytes and the
transcript bytes separately, and keeps the legacy log-oriented fields:
``sizeBytes`` (per pair: the transcript's bytes) and ``totalBytes`` (the sum
of all transcript bytes). Sizes are the files' real sizes at the time of the
scan (``stat``, no reading). A run dir with stage folders
(``runs/implementation/``) is reported stage by stage; prompts still left
flat at the top of a run dir are included and marked ``flat``.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import layout, names, reading
from ..errors import LoadError

PROMPT_KINDS = {"lead-prompt": "lead", "worker-prompt": "worker", "reverify-prompt": "reverify"}
LOG_KINDS = {"lead-prompt-log": "lead", "worker-prompt-log": "worker", "reverify-prompt-log": "reverify"}


@dataclass(slots=True)
class LogPair:
    """One prompt and its transcript; either side may be missing."""

    name: str  # the shared stem: ``<prompt-name>`` without ``.md`` / ``.log``
    role: str  # lead, worker or reverify
    prompt: str | None = None  # path relative to the reported run dir
    prompt_bytes: int | None = None
    log: str | None = None
    transcript_bytes: int | None = None
    flat: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def size_bytes(self) -> int:
        """Legacy log-oriented size: the transcript's bytes (0 without a transcript)."""
        return self.transcript_bytes or 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "role": self.role,
            "prompt": self.prompt,
            "promptBytes": self.prompt_bytes,
            "log": self.log,
            "transcriptBytes": self.transcript_bytes,
            "sizeBytes": self.size_bytes,
            "paired": self.prompt is not None and self.log is not None,
        }
        if self.flat:
            out["flat"] = True
        if self.problems:
            out["problems"] = list(self.problems)
        return out


@dataclass(slots=True)
class LogReport:
    """All prompt/transcript pairs of one run dir (or of each of its stages)."""

    run_dir: Path
    pairs: list[LogPair] = field(default_factory=list)
    #: Why the run dir itself could not be scanned (empty when it could).
    problems: list[str] = field(default_factory=list)

    @property
    def prompt_bytes(self) -> int:
        return sum(p.prompt_bytes or 0 for p in self.pairs)

    @property
    def transcript_bytes(self) -> int:
        return sum(p.transcript_bytes or 0 for p in self.pairs)

    @property
    def total_bytes(self) -> int:
        """Legacy field: the sum of transcript (``.log``) bytes."""
        return self.transcript_bytes

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` document (camelCase; legacy ``sizeBytes``/``totalBytes`` kept)."""
        return {
            "runDir": str(self.run_dir),
            "pairs": [p.to_json() for p in self.pairs],
            "promptCount": sum(1 for p in self.pairs if p.prompt is not None),
            "transcriptCount": sum(1 for p in self.pairs if p.log is not None),
            "promptBytes": self.prompt_bytes,
            "transcriptBytes": self.transcript_bytes,
            "totalBytes": self.total_bytes,
            **({"problems": list(self.problems)} if self.problems else {}),
        }

    def to_text(self) -> str:
        """A fixed-width table for people."""
        width = max([len(p.name) + (2 if p.flat else 0) for p in self.pairs] + [len("PROMPT")])
        lines = [
            f"Log report: {self.run_dir}",
            f"{'PROMPT'.ljust(width)}  {'PROMPT BYTES':>12}  {'TRANSCRIPT BYTES':>16}",
        ]
        for p in self.pairs:
            label = p.name + (" *" if p.flat else "")
            pb = "-" if p.prompt_bytes is None else str(p.prompt_bytes)
            tb = "-" if p.transcript_bytes is None else str(p.transcript_bytes)
            lines.append(f"{label.ljust(width)}  {pb:>12}  {tb:>16}")
            lines.extend(f"  ! {problem}" for problem in p.problems)
        lines.append(
            f"Total: {sum(1 for p in self.pairs if p.prompt is not None)} prompts ({self.prompt_bytes} bytes), "
            f"{sum(1 for p in self.pairs if p.log is not None)} transcripts ({self.transcript_bytes} bytes)"
        )
        if any(p.flat for p in self.pairs):
            lines.append("* flat legacy artifact at the top of the run dir")
        return "\n".join(lines) + "\n"


def _size(path: Path, looked: os.stat_result | None = None) -> int | str:
    """Real size of a regular file (symlinks not followed), or why there is none; *looked*: its ``lstat``, taken
    already."""
    try:
        st = looked if looked is not None else reading.lstat(path)
    except OSError as exc:
        return f"cannot stat: {exc.strerror or exc}"
    if stat.S_ISLNK(st.st_mode):
        return "is a symlink; not measured"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    return st.st_size


def _listdir(folder: Path) -> list[str]:
    listed = reading.list_folder(folder)  # recorded, as every listing of the read side
    return [] if isinstance(listed, LoadError) else listed


def _collect(
    pairs: dict[str, LogPair],
    folder: Path,
    base: Path,
    entries: list[tuple[str, names.ParsedName]],
    flat: bool,
    looked: dict[str, os.stat_result] | None = None,
) -> None:
    for filename, parsed in entries:
        is_prompt = parsed.kind in PROMPT_KINDS
        role = PROMPT_KINDS.get(parsed.kind) or LOG_KINDS.get(parsed.kind)
        if role is None:
            continue
        stem = filename.removesuffix(".md") if is_prompt else filename.removesuffix(".log")
        rel_stem = layout.rel(folder / stem, base)
        pair = pairs.setdefault(rel_stem, LogPair(name=rel_stem, role=role, flat=flat))
        rel = layout.rel(folder / filename, base)
        size = _size(folder / filename, looked.get(filename) if looked else None)
        if isinstance(size, str):
            pair.problems.append(f"{rel}: {size}")
            size_value = None
        else:
            size_value = size
        if is_prompt:
            pair.prompt, pair.prompt_bytes = rel, size_value
        else:
            pair.log, pair.transcript_bytes = rel, size_value


def _is_run_dir(path: Path) -> bool:
    """Whether *path* really is a run dir (or a stage of one) of a store."""
    real = Path(os.path.realpath(path))
    type_dir = real.parent if layout.parse_stage_dir(real.name) is not None else real
    return type_dir.parent == layout.runs_dir(type_dir.parent.parent) and layout.OKSTRA_DIR in real.parts


def _scan_run_dir(
    pairs: dict[str, LogPair],
    run_dir: Path,
    base: Path,
    listed: list[str],
    looked: dict[str, os.stat_result] | None = None,
) -> None:
    """Pair the prompts and transcripts of *run_dir*, whose names are *listed* (*looked*: the status of some of
    its own files, taken already)."""
    prompts = run_dir / layout.PROMPTS_DIR
    parsed = [(n, p) for n in _listdir(prompts) if (p := names.parse_in_category(layout.PROMPTS_DIR, n)) is not None]
    _collect(pairs, prompts, base, parsed, flat=False)
    flat = [(n, p) for n in listed if (p := names.classify_flat(n)) is not None and p.category == layout.PROMPTS_DIR]
    _collect(pairs, run_dir, base, flat, flat=True, looked=looked)


def _folder_names(path: Path) -> list[str] | None:
    """*path*'s names when it is a folder (one look; a folder that cannot be listed reads as empty), else None."""
    listed = reading.list_if_folder(path)
    return [] if isinstance(listed, LoadError) else listed


def log_report(
    run_dir: Path,
    *,
    listed: bool = False,
    names: list[str] | None = None,
    stages: bool = True,
    looked: dict[str, os.stat_result] | None = None,
) -> LogReport:
    """Pair every ``.log`` transcript with its ``.md`` prompt under *run_dir*.

    A run dir that is not a directory gives an empty report whose
    ``problems`` say so (the CLI refuses it). A path given by a person is
    checked to be a run dir (its real path: every folder above it is looked
    at); *listed*: it is one of a task's run dirs as the store lists them
    (:attr:`okstra_core.store.Task.run_dirs`), which is not checked again; *names*, its names as that listing
    read them (not listed again); *looked*, the status of its flat files as that run dir took it
    (:meth:`okstra_core.store.RunDir.flat_looks`: not looked at again). Without *stages*, its stage folders are
    left to their own reports.
    """
    path = Path(run_dir)
    top = names if names is not None else _folder_names(path)
    if top is None:
        return LogReport(path, problems=["run dir is missing or not a directory"])
    if not listed and not _is_run_dir(path):
        # "/" or a project root would otherwise report "0 prompts" as if it were an empty run.
        return LogReport(path, problems=["not a run dir (expected .okstra/tasks/<group>/<task>/runs/<task-type>)"])
    pairs: dict[str, LogPair] = {}
    _scan_run_dir(pairs, path, path, top, looked)
    for entry in top if stages else ():
        stage = _folder_names(path / entry) if layout.parse_stage_dir(entry) is not None else None
        if stage is not None:
            _scan_run_dir(pairs, path / entry, path, stage)
    report = LogReport(path)
    report.pairs = [pairs[key] for key in sorted(pairs, key=_sort_key)]
    return report


def _sort_key(name: str) -> tuple[Any, ...]:
    """Stages in numeric order, then by name."""
    head, _, rest = name.partition("/")
    stage = layout.parse_stage_dir(head)
    return (stage or 0, rest if stage else name)
