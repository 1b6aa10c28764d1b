"""User-response sidecars: the one definition of their bytes.

Writing them into the store is :mod:`okstra_core.workflows.user_response_export`.

The HTML report's "Export user response" button downloads exactly the bytes
:func:`render_sidecar` produces for the same answers. To make that possible the
header is fixed by the report alone (plus the selected option id, a safe bare
token), and the body is a simple, documented assembly of the answers:

    # User response: final-report-<task-type>-<seq>
    <blank>
    ## Selected option            (comparison mode only)
    <blank>
    IO-nnn
    <blank>
    ## CQ-nnn                     (one block per clarification item, report order)
    <blank>
    > <question, one line>
    <blank>
    <answer, normalised>
    <blank>

Answers are normalised the same way in both places: CRLF/CR become LF, trailing
whitespace of each line is removed, leading and trailing blank lines are
dropped, and an empty answer is written as ``_(no answer)_``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from ..models.report import FinalReportV2, FinalReportV3
from ..models.sidecars import UserResponseHeader
from ..sidecar import format_sidecar

NO_ANSWER = "_(no answer)_"
SELECTED_OPTION_HEADING = "## Selected option"
_IO = re.compile(r"^IO-[0-9]{3}$")


def normalise_answer(text: str) -> str:
    """Answer text as both the CLI and the HTML page write it."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) if lines else NO_ANSWER


def one_line(text: str) -> str:
    """A question shown as a one-line quote: whitespace runs collapse to one space."""
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class ExportInput:
    """What a user-response sidecar is made from."""

    report: FinalReportV3 | FinalReportV2
    report_rel: str  # project-relative POSIX path of the data.json
    report_stem: str  # final-report-<task-type>-<seq>
    source_data_sha256: str  # of the exact data.json bytes


#: How a report's sidecar is answered: a choice among compared options, or answers to clarification items.
SidecarMode = Literal["comparison", "clarification"]


def sidecar_mode(report: FinalReportV3 | FinalReportV2) -> SidecarMode:
    """``comparison`` for an option-selection report in comparison mode, else ``clarification``."""
    oc = report.option_candidates
    if report.task_type == "option-selection" and oc is not None and oc.mode == "comparison":
        return "comparison"
    return "clarification"


def header_for(inp: ExportInput, selected_option: str | None) -> UserResponseHeader:
    mode = sidecar_mode(inp.report)
    return UserResponseHeader(
        kind="user-response",
        format_version=1,
        task_key=inp.report.task_key,
        task_type=inp.report.task_type,
        report=inp.report_rel,
        source_data_sha256=inp.source_data_sha256,
        mode=mode,
        selected_option=selected_option if mode == "comparison" else None,
    )


def validate_answers(inp: ExportInput, answers: Mapping[str, str], selected_option: str | None) -> list[str]:
    """Problems with the answers for this report (empty when they fit)."""
    problems = []
    known = {item.item_id for item in inp.report.clarification_items}
    for key in answers:
        if key not in known:
            problems.append(f"answer for unknown clarification item {key!r}")
    if sidecar_mode(inp.report) == "comparison":
        oc = inp.report.option_candidates
        ids = {c.option_id for c in oc.candidates} if oc else set()
        if selected_option is None:
            problems.append("comparison mode needs a selected option (IO-nnn)")
        elif not _IO.match(selected_option) or selected_option not in ids:
            problems.append(f"option {selected_option!r} is not a candidate of the report")
    elif selected_option is not None:
        problems.append("this report has no option comparison; a selected option is not accepted")
    return problems


def render_body(inp: ExportInput, answers: Mapping[str, str], selected_option: str | None) -> str:
    out = [f"# User response: {inp.report_stem}", ""]
    if sidecar_mode(inp.report) == "comparison" and selected_option:
        out += [SELECTED_OPTION_HEADING, "", selected_option, ""]
    for item in inp.report.clarification_items:
        out += [
            f"## {item.item_id}",
            "",
            f"> {one_line(item.question or '')}",
            "",
            normalise_answer(answers.get(item.item_id, "")),
            "",
        ]
    return "\n".join(out)


def render_sidecar(inp: ExportInput, answers: Mapping[str, str], selected_option: str | None = None) -> str:
    """The exact text of ``user-response-<task-type>-<seq>.md`` for these answers."""
    header = header_for(inp, selected_option)
    return format_sidecar(header.dump(), render_body(inp, answers, selected_option))


def read_answers(body: str, item_ids: Iterable[str]) -> dict[str, str]:
    """The answers a sidecar body records, by clarification item id: what :func:`render_body` wrote, read back.

    Each ``## <item id>`` block runs to the next item's heading; its quoted question is skipped.
    ``_(no answer)_`` reads back as ``""``; an item without a block is left out. As :func:`render_body`
    writes them, the selected option comes before the items and the items come in *item_ids* order, so
    an answer holding a line that looks like the selected option's heading or an earlier item's heading
    is read as part of the answer, not as a new block.
    """
    order = list(item_ids)
    position = {f"## {item_id}": i for i, item_id in enumerate(order)}
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    at = -1  # the position of the item whose block is being read
    for line in body.replace("\r\n", "\n").split("\n"):
        found = position.get(line)
        if found is not None and found > at:
            at = found
            current = blocks.setdefault(order[found], [])
        elif current is not None:
            current.append(line)
    answers = {}
    for item_id, lines in blocks.items():
        while lines and not lines[0].strip():
            lines.pop(0)
        if lines and lines[0].startswith(">"):
            lines.pop(0)
        answer = normalise_answer("\n".join(lines))
        answers[item_id] = "" if answer == NO_ANSWER else answer
    return answers


# ------------------------------------------------------------------ workflows
