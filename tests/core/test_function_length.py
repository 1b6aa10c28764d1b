"""``tools/function_length.py``: no function of the packages is longer than 80 lines."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("function_length", ROOT / "tools" / "function_length.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _function(name: str, body_lines: int) -> str:
    body = "".join(f"    x += {i}\n" for i in range(body_lines - 2))
    return f"def {name}() -> int:\n    x = 0\n{body}    return x\n"


def test_a_function_over_the_limit_is_named(tmp_path: Path) -> None:
    tool = _tool()
    package = tmp_path / "okstra_core"
    package.mkdir()
    (package / "planted.py").write_text(_function("fits", 79) + "\n\n" + _function("too_long", 80), encoding="utf-8")
    found = list(tool.long_functions(tmp_path))
    assert len(found) == 1
    assert found[0].startswith("okstra_core/planted.py:")
    assert found[0].endswith(": too_long is 81 lines (at most 80)")


def test_no_function_of_the_packages_is_over_the_limit() -> None:
    assert list(_tool().long_functions(ROOT)) == []
