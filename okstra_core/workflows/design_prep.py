"""Design preparation: deterministic requests, confirmed append-only inputs, and the resolver.

Three authorities (contract, "Design-preparation storage"):

* the approved planning report data is immutable; nothing here edits it;
* requests are deterministic from the snapshot, the report language and the
  request-template version; re-materialising is a no-op, and different
  existing content is refused, never overwritten;
* inputs are append-only revisions written only after the answer is checked
  against the item; a revision is never edited or reserved.

The resolver takes, per item, the highest *unique* revision whose assessment
fingerprint matches the approved snapshot; duplicate revision numbers and stale
fingerprints are skipped with warnings. A revision is named by the report seq
and the revision number of its file name together: two inputs duplicate each
other only when both are the same (report seq, item, revision), and a revision
of a later report seq outranks any of an earlier one (docs/decisions.md). A plan without any assessment markers
is a markerless legacy plan and resolves with ``legacy-unassessed``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Literal

from .. import layout, names, reading, resources, sidecar, writes
from ..digests import sha256_json
from ..errors import ValidationFailed, WriteRefused
from ..models.report import DesignItem
from ..models.sidecars import DesignPrepInputHeader, DesignPrepRequestHeader
from ..store import Task
from ..times import compact_stamp, iso
from .common import SYSTEM_CLOCK, Clock
from .reports import LoadedReport, latest_report, load_report_artifact

TEMPLATE_VERSION = 1
LEGACY_UNASSESSED = "legacy-unassessed"
OPEN_STATUSES = ("provisional", "blocked")


def fingerprint(item: DesignItem) -> str | None:
    """Digest of the canonical JSON of the item's assessment (None: no marker)."""
    return sha256_json(item.assessment) if item.assessment is not None else None


def is_markerless(report: LoadedReport) -> bool:
    plan = report.model.implementation_plan
    return plan is not None and all(item.assessment is None for item in plan.design_items)


def approved_snapshot(task: Task) -> LoadedReport:
    """The approved planning report (the newest planning report data)."""
    art = latest_report(task, layout.IMPLEMENTATION_PLANNING)
    if art is None:
        raise WriteRefused(task.root, "task has no implementation-planning report")
    loaded = load_report_artifact(art)
    if isinstance(loaded, reading.LoadError):
        raise WriteRefused(loaded.path, loaded.reason)
    return loaded


def _plan_items(report: LoadedReport) -> list[DesignItem]:
    plan = report.model.implementation_plan
    return list(plan.design_items) if plan else []


# ------------------------------------------------------------------- requests


def request_text(report: LoadedReport, item: DesignItem) -> str:
    """The exact bytes-to-be of an item's request (deterministic)."""
    fp = fingerprint(item)
    assert fp is not None
    language = report.model.report_language or "en"
    header = DesignPrepRequestHeader(
        kind="design-prep-request",
        task_key=report.model.task_key,
        report=report.rel(),
        prep_id=item.prep_id,
        item_status=item.status,
        assessment_fingerprint=fp,
        report_language=language,
        template_version=TEMPLATE_VERSION,
    )
    template = Template(resources.read_template(f"design-prep/request-v{TEMPLATE_VERSION}.template.md"))
    body = template.substitute(
        prep_id=item.prep_id,
        title=item.title,
        item_status=item.status,
        question=item.question or "(no question recorded)",
        fields="\n".join(f"- `{f}`" for f in item.fields) or "- (free text: use a `## answer` section)",
        assessment=json.dumps(item.assessment, indent=2, sort_keys=True, ensure_ascii=False),
        task_key=report.model.task_key,
    )
    return sidecar.format_sidecar(header.dump(), body)


def request_path(report: LoadedReport, prep_id: str) -> Path:
    seq = report.artifact.name.seq
    return (
        report.artifact.run.path
        / layout.DESIGN_PREP_REQUESTS
        / names.build("design-prep-request", seq=seq, prep_id=prep_id)
    )


