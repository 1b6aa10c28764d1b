"""Hostile file names never reach the checker's output raw; junit and sarif always parse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from .helpers import TASK

# ESC ]52 (clipboard write) ending in BEL, ESC [2J (wipe), a NUL-like C0 (SOH), a C1 CSI, an undecodable byte.
HOSTILE = b"evil-\x1b]52;c;SE9TVElMRQ==\x07-\x1b[2J-\x01-\xc2\x9b-\xff-\xef\xbf\xbe.md"


@pytest.fixture
def hostile_store(fresh_demo: Path) -> Path:
    folder = os.fsencode(fresh_demo / TASK / "runs" / "analysis" / "reports")
    with open(os.path.join(folder, HOSTILE), "wb") as fh:
        fh.write(b"hostile\n")
    return fresh_demo


def _run(root: Path, fmt: str) -> bytes:
    proc = subprocess.run(
        [sys.executable, "-m", "okstra_core.cli", "check", str(root), "--format", fmt, "--home", str(root / ".h")],
        capture_output=True,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert b"Traceback" not in proc.stderr
    return proc.stdout


@pytest.mark.parametrize("fmt", ["text", "json", "json-lines", "github", "gitlab", "junit", "sarif"])
def test_no_raw_control_characters_in_any_format(hostile_store: Path, fmt: str) -> None:
    out = _run(hostile_store, fmt)
    assert b"evil-" in out, "the hostile file is reported"
    for raw in (b"\x1b", b"\x07", b"\x01", b"\xc2\x9b"):
        assert raw not in out, f"{raw!r} reached the {fmt} output"
    if fmt == "junit":
        ET.fromstring(out)
    if fmt in ("json", "sarif", "gitlab"):
        json.loads(out)
    if fmt == "json-lines":
        assert all(json.loads(line) for line in out.splitlines())


def test_a_fifo_run_manifest_is_not_reported_as_missing(fresh_demo: Path) -> None:
    from okstra_core.check import run_check

    manifest = next(fresh_demo.glob(f"{TASK}/runs/analysis/manifests/run-manifest-*.json"))
    manifest.unlink()
    os.mkfifo(manifest)
    report = run_check(fresh_demo, home=fresh_demo / ".h", jobs=1)
    rel = manifest.relative_to(fresh_demo).as_posix()
    mentions = [f for f in report.findings if rel in f.message or f.path == rel]
    assert any(f.path == rel and "FIFO" in f.message for f in mentions), mentions
    assert not any(rel in f.message and "does not exist" in f.message for f in mentions), mentions


# Valid UTF-8 (no undecodable byte, so no stand-in is needed for the name as a whole): a C1 CSI, DEL,
# the line and paragraph separators and a bidi override, which JSON's own escaping leaves raw.
UNESCAPED_BY_JSON = "evil-\x9b31m-\x7f-\u2028-\u2029-\u202e.md"


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_json_formats_escape_what_json_leaves_raw(fresh_demo: Path, fmt: str) -> None:
    folder = fresh_demo / TASK / "runs" / "analysis" / "reports"
    (folder / UNESCAPED_BY_JSON).write_bytes(b"hostile\n")
    out = _run(fresh_demo, fmt)
    text = out.decode("utf-8")
    for raw in "\x9b\x7f\u2028\u2029\u202e":
        assert raw not in text, f"{raw!r} reached the {fmt} output"
    doc = json.loads(out)
    if fmt == "json":
        assert "\\u009b" in text and "\\u2028" in text
        # Escaped, not replaced: the finding names the file exactly.
        assert any(f["path"].endswith(UNESCAPED_BY_JSON) for f in doc["findings"])


# What a line-based reader splits on beside LF: NEL (U+0085), the line separator (U+2028); and a C1 CSI
# and a bidi override, which a terminal acts on.
LINE_BREAKERS = "evil-\x85-\x9b-\u202e-\u2028.md"


@pytest.mark.parametrize("fmt", ["json-lines", "gitlab"])
def test_line_formats_escape_what_splits_lines(fresh_demo: Path, fmt: str) -> None:
    folder = fresh_demo / TASK / "runs" / "analysis" / "reports"
    (folder / LINE_BREAKERS).write_bytes(b"hostile\n")
    text = _run(fresh_demo, fmt).decode("utf-8")
    for raw in "\x85\x9b\u202e\u2028":
        assert raw not in text, f"{raw!r} reached the {fmt} output"
    if fmt == "json-lines":
        records = [json.loads(line) for line in text.splitlines()]
        assert len(records) == text.count("\n")
        assert any(r["path"].endswith(LINE_BREAKERS) for r in records), "escaped, not replaced"
    else:
        assert any("evil-" in issue["location"]["path"] for issue in json.loads(text))


def test_sarif_uris_are_percent_encoded(fresh_demo: Path) -> None:
    from urllib.parse import unquote, urlsplit

    name = "evil space#frag?q=1%20.json"
    folder = fresh_demo / TASK / "runs" / "analysis" / "reports"
    (folder / name).write_bytes(b"hostile\n")
    doc = json.loads(_run(fresh_demo, "sarif"))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]]
    uri = next(u for u in uris if "evil" in u)
    parts = urlsplit(uri)
    assert (parts.query, parts.fragment) == ("", ""), uri
    assert " " not in uri
    assert unquote(parts.path).endswith("reports/" + name)
    root = doc["runs"][0]["originalUriBaseIds"]["PROJECTROOT"]["uri"]
    assert unquote(urlsplit(root).path) == str(fresh_demo).rstrip("/") + "/"
