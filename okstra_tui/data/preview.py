"""What the preview pane shows: a file or artifact, read through the core's loaders."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from okstra_core import layout, names, reading
from okstra_core.errors import LoadError
from okstra_core.models.sidecars import Header
from okstra_core.store import Artifact, Project, RunDir, TaskRef
from okstra_core.text import visible

if TYPE_CHECKING:
    from pydantic import BaseModel


#: The kind of a :class:`PreviewTarget` standing for a run dir's log report (its path: the run dir).
LOG_REPORT = "log-report"


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


#: Rows of a table or a JSONL file a preview shows; the rest is counted, not read (``P`` opens the whole file).
PREVIEW_ROWS = 500
#: Characters of text a preview shows; the rest is not read (or, for JSON, not pretty-printed). The search
#: index keeps the same number of each file, so that every match it finds is in the preview.
PREVIEW_CHARS = reading.PREVIEW_CHARS
#: Above this size a Markdown file is shown as highlighted text, not rendered (rendering is slow).
MARKDOWN_RENDER_LIMIT = 200_000
#: Rendered Markdown is a widget per block and several per list item, laid out on the UI thread: about 1 ms a
#: block and 8 ms a list item. Past this many milliseconds (:func:`markdown_cost`) it is shown as highlighted text.
MARKDOWN_RENDER_BUDGET = 1_000
#: Problems of one file listed as panels; more are counted in one last panel.
PREVIEW_PROBLEMS = 20
#: How much of a growing ``.log`` transcript the preview shows.
LOG_TAIL_LINES = 400

PAGER = "P opens the pager"


@dataclass(slots=True)
class LoadedPreview:
    """The preview pane's content, loaded in a worker: only what the pane shows, control characters visible."""

    target: PreviewTarget
    #: The text shown (at most :data:`PREVIEW_CHARS` characters), or None.
    text: str | None = None
    error: LoadError | None = None
    model: Any = None
    #: A JSON document pretty-printed (at most :data:`PREVIEW_CHARS` characters), shown instead of ``text``.
    pretty: str | None = None
    problems: list[str] = field(default_factory=list)
    #: A sidecar's header as YAML-like lines, shown above its body.
    header: str | None = None
    #: What was left out, when something was ("showing the first …").
    cut: str | None = None
    #: True when ``text`` is the whole file.
    complete: bool = True
    #: True when ``text`` is Markdown small enough to render (:data:`MARKDOWN_RENDER_BUDGET`).
    render_markdown: bool = False


def load_preview(target: PreviewTarget, root: Path) -> LoadedPreview:
    """Read what the preview of *target* shows, through the core's loaders, and no more than that.

    JSON is parsed once and validated from that parse; only its first
    :data:`PREVIEW_CHARS` characters are pretty-printed. JSONL and plain text
    are read from the start up to the caps, and a JSONL file's remaining lines
    are counted without being decoded or validated.
    """
    out = LoadedPreview(target)
    path = target.path
    if (target.artifact is not None and target.artifact.kind == "duty-contracts") or (
        path.is_dir() and not path.is_symlink()
    ):
        _load_folder(out)
    elif target.fmt == "log":
        _load_log(out, root)
    elif target.fmt == "json":
        _load_json(out, root)
    elif target.fmt == "jsonl":
        _load_jsonl(out, root)
    elif target.artifact is not None and target.artifact.spec.reader == "sidecar" and target.artifact.spec.model:
        _load_sidecar(out, root, target.artifact.spec.model)
    else:
        _load_text(out, root)
    if target.fmt == "md" and out.text is not None:
        _decide_markdown(out)
    if len(out.problems) > PREVIEW_PROBLEMS:
        rest = len(out.problems) - PREVIEW_PROBLEMS
        out.problems[PREVIEW_PROBLEMS:] = [f"{rest:,} more problems not shown (x runs the checker)"]
    return out


_LIST_ITEM = re.compile(r"^[ \t]{0,12}(?:[-*+]|\d{1,9}[.)])[ \t]", re.MULTILINE)
_BLOCK = re.compile(r"\n[ \t]*\n(?=[ \t]*\S)")


def markdown_cost(text: str) -> int:
    """Milliseconds of UI thread that rendering *text* as Markdown is estimated to take (see the budget)."""
    return 8 * len(_LIST_ITEM.findall(text)) + len(_BLOCK.findall(text)) + 1


def _decide_markdown(out: LoadedPreview) -> None:
    text = out.text or ""
    if not out.complete or len(text) > MARKDOWN_RENDER_LIMIT:
        return
    if markdown_cost(text) <= MARKDOWN_RENDER_BUDGET:
        out.render_markdown = True
    elif out.cut is None:
        out.cut = f"shown as Markdown source: too many blocks and list items to lay out quickly ({PAGER})"


def _load_folder(out: LoadedPreview) -> None:
    path = out.target.path
    try:
        entries = sorted(os.listdir(path))
    except OSError as exc:
        out.error = LoadError(path, f"cannot list folder: {exc.strerror or exc}")
        return
    out.text = visible("\n".join(entries) or "(empty folder)", multiline=True)
    if out.target.artifact is not None:
        loaded = out.target.artifact.load()
        if isinstance(loaded, LoadError):
            out.problems.append(str(loaded))
        else:
            out.model = loaded