@dataclass(frozen=True)
class Materialized:
    path: Path
    outcome: writes.Outcome


def materialize(project_root: Path, task: Task) -> list[Materialized]:
    """Write the request of every provisional or blocked item of the approved snapshot."""
    report = approved_snapshot(task)
    if is_markerless(report):
        return []
    wanted = [
        (request_path(report, item.prep_id), request_text(report, item).encode("utf-8"))
        for item in _plan_items(report)
        if item.status in OPEN_STATUSES and item.assessment is not None
    ]
    # Every existing request is compared first, so a refusal writes nothing at all.
    for path, data in wanted:
        existing = reading.read_bytes(path, root=project_root) if reading.lexists(path) else None
        if isinstance(existing, reading.LoadError):
            raise WriteRefused(path, existing.reason)
        if existing is not None and existing != data:
            raise WriteRefused(path, "exists with different content; requests are never overwritten")
    out = []
    for path, data in wanted:
        try:
            outcome = writes.create_only(project_root, path, data)
        except WriteRefused as exc:
            if exc.reason.startswith("exists with different") or exc.reason.startswith("was created concurrently"):
                raise WriteRefused(path, "exists with different content; requests are never overwritten") from None
            raise
        out.append(Materialized(path, outcome))
    return out


# --------------------------------------------------------------------- inputs

_SECTION = re.compile(r"^## (.+?)\s*$")


def parse_answers(text: str) -> dict[str, str]:
    """``## <field>`` sections of an answer file (an optional header block is skipped)."""
    if text.startswith(sidecar.DELIM + "\n"):
        text = sidecar.parse(text).body
    answers: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        match = _SECTION.match(line)
        if match:
            if current is not None:
                answers[current] = "\n".join(lines).strip()
            current = match.group(1).strip("` ")
            if current in answers:
                raise ValueError(f"field {current!r} is answered twice")
            lines = []
        elif current is not None:
            lines.append(line)
    if current is not None:
        answers[current] = "\n".join(lines).strip()
    return answers


def answers_text(answers: dict[str, str]) -> str:
    """An answer document for these field answers, in the form :func:`parse_answers` reads."""
    return "\n".join(f"## {field_name}\n\n{value.strip()}\n" for field_name, value in answers.items())


def design_item(task: Task, prep_id: str) -> tuple[LoadedReport, DesignItem]:
    """The approved snapshot and its design item *prep_id*; refused when the plan has no such item."""
    report = approved_snapshot(task)
    item = next((i for i in _plan_items(report) if i.prep_id == prep_id), None)
    if item is None:
        raise WriteRefused(report.path, f"no design item {prep_id} in the approved plan")
    return report, item


def _input_header_claims(text: str) -> dict[str, object]:
    if text.startswith(sidecar.DELIM + "\n"):
        return sidecar.parse(text).header
    return {}


def existing_inputs(task: Task, prep_id: str | None = None) -> list[tuple[Path, names.ParsedName]]:
    """Input revision files on disk now (listed fresh: writers rely on it to pick the next revision)."""
    folder = layout.task_type_run_dir(task.root, layout.IMPLEMENTATION_PLANNING) / layout.DESIGN_PREP_INPUTS
    listed = reading.list_folder(folder)
    if isinstance(listed, reading.LoadError):
        return []
    entries = listed
    out = []
    for entry in entries:
        parsed = names.parse_in_category(layout.DESIGN_PREP_INPUTS, entry)
        if parsed is not None and (prep_id is None or parsed.prep_id == prep_id):
            out.append((folder / entry, parsed))
    return out


def next_revision(task: Task, prep_id: str) -> int:
    """One more than the highest revision recorded for the item (any snapshot seq).

    Revisions are told apart by (report seq, item, revision); counting on from
    the item's highest keeps each one unique under its seq and never goes back,
    so a reader that compares revision numbers alone orders them the same way.
    """
    return max((p.revision or 0 for _, p in existing_inputs(task, prep_id)), default=0) + 1


