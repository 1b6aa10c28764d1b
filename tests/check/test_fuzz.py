"""Random corruption of random demo files: the checker never raises, exits 0 or 1, and names the file."""

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
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
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
        path.write_bytes(raw[:at] + (b"\x00" if kind == "nul" else b"\xff") + raw[at:])
    elif kind == "truncate":
        # Any strict prefix of a pretty-printed object that stops before its closing brace is invalid JSON.
        cut = data.draw(st.integers(0, raw.rstrip().rfind(b"}") - 1), label="length")
        path.write_bytes(raw[:cut])
    else:
        key = data.draw(st.sampled_from(fields), label="field")
        value = json.loads(raw)
        value[key] = [[]]  # no declared field of any store model accepts a list holding a list
        path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
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
