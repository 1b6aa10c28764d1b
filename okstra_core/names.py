"""The one grammar of artifact file names.

Each :class:`Kind` names a category folder, a regular expression that parses a
file name back into its parts, and a format string that builds it. The read
side and the checker use :func:`parse_in_category` and :func:`classify_flat`;
writers use :func:`build`. Nothing else in the project parses names.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from . import times
from .errors import LayoutError

if TYPE_CHECKING:
    from pydantic import BaseModel

#: How an artifact's content is read: one JSON document of a registered kind (``doc``), its report data (the
#: model follows the declared schema version), JSONL lines of ``doc``, a sidecar whose header is ``doc``, a folder
#: whose ``catalog.json`` is ``doc``, or plain text.
Reader = Literal["json", "report", "jsonl", "sidecar", "folder", "text"]


def format_seq(seq: int) -> str:
    """At least three digits, zero-padded: 1 -> ``001``, 1000 -> ``1000``."""
    if seq < 1:
        raise LayoutError(None, f"seq {seq} is not a positive integer")
    return f"{seq:03d}"


#: More digits than any file name can hold (255 bytes): no seq of a real artifact is that long.
_SEQ_DIGITS_MAX = 255


def seq_value(text: str) -> int | None:
    """The number *text* spells in ASCII digits, padded or not (``"007"`` -> 7), or None.

    ``str.isdigit`` alone also takes superscripts and other scripts' digits, which
    ``int`` refuses; text that no file name could hold is refused before ``int``
    is asked (it refuses more than 4,300 digits).
    """
    if not text or len(text) > _SEQ_DIGITS_MAX or not (text.isascii() and text.isdigit()):
        return None
    return int(text)


def is_canonical_seq(text: str) -> bool:
    """Whether *text* is a seq as :func:`format_seq` spells it."""
    if len(text) == 3 and text.isascii() and text.isdigit():
        return text != "000"  # the common case, without building the spelling
    value = seq_value(text)
    return value is not None and value >= 1 and format_seq(value) == text


_SLUG = r"[a-z0-9]+(?:-[a-z0-9]+)*?"
_TT = rf"(?P<task_type>{_SLUG})"
_SEQ = r"(?P<seq>[0-9]{3,})"
_WID = rf"(?P<worker_id>{_SLUG})"
_ROUND = r"(?P<round>0|[1-9][0-9]*)"
_PREP = r"(?P<prep_id>PREP-[0-9]{3})"
_REV = r"(?P<revision>[1-9][0-9]*)"
_STAMP = rf"(?P<stamp>{times.STAMP_PATTERN})"
_SUFFIX = rf"{_TT}-{_SEQ}"


@dataclass(frozen=True, slots=True)
class Kind:
    """One artifact kind: where it lives and how its name is spelled."""

    name: str
    category: str
    #: The whole-name regular expression (anchored when compiled).
    regex: str
    template: str
    #: ``json``, ``jsonl``, ``md``, ``html``, ``status``, ``sh``, ``log`` or ``dir``.
    fmt: str
    description: str
    reader: Reader = "text"
    #: The registered document kind (:data:`okstra_core.models.DOC_KINDS`) its content, lines or header match.
    doc: str | None = None

    @property
    def model(self) -> type[BaseModel] | None:
        """The model of :attr:`doc` (built on first use: importing the grammar builds no model)."""
        return None if self.doc is None else _model_of(self.doc)

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern, built on first use (importing the grammar compiles nothing)."""
        return _anchored(self.regex)


@functools.cache
def _model_of(doc: str) -> type[BaseModel]:
    from .models import DOC_KINDS_BY_NAME

    return DOC_KINDS_BY_NAME[doc].model


@functools.cache
def _anchored(regex: str) -> re.Pattern[str]:
    return re.compile(f"^{regex}$")


def _k(
    name: str,
    category: str,
    regex: str,
    template: str,
    fmt: str,
    description: str,
    *,
    reader: Reader = "text",
    doc: str | None = None,
) -> Kind:
    return Kind(name, category, regex, template, fmt, description, reader, doc)