def input_text(
    report: LoadedReport, item: DesignItem, revision: int, answers: dict[str, str], confirmed_at: str, confirmed_by: str
) -> str:
    fp = fingerprint(item)
    assert fp is not None
    header = DesignPrepInputHeader(
        kind="design-prep-input",
        task_key=report.model.task_key,
        report=report.rel(),
        prep_id=item.prep_id,
        revision=revision,
        assessment_fingerprint=fp,
        confirmed_at=confirmed_at,
        confirmed_by=confirmed_by,
    )
    body = [f"# Design preparation input: {item.prep_id} r{revision}", ""]
    for key in item.fields or ["answer"]:
        body += [f"## {key}", "", answers[key].strip(), ""]
    return sidecar.format_sidecar(header.dump(), "\n".join(body))


def check_input(report: LoadedReport, item: DesignItem, text: str, answer_path: Path | None = None) -> dict[str, str]:
    """Semantic confirmation of an answer file against the item; returns the answers or raises.

    Refusals about the answer itself name *answer_path* (the file the answer came from) when given.
    """
    try:
        return _check_input(report, item, text)
    except WriteRefused as exc:
        if exc.path is None and answer_path is not None:
            raise WriteRefused(
                answer_path, exc.reason.removeprefix("answer file: ").removeprefix("answer file ")
            ) from None
        raise


def _check_input(report: LoadedReport, item: DesignItem, text: str) -> dict[str, str]:
    where = report.path
    if item.status not in OPEN_STATUSES:
        raise WriteRefused(where, f"{item.prep_id} is {item.status}; only provisional or blocked items take input")
    fp = fingerprint(item)
    if fp is None:
        raise WriteRefused(where, f"{item.prep_id} has no assessment ({LEGACY_UNASSESSED}); nothing to confirm against")
    try:
        claims = _input_header_claims(text)
        answers = parse_answers(text)
    except (ValueError, sidecar.HeaderError) as exc:
        raise WriteRefused(None, f"answer file: {exc}") from None
    claimed_fp = claims.get("assessment-fingerprint")
    if claimed_fp is not None and claimed_fp != fp:
        raise WriteRefused(
            None,
            f"answer was written against a stale assessment of {item.prep_id} (fingerprint differs from the "
            "approved snapshot)",
        )
    claimed_item = claims.get("prep-id")
    if claimed_item is not None and claimed_item != item.prep_id:
        raise WriteRefused(None, f"answer file is for {claimed_item}, not {item.prep_id}")
    wanted = item.fields or ["answer"]
    missing = [f for f in wanted if not answers.get(f, "").strip()]
    if missing:
        raise WriteRefused(None, f"answer file leaves {', '.join(missing)} unanswered")
    extra = [f for f in answers if f not in wanted]
    if extra:
        raise WriteRefused(None, f"answer file answers unknown field(s) {', '.join(extra)}")
    return {k: answers[k] for k in wanted}


def write_input(
    project_root: Path,
    report: LoadedReport,
    item: DesignItem,
    revision: int,
    answers: dict[str, str],
    *,
    confirmed_by: str,
    clock: Clock = SYSTEM_CLOCK,
) -> Path:
    """Append one confirmed revision file (create-only; the stamp keeps writers apart)."""
    moment = clock.now()
    text = input_text(report, item, revision, answers, iso(moment), confirmed_by)
    path = (
        report.artifact.run.path
        / layout.DESIGN_PREP_INPUTS
        / names.build(
            "design-prep-input",
            seq=report.artifact.name.seq,
            prep_id=item.prep_id,
            revision=revision,
            stamp=compact_stamp(moment),
        )
    )
    data = text.encode("utf-8")
    readable = reading.sidecar_of_bytes(path, data, DesignPrepInputHeader)
    if isinstance(readable, reading.LoadError):
        raise ValidationFailed(path, f"the resolver would refuse this answer: {readable.reason}")
    writes.create_only(project_root, path, data)
    return path


