"""Findings and the report of one check run: plain dataclasses, easy to pickle and to render."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

Severity = Literal["error", "warning", "info"]
SEVERITIES: Final = ("error", "warning", "info")
_ORDER: Final = {s: i for i, s in enumerate(SEVERITIES)}


def fails(severity: Severity, *, strict: bool = False) -> bool:
    """Whether a finding of *severity* fails the check: an error always, a warning with *strict*, an info never.

    The exit status and every format that counts failures (JUnit) ask this, so they agree.
    """
    return severity == "error" or (strict and severity == "warning")


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem at one place.

    ``path`` is project-relative POSIX (manager files outside the project are
    written ``$OKSTRA_HOME/...``); ``line`` is 1-based when known.
    """

    rule: str
    severity: Severity
    path: str
    message: str
    line: int | None = None

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.line or 0, _ORDER[self.severity], self.rule, self.message)


@dataclass(slots=True)
class CheckReport:
    """What a check run found: the findings (sorted by file), and how many files it looked at."""

    root: str
    findings: list[Finding] = field(default_factory=list)
    files: int = 0
    #: What went wrong with the check cache in this run (:meth:`CheckCache.problems`): it never changes the
    #: findings, only says why the run was slower than a cached one.
    cache_problems: list[str] = field(default_factory=list)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    @property
    def errors(self) -> int:
        return self.count("error")

    @property
    def warnings(self) -> int:
        return self.count("warning")

    @property
    def infos(self) -> int:
        return self.count("info")

    @property
    def summary(self) -> dict[str, int]:
        """``{"errors", "warnings", "infos", "files"}``."""
        return {"errors": self.errors, "warnings": self.warnings, "infos": self.infos, "files": self.files}

    def exit_code(self, *, strict: bool = False) -> int:
        """1 when a finding :func:`fails` the check (errors; warnings too with *strict*); 0 otherwise."""
        return 1 if any(fails(f.severity, strict=strict) for f in self.findings) else 0