KINDS: Final[tuple[Kind, ...]] = (
    _k(
        "run-manifest",
        "manifests",
        rf"run-manifest-{_SUFFIX}\.json",
        "run-manifest-{task_type}-{seq}.json",
        "json",
        "run manifest",
        reader="json",
        doc="run-manifest",
    ),
    _k(
        "run-context",
        "manifests",
        rf"run-context-{_SUFFIX}\.json",
        "run-context-{task_type}-{seq}.json",
        "json",
        "run context (identity + pathHints)",
        reader="json",
        doc="run-context",
    ),
    _k(
        "team-state",
        "state",
        rf"team-state-{_SUFFIX}\.json",
        "team-state-{task_type}-{seq}.json",
        "json",
        "team-state ledger",
        reader="json",
        doc="team-state",
    ),
    _k(
        "active-run-context",
        "state",
        rf"active-run-context-{_SUFFIX}\.json",
        "active-run-context-{task_type}-{seq}.json",
        "json",
        "active run context",
        reader="json",
        doc="active-run-context",
    ),
    _k(
        "convergence-groups",
        "state",
        rf"convergence-groups-{_SUFFIX}\.json",
        "convergence-groups-{task_type}-{seq}.json",
        "json",
        "convergence groups and roster",
        reader="json",
        doc="convergence-groups",
    ),
    _k(
        "convergence-work",
        "state",
        rf"convergence-work-{_SUFFIX}\.json",
        "convergence-work-{task_type}-{seq}.json",
        "json",
        "convergence working state",
        reader="json",
        doc="convergence-work",
    ),
    _k(
        "convergence-round-plan",
        "state",
        rf"convergence-round-{_ROUND}-plan-{_SUFFIX}\.json",
        "convergence-round-{round}-plan-{task_type}-{seq}.json",
        "json",
        "convergence round plan",
        reader="json",
        doc="convergence-round-plan",
    ),
    _k(
        "convergence-round-results",
        "state",
        rf"convergence-round-{_ROUND}-results-{_SUFFIX}\.json",
        "convergence-round-{round}-results-{task_type}-{seq}.json",
        "json",
        "convergence round results",
        reader="json",
        doc="convergence-round-results",
    ),
    _k(
        "convergence-final",
        "state",
        rf"convergence-(?!groups-|work-|round-){_SUFFIX}\.json",
        "convergence-{task_type}-{seq}.json",
        "json",
        "convergence terminal state",
        reader="json",
        doc="convergence-final",
    ),
    _k(
        "lead-prompt",
        "prompts",
        rf"lead-execution-prompt-{_SUFFIX}\.md",
        "lead-execution-prompt-{task_type}-{seq}.md",
        "md",
        "lead execution prompt",
    ),
    _k(
        "lead-prompt-meta",
        "prompts",
        rf"lead-execution-prompt-{_SUFFIX}\.md\.meta\.json",
        "lead-execution-prompt-{task_type}-{seq}.md.meta.json",
        "json",
        "lead prompt metadata",
        reader="json",
        doc="prompt-meta",
    ),
    _k(
        "lead-prompt-log",
        "prompts",
        rf"lead-execution-prompt-{_SUFFIX}\.log",
        "lead-execution-prompt-{task_type}-{seq}.log",
        "log",
        "lead transcript",
    ),
    _k(
        "reverify-prompt",
        "prompts",
        rf"{_WID}-reverify-r{_ROUND}-{_SUFFIX}\.md",
        "{worker_id}-reverify-r{round}-{task_type}-{seq}.md",
        "md",
        "reverify prompt",
    ),
    _k(
        "reverify-prompt-meta",
        "prompts",
        rf"{_WID}-reverify-r{_ROUND}-{_SUFFIX}\.md\.meta\.json",
        "{worker_id}-reverify-r{round}-{task_type}-{seq}.md.meta.json",
        "json",
        "reverify prompt metadata",
        reader="json",
        doc="prompt-meta",
    ),
    _k(
        "reverify-prompt-log",
        "prompts",
        rf"{_WID}-reverify-r{_ROUND}-{_SUFFIX}\.log",
        "{worker_id}-reverify-r{round}-{task_type}-{seq}.log",
        "log",
        "reverify transcript",
    ),
    _k(
        "worker-prompt",
        "prompts",
        rf"{_WID}-worker-prompt-{_SUFFIX}\.md",
        "{worker_id}-worker-prompt-{task_type}-{seq}.md",
        "md",
        "worker prompt",
    ),
    _k(
        "worker-prompt-meta",
        "prompts",
        rf"{_WID}-worker-prompt-{_SUFFIX}\.md\.meta\.json",
        "{worker_id}-worker-prompt-{task_type}-{seq}.md.meta.json",
        "json",
        "worker prompt metadata",
        reader="json",
        doc="prompt-meta",
    ),
    _k(
        "worker-prompt-log",
        "prompts",
        rf"{_WID}-worker-prompt-{_SUFFIX}\.log",
        "{worker_id}-worker-prompt-{task_type}-{seq}.log",
        "log",
        "worker transcript",
    ),
    _k(
        "duty-contracts",
        "prompts",
        rf"duty-contracts-{_SUFFIX}",
        "duty-contracts-{task_type}-{seq}",
        "dir",
        "run-scoped duty catalog snapshot",
        reader="folder",
        doc="duty-catalog",
    ),
    _k(
        "final-report-data",
        "reports",
        rf"final-report-{_SUFFIX}\.data\.json",
        "final-report-{task_type}-{seq}.data.json",
        "json",
        "final report data",
        reader="report",
    ),
    _k(
        "final-report-md",
        "reports",
        rf"final-report-{_SUFFIX}\.md",
        "final-report-{task_type}-{seq}.md",
        "md",
        "final report reading copy",
    ),
    _k(
        "final-report-html",
        "reports",
        rf"final-report-{_SUFFIX}\.html",
        "final-report-{task_type}-{seq}.html",
        "html",
        "final report HTML",
    ),
    _k(
        "final-status",
        "status",
        rf"final-{_SUFFIX}\.status",
        "final-{task_type}-{seq}.status",
        "status",
        "final run status",
    ),
    _k(
        "claude-resume",
        "sessions",
        rf"claude-resume-{_SUFFIX}\.sh",
        "claude-resume-{task_type}-{seq}.sh",
        "sh",
        "Claude resume launcher",
    ),
    _k(
        "errors-log",
        "logs",
        rf"errors-{_SUFFIX}\.jsonl",
        "errors-{task_type}-{seq}.jsonl",
        "jsonl",
        "lead-written error log",
        reader="jsonl",
        doc="errors-log",
    ),
    _k(
        "worker-audit",
        "worker-results",
        rf"{_WID}-audit-{_SUFFIX}\.md",
        "{worker_id}-audit-{task_type}-{seq}.md",
        "md",
        "worker reading-confirmation audit",
    ),
    _k(
        "worker-result",
        "worker-results",
        rf"{_WID}-result-{_SUFFIX}\.md",
        "{worker_id}-result-{task_type}-{seq}.md",
        "md",
        "worker result",
    ),
    _k(
        "design-prep-request",
        "design-prep-requests",
        rf"design-prep-request-{_SEQ}-{_PREP}\.md",
        "design-prep-request-{seq}-{prep_id}.md",
        "md",
        "design-prep request",
        reader="sidecar",
        doc="design-prep-request-header",
    ),
    _k(
        "design-prep-input",
        "design-prep-inputs",
        rf"design-prep-input-{_SEQ}-{_PREP}-r{_REV}-{_STAMP}\.md",
        "design-prep-input-{seq}-{prep_id}-r{revision}-{stamp}.md",
        "md",
        "design-prep input revision",
        reader="sidecar",
        doc="design-prep-input-header",
    ),
    _k(
        "user-response",
        "user-responses",
        rf"user-response-{_SUFFIX}\.md",
        "user-response-{task_type}-{seq}.md",
        "md",
        "user-response sidecar",
        reader="sidecar",
        doc="user-response-header",
    ),
    _k(
        "user-response-superseded",
        "user-responses",
        rf"user-response-{_SUFFIX}\.superseded-{_STAMP}\.md",
        "user-response-{task_type}-{seq}.superseded-{stamp}.md",
        "md",
        "superseded user-response sidecar",
        reader="sidecar",
        doc="user-response-header",
    ),
)

