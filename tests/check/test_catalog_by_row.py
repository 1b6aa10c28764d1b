"""The checker validates the task catalog a row at a time: what it reports is what validating it whole reports,
and the rows' models are never all held at once."""

from __future__ import annotations

import gc
import json
import weakref
from pathlib import Path
from typing import Any

import pytest

from okstra_core import layout
from okstra_core.check.cache import CheckCache
from okstra_core.check.rules.project_rules import CatalogEntryKey, _EntryKeys
from okstra_core.check.unit import Unit
from okstra_core.models.base import ABSENT_ROWS_SEEN
from okstra_core.models.task import TaskCatalog, TaskCatalogEntry

from .helpers import check


def _row(i: int, **changed: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "taskKey": f"p:g:t{i}",
        "taskGroup": "g",
        "taskId": f"t{i}",
        "projectId": "p",
        "taskType": "option-selection",
        "taskRootPath": f".okstra/tasks/g/t{i}",
        "currentStatus": "completed",
        "title": f"Task {i}",
        "createdAt": "2026-11-04T14:05:17Z",
        "updatedAt": "2026-11-04T14:44:48Z",
    }
    row.update(changed)
    return {k: v for k, v in row.items() if v is not None}


def _without(row: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in names}


_HEAD = {"schemaVersion": "1.0", "projectId": "p", "updatedAt": "2026-11-04T14:44:48Z"}
#: Each catalog as its text: the shapes a catalog can take, well formed or not.
CATALOGS: dict[str, str] = {
    "well formed": json.dumps({**_HEAD, "tasks": [_row(i) for i in range(5)]}),
    "a bare list": json.dumps([_row(i) for i in range(3)]),
    "no tasks": json.dumps(_HEAD),
    "an empty list": json.dumps({**_HEAD, "tasks": []}),
    "a row failing": json.dumps({**_HEAD, "tasks": [_row(0), _row(1, taskId=7), _row(2)]}),
    "the last row failing": json.dumps({**_HEAD, "tasks": [_row(0), _row(1), {"taskKey": "p:g:t2"}]}),
    "a row not an object": json.dumps({**_HEAD, "tasks": [_row(0), "t1"]}),
    "the head failing": json.dumps({**_HEAD, "updatedAt": "yesterday", "tasks": [_row(0)]}),
    "tasks not a list": json.dumps({**_HEAD, "tasks": {"t0": _row(0)}}),
    "not an object": json.dumps("a catalog"),
    "not JSON": '{"tasks": [',
    "a repeated key": '{"schemaVersion": "1.0", "tasks": [], "tasks": []}',
    "added fields absent": json.dumps(
        {"tasks": [_without(_row(0), "title"), _row(1), _without(_row(2), "projectId", "taskType")]}
    ),
    # Past the rows the absent fields' info looks into, a missing field is not named by either reading.
    "absent past the rows looked at": json.dumps(
        {**_HEAD, "tasks": [_row(i) for i in range(ABSENT_ROWS_SEEN)] + [_without(_row(ABSENT_ROWS_SEEN), "title")]}
    ),
    "an extra field": json.dumps({**_HEAD, "owner": "ops", "tasks": [_row(0, lane="fast")]}),
}


def _catalog(tmp_path: Path, text: str) -> str:
    path = layout.task_catalog_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("name", sorted(CATALOGS))
def test_a_catalog_read_by_row_reports_what_the_whole_document_reports(tmp_path: Path, name: str) -> None:
    path = _catalog(tmp_path, CATALOGS[name])
    by_row, whole = Unit(tmp_path), Unit(tmp_path)

    got = by_row.doc_by_row(path, TaskCatalog, "tasks", TaskCatalogEntry, _EntryKeys())
    expected = whole.doc(path, TaskCatalog)

    assert by_row.findings == whole.findings
    if expected is None:
        assert got is None
        return
    assert got is not None
    head, kept = got
    keys = _EntryKeys()
    assert kept == [keys(e) for e in expected.tasks]
    assert head.model_dump(exclude={"tasks"}) == expected.model_dump(exclude={"tasks"})


