"""Loaders turn every bad file into a one-line error value; they never raise and never write."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import count_looks
from hypothesis import given, settings
from hypothesis import strategies as st

from okstra_core import reading, watch
from okstra_core.errors import LoadError
from okstra_core.models.task import LatestTask

#: A valid final report's data (version 3.0).
REPORT = (
    Path(__file__).parent.parent
    / "fixtures/foreign/valid/planning/.okstra/tasks/search/reindex/runs/implementation-planning/reports"
    / "final-report-implementation-planning-001.data.json"
)
GOOD = b'{"schemaVersion": "1.0", "taskKey": "p:g:t", "taskRootPath": "a", "taskManifestPath": "a/m.json"}'


def _load(path: Path, root: Path | None = None) -> object:
    return reading.load_model(path, LatestTask, root=root)


def test_valid_file_loads(tmp_path: Path) -> None:
    (tmp_path / "f.json").write_bytes(GOOD)
    assert isinstance(_load(tmp_path / "f.json"), LatestTask)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{not json", "invalid JSON"),
        (b"\x00\x01binary", "binary file"),
        (b'{"a": "\xff"}', "not UTF-8"),
        (b'{"schemaVersion": 1}', "does not match LatestTask"),
        (b"[" * 10000 + b"]" * 10000, "nesting too deep"),
    ],
)
def test_bad_content(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "f.json"
    path.write_bytes(content)
    result = _load(path)
    assert isinstance(result, LoadError)
    assert reason in result.reason and result.path == path
    assert "\n" not in str(result)


def test_invalid_json_reports_line(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text('{\n  "a": 1,\n  oops\n}')
    result = _load(path)
    assert isinstance(result, LoadError) and result.line == 3


def test_missing_and_oversized(tmp_path: Path) -> None:
    assert "missing" in str(_load(tmp_path / "nope.json"))
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(reading.MAX_BYTES + 1)
    result = _load(big)
    assert isinstance(result, LoadError) and "too large" in result.reason


def test_fifo_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    result = _load(fifo)
    assert isinstance(result, LoadError) and "FIFO" in result.reason


def test_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "dangling.json").symlink_to(root / "gone.json")
    (root / "loop.json").symlink_to(root / "loop.json")
    (tmp_path / "outside.json").write_bytes(GOOD)
    (root / "escape.json").symlink_to(tmp_path / "outside.json")
    (root / "inside.json").write_bytes(GOOD)
    (root / "alias.json").symlink_to(root / "inside.json")
    assert "dangling symlink" in str(_load(root / "dangling.json", root))
    assert "symlink loop" in str(_load(root / "loop.json", root))
    assert "escapes the project root" in str(_load(root / "escape.json", root))
    assert isinstance(_load(root / "alias.json", root), LatestTask)


def test_directory_and_permission(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "d.json").mkdir()
    assert "directory" in str(_load(tmp_path / "d.json"))
    path = tmp_path / "f.json"
    path.write_bytes(GOOD)
    real_open = os.open

    def deny(p: object, flags: int, *args: object) -> int:
        if str(p) == str(path):
            raise PermissionError(13, "Permission denied", str(p))
        return real_open(p, flags, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", deny)
    assert "permission denied" in str(_load(path))


def test_jsonl_reports_each_bad_line(tmp_path: Path) -> None:
    from okstra_core.models.task import FixCycleEvent

    path = tmp_path / "fix-cycles.jsonl"
    path.write_text(
        '{"event":"opened","cycleId":"a","cycle":1,"at":"2026-11-30T04:15:00Z"}\n'
        "not json\n"
        '{"event":"reopened","cycleId":"a","cycle":1,"at":"2026-11-30T04:15:00Z"}\n'
        "\n"
        '{"event":"closed","cycleId":"a","cycle":1,"at":"2026-11-30T04:15:00Z"}'
    )
    doc = reading.load_jsonl(path, FixCycleEvent)
    assert isinstance(doc, reading.JsonlDoc)
    assert len(doc.records) == 2
    assert sorted(e.line or 0 for e in doc.errors) == [2, 3, 4, 5]


def test_reads_never_write(tmp_path: Path) -> None:
    (tmp_path / "f.json").write_bytes(b"{bad")
    before = sorted(os.listdir(tmp_path))
    _load(tmp_path / "f.json")
    reading.load_jsonl(tmp_path / "f.json", LatestTask)
    assert sorted(os.listdir(tmp_path)) == before


def test_read_head_stops_at_the_caps_and_counts_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text("".join(f'{{"n": {i}}}\n' for i in range(10_000)), encoding="utf-8")
    head = reading.read_head(path, max_chars=1_000_000, max_lines=500, count_lines=True)
    assert isinstance(head, reading.Head)
    assert head.text.count("\n") == 500 and head.text.endswith('{"n": 499}\n')
    assert not head.complete and head.lines == 10_000 and head.size == path.stat().st_size
    head = reading.read_head(path, max_chars=100)
    assert isinstance(head, reading.Head)
    assert len(head.text) <= 100 and head.text.endswith("\n") and not head.complete and head.lines is None


def test_read_head_of_a_small_file_is_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("one\ntwo\nthree", encoding="utf-8")  # no newline at the end: still a line
    head = reading.read_head(path, max_chars=100, max_lines=3, count_lines=True)
    assert isinstance(head, reading.Head)
    assert head.text == "one\ntwo\nthree" and head.complete and head.lines == 3
    head = reading.read_head(path, max_chars=100, max_lines=2, count_lines=True)
    assert isinstance(head, reading.Head)
    assert head.text == "one\ntwo\n" and not head.complete and head.lines == 3


def test_read_head_of_one_long_line_cuts_it(tmp_path: Path) -> None:
    path = tmp_path / "one.txt"
    path.write_text("é" * 300_000, encoding="utf-8")  # two bytes a character: never cut inside one
    head = reading.read_head(path, max_chars=1_000)
    assert isinstance(head, reading.Head)
    assert head.text == "é" * 1_000 and not head.complete and head.size == 600_000


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"fine\n\x00\x01", "binary file"), (b"fine\n\xff\xfe", "not UTF-8 (invalid byte at offset 5)")],
)
def test_read_head_refuses_what_read_text_refuses_in_the_part_read(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    head = reading.read_head(path, max_chars=100)
    assert isinstance(head, LoadError) and reason in head.reason
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 2_000)
    refused = reading.read_head(big, max_chars=100, max_bytes=1_000)
    assert isinstance(refused, LoadError) and "too large" in refused.reason


def test_read_head_keeps_to_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "secret.txt"
    outside.write_text("secret\n", encoding="utf-8")
    (root / "link.txt").symlink_to(outside)
    head = reading.read_head(root / "link.txt", root=root, max_chars=100)
    assert isinstance(head, LoadError) and "escapes" in head.reason


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(alphabet='a:" \\\n{}', max_size=6))
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(alphabet='ab:" ', max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)
_KEY_SEPS = st.sampled_from([":", ": ", " :", "\t:\r\n", "\n:\n"])


@settings(max_examples=300, derandomize=True, deadline=None)
@given(value=_VALUES, sep=_KEY_SEPS)
def test_repeated_key_sees_no_repeat_where_there_is_none(value: object, sep: str) -> None:
    text = json.dumps(value, separators=(",", sep), ensure_ascii=False)
    assert reading.repeated_key(text, json.loads(text)) is None


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.text(alphabet='ab:" ', max_size=3), _VALUES), min_size=1, max_size=4),
    at=st.integers(min_value=0, max_value=3),
    sep=_KEY_SEPS,
    around=_VALUES,
)
def test_repeated_key_names_every_repeat(pairs: list[tuple[str, object]], at: int, sep: str, around: object) -> None:
    key, value = pairs[at % len(pairs)]
    pairs = [*pairs, (key, value)]  # the same key again, even with the same value
    obj = "{" + ",".join(f"{json.dumps(k)}{sep}{json.dumps(v)}" for k, v in pairs) + "}"
    text = f'[{json.dumps(around)}, {{"inner"{sep}{obj}}}]'
    found = reading.repeated_key(text, json.loads(text))
    assert found is not None
    assert sum(1 for k, _ in pairs if k == found) > 1


def _rows_read(text: str, field: str = "tasks") -> tuple[list[object], dict[str, object]] | None:
    """:func:`reading.object_rows` whole: its items and head, or None when it refuses the text."""
    head: dict[str, object] = {}
    try:
        return list(reading.object_rows(text, field, head)), head
    except (ValueError, RecursionError):
        return None


_SPACES = st.text(alphabet=" \t\r\n", max_size=2)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    head=st.dictionaries(st.text(alphabet='ab:" ', max_size=3).filter(lambda k: k != "tasks"), _VALUES, max_size=3),
    rows=st.lists(_VALUES, max_size=5),
    place=st.integers(min_value=0, max_value=3),
    space=_SPACES,
    sep=_KEY_SEPS,
)
def test_object_rows_give_what_json_loads_gives(
    head: dict[str, object], rows: list[object], place: int, space: str, sep: str
) -> None:
    """Read a row at a time, a catalog-shaped object is the value ``json.loads`` makes of it, wherever its list is."""
    pairs = list(head.items())
    pairs.insert(place % (len(pairs) + 1), ("tasks", rows))
    text = space + "{" + f",{space}".join(f"{json.dumps(k)}{sep}{json.dumps(v)}" for k, v in pairs) + "}" + space
    whole = json.loads(text)
    assert _rows_read(text) == (whole.pop("tasks"), whole)


@pytest.mark.parametrize(
    "text",
    [
        '{"tasks": [1,]}',  # refused by json.loads
        '{"tasks": [1] , }',
        '{"tasks": [1] "a": 2}',
        '{"tasks": [{"a": 1}, {"b": }]}',
        '{"tasks": []} x',
        '\ufeff{"tasks": []}',
        '{"tasks": [], "tasks": [1]}',  # json.loads keeps the last: read whole, it is reported
        '{"a": 1, "tasks": [], "a": 2}',
        '{"tasks": 1}',  # no list where the rows are
        '{"a": []}',
        "{}",
        '[{"a": 1}]',
        "",
        '{"tasks": [' + "[" * 100_000 + "]" * 100_000 + "]}",
    ],
)
def test_object_rows_refuse_what_they_cannot_give_exactly(text: str) -> None:
    assert _rows_read(text) is None


def test_object_rows_give_each_row_before_parsing_the_next() -> None:
    """The rows are parsed one at a time: a row is given before a broken one further on is met."""
    rows = reading.object_rows('{"tasks": [{"a": 1}, {"b": 2}, {"c": }]}', "tasks", {})
    assert next(rows) == {"a": 1}
    assert next(rows) == {"b": 2}
    with pytest.raises(ValueError):
        next(rows)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(rows=st.lists(_VALUES, max_size=5), space=_SPACES)
def test_array_items_give_what_json_loads_gives(rows: list[object], space: str) -> None:
    """Read an item at a time, a JSON list is the value ``json.loads`` makes of it."""
    text = space + "[" + f",{space}".join(json.dumps(row) for row in rows) + space + "]" + space
    assert list(reading.array_items(text)) == json.loads(text)


@pytest.mark.parametrize("text", ["[1,]", "[1] x", "[1 2]", '{"a": []}', "5", "", "[", "[" * 100_000 + "]" * 100_000])
def test_array_items_refuse_what_is_not_one_list(text: str) -> None:
    with pytest.raises((ValueError, RecursionError)):
        list(reading.array_items(text))


@settings(max_examples=200, derandomize=True, deadline=None)
@given(value=_VALUES, rows=st.lists(_VALUES, max_size=4), sep=_KEY_SEPS)
def test_repeated_key_of_counted_parts_is_repeated_key_of_the_whole(
    value: object, rows: list[object], sep: str
) -> None:
    text = json.dumps({"h": value, "tasks": rows}, separators=(",", sep))
    keys = 1 + sum(reading.count_keys(r) for r in rows) + reading.count_keys({"h": value})
    assert reading.repeated_key_of(text, keys) == reading.repeated_key(text, json.loads(text))


@pytest.mark.parametrize(
    "path", ["/p/.okstra/discovery/task-catalog.json", "/p/.okstra/discovery/latest-task.json", "/p/task-catalog.json"]
)
def test_within_limit_answers_as_the_files_own_limit(path: str) -> None:
    """The checker's per-file size test agrees with :func:`reading.limit_for` on each side of both limits."""
    for size in (0, reading.MAX_BYTES, reading.MAX_BYTES + 1, reading.CATALOG_MAX_BYTES, reading.CATALOG_MAX_BYTES + 1):
        assert reading.within_limit(path, size) == (size <= reading.limit_for(path)), size