KINDS_BY_NAME: Final = {k.name: k for k in KINDS}
KINDS_BY_CATEGORY: Final[dict[str, tuple[Kind, ...]]] = {}
for _kind in KINDS:
    KINDS_BY_CATEGORY.setdefault(_kind.category, ())
    KINDS_BY_CATEGORY[_kind.category] += (_kind,)

_CARRY_RE = re.compile(r"^stage-(?P<stage>[1-9][0-9]*)\.json$")
_NOTE_RE = re.compile(rf"^{_STAMP}-(?P<slug>{_SLUG})\.md$")


@dataclass(frozen=True, slots=True)
class ParsedName:
    """The parts of an artifact file name."""

    filename: str
    category: str
    kind: str
    task_type: str | None = None
    seq: int | None = None
    seq_text: str | None = None
    worker_id: str | None = None
    round: int | None = None
    prep_id: str | None = None
    revision: int | None = None
    stamp: str | None = None
    stage: int | None = None

    @property
    def fmt(self) -> str:
        kind = KINDS_BY_NAME.get(self.kind)
        return kind.fmt if kind else "json"


def _parsed(kind: Kind, filename: str, match: re.Match[str]) -> ParsedName:
    g = match.groupdict()
    seq_text = g.get("seq")
    return ParsedName(
        filename=filename,
        category=kind.category,
        kind=kind.name,
        task_type=g.get("task_type"),
        seq=int(seq_text) if seq_text else None,
        seq_text=seq_text,
        worker_id=g.get("worker_id"),
        round=int(g["round"]) if g.get("round") is not None else None,
        prep_id=g.get("prep_id"),
        revision=int(g["revision"]) if g.get("revision") else None,
        stamp=g.get("stamp"),
    )


