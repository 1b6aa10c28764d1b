"""The project registry (:mod:`okstra_core.projects`): its sources, every broken root, its bounds."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from okstra_core import layout, projects
from okstra_core.errors import OkstraError
from okstra_core.projects import discover, remember_root, remembered_roots


def _project(path: Path) -> Path:
    (path / layout.OKSTRA_DIR).mkdir(parents=True)
    return path


def _register(home: Path, manager_id: str, *entries: tuple[str, str | Path]) -> Path:
    folder = layout.managers_dir(home) / manager_id
    folder.mkdir(parents=True, exist_ok=True)
    doc = {"schemaVersion": "1.0", "projects": [{"projectId": i, "projectRoot": str(r)} for i, r in entries]}
    path = folder / layout.MANAGER_PROJECTS
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _one(registry: projects.Registry) -> projects.ProjectEntry:
    assert len(registry.entries) == 1, registry.entries
    return registry.entries[0]


def _state(*roots: Path) -> dict[str, tuple[int, int, int]]:
    out = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames + filenames:
                st = os.lstat(os.path.join(dirpath, name))
                out[os.path.join(dirpath, name)] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


# ------------------------------------------------------------------ sources


def test_every_manager_names_its_projects(home: Path, tmp_path: Path) -> None:
    shop, billing = _project(tmp_path / "shop"), _project(tmp_path / "billing")
    _register(home, "alpha", ("shop", shop))
    _register(home, "beta", ("billing", billing))
    registry = discover(home, remembered=False)
    assert [(e.project_id, e.root, e.health) for e in registry.entries] == [
        ("shop", shop, "ok"),
        ("billing", billing, "ok"),
    ]
    assert [s.describe() for e in registry.entries for s in e.sources] == ["manager alpha", "manager beta"]
    assert registry.problems() == []


def test_the_home_defaults_to_okstra_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "elsewhere"
    _register(home, "alpha", ("shop", _project(tmp_path / "shop")))
    monkeypatch.setenv("OKSTRA_HOME", str(home))
    assert [e.project_id for e in discover(remembered=False).entries] == ["shop"]


def test_a_root_opened_in_the_workbench_is_remembered(home: Path, tmp_path: Path) -> None:
    first, second = _project(tmp_path / "first"), _project(tmp_path / "second")
    remember_root(first)
    remember_root(second)
    remember_root(first)
    assert [r for r, _ in remembered_roots()] == [str(first), str(second)], "most recent first, each once"
    entries = discover(home).entries
    assert [(e.root, e.sources[0].kind) for e in entries] == [(first, "remembered"), (second, "remembered")]
    assert entries[0].project_id == projects.derived_id(str(first))
    assert entries[0].project_id.startswith("first-") and entries[0].project_id == discover(home).entries[0].project_id


def test_the_remembered_roots_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(projects, "MAX_REMEMBERED", 3)
    for n in range(5):
        remember_root(_project(tmp_path / f"p{n}"))
    assert [Path(r).name for r, _ in remembered_roots()] == ["p4", "p3", "p2"]


def test_roots_named_on_the_command_line(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shop = _project(tmp_path / "shop")
    monkeypatch.chdir(tmp_path)
    entry = _one(discover(home, named=[Path("shop")], remembered=False))
    assert (entry.root, entry.health, entry.sources[0].kind) == (shop, "ok", "named")


def test_one_root_named_by_every_source_is_one_entry(home: Path, tmp_path: Path) -> None:
    shop = _project(tmp_path / "shop")
    remember_root(shop)
    _register(home, "alpha", ("shop", shop))
    _register(home, "beta", ("storefront", shop))
    entry = _one(discover(home, named=[shop]))
    assert entry.project_id == "shop" and entry.aliases == ["storefront"]
    assert [s.describe() for s in entry.sources] == [
        "manager alpha",
        "manager beta",
        "opened in the workbench",
        "named on the command line",
    ]
    assert "also registered as 'storefront'" in entry.line()


def test_a_managers_id_wins_over_a_derived_one(home: Path, tmp_path: Path) -> None:
    shop = _project(tmp_path / "shop")
    registry = discover(home, named=[shop], remembered=False)
    assert _one(registry).project_id == projects.derived_id(str(shop))
    _register(home, "alpha", ("shop", shop))
    remember_root(shop)
    assert _one(discover(home)).project_id == "shop"


# ------------------------------------------------------------------ broken roots


def test_a_symlinked_root_is_read_at_its_target_and_said_once(home: Path, tmp_path: Path) -> None:
    shop = _project(tmp_path / "shop")
    link = tmp_path / "link"
    link.symlink_to(shop)
    _register(home, "alpha", ("shop", link))
    entry = _one(discover(home, named=[shop], remembered=False))
    assert (entry.root, entry.health, entry.symlink) == (shop, "ok", str(link))
    assert entry.line() == f"project 'shop' ({shop}): given as {link}, a symlink; read at its target"


def test_a_symlink_inside_the_root_path_is_resolved_too(home: Path, tmp_path: Path) -> None:
    real = _project(tmp_path / "real" / "shop")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    _register(home, "alpha", ("shop", tmp_path / "alias" / "shop"))
    entry = _one(discover(home, remembered=False))
    assert entry.root == real and entry.symlink == str(tmp_path / "alias" / "shop")


@pytest.mark.parametrize(
    ("make", "health", "reason"),
    [
        (lambda p: None, "missing", "the root does not exist"),
        (lambda p: p.symlink_to(p.parent / "gone"), "missing", "which does not exist"),
        (lambda p: os.mkfifo(p), "unreadable", "the root is a FIFO, not a folder"),
        (lambda p: p.write_text("x"), "unreadable", "not a folder"),
        (lambda p: p.mkdir(), "no-store", "no .okstra/ store in this folder"),
        (
            lambda p: (p / layout.OKSTRA_DIR).parent.mkdir() or (p / layout.OKSTRA_DIR).write_text(""),
            "unreadable",
            "not a folder",
        ),
    ],
    ids=["missing", "dangling-symlink", "fifo", "file", "no-store", "store-is-a-file"],
)
def test_a_broken_root_is_one_line(home: Path, tmp_path: Path, make: object, health: str, reason: str) -> None:
    root = tmp_path / "root"
    make(root)  # type: ignore[operator]
    _register(home, "alpha", ("broken", root), ("shop", _project(tmp_path / "shop")))
    registry = discover(home, remembered=False)
    broken = registry.find("broken")
    assert broken is not None and broken.health == health and not broken.readable
    assert reason in (broken.reason or "")
    (line,) = registry.problems()
    assert line.startswith("project 'broken' (") and "\n" not in line
    assert registry.find("shop") is not None and registry.find("shop").health == "ok"  # type: ignore[union-attr]


def test_a_relative_project_root_is_never_guessed(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _project(tmp_path / "shop")
    monkeypatch.chdir(tmp_path)
    _register(home, "alpha", ("shop", "shop"))
    entry = _one(discover(home, remembered=False))
    assert (entry.health, entry.reason) == ("unreadable", "the root is not an absolute path")


def test_a_store_that_cannot_be_listed_is_unreadable(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shop = _project(tmp_path / "shop")
    _register(home, "alpha", ("shop", shop))
    real_listdir = os.listdir

    def listdir(path: object = ".") -> list[str]:
        if os.fspath(path) == str(shop / layout.OKSTRA_DIR):  # as a folder at mode 000 refuses a user other than root
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_listdir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "listdir", listdir)
    entry = _one(discover(home, remembered=False))
    assert entry.health == "unreadable" and "Permission denied" in (entry.reason or "")


def test_a_project_inside_another_is_nested_and_still_read(home: Path, tmp_path: Path) -> None:
    shop = _project(tmp_path / "shop")
    billing = _project(shop / "services" / "billing")
    _register(home, "alpha", ("shop", shop), ("billing", billing))
    registry = discover(home, remembered=False)
    inner = registry.find("billing")
    assert inner is not None and inner.health == "nested" and inner.readable
    assert inner.reason == f"inside project 'shop' ({shop}); its own store is read"
    assert registry.find("shop").health == "ok"  # type: ignore[union-attr]


def test_an_id_taken_by_another_root_is_a_duplicate(home: Path, tmp_path: Path) -> None:
    first, second = _project(tmp_path / "a" / "shop"), _project(tmp_path / "b" / "shop")
    _register(home, "alpha", ("shop", first))
    _register(home, "beta", ("shop", second))
    registry = discover(home, remembered=False)
    assert [e.health for e in registry.entries] == ["ok", "duplicate"]
    dup = registry.entries[1]
    assert dup.project_id != "shop" and dup.project_id.startswith("shop-") and not dup.readable
    assert dup.reason == f"project id 'shop' is already used by {first}; this registration is not read"
    assert registry.select(["shop"]) == ([registry.entries[0]], [])


def test_select_names_the_ids_no_project_has(home: Path, tmp_path: Path) -> None:
    _register(home, "alpha", ("shop", _project(tmp_path / "shop")))
    registry = discover(home, remembered=False)
    assert registry.select(["shop", "nope"]) == ([registry.entries[0]], ["nope"])
    assert registry.select([]) == (registry.entries, [])


# ------------------------------------------------------------------ untrusted registries


def test_a_bad_registration_is_left_out_with_one_line(home: Path, tmp_path: Path) -> None:
    path = _register(home, "alpha")
    shop = _project(tmp_path / "shop")
    path.write_text(json.dumps({"projects": [{"projectId": 3}, {"projectId": "shop", "projectRoot": str(shop)}]}))
    registry = discover(home, remembered=False)
    assert [e.project_id for e in registry.entries] == ["shop"]
    (note,) = registry.notes
    assert note.startswith(f"{path}: project 1 is left out: ")


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"projects": 3}'])
def test_an_unusable_projects_file_is_one_line(home: Path, content: str) -> None:
    path = _register(home, "alpha")
    path.write_text(content)
    registry = discover(home, remembered=False)
    assert registry.entries == [] and len(registry.notes) == 1 and registry.notes[0].startswith(str(path))


def test_a_huge_projects_file_is_not_read(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(projects, "REGISTRY_MAX_BYTES", 200)
    entries = [(f"p{n}", tmp_path / f"p{n}") for n in range(20)]
    path = _register(home, "alpha", *entries)
    registry = discover(home, remembered=False)
    assert registry.entries == []
    assert registry.notes == [f"{path}: file is too large ({path.stat().st_size} bytes; limit 200)"]


def test_the_number_of_projects_is_bounded(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(projects, "MAX_PROJECTS", 3)
    path = _register(home, "alpha", *((f"p{n}", _project(tmp_path / f"p{n}")) for n in range(5)))
    _register(home, "beta", *((f"q{n}", _project(tmp_path / f"q{n}")) for n in range(2)))
    registry = discover(home, remembered=False)
    assert [e.project_id for e in registry.entries] == ["p0", "p1", "p2"]
    assert registry.notes == [
        f"{path}: 5 projects; only the first 3 are read",
        "5 projects; only the first 3 are read (2 left out)",
    ]


def test_the_number_of_managers_is_bounded(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(projects, "MAX_MANAGERS", 2)
    for n in range(4):
        _register(home, f"m{n}", (f"p{n}", _project(tmp_path / f"p{n}")))
    registry = discover(home, remembered=False)
    assert [e.project_id for e in registry.entries] == ["p0", "p1"]
    assert registry.notes == [f"{layout.managers_dir(home)}: 4 managers; only the first 2 are read"]


@pytest.mark.parametrize("kind", ["fifo", "symlink", "folder", "garbage"])
def test_an_unusable_remembered_file_is_one_line(
    home: Path, tmp_path: Path, kind: str, without_waiting: object
) -> None:
    path = projects.remembered_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        target = tmp_path / "elsewhere.json"
        target.write_text(json.dumps({"version": 1, "roots": [{"root": str(tmp_path), "at": "x"}]}))
        path.symlink_to(target)
    elif kind == "folder":
        path.mkdir()
    else:
        path.write_text("{")
    registry = without_waiting(lambda: discover(home), path) if kind == "fifo" else discover(home)  # type: ignore[operator]
    assert registry.entries == []
    (note,) = registry.notes
    assert note.startswith(str(path)) and "\n" not in note


def test_remembering_refuses_a_folder_in_the_files_place() -> None:
    path = projects.remembered_path()
    path.mkdir(parents=True)
    with pytest.raises(OkstraError) as caught:
        remember_root(Path("/"))
    assert str(caught.value).startswith(str(path))


def test_remembering_replaces_an_unusable_file(tmp_path: Path) -> None:
    path = projects.remembered_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{")
    remember_root(_project(tmp_path / "shop"))
    assert [r for r, _ in remembered_roots()] == [str(tmp_path / "shop")]


def test_looking_writes_nothing(home: Path, tmp_path: Path) -> None:
    shop = _project(tmp_path / "shop")
    _register(home, "alpha", ("shop", shop), ("gone", tmp_path / "gone"))
    remember_root(shop)
    state = layout.okstra_state_dir()
    before = _state(home, shop, state)
    discover(home, named=[shop])
    assert _state(home, shop, state) == before