def test_a_recorded_probe_looks_once_and_records_what_a_later_look_compares(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    (tmp_path / "link").symlink_to("file")
    (tmp_path / "dangling").symlink_to("nowhere")
    for name in ("file", "folder"):
        os.utime(tmp_path / name, (1_700_000_000, 1_700_000_000))  # settled: recorded with their status
    names = ["file", "folder", "missing", "link", "dangling"]
    expected = {name: (os.path.lexists(tmp_path / name), os.path.isdir(tmp_path / name)) for name in names}
    looked = count_looks(monkeypatch)
    with reading.recording() as reads:
        got = {name: (reading.lexists(tmp_path / name), reading.is_dir(tmp_path / name)) for name in names}
    assert got == expected
    for name in ("file", "folder", "missing"):
        # One look by each of the two probes (each records its path: the recording keeps the first).
        assert looked.count(str(tmp_path / name)) == 2, name
    monkeypatch.undo()
    for name in names:
        try:
            st = os.stat(tmp_path / name)  # the status a symlink leads to
        except FileNotFoundError:
            assert reads.paths[str(tmp_path / name)] == watch.MISSING, name
        else:
            assert reads.paths[str(tmp_path / name)] == (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino), name


def test_list_if_folder_lists_a_folder_with_one_look(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "b").write_text("", encoding="utf-8")
    (tmp_path / "folder" / "a").write_text("", encoding="utf-8")
    (tmp_path / "file").write_text("", encoding="utf-8")
    (tmp_path / "to-folder").symlink_to("folder")
    looked = count_looks(monkeypatch)
    with reading.recording():
        assert reading.list_if_folder(tmp_path / "folder") == ["a", "b"]
        assert reading.list_if_folder(tmp_path / "to-folder") == ["a", "b"]
        assert reading.list_if_folder(tmp_path / "file") is None
        assert reading.list_if_folder(tmp_path / "missing") is None
    assert looked == [str(tmp_path / n) for n in ("folder", "to-folder", "file", "missing")]


def _count_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    opened: list[str] = []
    real = os.open

    def counting(path: object, *args: object, **kwargs: object) -> int:
        opened.append(os.fspath(path))  # type: ignore[arg-type]
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counting)
    return opened


