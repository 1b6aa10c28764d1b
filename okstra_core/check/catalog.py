"""The rule catalog, as data: every finding the checker can report has one entry here.

The ``--list-rules`` output, ``docs/rules.md`` and the SARIF rule descriptors
are all generated from :data:`RULES`; the id of a rule never changes meaning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .findings import Severity


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: a stable id (``OKS`` + three digits), its severity, a title and an explanation."""

    id: str
    severity: Severity
    topic: str
    title: str
    explanation: str


#: Rule ids by name. Code reports findings with these names; the ids themselves never change meaning.
FILE_UNREADABLE: Final = "OKS001"
SYMLINK_ESCAPES: Final = "OKS002"
SYMLINK_DANGLING: Final = "OKS003"
INVALID_JSON: Final = "OKS004"
UNNAMED_ENTRY: Final = "OKS005"
LEFTOVER_TEMP_FILE: Final = "OKS006"
DUPLICATE_KEY: Final = "OKS007"
RULE_FAILED: Final = "OKS009"
UNKNOWN_RUN_FOLDER: Final = "OKS010"
BAD_NAME: Final = "OKS011"
MALFORMED_SEQ: Final = "OKS012"
SHARED_SEQ: Final = "OKS013"
TASK_TYPE_MISMATCH: Final = "OKS014"
BAD_STAGE_FOLDER: Final = "OKS015"
MISPLACED_CARRY: Final = "OKS016"
FLAT_LEGACY_ARTIFACT: Final = "OKS017"
NON_CANONICAL_SLUG: Final = "OKS018"
UNKNOWN_TASK_TYPE: Final = "OKS019"
SCHEMA_MISMATCH: Final = "OKS020"
BAD_JSONL_LINE: Final = "OKS021"
MIXED_IDENTITY: Final = "OKS022"
BAD_SIDECAR_HEADER: Final = "OKS023"
FOREIGN_ARTIFACT: Final = "OKS024"
UNKNOWN_HEADER_KEY: Final = "OKS025"
PROJECT_FIELDS_ABSENT: Final = "OKS026"
CATALOG_UNREADABLE: Final = "OKS030"
TASK_KEY_INCONSISTENT: Final = "OKS031"
TASK_NOT_CATALOGUED: Final = "OKS032"
CATALOGUED_TASK_MISSING: Final = "OKS033"
LATEST_TASK_DANGLING: Final = "OKS034"
MANIFEST_PATH_NOT_RELATIVE: Final = "OKS035"
MANIFEST_PATH_MISSING: Final = "OKS036"
NEXT_PHASE_UNACTIONABLE: Final = "OKS037"
BAD_NEXT_PHASE_CORRECTION: Final = "OKS038"
FIX_CYCLES_DISAGREE: Final = "OKS039"
TIMELINE_RUN_MISSING: Final = "OKS040"
TIMELINE_SEGMENT_MISMATCH: Final = "OKS041"
SEGMENT_WITHOUT_MANIFEST: Final = "OKS042"
RUN_NOT_IN_TIMELINE: Final = "OKS043"
EXECUTION_SPLIT_SEQ: Final = "OKS044"
SEQ_ORDER_CONTRADICTS_TIME: Final = "OKS045"
LATEST_RUN_DISAGREES: Final = "OKS046"
FIX_CYCLE_UNKNOWN: Final = "OKS047"
ARTIFACT_OF_NO_RUN: Final = "OKS048"
PROMPT_UNPUBLISHED: Final = "OKS050"
METADATA_WITHOUT_PROMPT: Final = "OKS051"
METADATA_BACKREF: Final = "OKS052"
UNKNOWN_ASSIGNMENT: Final = "OKS053"
METADATA_DIGEST: Final = "OKS054"
DUTY_SNAPSHOT_DRIFT: Final = "OKS055"
DUPLICATE_DISPATCH: Final = "OKS060"
RESULT_LINK_SHARED: Final = "OKS061"
RESULT_LINK_UNDECLARED: Final = "OKS062"
RESULT_OUTSIDE_AUTHORIZED: Final = "OKS063"
BAD_PROVENANCE: Final = "OKS064"
DISPATCH_UNASSIGNED: Final = "OKS065"
SIDECAR_DIGEST: Final = "OKS070"
SELECTED_DIRECTION_DIGEST: Final = "OKS071"
OPTION_NOT_IN_REPORT: Final = "OKS072"
PLAN_MISSING_DIRECTION: Final = "OKS073"
DESIGN_PREP_REQUEST_MISMATCH: Final = "OKS080"
DESIGN_PREP_INPUT_MISMATCH: Final = "OKS081"
DESIGN_PREP_DUPLICATE: Final = "OKS082"
DESIGN_PREP_STALE: Final = "OKS083"
LEGACY_UNASSESSED_PLAN: Final = "OKS084"
REQUEST_NOT_RECOMPUTED: Final = "OKS085"
WRONG_DELIVERABLE: Final = "OKS090"
UNKNOWN_REPORT_SCHEMA: Final = "OKS091"
STALE_READING_COPY: Final = "OKS092"
CARRY_RUN_MISSING: Final = "OKS100"
CONSUMER_RUN_MISSING: Final = "OKS101"
CONSUMER_WRONG_RUN: Final = "OKS102"
VERIFICATION_TARGET_DIGEST: Final = "OKS103"
CONVERGENCE_FINAL_VERSION: Final = "OKS110"
CONVERGENCE_ROUNDS_GAP: Final = "OKS111"
ROUND_WITHOUT_RESULTS: Final = "OKS112"
FINAL_REPLACED_UNARCHIVED: Final = "OKS113"
FINAL_GROUP_UNKNOWN: Final = "OKS114"
PLAN_OUTSIDE_ROSTER: Final = "OKS115"
ENVELOPE_UNBOUND: Final = "OKS120"
COMPLETION_DIGEST: Final = "OKS121"
CROSS_INVOCATION_LINK: Final = "OKS122"
INCOMPLETE_INVOCATION: Final = "OKS123"
UNKNOWN_STATUS: Final = "OKS130"
MANAGER_ROOT_MISSING: Final = "OKS140"
CHILD_CONTEXT_MISMATCH: Final = "OKS141"
MANAGER_IDENTITY_MISMATCH: Final = "OKS142"
CHILD_PROJECT_UNREGISTERED: Final = "OKS143"
REGISTERED_PROJECT_ID_MISMATCH: Final = "OKS144"


