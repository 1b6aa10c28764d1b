"""``--version`` on ``okstra`` and ``okstra-tui``: the installed package's version, on stdout, exit 0."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from okstra_core import version as version_module
from okstra_core.cli import main as okstra_main
from okstra_tui.__main__ import main as tui_main

BIN = Path(sys.executable).parent


@pytest.mark.parametrize("command", ["okstra", "okstra-tui"])
def test_version_as_a_process(command: str) -> None:
    done = subprocess.run([str(BIN / command), "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout == f"{command} {metadata.version('okstra-workbench')}\n"
    assert done.stderr == ""


@pytest.mark.parametrize(("main", "prog"), [(okstra_main, "okstra"), (tui_main, "okstra-tui")])
def test_version_comes_from_the_package_metadata(
    main: object, prog: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[str] = []

    def fake_version(name: str) -> str:
        asked.append(name)
        return "9.8.7"

    monkeypatch.setattr(metadata, "version", fake_version)
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])  # type: ignore[operator]
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"{prog} 9.8.7\n"
    assert asked == ["okstra-workbench"]


def test_uninstalled_copy_says_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    assert version_module.version() == "unknown"


def test_the_package_metadata_is_made_from_the_one_version() -> None:
    """The version has one owner, ``okstra_core.__version__``; what the metadata says (and ``--version`` prints)
    is made from it when the package is built."""
    import okstra_core

    assert metadata.version("okstra-workbench") == okstra_core.__version__