def test_a_memo_reads_each_file_and_folder_once_and_lends_what_it_first_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    (root / "folder").mkdir(parents=True)
    doc = root / "folder" / "latest.json"
    doc.write_bytes(GOOD)
    opened = _count_opens(monkeypatch)
    with reading.memo(root):
        first = reading.load_model(doc, LatestTask, root=root)
        assert reading.list_folder(root / "folder") == ["latest.json"]
        doc.write_bytes(b"{}")  # changed within the block: the block reads it as it first did
        (root / "folder" / "new.json").write_bytes(GOOD)
        assert reading.read_bytes(doc, root=root) == GOOD
        assert reading.read_prefix(doc, root=root, max_bytes=4) == (GOOD[:4], len(GOOD))
        assert reading.load_model(doc, LatestTask, root=root) is first  # validated once
        assert reading.list_folder(root / "folder") == ["latest.json"]
    assert opened.count(str(doc)) == 1
    # After the block, the disk again.
    assert reading.read_bytes(doc, root=root) == b"{}"
    assert reading.list_folder(root / "folder") == ["latest.json", "new.json"]


def test_a_memo_keeps_only_whole_files_read_inside_its_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    root.mkdir()
    log = root / "run.log"
    log.write_bytes(b"one\ntwo\nthree\n")
    big = root / "big.md"
    big.write_bytes(b"x" * 100)
    outside = tmp_path / "outside.json"
    outside.write_bytes(GOOD)
    with reading.memo(root) as kept:
        assert reading.read_bytes(log, root=root, max_bytes=9, tail=True) == b"three\n"  # a tail: not the file
        assert reading.read_prefix(big, root=root, max_bytes=10) == (b"x" * 10, 100)  # a prefix: not the file
        assert reading.read_bytes(outside, root=None) == GOOD  # outside the root: not kept
        assert reading.read_bytes(log, root=root) == b"one\ntwo\nthree\n"
        assert reading.read_prefix(big, root=root, max_bytes=1000) == (b"x" * 100, 100)
    assert sorted(kept.bytes) == [str(big), str(log)]