#: Topics in catalog order, with the heading used in docs.
TOPICS: Final = {
    "files": "Files and symlinks",
    "names": "Names and placement",
    "documents": "Documents against their schemas",
    "task": "Discovery, task manifest and timeline",
    "prompts": "Prompts and their metadata",
    "team-state": "Team state",
    "direction": "Direction selection",
    "design-prep": "Design preparation",
    "reports": "Final reports",
    "carry": "Carry and consumers",
    "convergence": "Convergence",
    "invocations": "Agent invocations",
    "status": "Status files",
    "managers": "Manager state",
}


def _r(id: str, severity: Severity, topic: str, title: str, explanation: str) -> Rule:
    return Rule(id, severity, topic, title, " ".join(explanation.split()))


RULES: Final[tuple[Rule, ...]] = (
    # ------------------------------------------------------------------ files
    _r(
        FILE_UNREADABLE,
        "error",
        "files",
        "File cannot be read",
        """A file in the store could not be read as text: permission denied, not a
       regular file (a FIFO, socket or device), larger than the reader's limit,
       binary (it contains NUL bytes) or not valid UTF-8. Every artifact the
       contract names is UTF-8 text; a reader that meets this file fails.""",
    ),
    _r(
        SYMLINK_ESCAPES,
        "error",
        "files",
        "Symlink escapes the project",
        """A symbolic link inside `.okstra/` resolves to a place outside the project
       root (one in the manager home, outside the manager home). The write
       primitives refuse symlink escapes, and the checker never follows one:
       whatever the link points at is not part of the store.""",
    ),
    _r(
        SYMLINK_DANGLING,
        "error",
        "files",
        "Dangling symlink or symlink loop",
        """A symbolic link inside `.okstra/` points at nothing, or at itself through
       a loop. Readers that follow it fail.""",
    ),
    _r(
        INVALID_JSON,
        "error",
        "files",
        "Invalid JSON",
        """A `.json` artifact is not one valid JSON value (syntax error, or nesting
       so deep that no reader should accept it). The line is given when the
       parser knows it.""",
    ),
    _r(
        UNNAMED_ENTRY,
        "info",
        "files",
        "Entry the contract does not name",
        """A file or folder sits where the storage contract names nothing (for
       example an unknown file at the top of a task root). It is not read. This
       is information: tools may keep private files, but a typo in a name looks
       the same.""",
    ),
    _r(
        LEFTOVER_TEMP_FILE,
        "warning",
        "files",
        "Temp file left by an interrupted write",
        """A hidden `.okstra-tmp-<name>.<random>` file is the private temp file of a
       write of `<name>` that was killed before it could publish or remove it.
       Readers never see it, but it can be of any size. The next write of
       `<name>` through okstra removes its own temp files once they are older
       than an hour; deleting it by hand is safe when no writer is running.""",
    ),
    _r(
        DUPLICATE_KEY,
        "error",
        "files",
        "Key repeated in a JSON object",
        """One object of a `.json` artifact names the same key twice
       (`"status": "completed", …, "status": "failed"`). JSON leaves the meaning
       open: okstra's readers (Python) keep the last value, other tools keep the
       first or refuse the file, so two readers of the store disagree. One finding
       per file names a repeated key; the checker goes on with the value
       the readers use (the last). Write each key once. (Lines of `.jsonl`
       files are not searched for repeated keys.)""",
    ),
    _r(
        RULE_FAILED,
        "error",
        "files",
        "Checker could not apply a rule",
        """A rule raised an unexpected error while checking this file. The file is
       almost certainly malformed in a way no other rule describes; the message
       names the rule and the error. Please report it so that a precise rule can
       be added.""",
    ),
    # ------------------------------------------------------------------ names
    _r(
        UNKNOWN_RUN_FOLDER,
        "error",
        "names",
        "Unknown folder in a run dir",
        """A resolved run dir holds only the category folders (`manifests/`,
       `state/`, `prompts/`, `reports/`, `status/`, `sessions/`, `logs/`,
       `worker-results/`, `user-responses/`, and for implementation-planning
       `design-prep-requests/` and `design-prep-inputs/`), stage folders where the
       task type has stages, and the flat `carry/` and `consumers.jsonl`
       exceptions. Any other folder is misplaced.""",
    ),
    _r(
        BAD_NAME,
        "error",
        "names",
        "Name does not follow the grammar of its category",
        """Inside a category folder every file is named by the grammar of that
       category (for example `manifests/run-manifest-<task-type>-<seq>.json`). A
       file that no kind of the category accepts is invisible to every reader.""",
    ),
    _r(
        MALFORMED_SEQ,
        "error",
        "names",
        "Malformed seq",
        """`<seq>` is a per-category counter of at least three digits, zero-padded
       (`001`, `002`, ... `999`, `1000`), and never `000`. `0001` or `000` is not
       a seq a writer can produce.""",
    ),
    _r(
        SHARED_SEQ,
        "error",
        "names",
        "Seq shared by two executions",
        """One execution takes one seq per category folder; two executions never
       share a number. Artifacts of one folder that carry the same seq must
       therefore agree on the run's `runDateTimeSegment`.""",
    ),
    _r(
        TASK_TYPE_MISMATCH,
        "error",
        "names",
        "Task type in the name differs from the run dir",
        """Run-level artifacts carry `-<task-type>-<seq>` in their names, and must
       live in the run dir of that task type.""",
    ),
    _r(
        BAD_STAGE_FOLDER,
        "error",
        "names",
        "Malformed or misplaced stage folder",
        """`implementation` runs live in `runs/implementation/stage-<n>/` and
       single-stage `final-verification` runs in
       `runs/final-verification/stage-<n>/`, with `<n>` a positive integer
       without padding. Other task types have no stages, and an implementation
       run never writes category folders directly under
       `runs/implementation/`.""",
    ),
    _r(
        MISPLACED_CARRY,
        "error",
        "names",
        "Misplaced carry sidecar or consumers file",
        """The carry sidecar is stage-shared: it lives flat at
       `runs/implementation/carry/stage-<n>.json`, never under `stage-<n>/`.
       `consumers.jsonl` lives flat at
       `runs/implementation-planning/consumers.jsonl`.""",
    ),
    _r(
        FLAT_LEGACY_ARTIFACT,
        "warning",
        "names",
        "Flat legacy artifact in a run dir",
        """A run-level artifact sits at the top of a task-type run dir instead of
       its category folder. The next execution moves it into place; until then
       readers that look only in category folders miss it.""",
    ),
    _r(
        NON_CANONICAL_SLUG,
        "error",
        "names",
        "Path segment is not a canonical slug",
        """Folder names made from values (task group, task id, task type, agent
       invocation purpose and id, manager id) are canonical slugs: lowercase
       ASCII letters and digits joined by single dashes, at most 64 characters,
       or the `u-<12 hex>` fallback.""",
    ),
    _r(
        UNKNOWN_TASK_TYPE,
        "info",
        "names",
        "Unknown task type",
        """The known task types are `analysis`, `option-selection`,
       `implementation-planning`, `implementation` and `final-verification`.
       Another slug is accepted, and reported for information.""",
    ),
    # -------------------------------------------------------------- documents
    _r(
        SCHEMA_MISMATCH,
        "error",
        "documents",
        "Document does not match its schema",
        """A JSON artifact does not validate against the model (and generated JSON
       Schema under `schemas/`) of its kind: a missing required field, a wrong
       type, an unknown value. Only the fields the contract (or its canonical
       readings) names are required; a field this project adds is optional on
       read, and extra fields are kept, never an error.""",
    ),
    _r(
        BAD_JSONL_LINE,
        "error",
        "documents",
        "Bad JSONL line",
        """A line of an append-only JSONL file is blank, not JSON, does not match
       the schema of one line, or the last line is not newline-terminated (a torn
       write). The line number is given.""",
    ),
    _r(
        MIXED_IDENTITY,
        "error",
        "documents",
        "Mixed or partial v2 payload",
        """v2 rows persist all five identity fields (`participantRef`,
       `roleExecutionRef`, `invocationRef`, `attempt`, `executionLabel`); v1 rows
       persist none. A row with some of them, a document mixing v1 and v2 rows,
       or rows that disagree with the document's `schemaVersion` are
       rejected.""",
    ),
    _r(
        BAD_SIDECAR_HEADER,
        "error",
        "documents",
        "Malformed sidecar header",
        """User-response sidecars, design-prep requests and design-prep inputs
       start with a strict `---` header block of kebab-case `key: value` lines.
       A repeated or malformed line, or a value of the wrong shape, is an error,
       not a guess. The keys that did parse are still checked by the other
       rules (a digest, a fingerprint).""",
    ),
    _r(
        FOREIGN_ARTIFACT,
        "error",
        "documents",
        "Artifact belongs to another task or run",
        """An artifact's own identity (its `taskKey`, `taskType`, stage, or the
       parts of its file name) disagrees with the task and run dir it is stored
       in.""",
    ),
    _r(
        UNKNOWN_HEADER_KEY,
        "warning",
        "documents",
        "Unknown sidecar header key",
        """A sidecar header carries a key this checker does not know. It is kept
       (okstra may write keys we do not know yet) and reported so that a typo
       of a known key does not go unnoticed.""",
    ),
    _r(
        PROJECT_FIELDS_ABSENT,
        "info",
        "documents",
        "Fields this project would add are absent",
        """A document the models know (JSON, a JSONL file, a Markdown sidecar's
       header) lacks fields the contract does not name but this project's
       writers always add (`publishedAt`, `runDir`, `dispatchedAt`, ...;
       docs/decisions.md, "Reading what others wrote"). They are optional on read,
       so this is no error: one finding per file names them (for a JSONL file,
       every field some line lacks), so a store written by another tool can be
       told apart from one with data lost. Which fields count is marked on the
       models themselves.""",
    ),
    # ------------------------------------------------------------------- task
    _r(
        CATALOG_UNREADABLE,
        "error",
        "task",
        "Task catalog missing or unreadable",
        """`.okstra/discovery/task-catalog.json` is the canonical list of task
       bundles. A store with task folders needs it.""",
    ),
    _r(
        TASK_KEY_INCONSISTENT,
        "error",
        "task",
        "Task key inconsistent",
        """The task key is `project-id:task-group:task-id` with the original
       values; the task folder is `tasks/<slug(group)>/<slug(id)>/`. The catalog
       entry, the task manifest, the key itself and the folder must all
       agree.""",
    ),
    _r(
        TASK_NOT_CATALOGUED,
        "warning",
        "task",
        "Task folder not in the catalog",
        """A task folder exists that the task catalog does not list. Browsers that
       start from the catalog do not see it.""",
    ),
    _r(
        CATALOGUED_TASK_MISSING,
        "error",
        "task",
        "Catalogued task is missing",
        """The task catalog lists a task whose folder or `task-manifest.json` does
       not exist.""",
    ),
    _r(
        LATEST_TASK_DANGLING,
        "error",
        "task",
        "latest-task.json points nowhere",
        """`.okstra/discovery/latest-task.json` must name a catalogued task, and
       its task-root and manifest paths must be that task's.""",
    ),
    _r(
        MANIFEST_PATH_NOT_RELATIVE,
        "error",
        "task",
        "Manifest path is not project-relative",
        """Apart from `projectRoot`, every path a task manifest records, and
       every path field of a run manifest (the contract stores them "relative to
       the target project root"), is normalised POSIX text relative to the
       project root: no leading `/`, no `..`, no `\\`. The finding names the
       field.""",
    ),
    _r(
        MANIFEST_PATH_MISSING,
        "error",
        "task",
        "Manifest path does not exist",
        """A path recorded in the task manifest names nothing in the project.""",
    ),
    _r(
        NEXT_PHASE_UNACTIONABLE,
        "error",
        "task",
        "nextRecommendedPhase cannot be acted on",
        """`workflow.nextRecommendedPhase` is `{phase, status, rationale}`. Under
       status `ready` it must name a `phase` (that is what makes it launchable).
       A `phase` under another status is normal and not reported.""",
    ),
    _r(
        BAD_NEXT_PHASE_CORRECTION,
        "error",
        "task",
        "Malformed nextRecommendedPhase correction",
        """`workflow.nextRecommendedPhaseCorrection` is present only when Phase 7
       replaced the authored pointer: `{authored, applied}`, with `applied` equal
       to the stored `nextRecommendedPhase` and different from
       `authored`.""",
    ),
    _r(
        FIX_CYCLES_DISAGREE,
        "error",
        "task",
        "fixCycles summary disagrees with fix-cycles.jsonl",
        """The manifest's `fixCycles` is derived from `history/fix-cycles.jsonl` on
       every prepare. A summary that differs from the derivation (or a summary
       without the log) is stale.""",
    ),
    _r(
        TIMELINE_RUN_MISSING,
        "error",
        "task",
        "Timeline entry points at a missing run",
        """Each `history/timeline.json` entry names its run dir and run manifest;
       both must exist, and the entry must belong to this task.""",
    ),
    _r(
        TIMELINE_SEGMENT_MISMATCH,
        "error",
        "task",
        "Timeline entry disagrees with its run manifest",
        """A timeline entry that names a run manifest records that execution's
       `runDateTimeSegment`, the cross-category identifier of the run. An entry
       whose segment differs from the manifest it points to sends a reader that
       groups files by segment to another execution's files. Two spellings of
       one moment (`Z` and `+00:00`) agree.""",
    ),
    _r(
        SEGMENT_WITHOUT_MANIFEST,
        "error",
        "task",
        "Run artifact names no execution of its run dir",
        """Every run-level JSON artifact records the `runDateTimeSegment` of the
       execution that wrote it, and the run manifest of that execution is
       published first, in the same run dir. An artifact whose segment no run
       manifest of its run dir records belongs to no execution a reader can
       find. Held to it are the artifacts written for the execution after its
       manifest (run contexts, team-state, prompt metadata, convergence state);
       report data is not, since the contract does not tie it to a manifest.
       Said only when the run dir has a run manifest at all.""",
    ),
    _r(
        RUN_NOT_IN_TIMELINE,
        "warning",
        "task",
        "Completed execution missing from the timeline",
        """`history/timeline.json` accumulates the runs of a task, one entry per
       execution. A run manifest whose execution is completed (its status
       file, else the manifest's own status, says so) but that no timeline
       entry names (by `runManifestPath`, or by `runDateTimeSegment` when the
       entry names no manifest) is missing from the history. A warning: the
       contract says the history "generally" includes each run, and nothing
       reads the wrong file because of it. Said only when the timeline exists,
       and never of a flat legacy run manifest (its run predates the layout).""",
    ),
    _r(
        EXECUTION_SPLIT_SEQ,
        "error",
        "task",
        "One execution under two seqs in one folder",
        """One execution takes one seq in each category folder and uses it for
       every file it writes there. Files of one execution (one
       `runDateTimeSegment`) under two seqs of the same folder mean one of them
       was written by, or renamed into, the wrong execution; a reader that
       pairs files by seq pairs the wrong ones.""",
    ),
    _r(
        SEQ_ORDER_CONTRADICTS_TIME,
        "warning",
        "task",
        "Seq order contradicts the recorded run times",
        """Seqs are taken in order (the highest in use plus one), so in one
       category folder a higher seq belongs to a later execution. A higher seq
       whose `runDateTimeSegment` is earlier than a lower seq's points at a
       clock that went back or a file copied in from elsewhere. A warning:
       readers group by segment, not by seq, so nothing is read wrongly.""",
    ),
    _r(
        LATEST_RUN_DISAGREES,
        "error",
        "task",
        "Task manifest disagrees with the latest run",
        """The latest run is the execution whose run manifest records the latest
       `runDateTimeSegment`. The task manifest's `latestRunPath` names its run
       dir (or its run manifest); `latestRunStatus` is the status its status
       file holds (its run manifest's status while it has none); once it is
       closed, a `currentStatus` that is a run status is that status, and once
       it completed, a `workflow.lastSafeCheckpoint` that names a run manifest
       (the contract leaves its shape open) names this one. The
       contract has Phase 7 update them together; a lead that reads a stale
       pointer resumes the wrong run. Nothing is said when two executions share
       the latest moment.""",
    ),
    _r(
        FIX_CYCLE_UNKNOWN,
        "error",
        "task",
        "fixCycleId names a cycle never opened",
        """A run manifest or timeline entry attached to a fix cycle records its
       `fixCycleId`; the cycle must have been opened in
       `history/fix-cycles.jsonl`.""",
    ),
    _r(
        ARTIFACT_OF_NO_RUN,
        "warning",
        "task",
        "Artifact of no recorded run",
        """Every seq'd artifact of a run dir was written by an execution the task
       records: by a run manifest (in `manifests/`, or a flat legacy one) or by
       a `history/timeline.json` entry naming the run dir (a legacy run may
       have only that). An artifact is placed in its execution by the
       `runDateTimeSegment` that it, a file of the same seq in its folder, or a
       run context's `pathHints.seqs` records; then that segment must be one a
       run manifest or timeline entry of the run dir records. A folder's files
       that no segment places are held to the count: each execution takes one
       seq per folder, in order, so the folder's n-th seq needs at least n
       recorded runs. Report data and its copies, status files, sessions and
       worker results are held to it as the run's own files are; a
       user-response and a design-prep file carry the seq of the report they
       answer, not one of their own. A warning: the contract ties report data
       to no manifest and leaves stores older than the manifests and the
       timeline open, and a reader still opens the file; but nothing says
       which run wrote it. An artifact OKS042 already holds to a missing run
       manifest is left to it.""",
    ),
    # ---------------------------------------------------------------- prompts
    _r(
        PROMPT_UNPUBLISHED,
        "warning",
        "prompts",
        "Prompt without metadata (unpublished)",
        """A prompt is published by writing the prompt first and its adjacent
       `.meta.json` last. A prompt without metadata is an unpublished (or
       interrupted) publication; a retry recovers it.""",
    ),
    _r(
        METADATA_WITHOUT_PROMPT,
        "error",
        "prompts",
        "Metadata without its prompt",
        """Prompt metadata is the completion marker of a prompt written before
       it. Metadata whose prompt is missing cannot come from a correct
       publication.""",
    ),
    _r(
        METADATA_BACKREF,
        "error",
        "prompts",
        "Metadata does not refer back to its run",
        """Every invocation metadata file refers back to the run manifest of its
       run dir and names its own prompt as `promptPath`.""",
    ),
    _r(
        UNKNOWN_ASSIGNMENT,
        "error",
        "prompts",
        "Unknown assignmentRef",
        """Every invocation metadata file names one `assignmentRef` that the run
       manifest's `invocationAssignments` holds, with the same invocation id,
       worker, audience and dispatch kind.""",
    ),
    _r(
        METADATA_DIGEST,
        "error",
        "prompts",
        "Metadata digest does not match",
        """Prompt metadata records the five catalog, assignment, duty,
       instruction and prompt digests; each must equal the SHA-256 of what it
       covers: the exact bytes of the file it names (the catalog digest: the run
       manifest's duty catalog digest), and for the assignment digest the
       canonical JSON of the run manifest's invocation assignment the metadata
       refers to (docs/decisions.md). A digest the metadata does not record is
       not required.""",
    ),
    _r(
        DUTY_SNAPSHOT_DRIFT,
        "error",
        "prompts",
        "Duty-contract snapshot drifted",
        """The run-scoped `prompts/duty-contracts-<task-type>-<seq>/` snapshot is
       immutable: the SHA-256 of its `catalog.json` equals the run manifest's
       `agentContract.catalogDigest`, and every duty file matches the digest the
       catalog records.""",
    ),
    # ------------------------------------------------------------- team state
    _r(
        DUPLICATE_DISPATCH,
        "error",
        "team-state",
        "dispatchId recorded twice",
        """A team-state row repeating a `dispatchId` replaces the earlier row in
       place, so one dispatch id appears at most once. Rows without a dispatch id
       may stack.""",
    ),
    _r(
        RESULT_LINK_SHARED,
        "error",
        "team-state",
        "Result link not exclusive",
        """`agentResultLinks[]` associates an accepted result path with exactly one
       dispatch id, and one dispatch id authorises exactly one path.""",
    ),
    _r(
        RESULT_LINK_UNDECLARED,
        "error",
        "team-state",
        "Result link points at nothing declared",
        """A result link names a dispatch id that `agentDispatches[]` records, and
       a result path that exists and that the run manifest declares.""",
    ),
    _r(
        RESULT_OUTSIDE_AUTHORIZED,
        "error",
        "team-state",
        "Result outside authorizedPaths",
        """Every accepted result lies under one of the run manifest's
       `authorizedPaths.resultRoots`.""",
    ),
    _r(
        BAD_PROVENANCE,
        "error",
        "team-state",
        "Malformed instruction provenance",
        """Persisted instruction provenance is a non-empty list of `{kind, path}`
       with `kind` `project` or `runtime` and `path` normalised POSIX text
       relative to its authority; installed absolute paths are not durable
       metadata.""",
    ),
    _r(
        DISPATCH_UNASSIGNED,
        "error",
        "team-state",
        "Dispatch for a worker the run never assigned",
        """A team-state row dispatches a `workerId`; the run manifest of the same
       execution (same `runDateTimeSegment`) assigns the run's workers in
       `workerAssignments[]` (and `selectedWorkers`, `invocationAssignments[]`).
       A dispatch for a worker none of them names launched someone the run
       never assigned. Rows without a `dispatchId` (probe launches, which
       the contract lets stack) are not dispatches and are not held to it.
       Said only when that manifest records workers at all.""",
    ),
    # -------------------------------------------------------------- direction
    _r(
        SIDECAR_DIGEST,
        "error",
        "direction",
        "Sidecar digest differs from the option report",
        """A user-response sidecar's `source-data-sha256` must be the SHA-256 of
       the exact bytes of the `data.json` it answers; planning prepare rejects a
       mismatch.""",
    ),
    _r(
        SELECTED_DIRECTION_DIGEST,
        "error",
        "direction",
        "selected-direction.json digest differs",
        """`instruction-set/selected-direction.json` records, as
       `sourceDataSha256`, the digest planning prepare verified: the SHA-256 of
       the option report's bytes (and the sidecar's digest, when there is
       one).""",
    ),
    _r(
        OPTION_NOT_IN_REPORT,
        "error",
        "direction",
        "Chosen option is not in the report",
        """The chosen `IO-<nnn>` (in the sidecar or the selected-direction
       snapshot) must be a candidate of the option-selection report, and the two
       must agree.""",
    ),
    _r(
        PLAN_MISSING_DIRECTION,
        "error",
        "direction",
        "Planning report does not cite the selected direction",
        """A planning report written after direction selection cites the snapshot
       through `selectedDirectionRef`, the project-relative path of
       `instruction-set/selected-direction.json`.""",
    ),
    # ------------------------------------------------------------ design prep
    _r(
        DESIGN_PREP_REQUEST_MISMATCH,
        "error",
        "design-prep",
        "Design-prep request disagrees with the approved plan",
        """A request is derived from the approved planning report: its report
       must exist with the seq in the file name, its `PREP-<nnn>` must be a
       `provisional` or `blocked` item of that plan with the same status, and its
       fingerprint must be the item's assessment fingerprint.""",
    ),
    _r(
        DESIGN_PREP_INPUT_MISMATCH,
        "error",
        "design-prep",
        "Design-prep input disagrees with its name or plan",
        """An input's header must repeat the report, `PREP-<nnn>` and revision of
       its file name, and answer an item of the approved plan.""",
    ),
    _r(
        DESIGN_PREP_DUPLICATE,
        "warning",
        "design-prep",
        "Duplicate design-prep revision skipped",
        """Two confirmed inputs carry the same revision number for one item of
       one approved snapshot: the same report seq, `PREP-<nnn>` and `r<rev>` in
       their names (revisions are counted per report seq and item, so `r1`
       under seq 001 and `r1` under seq 002 are two revisions;
       docs/decisions.md). The resolver grants neither authority and falls back
       to the highest unique revision.""",
    ),
    _r(
        DESIGN_PREP_STALE,
        "warning",
        "design-prep",
        "Stale design-prep fingerprint skipped",
        """An input's assessment fingerprint no longer matches the approved
       snapshot; the resolver skips it.""",
    ),
    _r(
        LEGACY_UNASSESSED_PLAN,
        "warning",
        "design-prep",
        "Markerless legacy plan (legacy-unassessed)",
        """A planning report whose design items carry no assessment markers
       proceeds with the `legacy-unassessed` warning; it has no sidecars to
       migrate and its report is not rewritten.""",
    ),
    _r(
        REQUEST_NOT_RECOMPUTED,
        "warning",
        "design-prep",
        "Design-prep request written with another template version",
        """A request is deterministic from the approved snapshot, the report
       language and the request-template version, so the checker recomputes it
       to find requests edited after materialization. A request whose header
       names a template version this checker does not render (or none) cannot
       be recomputed; the finding names the version.""",
    ),
    # ---------------------------------------------------------------- reports
    _r(
        WRONG_DELIVERABLE,
        "error",
        "reports",
        "Report deliverable does not match its task type",
        """Report data carries exactly one task-type deliverable, the one of its
       task type (`analysisFindings`, `optionCandidates`, `implementationPlan`,
       `implementationResults`, `verificationVerdict`). The task type is the
       report's `taskType`, else its file name's. A report of a task type this
       project does not know is not judged here: its run dir is reported once,
       as an unknown type (info).""",
    ),
    _r(
        UNKNOWN_REPORT_SCHEMA,
        "error",
        "reports",
        "Unknown report schema version",
        """New report data uses schema `3.0`; historical data `2.0` stays
       readable. Any other `schemaVersion` has no schema to validate
       against.""",
    ),
    _r(
        STALE_READING_COPY,
        "warning",
        "reports",
        "Reading copy differs from a fresh render",
        """The `.md` reading copy is derived from the data and rendering is
       deterministic. A copy that differs from a fresh render is stale or was
       edited by hand; re-render it with `okstra render-final-report`.""",
    ),
    # ------------------------------------------------------------------ carry
    _r(
        CARRY_RUN_MISSING,
        "error",
        "carry",
        "Carry sidecar points at a missing run",
        """`runs/implementation/carry/stage-<n>.json` records the stage, run dir and
       run manifest that produced it; the stage must match the file name and
       both paths must exist.""",
    ),
    _r(
        CONSUMER_RUN_MISSING,
        "error",
        "carry",
        "Consumer backlink points at a missing run",
        """Each line of `consumers.jsonl` links a plan stage to the implementation
       run that consumed it; the plan report, the run dir and its run manifest
       must exist.""",
    ),
    _r(
        CONSUMER_WRONG_RUN,
        "error",
        "carry",
        "Consumer backlink names another stage's run",
        """A `consumers.jsonl` line links plan stage `<n>` to the run that
       consumed it: `consumerRunDir` is the stage's run dir
       `runs/implementation/stage-<n>/`, and `consumerRunManifestPath` is a run
       manifest in that run dir whose `stage` is `<n>`. A line that names
       another stage's run sends the next stage's carry-in to the wrong
       evidence. Fields the line does not record are not required.""",
    ),
    _r(
        VERIFICATION_TARGET_DIGEST,
        "error",
        "carry",
        "Final-verification target digest differs from the target's bytes",
        """Prepare snapshots the final-verification target into the task's
       `instruction-set/` and records its project-relative path and SHA-256 in
       the run manifest. The digest of the latest final-verification run that
       records one must be the SHA-256 of the snapshot's exact bytes; a verifier
       would otherwise verify a target other than the one prepared. Earlier
       runs are not held to it: a later prepare re-snapshots the same file.""",
    ),
    # ------------------------------------------------------------ convergence
    _r(
        CONVERGENCE_FINAL_VERSION,
        "error",
        "convergence",
        "Convergence final is not schema 1.2",
        """The terminal `state/convergence-<task-type>-<seq>.json` is validated
       schema v1.2 state.""",
    ),
    _r(
        CONVERGENCE_ROUNDS_GAP,
        "error",
        "convergence",
        "Convergence rounds not contiguous",
        """Round plans and results are numbered 1, 2, ... without gaps, and a
       results file has a plan of the same round.""",
    ),
    _r(
        ROUND_WITHOUT_RESULTS,
        "error",
        "convergence",
        "Round plan without results",
        """Every round plan has its results unless the run is still open (its
       working state is `open`).""",
    ),
    _r(
        FINAL_REPLACED_UNARCHIVED,
        "error",
        "convergence",
        "Replaced final without migration archive",
        """An existing final can be replaced only by an explicit Round 0 restart
       that archives the original bytes under `state/migrations/`. A restart
       trail without the archive lost the original.""",
    ),
    _r(
        FINAL_GROUP_UNKNOWN,
        "error",
        "convergence",
        "Final holds a group the lead never wrote",
        """The terminal state's `groups[]` are verdicts on the semantic groups
       the lead wrote in Round 0 (`state/convergence-groups-<task-type>-<seq>.json`,
       same seq). A `groupId` the groups file does not hold is a verdict on
       nothing the lead grouped; reporting would cite a group no one can read.
       Said only when the groups file validates.""",
    ),
    _r(
        PLAN_OUTSIDE_ROSTER,
        "error",
        "convergence",
        "Round plan dispatches an analyser outside the roster",
        """A round plan is roster-aware: each dispatch goes to an analyser of the
       resolved roster the lead wrote in the groups file (same seq), for groups
       that file holds. A dispatch to another analyser, or for a group the lead
       never wrote, was not planned from that roster. Said only when the groups
       file validates and records a roster.""",
    ),
    # ------------------------------------------------------------ invocations
    _r(
        ENVELOPE_UNBOUND,
        "error",
        "invocations",
        "Result envelope does not bind its invocation",
        """`<id>.result.json` binds the purpose, the invocation id and the prompt
       metadata path of its own invocation; its metadata does the same.""",
    ),
    _r(
        COMPLETION_DIGEST,
        "error",
        "invocations",
        "Completion digest does not match the envelope",
        """`<id>.prompt.md.completion.json` is published last and records the
       SHA-256 of the canonical JSON of the result envelope.""",
    ),
    _r(
        CROSS_INVOCATION_LINK,
        "error",
        "invocations",
        "Cross-invocation link",
        """Identity comes from the envelope: an envelope or completion marker that
       points at another invocation's files is rejected, even when the returned
       body is the same.""",
    ),
    _r(
        INCOMPLETE_INVOCATION,
        "error",
        "invocations",
        "Incomplete agent invocation",
        """Files of an invocation are published in order (instructions, prompt,
       metadata, result envelope, completion marker). A later file without an
       earlier one cannot come from a correct publication; metadata digests must
       match the instructions and prompt bytes.""",
    ),
    # ----------------------------------------------------------------- status
    _r(
        UNKNOWN_STATUS,
        "error",
        "status",
        "Unknown status",
        """`status/final-<task-type>-<seq>.status` (and a manifest's run status)
       holds one known status: `prepared`, `in-progress`, `completed`,
       `timeout`, `error`, `not-run`, `failed`, `blocked` or `cancelled`.""",
    ),
    # --------------------------------------------------------------- managers
    _r(
        MANAGER_ROOT_MISSING,
        "error",
        "managers",
        "Registered projectRoot does not exist",
        """`projects.json` registers each project's root; it must be an existing
       directory.""",
    ),
    _r(
        CHILD_CONTEXT_MISMATCH,
        "error",
        "managers",
        "Child context name does not match a child",
        """`child-context/<project-id>-<child-task-id>.md` (slugs) belongs to a
       child assignment in `children.json`.""",
    ),
    _r(
        MANAGER_IDENTITY_MISMATCH,
        "error",
        "managers",
        "Manager identity disagrees with its folder",
        """`manager.json`'s `managerId` slugs to its folder name, and a manager
       task manifest's group and id slug to its folder.""",
    ),
    _r(
        CHILD_PROJECT_UNREGISTERED,
        "error",
        "managers",
        "Child's project is not registered",
        """A child assignment in `children.json` names its project (its
       `projectId`, else the first part of its task key); the manager finds the
       child's project root through `projects.json`, so that project must be
       registered there. Said only when `projects.json` validates.""",
    ),
    _r(
        REGISTERED_PROJECT_ID_MISMATCH,
        "error",
        "managers",
        "Registered project id differs from the project's own",
        """`projects.json` registers a project under a `projectId`; when the
       registered root holds its own `.okstra/project.json` with a
       `projectId`, the two must be the same, or the manager's children and
       snapshots name a project the project does not know it is. A root
       without a readable `project.json` is not judged here.""",
    ),
)