def confirm(
    project_root: Path,
    task: Task,
    prep_id: str,
    answer_text: str,
    *,
    confirmed_by: str = "user",
    clock: Clock = SYSTEM_CLOCK,
    answer_path: Path | None = None,
) -> Path:
    """Check an answer against the item of the approved snapshot, then append a new revision.

    Confirmations of one item through this function are serialised by a lock
    beside the inputs (``design-prep-inputs/.locks/PREP-nnn.lock``), so two of them
    never take the same revision number; no revision file is written or
    reserved before the answer is checked.
    """
    report, item = design_item(task, prep_id)
    answers = check_input(report, item, answer_text, answer_path)
    folder = report.artifact.run.path / layout.DESIGN_PREP_INPUTS
    writes.ensure_dir(project_root, folder)
    with writes.locked(folder / item.prep_id):
        return write_input(
            project_root, report, item, next_revision(task, prep_id), answers, confirmed_by=confirmed_by, clock=clock
        )


# ------------------------------------------------------------------- resolver


#: The resolver's verdict on one input: the one it uses, or why it skips the file.
Verdict = Literal["authoritative", "superseded", "duplicate-revision", "stale-fingerprint", "invalid"]

#: Verdicts of inputs the resolver skips as broken (not merely superseded).
SKIPPED_VERDICTS: tuple[Verdict, ...] = ("duplicate-revision", "stale-fingerprint", "invalid")


@dataclass(frozen=True)
class InputVerdict:
    """What the resolver made of one confirmed input file."""

    path: Path
    revision: int | None
    verdict: Verdict
    reason: str
    #: The report seq of the input's file name: revisions are ranked by (seq, revision).
    seq: int | None = None

    @property
    def rank(self) -> tuple[int, int]:
        """Where this revision stands: a later report seq first, then a higher revision."""
        return (self.seq or 0, self.revision or 0)


@dataclass
class ItemResolution:
    prep_id: str
    title: str
    status: str
    fingerprint: str | None
    request: Path | None
    request_ok: bool | None
    authoritative: InputVerdict | None = None
    inputs: list[InputVerdict] = field(default_factory=list)


@dataclass
class Resolution:
    report: Path | None
    legacy_unassessed: bool = False
    items: list[ItemResolution] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None

    def to_json(self, project_root: Path) -> dict[str, object]:
        def r(p: Path | None) -> str | None:
            return layout.rel(p, project_root) if p else None

        return {
            "report": r(self.report),
            "legacyUnassessed": self.legacy_unassessed,
            "error": self.error,
            "warnings": self.warnings,
            "items": [
                {
                    "prepId": i.prep_id,
                    "status": i.status,
                    "fingerprint": i.fingerprint,
                    "request": r(i.request),
                    "authoritative": r(i.authoritative.path) if i.authoritative else None,
                    "authoritativeRevision": i.authoritative.revision if i.authoritative else None,
                    "inputs": [
                        {"path": r(v.path), "revision": v.revision, "verdict": v.verdict, "reason": v.reason}
                        for v in i.inputs
                    ],
                }
                for i in self.items
            ],
        }


def _input_verdict(
    project_root: Path, path: Path, parsed: names.ParsedName, item: DesignItem, fp: str | None
) -> InputVerdict | None:
    """Why an input is no candidate for the item (unreadable, misnamed, stale); None when it is one."""
    loaded = reading.load_sidecar(path, DesignPrepInputHeader, root=project_root)
    if isinstance(loaded, reading.LoadError):
        return InputVerdict(path, parsed.revision, "invalid", loaded.reason, parsed.seq)
    header = loaded.header
    assert isinstance(header, DesignPrepInputHeader)
    revision = header.revision if header.revision is not None else parsed.revision
    prep_id = header.prep_id if header.prep_id is not None else parsed.prep_id
    if revision is None or revision != parsed.revision or prep_id != item.prep_id:
        return InputVerdict(path, parsed.revision, "invalid", "header disagrees with the file name", parsed.seq)
    if header.assessment_fingerprint != fp:
        return InputVerdict(
            path,
            parsed.revision,
            "stale-fingerprint",
            "assessment fingerprint no longer matches the approved snapshot",
            parsed.seq,
        )
    return None