def test_a_memo_lends_nothing_a_fresh_read_would_refuse(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "other").mkdir()
    (root / "other" / "f.json").write_bytes(GOOD)
    link = root / "sub" / "link.json"
    link.symlink_to(root / "other" / "f.json")
    fresh = str(reading.read_bytes(link, root=root / "sub"))
    assert "escapes the project root" in fresh
    with reading.memo(root) as kept:
        assert reading.read_bytes(link, root=root) == GOOD  # inside the memo's root: kept
        assert str(link) in kept.bytes
        # Kept inside a narrower root, the same path is refused as a fresh read refuses it.
        assert str(reading.read_bytes(link, root=root / "sub")) == fresh
        assert str(reading.read_prefix(link, root=root / "sub", max_bytes=100)) == fresh
        too_big = root / "big.json"
        too_big.write_bytes(b"x" * 64)
        assert reading.read_bytes(too_big, root=root) == b"x" * 64
        # Kept whole, but a reader with a smaller limit is still refused as it would be.
        assert "too large" in str(reading.read_bytes(too_big, root=root, max_bytes=10))
    with reading.memo(root / "sub") as narrow:
        assert reading.read_bytes(link, root=root) == GOOD  # kept inside another root: not kept
        assert narrow.bytes == {}
        assert str(reading.read_bytes(link, root=root / "sub")) == fresh