RULES_BY_ID: Final = {r.id: r for r in RULES}


def expand(patterns: list[str]) -> set[str]:
    """Rule ids matching ids or prefixes (``OKS0`` selects ``OKS001``...``OKS099``).

    Raises ValueError naming the first pattern that matches no rule.
    """
    out: set[str] = set()
    for raw in patterns:
        pattern = raw.strip().upper()
        if not pattern:
            continue
        matched = {r.id for r in RULES if r.id.startswith(pattern)}
        if not matched:
            raise ValueError(f"unknown rule id or prefix {raw!r}")
        out |= matched
    return out


#: The hand-written part of ``docs/rules.md``: how the rules that hold one file against another behave.
INTRO: Final = """
## Rules across files

Some rules hold one file against another where the contract, or its canonical
readings, says they must agree: a timeline entry and the run manifest it names,
the task manifest's latest-run fields and the latest run, a `fixCycleId` and
`history/fix-cycles.jsonl`. They follow the same choices a schema-and-consistency
checker such as check-jsonschema or fsck makes:

- **Severity.** An error where the contract says "must" or where a reader would
  act on the wrong file; a warning where the contract says "generally" or the
  inconsistency is recoverable (nothing is read wrongly because of it). Each
  rule's entry below says which, and why.
- **Both sides named.** A message names both files and both values, and the
  finding sits on the file that points (the timeline, the task manifest), which
  is the one a person would mend. Nothing is repaired or guessed.
- **Tolerant where the contract is silent.** A field the contract does not name
  is never required for a rule to pass, and two spellings of one moment
  (`2026-11-30T04:15:00Z`, `2026-11-30T04:15:00+00:00`) agree. A rule that
  cannot find its inputs (no timeline, no status file, a segment that is no
  time) says nothing: the single-file rules already report what is missing or
  malformed, and one root cause gets one finding.
- **Times are real times.** A time field or `runDateTimeSegment` that names no
  moment (31 November, hour 25) does not match its schema (OKS020), and a
  file-name stamp that names none makes the name no name of its category
  (OKS011): every reader refuses the same values, through one parser.
- **Cached like every rule.** A task's cached findings are keyed by every file
  its rules read, so an edit of either file of a pair rechecks the task.
"""