def _load_log(out: LoadedPreview, root: Path) -> None:
    # A transcript may grow past the reader's limit: its end is what a person wants, so it is read from there.
    text = reading.read_tail(out.target.path, root=root)
    if isinstance(text, LoadError):
        out.error = text
        return
    lines = text.splitlines()
    if len(lines) > LOG_TAIL_LINES:
        out.problems.append(f"showing the last {LOG_TAIL_LINES} of {len(lines)} lines")
        lines = lines[-LOG_TAIL_LINES:]
    out.text = visible("\n".join(lines), multiline=True)


def _load_json(out: LoadedPreview, root: Path) -> None:
    path = out.target.path
    text = reading.read_text(path, root=root)
    if isinstance(text, LoadError):
        out.error = text
        return
    size = len(text)
    value = reading.parse_json(path, text)
    del text  # the parsed value is all that is needed from here on
    if isinstance(value, LoadError):
        out.error = value
        return
    pretty, complete = pretty_head(value, PREVIEW_CHARS)
    out.pretty = visible(pretty, multiline=True)
    if not complete:
        out.cut = f"showing the first {len(pretty):,} characters of a {size:,}-character file ({PAGER})"
    artifact = out.target.artifact
    loaded = artifact.model_of(value) if artifact is not None else None
    if isinstance(loaded, LoadError):
        # The bytes parse but do not validate: show them, and say why.
        out.problems.append(loaded.reason)
    elif loaded is not None:
        out.model = loaded


def pretty_head(value: Any, limit: int) -> tuple[str, bool]:
    """The start of *value* pretty-printed as the store writes JSON (``digests.pretty_json``), at most *limit*
    characters cut at a line end; and whether that is all of it. The rest is never encoded."""
    parts: list[str] = []
    count = 0
    for chunk in json.JSONEncoder(indent=2, ensure_ascii=False).iterencode(value):
        parts.append(chunk)
        count += len(chunk)
        if count > limit:
            return reading.cut_at_line_end("".join(parts), limit), False
    return "".join(parts) + "\n", True


def _show_head(
    out: LoadedPreview, root: Path, *, max_lines: int | None = None, count_lines: bool = False
) -> reading.Head | None:
    """Read the start of the file into *out* (made visible); None, with ``out.error`` set, when it cannot be read."""
    head = reading.read_head(
        out.target.path, root=root, max_chars=PREVIEW_CHARS, max_lines=max_lines, count_lines=count_lines
    )
    if isinstance(head, LoadError):
        out.error = head
        return None
    out.text = visible(head.text, multiline=True)
    out.complete = head.complete
    return head


def _load_jsonl(out: LoadedPreview, root: Path) -> None:
    path = out.target.path
    head = _show_head(out, root, max_lines=PREVIEW_ROWS, count_lines=True)
    if head is None:
        return
    if not head.complete:
        whole = head.text[: head.text.rfind("\n") + 1]  # a line cut by the character cap is not checked
        shown = whole.count("\n")
        total = head.lines or shown
        out.cut = f"showing the first {shown:,} of {total:,} rows: {total - shown:,} more rows not shown ({PAGER})"
    else:
        whole = head.text
    model = out.target.artifact.jsonl_model() if out.target.artifact is not None else None
    if model is not None:
        doc = reading.parse_jsonl(path, whole, model)
        out.problems.extend(str(e.reason if e.line is None else f"line {e.line}: {e.reason}") for e in doc.errors)


def _load_sidecar(out: LoadedPreview, root: Path, header_model: type[BaseModel]) -> None:
    path = out.target.path
    text = reading.read_text(path, root=root)
    if isinstance(text, LoadError):
        out.error = text
        return
    loaded = reading.parse_sidecar_text(path, text, header_model)
    if isinstance(loaded, LoadError):
        out.problems.append(loaded.reason)
        body = text
    else:
        out.model = loaded
        header = loaded.header
        if isinstance(header, Header):
            out.header = "\n".join(visible(f"{k}: {v}") for k, v in header.dump().items())
        body = loaded.body
    shown = reading.cut_at_line_end(body, PREVIEW_CHARS)
    out.complete = len(shown) == len(body)
    if not out.complete:
        out.cut = f"showing the first {len(shown):,} of {len(body):,} characters ({PAGER})"
    out.text = visible(shown, multiline=True)


def _load_text(out: LoadedPreview, root: Path) -> None:
    head = _show_head(out, root)
    if head is not None and not head.complete:
        out.cut = f"showing the first {len(head.text):,} characters of a {head.size:,}-byte file ({PAGER})"


def artifact_for(project: Project, path: Path) -> Artifact | None:
    """The artifact a path names when it sits in a run dir's category folder (else None)."""
    try:
        rel = path.relative_to(layout.tasks_dir(project.root))
    except ValueError:
        return None
    parts = rel.parts
    # <group>/<task>/runs/<type>[/stage-<n>]/<category>/<file>
    if len(parts) < 6 or parts[2] != layout.RUNS_DIR:
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
