"""Corruption of demo files: the checker never raises, exits 0 or 1, and names the file.

One deterministic case per document kind makes sure each kind is corrupted on
every run; a seeded (derandomized) hypothesis search adds every other file of
the demo, the same examples on every run, so a failure always reproduces.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from okstra_core.commands.check import main_check
from okstra_core.layout import is_writer_debris

from .helpers import check


def _candidates(root: Path) -> list[str]:
    out = []
    for base in (root / ".okstra", root / ".okstra-home"):
        for p in sorted(base.rglob("*")):
            parts = p.relative_to(root).parts
            if p.is_file() and not p.is_symlink() and not any(is_writer_debris(x) for x in parts):
                out.append(p.relative_to(root).as_posix())
    return out


def _json_fields(root: Path, rel: str) -> list[str]:
    if not rel.endswith(".json") or "/.reservations/" in rel:
        return []
    value = json.loads((root / rel).read_text(encoding="utf-8"))
    return sorted(value) if isinstance(value, dict) else []


@pytest.fixture(scope="module")
def pristine(demo_root: Path) -> tuple[Path, list[str]]:
    return demo_root, _candidates(demo_root)


@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_corruption_is_reported(
    pristine: tuple[Path, list[str]], tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    demo, files = pristine
    root = tmp_path_factory.mktemp("fuzz") / "project"
    shutil.copytree(demo, root, symlinks=True)
    rel = data.draw(st.sampled_from(files), label="file")
    path = root / rel
    raw = path.read_bytes()
    fields = _json_fields(root, rel)
    kinds = ["nul", "invalid-utf8"] + (["truncate", "field"] if fields else [])
    kind = data.draw(st.sampled_from(kinds), label="corruption")
    if kind in ("nul", "invalid-utf8"):
        at = data.draw(st.integers(0, len(raw)), label="offset")
    elif kind == "truncate":
        at = data.draw(st.integers(0, raw.rstrip().rfind(b"}") - 1), label="length")
    else:
        at = data.draw(st.integers(0, len(fields) - 1), label="field")
    _corrupt(path, kind, at, fields)
    _assert_reported(root, rel, kind)


def _corrupt(path: Path, kind: str, at: int, fields: list[str]) -> None:
    raw = path.read_bytes()
    if kind in ("nul", "invalid-utf8"):
        path.write_bytes(raw[:at] + (b"\x00" if kind == "nul" else b"\xff") + raw[at:])
    elif kind == "truncate":
        # Any strict prefix of a pretty-printed object that stops before its closing brace is invalid JSON.
        path.write_bytes(raw[:at])
    else:
        value = json.loads(raw)
        value[fields[at]] = [[]]  # no declared field of any store model accepts a list holding a list
        path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")


def _assert_reported(root: Path, rel: str, kind: str) -> None:
    report = check(root)
    assert report.exit_code() == 1
    assert any(f.path == rel or f.path == f"$OKSTRA_HOME/{rel}" for f in report.findings if f.severity == "error"), (
        rel,
        kind,
    )
    assert main_check(
        [
            str(root),
            "--home",
            str(root / ".okstra-home"),
            "-j",
            "1",
            "--format",
            "json",
            "-o",
            str(root.parent / "out.json"),
        ]
    ) in (0, 1)


#: Every kind of document the demo holds (``classify_documents``), each corrupted once per run.
DOCUMENT_KINDS = (
    "active-run-context", "carry", "consumers", "convergence-final", "convergence-groups",
    "convergence-round-plan", "convergence-round-results", "convergence-work", "design-prep-input-header",
    "design-prep-request-header", "duty-catalog", "errors-log", "final-report", "fix-cycles",
    "invocation-completion", "invocation-meta", "invocation-result", "latest-task", "legacy-flat", "manager",
    "manager-children", "manager-directives", "manager-events", "manager-projects", "manager-snapshots",
    "manager-task-manifest", "project", "prompt-meta", "recap-log", "run-context", "run-manifest",
    "selected-direction", "task-catalog", "task-manifest", "team-state", "timeline", "user-response-header",
)  # fmt: skip
JSON_CORRUPTIONS = ("truncate", "field", "nul", "invalid-utf8")
TEXT_CORRUPTIONS = ("nul", "invalid-utf8")


def _first_of_each_kind(root: Path) -> dict[str, str]:
    from conftest import classify_documents

    from okstra_core.store import Project

    out: dict[str, str] = {}
    for path, kind in sorted(classify_documents(Project(root), root / ".okstra-home").items()):
        out.setdefault(kind, path.relative_to(root).as_posix())
    return out


def test_every_document_kind_of_the_demo_is_corrupted(pristine: tuple[Path, list[str]]) -> None:
    assert sorted(_first_of_each_kind(pristine[0])) == sorted(DOCUMENT_KINDS)


@pytest.mark.parametrize("doc_kind", DOCUMENT_KINDS)
def test_each_document_kind_corrupted_is_an_error(
    pristine: tuple[Path, list[str]], tmp_path: Path, doc_kind: str
) -> None:
    demo, _ = pristine
    root = tmp_path / "project"
    shutil.copytree(demo, root, symlinks=True)
    rel = _first_of_each_kind(root)[doc_kind]
    fields = _json_fields(root, rel)
    # The corruption rotates with the kind's place in the list: every corruption is used, each kind gets one.
    turn = DOCUMENT_KINDS.index(doc_kind)
    kind = JSON_CORRUPTIONS[turn % 4] if fields else TEXT_CORRUPTIONS[turn % 2]
    size = len((root / rel).read_bytes())
    at = {"truncate": size // 2, "field": 0}.get(kind, size // 2)
    _corrupt(root / rel, kind, at, fields)
    _assert_reported(root, rel, kind)