def markdown() -> str:
    """``docs/rules.md``: the catalog as a page."""
    out = [
        "# Checker rules",
        "",
        "<!-- Generated by `okstra check --list-rules --format markdown`; do not edit by hand. -->",
        "",
        "`okstra check` (and `okstra-tui --check`) reports findings under these ids.",
        "Select or ignore them with `--select` / `--ignore` (an id, or a prefix such as `OKS06`).",
        "Errors make the check fail; warnings fail it only with `--strict`; infos never do.",
        "",
        *INTRO.strip("\n").split("\n"),
        "",
        "| id | severity | title |",
        "|---|---|---|",
    ]
    out += [f"| [{r.id}](#{r.id.lower()}) | {r.severity} | {r.title} |" for r in RULES]
    for topic, heading in TOPICS.items():
        rules = [r for r in RULES if r.topic == topic]
        if not rules:
            continue
        out += ["", f"## {heading}"]
        for r in rules:
            out += ["", f"### {r.id}", "", f"**{r.title}** ({r.severity})", "", r.explanation]
    return "\n".join(out) + "\n"


def text_table() -> str:
    """The catalog as plain text, one rule per line."""
    width = max(len(r.severity) for r in RULES)
    return "\n".join(f"{r.id}  {r.severity:<{width}}  {r.title}" for r in RULES) + "\n"
