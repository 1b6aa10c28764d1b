"""What the preview pane shows: a file or artifact, read through the core's loaders."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from okstra_core import layout, names, reading
from okstra_core.errors import LoadError
from okstra_core.store import Artifact, Project, RunDir, TaskRef


@dataclass(frozen=True, slots=True)
class PreviewTarget:
    """What the preview pane shows: a file (or folder), and the artifact it is, when it is one."""

    path: Path
    label: str
    artifact: Artifact | None = None
    kind: str = "file"

    @property
    def fmt(self) -> str:
        if self.artifact is not None:
            return self.artifact.name.fmt
        name = self.path.name
        for suffix, fmt in (
            (".jsonl", "jsonl"),
            (".json", "json"),
            (".md", "md"),
            (".log", "log"),
            (".status", "status"),
            (".html", "html"),
            (".sh", "sh"),
            (".txt", "text"),
        ):
            if name.endswith(suffix):
                return fmt
        return "text"


@dataclass(slots=True)
class LoadedPreview:
    """The preview pane's content, loaded in a worker."""

    target: PreviewTarget
    text: str | None = None
    error: LoadError | None = None
    model: Any = None
    pretty: str | None = None
    problems: list[str] = field(default_factory=list)


#: How much of a growing ``.log`` transcript the preview shows.
LOG_TAIL_LINES = 400


def load_preview(target: PreviewTarget, root: Path) -> LoadedPreview:
    """Read a preview target through the core's loaders."""
    out = LoadedPreview(target)
    path = target.path
    if (target.artifact is not None and target.artifact.kind == "duty-contracts") or (
        path.is_dir() and not path.is_symlink()
    ):
        try:
            entries = sorted(os.listdir(path))
        except OSError as exc:
            out.error = LoadError(path, f"cannot list folder: {exc.strerror or exc}")
            return out
        out.text = "\n".join(entries) or "(empty folder)"
        if target.artifact is not None:
            loaded = target.artifact.load()
            if isinstance(loaded, LoadError):
                out.problems.append(str(loaded))
            else:
                out.model = loaded
        return out
    fmt = target.fmt
    # A transcript may grow past the reader's limit: its end is what a person wants, so it is read from there.
    text = reading.read_tail(path, root=root) if fmt == "log" else reading.read_text(path, root=root)
    if isinstance(text, LoadError):
        out.error = text
        return out
    if fmt == "log":
        lines = text.splitlines()
        if len(lines) > LOG_TAIL_LINES:
            out.problems.append(f"showing the last {LOG_TAIL_LINES} of {len(lines)} lines")
            lines = lines[-LOG_TAIL_LINES:]
        out.text = "\n".join(lines)
        return out
    out.text = text
    if fmt == "json":
        value = reading.parse_json(path, text)
        if isinstance(value, LoadError):
            out.error = value
            return out
        from okstra_core.digests import pretty_json

        out.pretty = pretty_json(value).decode("utf-8")
    if target.artifact is not None:
        loaded = target.artifact.load()
        if isinstance(loaded, LoadError):
            # The bytes read but do not validate: show them, and say why.
            out.problems.append(loaded.reason)
        elif isinstance(loaded, reading.JsonlDoc):
            out.model = loaded
            out.problems.extend(
                str(e.reason if e.line is None else f"line {e.line}: {e.reason}") for e in loaded.errors
            )
        else:
            out.model = loaded
    return out


def artifact_for(project: Project, path: Path) -> Artifact | None:
    """The artifact a path names when it sits in a run dir's category folder (else None)."""
    try:
        rel = path.relative_to(layout.tasks_dir(project.root))
    except ValueError:
        return None
    parts = rel.parts
    # <group>/<task>/runs/<type>[/stage-<n>]/<category>/<file>
    if len(parts) < 6 or parts[2] != "runs":
        return None
    task_root = layout.tasks_dir(project.root) / parts[0] / parts[1]
    stage = layout.parse_stage_dir(parts[4]) if len(parts) >= 7 else None
    category, filename = parts[-2], parts[-1]
    parsed = names.parse_in_category(category, filename)
    if parsed is None:
        return None
    ref = TaskRef(project, parts[0], parts[1], task_root)
    run = RunDir(ref.open(), path.parent.parent, parts[3], stage)
    return Artifact(path, parsed, run)
