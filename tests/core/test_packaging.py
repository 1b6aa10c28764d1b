"""An installed wheel carries the schemas and templates and reads them through importlib.resources."""

from __future__ import annotations

import zipfile
from pathlib import Path

from okstra_core import resources

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_ships_schemas_and_templates(tmp_path: Path) -> None:
    from hatchling.builders.wheel import WheelBuilder

    builder = WheelBuilder(str(ROOT))
    wheel = Path(next(iter(builder.build(directory=str(tmp_path), versions=["standard"]))))
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    schemas = {p.name for p in (ROOT / "schemas").glob("*.json")}
    assert schemas and all(f"okstra_core/_resources/schemas/{n}" in names for n in schemas)
    assert "okstra_core/_resources/templates/reports/final-report-v2.template.md" in names
    assert "okstra_core/_resources/templates/project-docs/task-index.template.md" in names
    assert any(n.startswith("okstra_tui/") for n in names)


def test_resources_resolve() -> None:
    assert "final-report-v3.0" in resources.read_schema_text("final-report-v3.0.schema.json")
    assert "$prep_id" in resources.read_template("design-prep/request-v1.template.md")


def test_core_never_imports_textual() -> None:
    import subprocess
    import sys

    code = (
        "import sys, pkgutil, importlib, okstra_core\n"
        "for m in pkgutil.walk_packages(okstra_core.__path__, 'okstra_core.'):\n"
        "    importlib.import_module(m.name)\n"
        "assert 'textual' not in sys.modules, 'okstra_core imported textual'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