@functools.lru_cache(maxsize=4096)
def parse_in_category(category: str, filename: str) -> ParsedName | None:
    """Parse *filename* found in the category folder *category*; None if it is not an artifact name.

    Remembered for the last few thousand names (a :class:`ParsedName` is immutable): every task of a store names
    its files alike, and every listing of a category folder parses each of its names.
    """
    for kind in KINDS_BY_CATEGORY.get(category, ()):
        match = kind.pattern.match(filename)
        if match and _real_stamp(match):
            return _parsed(kind, filename, match)
    return None


def _real_stamp(match: re.Match[str]) -> bool:
    """Whether a name's ``<stamp>``, when it has one, is a real UTC time (31 November is none)."""
    stamp = match.groupdict().get("stamp")
    return stamp is None or times.parse_stamp(stamp) is not None


def classify_flat(filename: str) -> ParsedName | None:
    """Which category a flat legacy artifact left at the top of a run dir belongs to."""
    for kind in KINDS:
        if kind.category in ("design-prep-requests", "design-prep-inputs"):
            continue
        match = kind.pattern.match(filename)
        if match and _real_stamp(match):
            return _parsed(kind, filename, match)
    return None


def parse_carry(filename: str) -> ParsedName | None:
    """``stage-<n>.json`` in ``runs/implementation/carry/``."""
    match = _CARRY_RE.match(filename)
    if not match:
        return None
    return ParsedName(
        filename=filename, category="carry", kind="carry", task_type="implementation", stage=int(match.group("stage"))
    )


def parse_note(filename: str) -> ParsedName | None:
    """``<timestamp>-<slug>.md`` in ``notes/``."""
    match = _NOTE_RE.match(filename)
    if not match or not _real_stamp(match):
        return None
    return ParsedName(filename=filename, category="notes", kind="note", stamp=match.group("stamp"))


def build(
    kind_name: str,
    *,
    task_type: str | None = None,
    seq: int | None = None,
    worker_id: str | None = None,
    round: int | None = None,
    prep_id: str | None = None,
    revision: int | None = None,
    stamp: str | None = None,
) -> str:
    """Build the file name of *kind_name*; the result always parses back to the same parts."""
    kind = KINDS_BY_NAME[kind_name]
    values = {
        "task_type": task_type,
        "seq": format_seq(seq) if seq is not None else None,
        "worker_id": worker_id,
        "round": round,
        "prep_id": prep_id,
        "revision": revision,
        "stamp": stamp,
    }
    try:
        name = kind.template.format(**values)
    except (KeyError, IndexError) as exc:  # pragma: no cover - programming error
        raise LayoutError(None, f"cannot build {kind_name}: {exc}") from exc
    parsed = parse_in_category(kind.category, name)
    if parsed is None or parsed.kind != kind_name:
        raise LayoutError(None, f"{name!r} does not round-trip as {kind_name}")
    return name


REPORT_DATA_SUFFIX: Final = ".data.json"


def report_stem(data_filename: str) -> str:
    """``final-report-<task-type>-<seq>`` of a report data file (its siblings add ``.md``/``.html``).

    A name outside the grammar keeps its own stem, so a stray data file still has siblings to look for.
    """
    return data_filename.removesuffix(REPORT_DATA_SUFFIX).removesuffix(".json")


#: The adjacent metadata of a prompt: ``<prompt>.md.meta.json``.
PROMPT_META_SUFFIX: Final = ".meta.json"


def meta_name_for(prompt_filename: str) -> str:
    """The adjacent metadata name of a prompt: ``<prompt>.md.meta.json``."""
    return prompt_filename + PROMPT_META_SUFFIX


def log_name_for(prompt_filename: str) -> str:
    """The transcript beside a prompt: ``<name>.log`` for ``<name>.md``."""
    return prompt_filename.removesuffix(".md") + ".log"
