"""Path rules: slugs, keys, run dirs, flat carry/consumers, seq allocation, invocation and manager paths."""

from __future__ import annotations

import multiprocessing
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from okstra_core import layout, names, writes
from okstra_core.errors import LayoutError, PathEscape


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Payments", "payments"),
        ("Retry Policy!", "retry-policy"),
        ("  --Crème brûlée--  ", "creme-brulee"),
        ("a__b..c", "a-b-c"),
        ("x" * 80, "x" * 64),
    ],
)
def test_slug_examples(value: str, expected: str) -> None:
    assert layout.slug(value) == expected


def test_slug_fallback_for_empty_results() -> None:
    value = "決済"
    result = layout.slug(value)
    assert result.startswith("u-") and len(result) == 14
    assert result == layout.slug(value)  # stable
    assert layout.slug("支払い") != result  # distinct inputs keep distinct fallbacks
    assert layout.slug("").startswith("u-")


@given(st.text(max_size=100))
def test_slug_is_idempotent_and_canonical(value: str) -> None:
    once = layout.slug(value)
    assert layout.slug(once) == once
    assert layout.is_canonical_slug(once)
    assert len(once) <= 64


def test_a_plain_slug_is_its_own_slug_and_a_trailing_newline_is_not_plain() -> None:
    assert layout.slug("retry-policy-2") == "retry-policy-2"
    assert layout.slug("retry-policy\n") == "retry-policy"
    assert not layout.is_canonical_slug("retry-policy\n")


def test_task_folders_give_a_task_its_slug_folder_or_the_folder_that_stands_for_it() -> None:
    folders = layout.TaskFolders([("payments", "retry"), ("Billing", "Fix Bug"), ("billing", "other"), ("x", "y")])
    assert folders.of("Payments", "Retry") == ("payments", "retry")
    assert folders.of("billing", "fix bug") == ("Billing", "Fix Bug"), "no slug folder: the one breaking the rule"
    assert folders.of("billing", "missing") == ("billing", "missing"), "no folder at all: its slug folder"
    assert not folders.listed(folders.of("billing", "missing"))
    claimed = {folders.of("payments", "retry"), folders.of("billing", "fix-bug")}
    assert folders.unclaimed(claimed) == [("billing", "other"), ("x", "y")]
    both = layout.TaskFolders([("Billing", "Fix Bug"), ("billing", "fix-bug")])
    assert both.of("billing", "fix-bug") == ("billing", "fix-bug"), "the slug folder itself wins when listed"
    # A file left at the slug name (the listing names every entry) does not hide the folder standing for it.
    file_there = layout.TaskFolders([("Billing", "Fix Bug"), ("billing", "fix-bug")], lambda names: False)
    assert file_there.of("billing", "fix-bug") == ("Billing", "Fix Bug")


def test_task_key_keeps_original_values_and_path_uses_slugs(tmp_path: Path) -> None:
    key = layout.TaskKey.parse("Shop:Payments Team:Retry Policy")
    assert str(key) == "Shop:Payments Team:Retry Policy"
    root = layout.task_root(tmp_path, key.task_group, key.task_id)
    assert root == tmp_path / ".okstra" / "tasks" / "payments-team" / "retry-policy"
    for bad in ("a:b", "a::c", "a:b:c:d", ""):
        with pytest.raises(LayoutError):
            layout.TaskKey.parse(bad)


def test_run_dir_forms(tmp_path: Path) -> None:
    root = tmp_path / "t"
    assert layout.run_dir(root, "analysis") == root / "runs" / "analysis"
    assert layout.run_dir(root, "implementation-planning") == root / "runs" / "implementation-planning"
    assert layout.run_dir(root, "implementation", 2) == root / "runs" / "implementation" / "stage-2"
    assert layout.run_dir(root, "final-verification", 1) == root / "runs" / "final-verification" / "stage-1"
    assert layout.run_dir(root, "final-verification") == root / "runs" / "final-verification"
    with pytest.raises(LayoutError):
        layout.run_dir(root, "implementation")
    with pytest.raises(LayoutError):
        layout.run_dir(root, "analysis", 1)
    with pytest.raises(LayoutError):
        layout.run_dir(root, "implementation", 0)
    with pytest.raises(LayoutError):
        layout.run_dir(root, "Bad Type")


def test_stage_dir_parsing() -> None:
    assert layout.parse_stage_dir("stage-3") == 3
    assert layout.parse_stage_dir("stage-12") == 12
    for bad in ("stage-0", "stage-01", "stage-", "stage-x", "stage3"):
        assert layout.parse_stage_dir(bad) is None


def test_carry_and_consumers_are_flat(tmp_path: Path) -> None:
    root = tmp_path / "t"
    assert layout.carry_path(root, 2) == root / "runs" / "implementation" / "carry" / "stage-2.json"
    assert layout.consumers_path(root) == root / "runs" / "implementation-planning" / "consumers.jsonl"


def test_seq_format() -> None:
    assert names.format_seq(1) == "001"
    assert names.format_seq(999) == "999"
    assert names.format_seq(1000) == "1000"
    assert names.is_canonical_seq("007") and not names.is_canonical_seq("07") and not names.is_canonical_seq("0007")
    with pytest.raises(LayoutError):
        names.format_seq(0)


def test_a_canonical_seq_is_exactly_what_format_seq_spells() -> None:
    spellings = {names.format_seq(n) for n in range(1, 100_000)}  # every seq up to five digits, as writers name it
    texts = [f"{n:0{width}d}" for n in range(0, 1200, 7) for width in (1, 2, 3, 4, 5)]
    texts += ["", "0", "000", "001", "00a", "1e3", "٠٠١", "²²²", " 01", "01 ", "+001", "-001", "0001", "99999"]
    for text in texts:
        assert names.is_canonical_seq(text) == (text in spellings), text


def test_seq_allocation_per_category_with_gaps(tmp_path: Path) -> None:
    rd = tmp_path / "runs" / "analysis"
    (rd / "reports").mkdir(parents=True)
    (rd / "reports" / "final-report-analysis-004.data.json").write_text("{}")
    (rd / "reports" / "unrelated.txt").write_text("")
    assert writes.allocate_seq(tmp_path, rd, "reports") == 5  # gaps are allowed: highest in use plus one
    assert writes.allocate_seq(tmp_path, rd, "reports") == 6  # the claim of 5 counts as in use
    assert writes.allocate_seq(tmp_path, rd, "manifests") == 1  # categories count independently
    with pytest.raises(LayoutError):
        writes.allocate_seq(tmp_path, rd, "design-prep-inputs")


def test_seq_claims_are_never_made_through_a_folder_linked_outside(tmp_path: Path) -> None:
    rd = tmp_path / "project" / "runs" / "analysis"
    rd.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (rd / "reports").symlink_to(outside)
    with pytest.raises(PathEscape):
        writes.allocate_seq(tmp_path / "project", rd, "reports")
    assert list(outside.iterdir()) == []
    (rd / "manifests").mkdir()
    (rd / "manifests" / ".seq").mkdir()
    (rd / "manifests" / ".seq" / "001").symlink_to(outside / "planted")
    assert writes.allocate_seq(tmp_path / "project", rd, "manifests") == 2  # a planted claim is skipped, not followed
    assert list(outside.iterdir()) == []


def _allocate_many(args: tuple[str, int]) -> list[int]:
    folder, count = args
    return [writes.allocate_seq(Path(folder), Path(folder), "prompts") for _ in range(count)]


def test_seq_allocation_races_between_processes(tmp_path: Path) -> None:
    rd = tmp_path / "rd"
    rd.mkdir()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        results = pool.map(_allocate_many, [(str(rd), 25)] * 4)
    taken = [n for part in results for n in part]
    assert len(taken) == 100
    assert len(set(taken)) == 100  # no two writers ever share a number


def test_invocation_paths(tmp_path: Path) -> None:
    paths = layout.invocation_paths(tmp_path, "code-review", "review-1")
    base = tmp_path / ".okstra" / "agent-invocations" / "code-review"
    assert paths.instructions == base / "review-1.instructions.md"
    assert paths.prompt == base / "review-1.prompt.md"
    assert paths.meta == base / "review-1.prompt.md.meta.json"
    assert paths.result == base / "review-1.result.json"
    assert paths.completion == base / "review-1.prompt.md.completion.json"
    assert paths.tmp == base / "review-1.tmp"
    for purpose, inv in (("Code Review", "x"), ("code-review", "../x"), ("code-review", "")):
        with pytest.raises(LayoutError):
            layout.invocation_paths(tmp_path, purpose, inv)


def test_okstra_home_override_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OKSTRA_HOME", str(tmp_path / "h"))
    assert layout.okstra_home() == tmp_path / "h"
    assert layout.okstra_home(tmp_path / "flag") == tmp_path / "flag"
    monkeypatch.delenv("OKSTRA_HOME")
    assert layout.okstra_home() == Path.home() / ".okstra"
    home = tmp_path / "h"
    assert layout.manager_task_dir(home, "Release Train", "Q4", "Hardening") == (
        home / "managers" / "release-train" / "task-groups" / "q4" / "hardening"
    )
    assert layout.child_context_name("Demo Shop", "Task 1") == "demo-shop-task-1.md"


def test_discovery_paths(tmp_path: Path) -> None:
    assert layout.latest_task_path(tmp_path) == tmp_path / ".okstra" / "discovery" / "latest-task.json"
    assert layout.task_catalog_path(tmp_path) == tmp_path / ".okstra" / "discovery" / "task-catalog.json"


def test_relative_posix() -> None:
    assert layout.is_relative_posix("a/b.md")
    for bad in ("/abs", "a/../b", "./a", "a//b", "a\\b", "", ".", "..", "a/", "a/.", "a/..", "../a"):
        assert not layout.is_relative_posix(bad)
    for good in ("a", ".a", "..a", "a..", "a/.b/c", "...", "a/.../b"):
        assert layout.is_relative_posix(good)


