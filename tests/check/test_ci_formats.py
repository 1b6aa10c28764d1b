"""The pipeline formats: GitLab Code Quality (against GitLab's schema), json-lines, --statistics, --exit-zero."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from okstra_core.check.catalog import RULES_BY_ID
from okstra_core.commands.check import main_check

#: GitLab's own schema of one Code Quality issue (see gitlab/SOURCE.md).
SCHEMA = json.loads((Path(__file__).parent / "gitlab" / "codeclimate.json").read_text(encoding="utf-8"))
#: GitLab's documented severities.
GITLAB_SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


def run(root: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main_check([str(root), "--home", str(root / ".okstra-home"), "-j", "1", *argv])
    return code, capsys.readouterr().out


def broken(root: Path) -> Path:
    """Give *root* an error (OKS004) and a dangling symlink naming the project's own absolute path (OKS003)."""
    (root / ".okstra/discovery/latest-task.json").write_text("{")
    os.symlink(root / ".okstra" / "nothing-here.json", root / ".okstra/tasks/dangling.json")
    return root


def clone(demo_root: Path, where: Path) -> Path:
    shutil.copytree(demo_root, where, symlinks=True)
    return broken(where)


def test_gitlab_report_validates_against_gitlabs_schema(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    broken(fresh_demo)
    monkeypatch.chdir(fresh_demo)
    code, out = run(fresh_demo, capsys, "--format", "gitlab")
    assert code == 1
    issues = json.loads(out)
    _, plain = run(fresh_demo, capsys, "--format", "json")
    findings = json.loads(plain)["findings"]
    assert isinstance(issues, list) and len(issues) == len(findings) > 0
    validator = jsonschema.Draft7Validator(SCHEMA)
    for issue, finding in zip(issues, findings, strict=True):
        validator.validate(issue)
        # What GitLab's documentation adds to its schema.
        assert issue["severity"] in GITLAB_SEVERITIES
        assert issue["check_name"] == finding["rule"]
        assert issue["location"]["path"] == finding["path"]  # relative to the current folder, the project here
        assert issue["location"]["lines"]["begin"] == finding.get("line", 1) >= 1
        assert issue["description"].startswith(f"{finding['rule']} {RULES_BY_ID[finding['rule']].title}: ")
    assert {i["severity"] for i in issues} == {"major", "minor"}  # the errors and the demo's warnings
    assert len({i["fingerprint"] for i in issues}) == len(issues)


def test_gitlab_paths_are_relative_to_ci_project_dir(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI_PROJECT_DIR", str(fresh_demo.parent))
    _, out = run(fresh_demo, capsys, "--format", "gitlab", "--select", "OKS017")
    paths = [i["location"]["path"] for i in json.loads(out)]
    assert paths and all(p.startswith(f"{fresh_demo.name}/.okstra/tasks/") for p in paths)


def fingerprints(root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, tuple[str, str]]:
    _, out = run(root, capsys, "--format", "gitlab")
    return {i["fingerprint"]: (i["check_name"], i["description"]) for i in json.loads(out)}


def test_gitlab_fingerprints_are_stable_across_runs_and_clones(
    demo_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = clone(demo_root, tmp_path / "a" / "project")
    second = clone(demo_root, tmp_path / "elsewhere" / "deeper" / "checkout")
    monkeypatch.chdir(tmp_path)
    one = fingerprints(first, capsys)
    assert fingerprints(first, capsys) == one  # a second run (from the cache) agrees
    other = fingerprints(second, capsys)
    assert set(other) == set(one)
    # The dangling link's message names each clone's own path; the fingerprint does not depend on it.
    assert [d for _, d in one.values() if str(first) in d]
    assert [d for _, d in other.values() if str(second) in d]


def test_a_fingerprint_does_not_move_with_the_line_or_other_findings(tmp_path: Path) -> None:
    from okstra_core.check.findings import CheckReport, Finding
    from okstra_core.check.formats import fingerprints as prints

    a = Finding("OKS021", "error", ".okstra/x.jsonl", "bad line: not JSON", 3)
    b = Finding("OKS021", "error", ".okstra/x.jsonl", "bad line: not JSON", 9)
    other = Finding("OKS004", "error", ".okstra/a.json", "invalid JSON", None)
    alone = prints(CheckReport(str(tmp_path), [a, b]))
    moved = prints(CheckReport(str(tmp_path), [other, Finding("OKS021", "error", a.path, a.message, 5), b]))
    assert alone == moved[1:]  # same identity and order among twins: same fingerprints
    assert len(set(alone)) == 2


def test_a_dangling_links_fingerprint_does_not_depend_on_how_long_the_checkouts_path_is(tmp_path: Path) -> None:
    from okstra_core import reading
    from okstra_core.check.findings import CheckReport, Finding
    from okstra_core.check.formats import fingerprints as prints

    found = []
    for depth in (1, 12):  # a short checkout path, and one longer than any cut a message once made (120)
        root = tmp_path.joinpath(*[f"level-{n:02d}" for n in range(depth)], "project")
        link = root / ".okstra" / "a.json"
        link.parent.mkdir(parents=True)
        link.symlink_to(root / ".okstra" / "nothing-here.json")
        message = reading.dangling(link)
        assert str(root) in message  # shown whole, so the root's mark replaces all of it
        found.append(prints(CheckReport(str(root), [Finding("OKS003", "error", ".okstra/a.json", message, None)])))
    assert found[0] == found[1]


def test_json_lines_is_one_finding_per_line(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken(fresh_demo)
    _, out = run(fresh_demo, capsys, "--format", "json-lines")
    _, plain = run(fresh_demo, capsys, "--format", "json")
    lines = out.splitlines()
    assert out.endswith("\n") and all(line.startswith("{") for line in lines)
    assert [json.loads(line) for line in lines] == json.loads(plain)["findings"]
    code, out = run(fresh_demo, capsys, "--format", "json-lines", "--select", "OKS140")
    assert (code, out) == (0, "")  # nothing found: nothing written


def statistics_of(root: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    return run(root, capsys, "--statistics", *argv)


def test_statistics_counts_equal_the_findings(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken(fresh_demo)
    _, plain = run(fresh_demo, capsys, "--format", "json")
    findings = json.loads(plain)["findings"]
    code, out = statistics_of(fresh_demo, capsys, "--format", "json")
    assert code == 1  # the same exit status as the findings'
    rows = json.loads(out)
    assert {r["id"]: r["count"] for r in rows} == Counter(f["rule"] for f in findings)
    assert sum(r["count"] for r in rows) == len(findings)
    assert [r["count"] for r in rows] == sorted((r["count"] for r in rows), reverse=True)
    for r in rows:
        assert (r["name"], r["severity"]) == (RULES_BY_ID[r["id"]].title, RULES_BY_ID[r["id"]].severity)
    _, text = statistics_of(fresh_demo, capsys)
    lines = text.splitlines()
    assert lines[-1] == f"{len(findings)} findings of {len(rows)} rules"
    for row, line in zip(rows, lines[1:-1], strict=True):
        assert line.split()[:3] == [str(row["count"]), row["id"], row["severity"]]
    _, streamed = statistics_of(fresh_demo, capsys, "--format", "json-lines")
    assert [json.loads(line) for line in streamed.splitlines()] == rows


def test_statistics_refuses_a_format_it_does_not_print(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main_check([str(fresh_demo), "--statistics", "--format", "sarif"]) == 2
    assert capsys.readouterr().err == "okstra check: error: --statistics prints text, json, json-lines, not sarif\n"


def test_exit_zero(fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken(fresh_demo)
    code, out = run(fresh_demo, capsys, "--format", "json")
    assert code == 1 and json.loads(out)["summary"]["errors"] == 2
    code, out = run(fresh_demo, capsys, "--format", "json", "--exit-zero")
    assert code == 0 and json.loads(out)["summary"]["errors"] == 2  # the same report
    # Still 2 when the check cannot run: usage, no store, an unusable settings file.
    assert main_check([str(fresh_demo), "--exit-zero", "--select", "OKS999"]) == 2
    assert main_check([str(tmp_path / "missing"), "--exit-zero"]) == 2
    (fresh_demo / "okstra.toml").write_text("[check]\nstrict = 2\n")
    assert main_check([str(fresh_demo), "--exit-zero"]) == 2
