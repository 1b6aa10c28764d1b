"""Output formats of a check run: text, json, json-lines, github, gitlab, sarif, junit; and per-rule statistics."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter
from itertools import groupby
from pathlib import Path
from typing import Final

from ..text import counted, json_escaped, visible
from ..version import version
from .catalog import RULES, RULES_BY_ID
from .findings import CheckReport, Finding, fails

FORMATS: Final = ("text", "json", "json-lines", "github", "gitlab", "sarif", "junit")
JSON_VERSION: Final = 1
TOOL_NAME: Final = "okstra check"
INFO_URI: Final = "https://github.com/okstra/okstra-workbench/blob/main/docs/rules.md"

#: GitHub shows at most 10 error and 10 warning annotations per step (and 50 per job).
GITHUB_LIMITS: Final = {"error": 10, "warning": 10, "notice": 10}
_GH_LEVEL: Final = {"error": "error", "warning": "warning", "info": "notice"}

_SURROGATE: Final = re.compile("[\ud800-\udfff]")

_COLOURS: Final = {
    "error": "\033[31m",
    "warning": "\033[33m",
    "info": "\033[36m",
    "bold": "\033[1m",
    "dim": "\033[2m",
    "reset": "\033[0m",
}


def summary_line(report: CheckReport) -> str:
    s = report.summary
    counts = ", ".join(counted(s[f"{word}s"], word) for word in ("error", "warning", "info"))
    return f"{counts} in {s['files']} files checked"


def render_text(report: CheckReport, *, colour: bool = False) -> str:
    """Findings grouped by file, then a summary line."""
    c = _COLOURS if colour else {k: "" for k in _COLOURS}
    out: list[str] = []
    for path, items in groupby(report.findings, key=lambda f: f.path):
        out.append(f"{c['bold']}{visible(path)}{c['reset']}")
        for f in items:
            where = f"{f.line}: " if f.line is not None else ""
            message = visible(f.message)
            out.append(f"  {where}{c[f.severity]}{f.severity}{c['reset']} {c['dim']}{f.rule}{c['reset']} {message}")
        out.append("")
    out.append(summary_line(report))
    return "\n".join(out) + "\n"


def finding_dict(f: Finding) -> dict[str, object]:
    """One finding in the JSON shape: ``rule``, ``severity``, ``path``, ``message``, and ``line`` when known."""
    item: dict[str, object] = {
        "rule": f.rule,
        "severity": f.severity,
        "path": _json_safe(f.path),
        "message": _json_safe(f.message),
    }
    if f.line is not None:
        item["line"] = f.line
    return item


def report_dict(report: CheckReport) -> dict[str, object]:
    """The stable JSON shape (version 1)."""
    findings = [finding_dict(f) for f in report.findings]
    return {"version": JSON_VERSION, "root": _json_safe(report.root), "summary": report.summary, "findings": findings}


def render_json_lines(report: CheckReport) -> str:
    """One finding per line, each a JSON object of the ``json`` format's findings; nothing when clean.

    Escaped as ``json`` is, so that no line separator a reader splits on (U+0085, U+2028, U+2029) is raw.
    """
    return "".join(json_escaped(json.dumps(finding_dict(f), ensure_ascii=False)) + "\n" for f in report.findings)


def _json_safe(text: str) -> str:
    """JSON escapes every control character itself; only lone surrogates (undecodable name bytes) need a stand-in."""
    return visible(text) if _SURROGATE.search(text) else text


def render_json(report: CheckReport) -> str:
    """The JSON document; non-ASCII text is kept, every control character is a ``\\u`` escape."""
    return json_escaped(json.dumps(report_dict(report), indent=2, ensure_ascii=False)) + "\n"


def gh_data(text: str) -> str:
    """Escape a workflow-command message; other control characters are made visible."""
    return visible(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def gh_property(text: str) -> str:
    """Escape a workflow-command property value (also ``:`` and ``,``)."""
    return gh_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: CheckReport) -> str:
    """GitHub Actions workflow commands; past the annotation limits the rest is summarised in one line."""
    out: list[str] = []
    used: Counter[str] = Counter()
    left: Counter[str] = Counter()
    for f in report.findings:
        level = _GH_LEVEL[f.severity]
        if used[level] >= GITHUB_LIMITS[level]:
            left[f.severity] += 1
            continue
        used[level] += 1
        props = [f"file={gh_property(f.path)}"]
        if f.line is not None:
            props.append(f"line={f.line}")
        props.append(f"title={gh_property(f.rule + ' ' + RULES_BY_ID[f.rule].title)}")
        out.append(f"::{level} {','.join(props)}::{gh_data(f.message)}")
    if left:
        parts = ", ".join(f"{n} {sev}{'s' if n != 1 else ''}" for sev, n in sorted(left.items()))
        note = f"{parts} more not annotated (GitHub annotation limits); run okstra check locally for the full list"
        out.append(f"::warning title={gh_property('okstra check')}::{gh_data(note)}")
    out.append(summary_line(report))
    return "\n".join(out) + "\n"


_SARIF_LEVEL: Final = {"error": "error", "warning": "warning", "info": "note"}


def render_sarif(report: CheckReport) -> str:
    """SARIF 2.1.0 with a rule descriptor per rule id; the driver's version is the installed package's."""
    index = {r.id: i for i, r in enumerate(RULES)}
    rules = [
        {
            "id": r.id,
            "name": "".join(w.capitalize() for w in r.title.replace("-", " ").split() if w.isalnum()) or r.id,
            "shortDescription": {"text": r.title},
            "fullDescription": {"text": r.explanation},
            "helpUri": f"{INFO_URI}#{r.id.lower()}",
            "defaultConfiguration": {"level": _SARIF_LEVEL[r.severity]},
            "properties": {"tags": [r.topic]},
        }
        for r in RULES
    ]
    results = []
    for f in report.findings:
        region = {"startLine": f.line} if f.line is not None else None
        physical: dict[str, object] = {"artifactLocation": {"uri": _uri_path(f.path), "uriBaseId": "PROJECTROOT"}}
        if region:
            physical["region"] = region
        results.append(
            {
                "ruleId": f.rule,
                "ruleIndex": index[f.rule],
                "level": _SARIF_LEVEL[f.severity],
                "message": {"text": visible(f.message)},
                "locations": [{"physicalLocation": physical}],
            }
        )
    root_uri = "file://" + _uri_path(report.root).rstrip("/") + "/"
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {"name": TOOL_NAME, "version": version(), "informationUri": INFO_URI, "rules": rules}
                },
                "originalUriBaseIds": {"PROJECTROOT": {"uri": root_uri}},
                "results": results,
            }
        ],
    }
    return json_escaped(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n"


def _uri_path(path: str) -> str:
    """*path* as a URI path (RFC 3986): every byte but the unreserved characters and ``/`` percent-encoded.

    A name's undecodable byte (a lone surrogate from ``surrogateescape``) is encoded as the byte it stands for.
    """
    from urllib.parse import quote

    try:
        raw = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = visible(path).encode("utf-8")
    return quote(raw, safe="/")


def render_junit(report: CheckReport, *, strict: bool = False) -> str:
    """JUnit XML: one test suite per file with findings, one test case per finding.

    A test case fails exactly when its finding fails the check (:func:`~.findings.fails`: errors, and
    warnings with *strict*), so the failures counted agree with the exit status; the others pass and
    carry their text as output. A clean run is one passing test case, so that CI dashboards show the
    check ran.
    """
    from xml.sax.saxutils import escape, quoteattr  # it imports urllib and ssl: only for this format

    lines = ['<?xml version="1.0" encoding="UTF-8"?>']
    failing = [f for f in report.findings if fails(f.severity, strict=strict)]
    lines.append(f'<testsuites name="okstra check" tests="{max(1, len(report.findings))}" failures="{len(failing)}">')
    if not report.findings:
        lines.append('  <testsuite name="okstra check" tests="1" failures="0">')
        lines.append(f'    <testcase classname="okstra.check" name={quoteattr(f"{report.files} files")}/>')
        lines.append("  </testsuite>")
    for raw_path, group in groupby(report.findings, key=lambda f: f.path):
        path = _xml_safe(raw_path)
        items: list[Finding] = list(group)
        failed = sum(1 for f in items if fails(f.severity, strict=strict))
        lines.append(f'  <testsuite name={quoteattr(path)} tests="{len(items)}" failures="{failed}">')
        for f in items:
            name = f"{f.rule}{':' + str(f.line) if f.line is not None else ''}"
            lines.append(f"    <testcase classname={quoteattr(path)} name={quoteattr(name)}>")
            if not fails(f.severity, strict=strict):
                text = f.message if f.severity == "info" else f"{f.severity}: {f.message}"
                lines.append(f"      <system-out>{escape(_xml_safe(text))}</system-out>")
            else:
                lines.append(
                    f"      <failure type={quoteattr(f.severity)} message={quoteattr(_xml_safe(f.message))}>"
                    f"{escape(_xml_safe(f'{f.rule} {RULES_BY_ID[f.rule].title}: {f.message}'))}</failure>"
                )
            lines.append("    </testcase>")
        lines.append("  </testsuite>")
    lines.append("</testsuites>")
    return "\n".join(lines) + "\n"


def _xml_safe(text: str) -> str:
    """Control characters made visible, then drop what XML 1.0 still cannot carry (U+FFFE, U+FFFF)."""
    return "".join(
        ch
        for ch in visible(text)
        if ch in "\t\n\r" or (ord(ch) >= 0x20 and not 0xD800 <= ord(ch) <= 0xDFFF and ord(ch) not in (0xFFFE, 0xFFFF))
    )


#: GitLab's Code Quality severities (info, minor, major, critical, blocker) for the checker's three.
GITLAB_SEVERITY: Final = {"error": "major", "warning": "minor", "info": "info"}
#: Stands for the project root's absolute path in a fingerprinted message, so clones at other paths agree.
_ROOT_MARK: Final = "<project>"


def fingerprints(report: CheckReport) -> list[str]:
    """A stable fingerprint per finding, for GitLab to track a finding from one pipeline to the next.

    The SHA-256 of the rule id, the project-relative path and the message (the finding's identity: it names
    what is wrong, never where it stands in the output), with the project root's absolute path in the message
    replaced by a mark; findings that share all three are told apart by their order among themselves
    (by line). The line number and the position in the report are left out, so an edit elsewhere in the file
    or the store keeps the fingerprint.
    """
    roots = sorted({report.root, os.path.realpath(report.root)}, key=len, reverse=True)
    seen: Counter[tuple[str, str, str]] = Counter()
    out = []
    for f in report.findings:
        message = f.message
        for root in roots:
            message = message.replace(root, _ROOT_MARK)
        identity = (f.rule, f.path, message)
        nth = seen[identity]
        seen[identity] += 1
        text = "\0".join((*identity, str(nth)))
        out.append(hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())
    return out


def _gitlab_path(root: str, rel: str) -> str:
    """*rel* relative to ``$CI_PROJECT_DIR`` (else the current folder) when the project lies inside it, as ruff does."""
    if rel.startswith("$"):
        return visible(rel)
    base = os.environ.get("CI_PROJECT_DIR") or os.getcwd()
    real_root, real_base = Path(os.path.realpath(root)), Path(os.path.realpath(base))
    if real_root != real_base and real_root.is_relative_to(real_base):
        return visible((real_root.relative_to(real_base) / rel).as_posix())
    return visible(rel)


def render_gitlab(report: CheckReport) -> str:
    """GitLab Code Quality JSON: an array of issues, one per finding (see :func:`fingerprints`).

    ``location.lines.begin`` is the finding's line, or 1 for a finding about a whole file or folder.
    """
    issues = [
        {
            "check_name": f.rule,
            "description": visible(f"{f.rule} {RULES_BY_ID[f.rule].title}: {f.message}"),
            "severity": GITLAB_SEVERITY[f.severity],
            "fingerprint": fingerprint,
            "location": {"path": _gitlab_path(report.root, f.path), "lines": {"begin": f.line or 1}},
        }
        for f, fingerprint in zip(report.findings, fingerprints(report), strict=True)
    ]
    return json_escaped(json.dumps(issues, indent=2, ensure_ascii=False)) + "\n"


def statistics(report: CheckReport) -> list[dict[str, object]]:
    """Findings per rule: ``id``, ``name`` (the rule's title), ``severity``, ``count``; most frequent first."""
    counts = Counter(f.rule for f in report.findings)
    return [
        {"id": rule, "name": RULES_BY_ID[rule].title, "severity": RULES_BY_ID[rule].severity, "count": n}
        for rule, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


#: The formats ``--statistics`` prints in.
STATISTICS_FORMATS: Final = ("text", "json", "json-lines")


def render_statistics(report: CheckReport, fmt: str) -> str:
    """:func:`statistics` as an aligned table and a total (text), a JSON array, or one object per line."""
    rows = statistics(report)
    if fmt == "json":
        return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
    if fmt == "json-lines":
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    width = max([len(str(row["count"])) for row in rows] + [5])
    lines = [f"{'count':>{width}}  rule    severity  name"]
    lines += [f"{row['count']:>{width}}  {row['id']}  {row['severity']:<8}  {row['name']}" for row in rows]
    total = len(report.findings)
    lines.append(f"{total} finding{'s' * (total != 1)} of {len(rows)} rule{'s' * (len(rows) != 1)}")
    return "\n".join(lines) + "\n"


def render(report: CheckReport, fmt: str, *, colour: bool = False, strict: bool = False) -> str:
    """The report in one of :data:`FORMATS`; *strict* as the run's (warnings fail), for formats that count failures."""
    if fmt == "text":
        return render_text(report, colour=colour)
    if fmt == "json":
        return render_json(report)
    if fmt == "json-lines":
        return render_json_lines(report)
    if fmt == "gitlab":
        return render_gitlab(report)
    if fmt == "github":
        return render_github(report)
    if fmt == "sarif":
        return render_sarif(report)
    if fmt == "junit":
        return render_junit(report, strict=strict)
    raise ValueError(f"unknown format {fmt!r}")
