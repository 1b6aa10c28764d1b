"""``-o FILE`` of every verb that has one: relative to the working folder, written once, named as given."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from okstra_core import cli, layout

TASK = ".okstra/tasks/checkout/receipt-emails"
DATA = f"{TASK}/runs/analysis/reports/final-report-analysis-001.data.json"
#: Every verb with ``-o``: its arguments before ``-o`` (paths relative to the project root).
VERBS = {
    "render-final-report": ["render-final-report", DATA],
    "render-task-index": ["render-task-index", TASK],
    "check": ["check", ".", "--quiet", "--no-cache"],
}


def test_every_verb_with_an_output_flag_is_covered() -> None:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    with_o = {
        name
        for name, p in sub.choices.items()  # type: ignore[attr-defined]
        if any("-o" in a.option_strings for a in p._actions)
    }
    assert with_o == set(VERBS)


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if not p.is_dir()}


def _argv(verb: str, project: Path, cwd: Path) -> list[str]:
    """The verb's arguments as a user in *cwd* types them (relative to *cwd*)."""
    out = []
    for arg in VERBS[verb]:
        target = project / arg
        out.append(os.path.relpath(target, cwd) if arg == "." or (project / arg).exists() else arg)
    return out


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = cli.main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("verb", sorted(VERBS))
@pytest.mark.parametrize("where", ["root", "subfolder"])
@pytest.mark.parametrize("form", ["relative", "absolute"])
def test_output_lands_where_the_working_folder_says(
    fresh_demo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    verb: str,
    where: str,
    form: str,
) -> None:
    monkeypatch.setenv("OKSTRA_HOME", str(tmp_path / "home"))
    cwd = fresh_demo if where == "root" else fresh_demo / "docs"
    cwd.mkdir(exist_ok=True)
    (cwd / "out").mkdir()
    monkeypatch.chdir(cwd)
    before = _files(fresh_demo)
    expected = cwd / "out" / "report.txt"
    given = "out/report.txt" if form == "relative" else str(expected)
    code, err = _run(capsys, [*_argv(verb, fresh_demo, cwd), "-o", given])
    assert code == 0, err
    assert expected.is_file() and expected.stat().st_size > 0
    made = _files(fresh_demo) - before
    assert made == {expected.relative_to(fresh_demo).as_posix()}, "exactly the file named, nowhere else"
    if verb != "check":
        # The message names the path as the user gave it: the file actually written.
        assert err == f"{given}: written ({expected.stat().st_size} bytes)\n"
        code, err = _run(capsys, [*_argv(verb, fresh_demo, cwd), "-o", given])
        assert (code, err) == (0, f"{given}: already up to date ({expected.stat().st_size} bytes)\n")


def test_task_index_into_its_task_folder_writes_that_file(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = fresh_demo / TASK / "task-index.md"
    target.unlink()
    monkeypatch.chdir(fresh_demo)
    before = _files(fresh_demo)
    code, err = _run(capsys, ["render-task-index", TASK, "-o", f"{TASK}/task-index.md"])
    assert (code, err) == (0, f"{TASK}/task-index.md: written ({target.stat().st_size} bytes)\n")
    assert _files(fresh_demo) - before == {f"{TASK}/task-index.md"}
    assert not (fresh_demo / TASK / layout.OKSTRA_DIR).exists(), "no store nested inside the store"


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_a_path_ending_in_a_separator_names_no_file(
    fresh_demo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    verb: str,
) -> None:
    monkeypatch.setenv("OKSTRA_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(fresh_demo)
    before = _files(fresh_demo)
    code, err = _run(capsys, [*VERBS[verb], "-o", "report/"])
    assert code == (2 if verb == "check" else 1)
    assert err.count("\n") == 1 and "report/: " in err and "does not name a file" in err, err
    assert _files(fresh_demo) == before and not (fresh_demo / "report").exists()


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_a_missing_output_folder_is_refused_not_made(
    fresh_demo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    verb: str,
) -> None:
    monkeypatch.setenv("OKSTRA_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(fresh_demo)
    code, err = _run(capsys, [*VERBS[verb], "-o", "nowhere/report.txt"])
    assert code == (2 if verb == "check" else 1)
    assert err.count("\n") == 1 and "nowhere/report.txt: " in err and "output folder does not exist" in err, err
    assert not (fresh_demo / "nowhere").exists()


def test_the_workbench_check_resolves_output_the_same_way(
    fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``okstra-tui --check -o FILE`` shares the checker's flags, and so the one resolution."""
    from okstra_core.commands.check import main_check

    monkeypatch.setenv("OKSTRA_HOME", str(tmp_path / "home"))
    cwd = fresh_demo / "docs"
    (cwd / "out").mkdir(parents=True)
    monkeypatch.chdir(cwd)
    before = _files(fresh_demo)
    assert main_check(["..", "--quiet", "--no-cache", "-o", "out/report.txt"]) == 0, capsys.readouterr().err
    assert _files(fresh_demo) - before == {"docs/out/report.txt"}
