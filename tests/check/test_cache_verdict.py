"""The verdict of the last full check, kept beside the check cache for the workbench's Home: what `okstra check`
said (after the project's settings), signed like the cache, and never trusted once edited."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from okstra_core import layout
from okstra_core.check.cache import VERDICT_MAX_BYTES, CheckCache, checked_home, load_verdict, verdict_file
from okstra_core.commands.check import main_check


def kept() -> CheckCache:
    return CheckCache(layout.okstra_cache_dir())


def test_okstra_check_keeps_what_it_said(demo_root: Path, tmp_path: Path) -> None:
    cache = kept()
    assert load_verdict(cache, str(demo_root), None) is None
    out = tmp_path / "report.json"
    code = main_check([str(demo_root), "--quiet", "--format", "json", "--output", str(out)])
    summary = json.loads(out.read_text(encoding="utf-8"))["summary"]
    verdict = load_verdict(cache, str(demo_root), None)
    assert verdict is not None
    assert (verdict.errors, verdict.warnings, verdict.infos, verdict.files) == (
        summary["errors"],
        summary["warnings"],
        summary["infos"],
        summary["files"],
    )
    assert verdict.failed == bool(code)


def test_no_cache_keeps_no_verdict(demo_root: Path) -> None:
    main_check([str(demo_root), "--quiet", "--no-cache"])
    assert load_verdict(kept(), str(demo_root), None) is None


@pytest.mark.parametrize("edit", ["counts", "mac", "garbage", "symlink", "huge"])
def test_an_edited_verdict_is_not_trusted(demo_root: Path, tmp_path: Path, edit: str) -> None:
    main_check([str(demo_root), "--quiet"])
    cache = kept()
    assert load_verdict(cache, str(demo_root), None) is not None
    path = verdict_file(cache, str(demo_root), checked_home(None))
    doc = json.loads(path.read_text(encoding="utf-8"))
    if edit == "counts":  # a clean verdict forged over a failing one
        doc["verdict"].update(errors=0, warnings=0)
        path.write_text(json.dumps(doc), encoding="utf-8")
    elif edit == "mac":
        doc["mac"] = "0" * 64
        path.write_text(json.dumps(doc), encoding="utf-8")
    elif edit == "garbage":
        path.write_bytes(b"\x00not json")
    elif edit == "huge":  # the same verdict, padded past the bound: never read whole
        path.write_text(json.dumps(doc) + " " * VERDICT_MAX_BYTES, encoding="utf-8")
    else:
        other = tmp_path / "elsewhere.json"
        other.write_text(json.dumps(doc), encoding="utf-8")
        path.unlink()
        path.symlink_to(other)
    assert load_verdict(cache, str(demo_root), None) is None
