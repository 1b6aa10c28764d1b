"""The decisions inbox's items: what waits for a person, as every reader and writer of the inbox shares it.

The rules that make a decision pending live in :mod:`okstra_core.workflows.inbox_scan`, and
:mod:`okstra_core.workflows.inbox` reads them (``docs/inbox.md`` has them in prose). This module holds only the
values, so that an answer kept by the store index is shown without importing the models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple

from ..text import visible

InboxKind = Literal["direction-choice", "planning-prepare", "clarification", "design-prep", "approval"]
#: Why a decision is pending beyond "nothing answers it yet" (None: just that).
InboxDetail = Literal[
    "attach-pending",  # clarification: answered by a sidecar not yet attached to clarification-response.md
    "sidecar-stale",  # direction-choice: the sidecar's source-data-sha256 differs from the report bytes
    "sidecar-invalid",  # direction-choice: the sidecar does not parse
    "stale-fingerprint",  # design-prep: the last revision answers an older assessment
    "duplicate-revision",  # design-prep: the last revision number is recorded more than once
    "invalid-revision",  # design-prep: the last revision does not parse or disagrees with its name
]
KINDS: tuple[InboxKind, ...] = ("direction-choice", "planning-prepare", "clarification", "design-prep", "approval")
#: What each kind is called in a notice and in the activity feed ("a direction to choose").
DECISION_WORDS: dict[InboxKind, str] = {
    "direction-choice": "a direction to choose",
    "planning-prepare": "a choice to hand to planning",
    "clarification": "questions to answer",
    "design-prep": "a design item to confirm",
    "approval": "a phase to approve",
}
SUMMARY_MAX = 160


@dataclass(frozen=True, slots=True)
class PendingDecision:
    """One decision waiting for a person.

    ``path`` is the file the decision concerns (POSIX, relative to the project
    root): the option report (direction-choice), the sidecar (planning-prepare,
    attach-pending clarification), the report asking the questions
    (clarification), the item's request when materialised else the planning
    report (design-prep), ``task-manifest.json`` (approval).
    """

    kind: InboxKind
    task: str  # task key project:group:task
    path: str
    item: str | None  # IO-nnn (the choice recorded, planning-prepare), PREP-nnn (design-prep), else None
    summary: str  # one line, at most SUMMARY_MAX characters, control characters made visible
    since: str  # ISO-8601 UTC, see the module docstring
    detail: InboxDetail | None = None
    #: The report data the decision derives from (absolute): option report, questioning report, planning snapshot.
    report_path: Path | None = None
    #: The design-prep request (absolute) when materialised; None otherwise and for other kinds.
    request_path: Path | None = None
    #: The ids the decision covers: candidate IO-nnn (direction-choice), CQ-nnn (clarification).
    item_ids: tuple[str, ...] = ()
    #: The task's root folder (absolute).
    task_root: Path | None = None

    def to_json(self) -> dict[str, str | None]:
        """The ``okstra inbox --json`` item shape."""
        return decision_json(self)


class DecisionRow(NamedTuple):
    """What the inbox's output shows of a decision, as the store index keeps it (the first fields of a kept row):
    ``okstra inbox`` prints a fresh kept inbox from these, without a decision built."""

    kind: str
    task: str
    path: str
    item: str | None
    summary: str
    since: str
    detail: str | None

    def to_json(self) -> dict[str, str | None]:
        """The ``okstra inbox --json`` item shape."""
        return decision_json(self)


def decision_json(d: PendingDecision | DecisionRow) -> dict[str, str | None]:
    """The ``okstra inbox --json`` item shape of *d*."""
    return {"kind": d.kind, "task": d.task, "path": d.path, "item": d.item, "summary": d.summary, "since": d.since}


class _Readable:
    """What an inbox says of the files it had to read (with :attr:`unreadable` and :attr:`unlisted`)."""

    __slots__ = ()
    unreadable: list[str]
    unlisted: list[str]

    @property
    def complete(self) -> bool:
        """Whether everything the inbox had to read was read (no unreadable file, no unlisted folder)."""
        return not self.unreadable and not self.unlisted


@dataclass(frozen=True, slots=True)
class Inbox(_Readable):
    """The decisions waiting in a project, and the files the inbox could not read.

    ``unreadable`` lists (project-relative POSIX, sorted) the existing files
    that failed to read or parse: a task manifest, a latest report, a
    user-response sidecar, ``selected-direction.json`` or
    ``clarification-response.md``. A decision they hold may be missing from
    ``items`` or shown with a ``detail`` saying so; ``okstra check`` says why.

    ``unlisted`` lists (project-relative POSIX with a final ``/``, sorted) the
    folders the inbox had to list and could not (``.okstra/tasks/``, a task
    folder, its ``runs/``, a run dir or a category folder of it), with
    ``unlisted_reasons`` saying why for each: every decision below them is
    missing from ``items``. The list is complete only when both are empty
    (:attr:`complete`).
    """

    items: list[PendingDecision]
    unreadable: list[str]
    unlisted: list[str] = field(default_factory=list)
    unlisted_reasons: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class KeptInbox(_Readable):
    """An :class:`Inbox` as the store index keeps it while it is fresh, its decisions as :class:`DecisionRow`\\ s
    (newest first): all that the inbox's output shows."""

    items: list[DecisionRow]
    unreadable: list[str]
    unlisted: list[str]
    unlisted_reasons: dict[str, str]


def sort_newest_first(items: list[PendingDecision]) -> list[PendingDecision]:
    ordered = sorted(items, key=lambda d: (d.task, KINDS.index(d.kind), d.item or "", d.path))
    return sorted(ordered, key=lambda d: d.since, reverse=True)


def one_line(text: str, limit: int = SUMMARY_MAX) -> str:
    """Whitespace runs (newlines included) become one space, control characters visible stand-ins
    (:func:`okstra_core.text.visible`); long text is cut with an ellipsis."""
    flat = visible(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