def test_a_recording_inside_a_memo_looks_at_what_it_reads(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    doc = tmp_path / "folder" / "latest.json"
    doc.write_bytes(GOOD)
    with reading.memo(tmp_path):
        reading.read_bytes(doc, root=tmp_path)
        reading.list_folder(tmp_path / "folder")
        with reading.recording() as reads:
            assert reading.read_bytes(doc, root=tmp_path) == GOOD
            assert reading.list_folder(tmp_path / "folder") == ["latest.json"]
    assert set(reads.paths) == {str(doc), str(tmp_path / "folder")}


def test_a_memo_leaves_the_source_of_the_block_around_it(tmp_path: Path) -> None:
    doc = tmp_path / "latest.json"
    doc.write_bytes(b"{}")

    class Lent:
        def known_bytes(self, path: str) -> bytes | None:
            return GOOD if path == str(doc) else None

        def known_model(self, path: str, model: type[object]) -> None:
            return None

        def known_names(self, folder: str) -> None:
            return None

        def known_is_dir(self, path: str) -> None:
            return None

        def known_lexists(self, path: str) -> None:
            return None

    with reading.use_source(Lent()), reading.memo(tmp_path):
        assert reading.read_bytes(doc, root=tmp_path) == GOOD


def test_a_memo_keeps_no_file_over_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reading, "MEMO_FILE_MOST", 10)
    monkeypatch.setattr(reading, "MEMO_MOST", 15)
    for name, size in (("big", 11), ("a", 10), ("b", 5), ("c", 1)):
        (tmp_path / name).write_bytes(b"x" * size)
    with reading.memo(tmp_path) as kept:
        for name in ("big", "a", "b", "c"):
            reading.read_bytes(tmp_path / name, root=tmp_path)
    assert sorted(kept.bytes) == [str(tmp_path / "a"), str(tmp_path / "b")]
    assert kept.size == 15


def test_a_report_validated_in_a_memo_is_validated_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from okstra_core.models.report import FinalReportV3

    path = tmp_path / "final-report-analysis-001.data.json"
    path.write_bytes(REPORT.read_bytes())
    calls: list[str] = []
    real = reading.validate

    def counting(*args: object, **kwargs: object) -> object:
        calls.append("validate")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(reading, "validate", counting)
    with reading.memo(tmp_path):
        first = reading.load_report(path, root=tmp_path)
        assert isinstance(first, FinalReportV3)
        assert reading.load_report(path, root=tmp_path) is first
    assert calls == ["validate"]
    assert reading.load_report(path, root=tmp_path) == first


