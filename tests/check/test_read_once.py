"""A check reads each file of the store at most once: every rule asks the unit, which keeps what it read."""

from __future__ import annotations

import collections
import os
from pathlib import Path

import pytest
from conftest import count_looks

from okstra_core import layout
from okstra_core.check.engine import run_check


def _count_opens(monkeypatch: pytest.MonkeyPatch, roots: tuple[Path, ...]) -> collections.Counter[str]:
    opened: collections.Counter[str] = collections.Counter()
    real_open = os.open
    prefixes = tuple(str(r) + os.sep for r in roots)

    def counting_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        text = os.fspath(path)  # type: ignore[arg-type]
        reading = isinstance(text, str) and text.startswith(prefixes) and not flags & (os.O_WRONLY | os.O_RDWR)
        if reading and not os.path.isdir(text):
            opened[text] += 1
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counting_open)
    return opened


def test_every_file_of_the_store_is_opened_at_most_once(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = layout.demo_home(fresh_demo)
    opened = _count_opens(monkeypatch, (layout.okstra_dir(fresh_demo), home))
    report = run_check(fresh_demo, home=home, jobs=1)
    assert report.files > 100
    assert len(opened) >= report.files * 9 // 10, "the count sees the check's reads"
    twice = {layout.rel(Path(p), fresh_demo): n for p, n in opened.items() if n > 1}
    assert twice == {}


def test_the_counter_sees_a_second_read(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened = _count_opens(monkeypatch, (layout.okstra_dir(fresh_demo),))
    manifest = next(layout.okstra_dir(fresh_demo).rglob("task-manifest.json"))
    for _ in range(2):
        fd = os.open(manifest, os.O_RDONLY)
        os.close(fd)
    assert opened[str(manifest)] == 2


def test_what_a_unit_lends_of_its_listings_is_what_a_look_would_give(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader asking whether a path exists or is a folder gets the checker's listing instead of a look: the
    same answer as ``os.path.lexists`` and ``os.path.isdir``, or none when the listing cannot tell."""
    from okstra_core import reading
    from okstra_core.check.unit import Unit

    folder = tmp_path / ".okstra" / "tasks" / "g" / "t"
    folder.mkdir(parents=True)
    (folder / "file.md").write_text("x", encoding="utf-8")
    (folder / "sub").mkdir()
    (folder / layout.RESERVATIONS_DIR).mkdir()  # private: listed, never classified
    (folder / "to-sub").symlink_to("sub")
    (folder / "to-file").symlink_to("file.md")
    (folder / "dangling").symlink_to("nowhere")
    (folder / "escape").symlink_to("/")
    os.mkfifo(folder / "fifo")
    unit = Unit(tmp_path)
    unit.entries(str(folder))
    names = [*sorted(os.listdir(folder)), "missing"]
    paths = {name: str(folder / name) for name in names}
    disk = {name: (os.path.isdir(path), os.path.lexists(path)) for name, path in paths.items()}
    told = {name: (unit.known_is_dir(path), unit.known_lexists(path)) for name, path in paths.items()}
    looked = count_looks(monkeypatch)
    for name, path in paths.items():
        with unit.owner(), reading.recording():
            before = len(looked)
            lent = (reading.is_dir(path), reading.lexists(path))
            probed = looked[before:]
        assert told[name][0] in (None, disk[name][0]), name
        assert told[name][1] == disk[name][1], name
        assert lent == disk[name], name
        # What the listing told is taken from it: no look at the path (is_dir's one look where it could not tell).
        assert probed == ([] if told[name][0] is not None else [path]), name
    monkeypatch.undo()
    told_count = sum(is_dir is not None for is_dir, _ in told.values())
    assert told_count >= 6, "the listing answers for the plain entries"
    assert unit.known_is_dir(str(tmp_path / "elsewhere" / "x")) is None, "a folder not listed: no answer"
    assert unit.known_lexists(str(folder / "sub" / "x")) is None


def test_a_transcript_read_from_its_end_is_not_lent_as_the_whole_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transcript over the read limit is checked from its end; a reader asking for the whole file under the
    unit still gets the refusal a read gives, never those last lines as if they were all of it."""
    from okstra_core import reading
    from okstra_core.check.unit import Unit

    monkeypatch.setattr(reading, "MAX_BYTES", 64)
    folder = tmp_path / ".okstra" / "tasks" / "g" / "t"
    folder.mkdir(parents=True)
    log = folder / "agent.log"
    log.write_bytes(b"".join(b"line %03d\n" % n for n in range(40)))
    unit = Unit(tmp_path)
    tail = unit.data(str(log))
    assert tail is not None and 0 < len(tail) <= 64 and tail.endswith(b"line 039\n")
    with unit.owner():
        whole = reading.read_bytes(log, root=tmp_path)
        lines = reading.read_bytes(log, root=tmp_path, tail=True)
    assert isinstance(whole, reading.LoadError) and "too large" in whole.reason
    assert lines == tail


def test_a_file_read_as_text_is_held_once_and_lent_as_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its bytes once decoded are not held beside its text: they are its text encoded again, the bytes read (a
    BOM, any UTF-8), and the file is not opened again; a large document validated is parsed again from its text
    when its JSON is asked for, the same value."""
    import json

    from okstra_core.check import unit as unit_module
    from okstra_core.check.unit import Unit
    from okstra_core.models.task import TaskCatalog

    store = tmp_path / ".okstra"
    store.mkdir()
    plain, large = store / "notes.md", store / "catalog.json"
    plain.write_bytes("\ufeffé ✓ text\r\n".encode())
    doc = {"schemaVersion": "1", "tasks": [], "padding": "x" * 64}
    large.write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setattr(unit_module, "PARSED_KEPT_BELOW", 16)
    opened = _count_opens(monkeypatch, (store,))
    unit = Unit(tmp_path, None)
    assert unit.text(plain) == plain.read_bytes().decode("utf-8")
    assert unit.data(plain) == unit.known_bytes(str(plain)) == plain.read_bytes()
    assert unit._bytes[str(plain)] is unit_module._AS_TEXT
    validated = unit.doc(large, TaskCatalog)
    assert validated is not None and str(large) not in unit._json
    assert unit.json(large) == doc and unit.doc(large, TaskCatalog) is validated
    assert opened == {str(plain): 1, str(large): 1}