#: The catalogs above that the reading a row at a time takes itself; it hands the others to the whole reading.
BY_ROW = {
    "well formed",
    "a bare list",
    "an empty list",
    "added fields absent",
    "absent past the rows looked at",
    "an extra field",
    "a repeated key",
}


@pytest.mark.parametrize("name", sorted(CATALOGS))
def test_a_catalog_is_read_by_row_unless_the_whole_reading_must_say_what_is_wrong(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every well-formed catalog is read a row at a time (the models never all held); any other one, and one
    without a list of tasks, goes to the whole reading, which reports it."""
    whole: list[str] = []
    real = Unit._whole_by_row

    def spied(self: Unit, *args: Any) -> Any:
        whole.append(name)
        return real(self, *args)

    monkeypatch.setattr(Unit, "_whole_by_row", spied)
    path = _catalog(tmp_path, CATALOGS[name])
    got = Unit(tmp_path).doc_by_row(path, TaskCatalog, "tasks", TaskCatalogEntry, _EntryKeys())
    if name in BY_ROW:
        assert whole == [] and got is not None
    elif name == "not JSON":
        assert whole == [] and got is None  # nothing to validate: the parse reported it
    else:
        assert whole == [name]


#: The catalogs above parsed a row at a time from their text: objects with one list of tasks that ``json.loads``
#: reads. The others are parsed whole first (a bare list, a key given twice: read whole it is reported).
STREAMED = BY_ROW - {"a bare list", "a repeated key"}


def _spied(monkeypatch: pytest.MonkeyPatch, method: str) -> list[str]:
    """The paths :class:`Unit`'s *method* is called with from now on."""
    called: list[str] = []
    real = getattr(Unit, method)

    def spied(self: Unit, path: Path | str) -> Any:
        called.append(str(path))
        return real(self, path)

    monkeypatch.setattr(Unit, method, spied)
    return called


@pytest.mark.parametrize("name", sorted(CATALOGS))
def test_a_well_formed_catalog_is_never_parsed_whole(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its rows are parsed one at a time from the text, never all at once (about 80 megabytes of parsed JSON at
    100,000 tasks); a catalog whose parse a row at a time fails part-way is parsed whole, which reports it."""
    parsed_whole = _spied(monkeypatch, "json")
    path = _catalog(tmp_path, CATALOGS[name])
    Unit(tmp_path).doc_by_row(path, TaskCatalog, "tasks", TaskCatalogEntry, _EntryKeys())
    assert (path not in parsed_whole) == (name in STREAMED)


@pytest.mark.parametrize("name", sorted(CATALOGS))
def test_a_catalog_read_a_row_at_a_time_lets_its_text_go_yet_counts_as_read(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once its rows are read, the catalog's text (about 30 megabytes at 100,000 tasks) is not held beside what
    the project's rules build from it; the file is not read again by the reading of the remaining files, and a
    rule asking for its text again reads it again."""
    path = _catalog(tmp_path, CATALOGS[name])
    unit = Unit(tmp_path)
    unit.doc_by_row(path, TaskCatalog, "tasks", TaskCatalogEntry, _EntryKeys())
    findings = list(unit.findings)
    held = unit.known_bytes(path)
    opened = _spied(monkeypatch, "data")
    unit.read_remaining([path])
    assert opened == []
    assert (held is None) == (name in STREAMED)
    assert unit.text(path) == CATALOGS[name]
    assert opened == ([path] if name in STREAMED else [])
    assert unit.findings == findings


def test_a_repeated_key_in_a_row_is_reported_when_the_rows_are_parsed_one_at_a_time(tmp_path: Path) -> None:
    rows = [json.dumps(_row(i)) for i in range(3)]
    rows[1] = rows[1].replace("{", '{"title": "first", ', 1)
    text = json.dumps(_HEAD)[:-1] + ', "tasks": [' + ", ".join(rows) + "]}"
    path = _catalog(tmp_path, text)
    by_row, whole = Unit(tmp_path), Unit(tmp_path)
    assert by_row.doc_by_row(path, TaskCatalog, "tasks", TaskCatalogEntry, _EntryKeys()) is not None
    whole.doc(path, TaskCatalog)
    assert [f.rule for f in by_row.findings] == ["OKS007"]
    assert by_row.findings == whole.findings


def test_the_rows_models_are_never_all_held(tmp_path: Path) -> None:
    """At the last row, the models of the rows before are gone but for those the absent fields' info looks into;
    once read, none is held (the whole document's model is not kept either)."""
    rows = ABSENT_ROWS_SEEN + 100
    path = _catalog(tmp_path, json.dumps({**_HEAD, "tasks": [_row(i) for i in range(rows)]}))
    unit = Unit(tmp_path)
    made: list[weakref.ref[TaskCatalogEntry]] = []
    alive_at_last: list[int] = []
    keys = _EntryKeys()

    def keep(entry: TaskCatalogEntry) -> CatalogEntryKey:
        made.append(weakref.ref(entry))
        if len(made) == rows:
            gc.collect()
            alive_at_last.append(sum(ref() is not None for ref in made))
        return keys(entry)

    got = unit.doc_by_row(path, TaskCatalog, "tasks", TaskCatalogEntry, keep)
    assert got is not None and len(got[1]) == rows
    assert alive_at_last == [ABSENT_ROWS_SEEN + 1]
    gc.collect()
    assert sum(ref() is not None for ref in made) == 0
    assert unit.known_model(path, TaskCatalog) is None


def test_a_check_keeps_a_task_s_record_under_the_digest_of_its_whole_entry(
    fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task's cached record is kept under its entry's digest; an edit to any field of the entry (one a task's
    rules do not read among them) checks that task again."""
    from okstra_core.check import cache

    monkeypatch.setattr(cache, "RACY_SECONDS", 0.0)  # the copy was just written: cache its tasks anyway
    check(fresh_demo, check_cache=CheckCache(tmp_path / "cache"))
    catalog = layout.task_catalog_path(fresh_demo)
    value = json.loads(catalog.read_text(encoding="utf-8"))
    value["tasks"][0]["title"] = "Renamed"
    catalog.write_text(json.dumps(value), encoding="utf-8")
    again = CheckCache(tmp_path / "cache")
    report = check(fresh_demo, check_cache=again)
    assert again.misses == 1 and again.hits > 0
    assert report == check(fresh_demo)


def test_an_entry_too_deep_to_write_again_is_checked_afresh_not_a_traceback(
    fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A field the checker keeps unread may be nested deeper than the entry can be written again (its digest is
    made from that writing): the check runs, and that task is checked afresh every time, never reused."""
    from okstra_core.check import cache

    monkeypatch.setattr(cache, "RACY_SECONDS", 0.0)
    catalog = layout.task_catalog_path(fresh_demo)
    value = json.loads(catalog.read_text(encoding="utf-8"))
    deep: list[Any] = []
    for _ in range(600):
        deep = [deep]
    value["tasks"][0]["notes"] = deep
    catalog.write_text(json.dumps(value), encoding="utf-8")

    first = check(fresh_demo, check_cache=CheckCache(tmp_path / "cache"))
    again = CheckCache(tmp_path / "cache")
    assert check(fresh_demo, check_cache=again) == first == check(fresh_demo)
    assert again.misses == 1 and again.hits > 0


@pytest.mark.parametrize("task_key", ["p:g:t1", "other:g:t1", "None:g:t1"])
@pytest.mark.parametrize("project_id", ["p", None])
@pytest.mark.parametrize("root", [".okstra/tasks/g/t1", None, ".okstra/tasks/G/t1", ""])
@pytest.mark.parametrize("digest", ["ab" * 32, "AB" * 32, "unkept:00", "ab" * 31 + " a"])
def test_an_entry_key_gives_back_what_it_was_made_with(
    task_key: str, project_id: str | None, root: str | None, digest: str
) -> None:
    """Held small (a key and a root spelled from the other values are not held, a hex digest is held as bytes),
    an entry's key gives back exactly the values it was made with, and travels to a worker the same."""
    import pickle

    key = CatalogEntryKey(task_key, project_id, "g", "t1", root, digest)
    given = (task_key, project_id, "g", "t1", root, digest)
    assert (key.task_key, key.project_id, key.task_group, key.task_id, key.task_root_path, key.digest) == given
    again = pickle.loads(pickle.dumps(key))
    assert again == key and again is not key
    assert key != CatalogEntryKey(task_key, project_id, "g", "t2", root, digest)