def test_roots_resolved_once_still_refuse_a_folder_leading_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "inside.json").write_bytes(GOOD)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "file.json").write_bytes(GOOD)
    (root / "linked").symlink_to(tmp_path / "elsewhere")
    resolved: list[str] = []
    real = os.path.realpath

    def counting(path: object, *args: object, **kwargs: object) -> str:
        resolved.append(os.fspath(path))  # type: ignore[arg-type]
        return real(path, *args, **kwargs)  # type: ignore[arg-type, no-any-return]

    monkeypatch.setattr(os.path, "realpath", counting)
    with reading.roots_resolved_once():
        for _ in range(3):
            assert reading.read_bytes(root / "inside.json", root=root) == GOOD
        assert resolved.count(str(root)) == 1
        refused = reading.read_bytes(root / "linked" / "file.json", root=root)
        assert "leading outside the project root" in str(refused)
    assert reading.read_bytes(root / "inside.json", root=root) == GOOD
    assert resolved.count(str(root)) > 1  # outside the block, at every read


def test_list_if_folder_unrecorded_lists_without_a_look_and_answers_as_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "a").write_text("", encoding="utf-8")
    (tmp_path / "refused").mkdir()
    (tmp_path / "file").write_text("", encoding="utf-8")
    (tmp_path / "to-folder").symlink_to("folder")
    (tmp_path / "to-file").symlink_to("file")
    (tmp_path / "dangling").symlink_to("gone")
    (tmp_path / "loop").symlink_to("loop")
    os.mkfifo(tmp_path / "fifo")
    real_listdir = os.listdir

    def refusing(path: object) -> list[str]:
        if os.fspath(path).endswith("refused"):  # type: ignore[call-overload]
            raise PermissionError(13, "Permission denied")
        return real_listdir(path)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(os, "listdir", refusing)
    names = ("folder", "refused", "file", "to-folder", "to-file", "dangling", "loop", "fifo", "missing")
    with reading.recording():
        recorded = {name: reading.list_if_folder(tmp_path / name) for name in names}
    looked = count_looks(monkeypatch)
    unrecorded = {name: reading.list_if_folder(tmp_path / name) for name in names}
    assert {n: str(v) for n, v in unrecorded.items()} == {n: str(v) for n, v in recorded.items()}
    assert recorded["folder"] == recorded["to-folder"] == ["a"]
    assert "cannot list folder: Permission denied" in str(recorded["refused"])
    assert all(recorded[n] is None for n in ("file", "to-file", "dangling", "loop", "fifo", "missing"))
    assert str(tmp_path / "folder") not in looked and str(tmp_path / "file") not in looked


def test_a_root_moved_within_roots_resolved_once_has_its_reads_refused(tmp_path: Path) -> None:
    """The root as first resolved in the block is the one reads are kept inside: a project moved away, with a
    symlink to another folder left in its place, has its reads refused until the block ends."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "doc.json").write_bytes(GOOD)
    other = tmp_path / "other"
    other.mkdir()
    (other / "doc.json").write_bytes(b"{}")
    with reading.roots_resolved_once():
        assert reading.read_bytes(root / "doc.json", root=root) == GOOD
        root.rename(tmp_path / "moved")
        root.symlink_to(other)
        refused = reading.read_bytes(root / "doc.json", root=root)
        assert isinstance(refused, LoadError) and "outside" in refused.reason
    assert reading.read_bytes(root / "doc.json", root=root) == b"{}"  # resolved afresh: the folder it names now


def test_an_open_file_is_read_whole_up_to_one_byte_over_its_bound(tmp_path: Path) -> None:
    import os
    import tracemalloc

    path = tmp_path / "state"
    path.write_bytes(b"x" * 10)

    def read(size: int, bound: int) -> bytes:
        fd = os.open(path, os.O_RDONLY)
        try:
            return reading.read_open(fd, size, bound)
        finally:
            os.close(fd)

    assert read(10, 100) == b"x" * 10
    assert read(3, 100) == b"x" * 10  # it grew since it was opened: read on to its end
    assert read(10, 4) == b"x" * 5  # over the bound: one byte more says so
    with path.open("ab") as fh:
        fh.write(b"y" * (3 << 20))
    assert read(10, 8 << 20) == b"x" * 10 + b"y" * (3 << 20)
    # A small file under a large bound takes what it holds, not the bound (a read of the bound allocates it).
    path.write_bytes(b"{}")
    tracemalloc.start()
    try:
        assert read(2, 64 << 20) == b"{}"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak
