"""``okstra search``: exit codes, text and JSON output, hostile store text shown inert."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from okstra_core import layout
from okstra_core.cli import main
from okstra_core.search.index import index_path

TASK = "payments/retry-policy"
_RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["search", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_hits_name_task_kind_item_and_file(demo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, str(demo_root), "kind:finding", "idempotent", "-q")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("demo-shop:") and " finding F-" in lines[0] and ".data.json" in lines[0]
    assert "idempotent" in lines[1].lower()
    assert re.fullmatch(r"\d+ hits?", lines[-1])


def test_no_match_exits_1(demo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, str(demo_root), "zzzqqqxxy", "-q")
    assert code == 1 and out.strip() == "no matches"


@pytest.mark.parametrize("query", ['"unclosed', "a OR", "kind:nope", "(", "NOT a"])
def test_a_malformed_query_is_one_line_and_exit_2(
    demo_root: Path, capsys: pytest.CaptureFixture[str], query: str
) -> None:
    code, out, err = _run(capsys, str(demo_root), query)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("okstra search: bad query: ")


@pytest.mark.parametrize(
    "query",
    ["retry " + " ".join(f"-w{i}" for i in range(100)), " ".join(["retry"] * 2800)],
    ids=["100-exclusions", "20kB-of-one-word"],
)
def test_an_oversized_query_is_a_bad_query_and_the_index_is_kept(
    fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], query: str
) -> None:
    cache = tmp_path / "cache"
    assert _run(capsys, str(fresh_demo), "retry", "-q", "--cache-dir", str(cache))[0] == 0
    index = index_path(layout.okstra_cache_dir(cache), fresh_demo)
    before = index.stat().st_ino
    code, out, err = _run(capsys, str(fresh_demo), query, "-q", "--cache-dir", str(cache))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("okstra search: bad query: "), err
    assert index.stat().st_ino == before, "the index was not removed"
    code, out, err = _run(capsys, str(fresh_demo), "retry", "-q", "--cache-dir", str(cache))
    assert code == 0 and err == "" and "hit" in out


def test_no_store_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, str(tmp_path), "x")
    assert code == 2 and "no .okstra/ store" in err


def test_a_cache_folder_in_the_store_is_refused(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inside = layout.okstra_dir(fresh_demo) / "cache"
    code, _, err = _run(capsys, str(fresh_demo), "x", "--cache-dir", str(inside))
    assert code == 2 and "inside the store" in err and err.count("\n") == 1
    assert not inside.exists()


def test_a_cache_folder_in_the_manager_home_is_refused_as_check_refuses_it(
    demo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inside = layout.okstra_home() / "cache"
    code, out, err = _run(capsys, str(demo_root), "x", "--cache-dir", str(inside))
    assert (code, out) == (2, "") and err.count("\n") == 1
    reason = "the cache folder is inside the manager home; okstra never keeps a cache there"
    assert err == f"okstra search: {inside}: {reason}\n"
    assert main(["check", str(demo_root), "--cache-dir", str(inside)]) == 2
    checked = capsys.readouterr().err
    assert checked.count("\n") == 1 and reason in checked
    assert not inside.exists()


def test_a_second_search_sees_what_changed_in_the_store_since_the_first(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The index kept from the first search is brought up to date by the next: a new note, an edited brief."""
    assert _run(capsys, str(fresh_demo), "quokkazebra", "-q")[0] == 1
    assert _run(capsys, str(fresh_demo), "wombatheron", "-q")[0] == 1
    notes = fresh_demo / f".okstra/tasks/{TASK}/notes"
    notes.mkdir(exist_ok=True)
    (notes / "20261201T090000Z-sighting.md").write_text("A quokkazebra was seen.\n", encoding="utf-8")
    brief = fresh_demo / f".okstra/tasks/{TASK}/instruction-set/task-brief.md"
    brief.write_text(brief.read_text(encoding="utf-8") + "\nAlso the wombatheron.\n", encoding="utf-8")
    code, out, err = _run(capsys, str(fresh_demo), "quokkazebra", "-q")
    assert code == 0 and "20261201T090000Z-sighting.md" in out, err
    code, out, err = _run(capsys, str(fresh_demo), "wombatheron", "-q")
    assert code == 0 and "task-brief.md" in out, err
    (notes / "20261201T090000Z-sighting.md").unlink()
    assert _run(capsys, str(fresh_demo), "quokkazebra", "-q")[0] == 1


def test_json_is_versioned_and_limited(demo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, str(demo_root), "retry", "OR", "gateway", "--json", "--limit", "2")
    assert code == 0
    doc = json.loads(out)
    assert doc["version"] == 1 and doc["query"] == "retry OR gateway" and doc["total"] > 2
    assert len(doc["hits"]) == 2
    hit = doc["hits"][0]
    assert set(hit) == {
        "task",
        "taskFolder",
        "taskType",
        "kind",
        "label",
        "path",
        "snippet",
        "matches",
        "capped",
        "modified",
        "score",
    }
    start, end = hit["matches"][0]
    assert hit["snippet"][start:end].lower() in ("retry", "gateway")


def test_limit_must_be_positive(demo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["search", str(demo_root), "x", "--limit", "0"])
    assert caught.value.code == 2


def test_the_index_is_in_the_cache_folder(fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "elsewhere"
    code, _, _ = _run(capsys, str(fresh_demo), "retry", "--cache-dir", str(cache), "-q")
    assert code == 0 and index_path(cache, fresh_demo.resolve()).is_file()


def test_reindex_rebuilds_and_a_corrupt_index_gives_one_notice(
    fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "c"
    assert _run(capsys, str(fresh_demo), "retry", "--cache-dir", str(cache), "-q")[0] == 0
    index_path(cache, fresh_demo.resolve()).write_bytes(b"\0garbage" * 64)
    code, out, err = _run(capsys, str(fresh_demo), "retry", "--cache-dir", str(cache), "-q")
    assert code == 0 and out
    assert err.count("\n") == 1 and "notice" in err and "rebuilt" in err
    code, out, err = _run(capsys, str(fresh_demo), "--reindex", "--cache-dir", str(cache), "-q")
    assert code == 0 and out.startswith("index rebuilt:") and err == ""


def test_logs_only_with_include_logs(demo_root: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cache = str(tmp_path / "c")
    code, out, _ = _run(capsys, str(demo_root), "kind:prompt", "--cache-dir", cache, "-q", "--json", "--limit", "1000")
    assert code == 0 and all(h["kind"] != "log" for h in json.loads(out)["hits"])
    code, out, _ = _run(capsys, str(demo_root), "kind:log", "--cache-dir", cache, "-q", "--json", "--limit", "1000")
    logs = json.loads(out)["hits"]
    assert code == 0 and logs and all(h["path"].endswith(".log") for h in logs)


def test_hostile_text_is_searchable_and_shown_inert(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = layout.notes_dir(layout.tasks_dir(fresh_demo) / TASK)
    folder.mkdir(exist_ok=True)
    (folder / "20261201T120000Z-escapes.md").write_bytes(
        b"before \x1b]52;c;aGVsbG8=\x07 clipboard \x1b[2J wipe \x9b31m c1 \xe2\x80\xae bidi gerbilpatrol after\n"
    )
    (folder / "20261201T120001Z-long.md").write_bytes(b"tapirstart " + b"x" * (5 * 1024 * 1024) + b" tapirend\n")
    (folder / "20261201T120002Z-bytes.md").write_bytes(b"valid \xff\xfe\xc3 broken \xed\xa0\x80 marmotvalley\n")
    for query in ("gerbilpatrol clipboard wipe", "tapirstart", "marmotvalley broken"):
        code, out, err = _run(capsys, str(fresh_demo), query, "-q", "--colour", "never")
        assert code == 0, (query, err)
        assert not _RAW_CONTROL.search(out) and "\u202e" not in out
        code, out, _ = _run(capsys, str(fresh_demo), query, "-q", "--json")
        assert code == 0 and out.isascii()
    code, out, _ = _run(capsys, str(fresh_demo), "gerbilpatrol", "-q", "--colour", "never")
    assert "␛]52;c;aGVsbG8=␇" in out and "\\u202e" in out
    code, out, _ = _run(capsys, str(fresh_demo), "tapirstart", "-q", "--colour", "never")
    assert "only the first 200,000 characters are indexed" in out
    assert _run(capsys, str(fresh_demo), "tapirend", "-q")[0] == 1  # past the cap, as the preview
    code, out, _ = _run(capsys, str(fresh_demo), "marmotvalley", "-q", "--colour", "never")
    assert "\ufffd" in out


def test_colour_marks_matches_only_when_asked(demo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, str(demo_root), "idempotency", "-q", "--colour", "always")
    assert "\x1b[1;31m" in out
    _, out, _ = _run(capsys, str(demo_root), "idempotency", "-q")
    assert "\x1b" not in out


def test_a_file_name_that_is_not_utf8_is_left_out_quietly(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    folder = layout.instruction_set_dir(layout.tasks_dir(fresh_demo) / TASK)
    with open(os.path.join(os.fsencode(folder), b"bad-\xff-name.md"), "wb") as fh:
        fh.write(b"the axolotlcove text\n")
    (folder / "good-name.md").write_text("the axolotlcove twin\n")
    code, out, err = _run(capsys, str(fresh_demo), "axolotlcove", "-q", "--json")
    assert code == 0, err
    assert [h["path"].rsplit("/", 1)[1] for h in json.loads(out)["hits"]] == ["good-name.md"]


@pytest.mark.parametrize("extra", [[], ["--json"]], ids=["text", "json"])
def test_a_closed_pipe_ends_the_search_quietly(demo_root: Path, tmp_path: Path, extra: list[str]) -> None:
    """``okstra search DEMO retry | head -1``: no "Broken pipe", the status of a program killed by SIGPIPE."""
    import os
    import subprocess
    import sys

    from okstra_core.cli import EXIT_BROKEN_PIPE

    okstra = str(Path(sys.executable).parent / "okstra")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("OKSTRA_CACHE_DIR", None)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [okstra, "search", str(demo_root), "retry", "-q", *extra],
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=env,
            timeout=180,
            check=False,
        )
    finally:
        os.close(write_end)
    assert proc.stderr == b"", proc.stderr.decode(errors="replace")
    assert proc.returncode == EXIT_BROKEN_PIPE


def test_searches_and_inboxes_sharing_one_database_at_once_lose_nothing(fresh_demo: Path, tmp_path: Path) -> None:
    """Processes of both consumers start together on a cache with no database: they make it, each its tables,
    and every answer is the one given without the cache."""
    import sqlite3
    import subprocess
    import sys

    cache = tmp_path / "cache"

    def command(verb: str, *extra: str) -> list[str]:
        return [sys.executable, "-m", "okstra_core.cli", verb, str(fresh_demo), *extra, "--json"]

    search, inbox = ("search", "retry", "-q", "--jobs", "1"), ("inbox",)
    expected = {
        verb: subprocess.run(command(*argv, "--no-cache"), capture_output=True, text=True, check=False).stdout
        for verb, argv in (("search", search), ("inbox", inbox))
    }
    for _round in range(2):
        procs = [
            (argv[0], subprocess.Popen(command(*argv, "--cache-dir", str(cache)), stdout=-1, stderr=-1, text=True))
            for argv in (search, inbox, search, inbox)
        ]
        for verb, proc in procs:
            out, err = proc.communicate(timeout=120)
            assert (proc.returncode, err) == (0, ""), err
            if verb == "search":
                # The same hits; only the project folder named in the document differs from no cache's.
                assert json.loads(out)["hits"] == json.loads(expected[verb])["hits"]
            else:
                assert out == expected[verb]
    (db,) = (layout.okstra_cache_dir(cache) / "index").glob("*.sqlite")
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT count(*) FROM facts").fetchone()[0] > 0
    assert conn.execute("SELECT count(*) FROM search_files").fetchone()[0] > 300
    conn.close()


def test_checks_searches_and_inboxes_at_once_on_an_empty_cache_lose_nothing(fresh_demo: Path, tmp_path: Path) -> None:
    """Two checks start together with a search and an inbox on a cache with no database: every answer is the one
    given without the cache, and the check's records kept are whole, each signed, one set for the project."""
    import sqlite3
    import subprocess
    import sys

    from okstra_core.check.cache import CheckCache

    cache = tmp_path / "cache"
    home = fresh_demo / ".okstra-home"

    def command(verb: str, *extra: str) -> list[str]:
        tail = ("--home", str(home), "--format", "json", "--quiet") if verb == "check" else ("--json",)
        return [sys.executable, "-m", "okstra_core.cli", verb, str(fresh_demo), *extra, *tail]

    check, search, inbox = ("check",), ("search", "retry", "--jobs", "1"), ("inbox",)
    expected = {
        argv[0]: subprocess.run(command(*argv, "--no-cache"), capture_output=True, text=True, check=False).stdout
        for argv in (check, search, inbox)
    }
    for _round in range(2):
        procs = [
            (argv[0], subprocess.Popen(command(*argv, "--cache-dir", str(cache)), stdout=-1, stderr=-1, text=True))
            for argv in (check, search, check, inbox)
        ]
        for verb, proc in procs:
            out, err = proc.communicate(timeout=180)
            assert err == "", err
            if verb == "search":
                assert json.loads(out)["hits"] == json.loads(expected[verb])["hits"]
            else:
                assert out == expected[verb], verb
        (db,) = (layout.okstra_cache_dir(cache) / "index").glob("*.sqlite")
        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM check_runs").fetchone()[0] == 1
        rows = conn.execute("SELECT count(*) FROM check_tasks").fetchone()[0]
        conn.close()
        kept = CheckCache(layout.okstra_cache_dir(cache))
        assert len(kept.load(str(fresh_demo), str(home))) == rows and kept.rejected == 0
    assert rows > 0, "the second round's records were kept"
