"""Golden files of the reading copy and the HTML report, per task type, from 3.0 and 2.0 data.

Regenerate after an intended change with:

    OKSTRA_UPDATE_GOLDEN=1 .venv/bin/pytest tests/render/test_render_golden.py

and review the diff of tests/render/golden/ like any other change.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from render_samples import TASK_TYPES, VERSIONS, report_bytes, report_data, report_rel, stem

from okstra_core.render import render_html, render_markdown
from okstra_core.render.source import validate_report

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("OKSTRA_UPDATE_GOLDEN") == "1"

CASES = [(t, v, "en") for v in VERSIONS for t in TASK_TYPES] + [
    ("option-selection", "3.0", "ko"),
    ("implementation-planning", "3.0", "ja"),
]


def _render(task_type: str, version: str, language: str) -> tuple[str, str]:
    report = validate_report(Path("data.json"), report_data(task_type, version, language=language))
    assert not hasattr(report, "reason"), report
    md = render_markdown(report)
    html = render_html(
        report, report_bytes(task_type, version, language=language), report_rel(task_type), stem(task_type)
    )
    return md, html


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return
    assert path.exists(), f"missing golden {name}; regenerate with OKSTRA_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"


@pytest.mark.parametrize(("task_type", "version", "language"), CASES)
def test_golden(task_type: str, version: str, language: str) -> None:
    md, html = _render(task_type, version, language)
    base = f"v{version.replace('.', '_')}-{task_type}" + ("" if language == "en" else f"-{language}")
    _check(base + ".md", md)
    _check(base + ".html", html)


_RENDER_ALL = """
import hashlib, json, sys
from test_render_golden import CASES, _render
out = {}
for case in CASES:
    md, html = _render(*case)
    out["/".join(case)] = [hashlib.sha256(md.encode()).hexdigest(), hashlib.sha256(html.encode()).hexdigest()]
print(json.dumps(out, sort_keys=True))
"""


def _render_in_a_process(hash_seed: str) -> dict[str, list[str]]:
    """Every case rendered by a fresh interpreter whose str hashes (set and dict-of-set order) follow *hash_seed*."""
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(Path(__file__).parent)}
    proc = subprocess.run([sys.executable, "-c", _RENDER_ALL], env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_rendering_is_deterministic() -> None:
    # Same data, same bytes, whatever the process: another hash seed must not reorder anything.
    first, second = _render_in_a_process("1"), _render_in_a_process("2024")
    assert len(first) == len(CASES)
    assert first == second


def test_every_golden_file_is_in_use() -> None:
    expected = set()
    for task_type, version, language in CASES:
        base = f"v{version.replace('.', '_')}-{task_type}" + ("" if language == "en" else f"-{language}")
        expected |= {base + ".md", base + ".html"}
    assert {p.name for p in GOLDEN.iterdir()} == expected


def test_language_changes_labels_not_data() -> None:
    en, _ = _render("option-selection", "3.0", "en")
    ko, ko_html = _render("option-selection", "3.0", "ko")
    assert "## Option candidates" in en and "## 옵션 후보" in ko
    assert "Patch the client" in ko  # narrative from the data, as written
    assert '<html lang="ko">' in ko_html


def test_v2_without_language_renders_english() -> None:
    md, html = _render("analysis", "2.0", "en")
    assert "## Findings" in md and "Report language" not in md
    assert '<html lang="en">' in html