def test_private_entries() -> None:
    for name in (".okstra-tmp-x.json.abc", "team-state-analysis-001.json.lock", ".seq", ".reservations"):
        assert layout.is_private_entry(name)
    assert not layout.is_writer_debris(".reservations")  # the checker still reads reservation bindings
    for name in ("team-state-analysis-001.json", ".hidden-user-file", "migrations"):
        assert not layout.is_private_entry(name)


def test_seq_claims_in_other_digits_take_no_seq(tmp_path: Path) -> None:
    """A claim named in superscript digits, or longer than any file name's seq, is not a claim (never a traceback)."""
    folder = tmp_path / "reports"
    (folder / layout.SEQ_CLAIMS_DIR).mkdir(parents=True)
    for name in ("\u00b9\u00b2\u00b3", "012", "0x1f"):
        (folder / layout.SEQ_CLAIMS_DIR / name).write_text("", encoding="utf-8")
    assert layout.seqs_in_use(folder) == 12
    assert names.seq_value("007") == 7 and names.seq_value("9" * 256) is None and names.seq_value("") is None


@pytest.mark.parametrize(
    ("path", "root", "expected"),
    [
        ("/p/.okstra/tasks/g/t/a.md", "/p", ".okstra/tasks/g/t/a.md"),
        ("/p/x", "/", "p/x"),
        ("/p", "/p", "."),
        ("/p/a/../b", "/p/a/..", "b"),
        ("/pq/x", "/p", None),
        ("/other/x", "/p", None),
    ],
)
def test_rel_cuts_text_as_relative_to_does(path: str, root: str, expected: str | None) -> None:
    from pathlib import PurePosixPath

    for asked, base in ((path, root), (Path(path), Path(root))):
        if expected is None:
            with pytest.raises(ValueError):
                layout.rel(asked, base)
            with pytest.raises(ValueError):
                PurePosixPath(path).relative_to(root)
        else:
            assert layout.rel(asked, base) == expected == PurePosixPath(path).relative_to(root).as_posix()


def test_the_store_a_path_lies_in() -> None:
    assert layout.store_of("/p/.okstra/tasks/g/t/task-manifest.json") == "/p/.okstra/"
    assert layout.store_of("/home/u/.okstra/managers/m/x.json") == "/home/u/.okstra/"
    assert layout.store_of("/p/.okstra-old/x") is None and layout.store_of("/p/x/.okstra") is None


def test_one_command_looks_at_the_store_folder_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_looks: Callable[[Path], Counter[str]]
) -> None:
    from okstra_core import watchman
    from okstra_core.store import Project

    root = tmp_path / "project"
    (root / ".okstra").mkdir(parents=True)
    monkeypatch.setattr(watchman, "_ask", lambda *args: watchman.Since(None, None, "not asked in this test"))
    monkeypatch.setattr(watchman, "_sockname", lambda reuse=False: "/nowhere")
    with layout.store_looked_once():
        assert layout.misplaced_cache(root / ".okstra" / "cache", root, tmp_path / "home") is not None
    looks = store_looks(root / ".okstra")
    with layout.store_looked_once():
        assert not isinstance(Project.open(root), Exception)
        assert layout.misplaced_cache(tmp_path / "cache", root, tmp_path / "home") is None
        assert watchman.changed_since(root, None).problem != watchman.LINKED_STORE
    assert looks == {str(root / ".okstra"): 1}
    looks.clear()
    Project.open(root)
    layout.misplaced_cache(tmp_path / "cache", root, tmp_path / "home")
    assert looks == {str(root / ".okstra"): 2}, "outside one command's run, each asks afresh"


def test_the_store_look_says_a_symlinked_store_is_one(tmp_path: Path) -> None:
    root = tmp_path / "project"
    real = tmp_path / "elsewhere"
    real.mkdir()
    root.mkdir()
    (root / ".okstra").symlink_to(real, target_is_directory=True)
    with layout.store_looked_once():
        assert layout.store_is_link(root) and layout.store_is_folder(root)
        assert layout.real_store(root) == str(real.resolve())
    assert not layout.store_is_folder(tmp_path / "nothing-here")


def test_a_block_nested_in_a_command_looks_at_the_store_afresh(
    tmp_path: Path, store_looks: Callable[[Path], Counter[str]]
) -> None:
    """A command that keeps watching (``okstra inbox --watch``) opens a block per reading: a store that became a
    symlink meanwhile is seen as one."""
    root = tmp_path / "project"
    (root / ".okstra").mkdir(parents=True)
    looks = store_looks(root / ".okstra")
    with layout.store_looked_once():
        assert not layout.store_is_link(root)
        (root / ".okstra").rename(tmp_path / "moved")
        (root / ".okstra").symlink_to(tmp_path / "moved", target_is_directory=True)
        assert not layout.store_is_link(root), "one look per block"
        with layout.store_looked_once():
            assert layout.store_is_link(root)
    assert looks[str(root / ".okstra")] == 2