def _rank_candidates(candidates: list[tuple[Path, int, int]]) -> dict[Path, InputVerdict]:
    """Verdicts on the inputs whose fingerprint matches: the highest unique (seq, revision) is authoritative."""
    counts = Counter((seq, rev) for _, seq, rev in candidates)
    unique = [c for c in candidates if counts[(c[1], c[2])] == 1]
    best = max(unique, key=lambda c: (c[1], c[2])) if unique else None
    out: dict[Path, InputVerdict] = {}
    for path, seq, rev in candidates:
        if counts[(seq, rev)] > 1:
            reason = f"revision r{rev} is recorded {counts[(seq, rev)]} times"
            out[path] = InputVerdict(path, rev, "duplicate-revision", reason, seq)
        elif best is not None and path == best[0]:
            reason = "highest unique revision with a matching fingerprint"
            out[path] = InputVerdict(path, rev, "authoritative", reason, seq)
        else:
            later = f"r{best[2]}" if best is not None else "r?"
            out[path] = InputVerdict(path, rev, "superseded", f"a higher revision ({later}) is authoritative", seq)
    return out


def resolve(task: Task, snapshot: LoadedReport | None = None) -> Resolution:
    """Resolve every design item of the approved snapshot (never writes).

    *snapshot*: the approved snapshot when the caller has loaded it already (read here otherwise).
    """
    project_root = task.project.root
    report: LoadedReport | reading.LoadError
    if snapshot is not None:
        report = snapshot
    else:
        art = latest_report(task, layout.IMPLEMENTATION_PLANNING)
        if art is None:
            return Resolution(report=None)
        report = load_report_artifact(art)
        if isinstance(report, reading.LoadError):
            return Resolution(report=art.path, error=report.reason)
    result = Resolution(report=report.path)
    if is_markerless(report):
        result.legacy_unassessed = True
        result.warnings.append(f"{LEGACY_UNASSESSED}: the plan has no assessment markers; it proceeds unassessed")
        for item in _plan_items(report):
            result.items.append(ItemResolution(item.prep_id, item.title or "", item.status, None, None, None))
        return result
    by_item: dict[str, list[tuple[Path, names.ParsedName]]] = {}
    for path, parsed in existing_inputs(task):
        by_item.setdefault(parsed.prep_id or "", []).append((path, parsed))
    for item in _plan_items(report):
        fp = fingerprint(item)
        req = request_path(report, item.prep_id)
        req_ok: bool | None = None
        present: bool | None = None
        if item.status in OPEN_STATUSES and fp is not None:
            data = reading.read_bytes(req, root=project_root)
            req_ok = isinstance(data, bytes) and data == request_text(report, item).encode("utf-8")
            present = not reading.missing(data)
        if present is None:
            present = reading.lexists(req)
        res = ItemResolution(item.prep_id, item.title or "", item.status, fp, req if present else None, req_ok)
        candidates: list[tuple[Path, int, int]] = []
        verdicts: dict[Path, InputVerdict] = {}
        for path, parsed in by_item.get(item.prep_id, []):
            verdict = _input_verdict(project_root, path, parsed, item, fp)
            if verdict is not None:
                verdicts[path] = verdict
            else:
                candidates.append((path, parsed.seq or 0, parsed.revision or 0))
        verdicts.update(_rank_candidates(candidates))
        res.inputs = sorted(verdicts.values(), key=lambda v: (v.revision or 0, v.seq or 0, v.path.name))
        res.authoritative = next((v for v in res.inputs if v.verdict == "authoritative"), None)
        for v in res.inputs:
            if v.verdict in SKIPPED_VERDICTS:
                result.warnings.append(f"{item.prep_id}: skipped {v.path.name}: {v.verdict} ({v.reason})")
        result.items.append(res)
    return result
