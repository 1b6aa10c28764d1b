"""``tools/path_literals.py``: no store folder name, file name or suffix is spelled inline in the packages."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("path_literals", ROOT / "tools" / "path_literals.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PLANTED = '''"""A docstring may name runs/ and task-manifest.json."""

from pathlib import Path


def where(root: Path) -> list[Path]:
    """So may a function's: state/."""
    message = "see runs/analysis in the task folder"
    status = {"status": "completed"}
    return [
        root / "runs",
        root / "task-manifest.json",
        root.with_name("x.data.json"),
        root / f"stage-{len(message)}",
        root / "instruction-set/task-brief.md",
        Path(status["status"]),
    ]
'''


def test_a_planted_literal_is_found(tmp_path: Path) -> None:
    package = tmp_path / "okstra_tui"
    package.mkdir()
    (package / "planted.py").write_text(PLANTED, encoding="utf-8")
    found = list(_tool().path_literals(tmp_path))
    assert found == [
        "okstra_tui/planted.py:11: 'runs' is spelled inline; use layout.RUNS_DIR",
        "okstra_tui/planted.py:12: 'task-manifest.json' is spelled inline; use layout.TASK_MANIFEST_FILE",
        "okstra_tui/planted.py:13: '.data.json' is spelled inline; use names.REPORT_DATA_SUFFIX",
        "okstra_tui/planted.py:14: 'stage-' is spelled inline; use layout.STAGE_DIR_PREFIX",
        "okstra_tui/planted.py:15: 'instruction-set' is spelled inline; use layout.INSTRUCTION_SET_DIR",
    ]


def test_the_owners_may_spell_their_names(tmp_path: Path) -> None:
    package = tmp_path / "okstra_core"
    package.mkdir()
    (package / "layout.py").write_text('RUNS_DIR = "runs"\n', encoding="utf-8")
    assert list(_tool().path_literals(tmp_path)) == []


def test_the_packages_spell_no_store_name_inline() -> None:
    assert list(_tool().path_literals(ROOT)) == []
