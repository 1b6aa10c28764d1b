"""The workbench's view preferences: kept in the user's configuration folder, read tolerantly, replaced whole."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from okstra_core import layout, preferences
from okstra_core.preferences import Preferences, load, preferences_path, save


def test_they_live_in_the_xdg_config_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert preferences_path() == tmp_path / "okstra" / "workbench.json"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative")  # invalid by the XDG spec: ignored
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert preferences_path() == tmp_path / "home" / ".config" / "okstra" / "workbench.json"


def test_a_saved_theme_is_loaded_back_with_keys_of_a_later_version_kept() -> None:
    path = preferences_path()
    assert load() == preferences.Loaded(Preferences())  # no file: the defaults, silently
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": 2, "theme": "nord", "sort": "updated"}), encoding="utf-8")
    loaded = load()
    assert loaded.warning is None and loaded.preferences.theme == "nord"
    assert save(loaded.preferences.with_theme("gruvbox")) is None
    assert json.loads(path.read_text(encoding="utf-8")) == {"version": 1, "theme": "gruvbox", "sort": "updated"}
    assert [p.name for p in path.parent.iterdir()] == [layout.PREFERENCES_FILE]  # no temp file left


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{", "is not valid JSON"),
        (b"\xff\xfe", "is not valid JSON"),
        (b"[]", "is not a JSON object"),
        (b'{"theme": 3}', "theme: expected the name of a theme"),
        (b'{"theme": ""}', "theme: expected the name of a theme"),
        (b" " * (preferences.MAX_BYTES + 1), "larger than 64 KiB"),
    ],
)
def test_a_broken_file_is_the_defaults_and_one_warning(content: bytes, reason: str) -> None:
    path = preferences_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    loaded = load()
    assert loaded.preferences == Preferences()
    assert loaded.warning == f"{path}: {reason}; using the default preferences"
    assert save(Preferences(theme="nord")) is None  # replaced at the next change
    assert load() == preferences.Loaded(Preferences(theme="nord"))


def test_a_symlink_is_neither_followed_nor_replaced(tmp_path: Path) -> None:
    path = preferences_path()
    path.parent.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"theme": "nord"}', encoding="utf-8")
    os.symlink(elsewhere, path)
    loaded = load()
    assert loaded.preferences == Preferences() and loaded.warning is not None and "symlink" in loaded.warning
    problem = save(Preferences(theme="gruvbox"))
    assert problem is not None and problem.startswith(f"{path}: cannot keep the preferences: ")
    assert elsewhere.read_text(encoding="utf-8") == '{"theme": "nord"}'
