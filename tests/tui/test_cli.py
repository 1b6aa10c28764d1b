"""``okstra-tui``'s command line: project errors, ``--check`` delegation, ``--demo``."""

from __future__ import annotations

import os
import signal
import sys
import types
from pathlib import Path

import pytest

from okstra_tui import __main__ as cli
from okstra_tui.app import OkstraApp


def test_missing_project_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main([str(tmp_path / "nope")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "nope" in err and "Traceback" not in err


def test_folder_without_store_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main([str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "no .okstra/" in err and err.count("\n") == 1


def test_check_delegates_to_the_checker_without_ui(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def main_check(argv: list[str]) -> int:
        calls.append(list(argv))
        return 1

    fake = types.ModuleType("okstra_core.commands.check")
    fake.main_check = main_check  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "okstra_core.commands.check", fake)
    monkeypatch.setattr(OkstraApp, "run", lambda self: pytest.fail("--check must not start the UI"))
    assert cli.main(["--check", "proj", "--format", "json", "--select", "E1"]) == 1
    assert calls == [["proj", "--format", "json", "--select", "E1"]]


def test_demo_opens_a_fresh_demo_with_its_manager_home(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The demo is written in a new temporary folder, shown with its path, kept, and named on quit."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(cli.tempfile, "tempdir", None)  # read TMPDIR afresh
    seen: dict[str, object] = {}

    def fake_run(self: OkstraApp) -> None:
        seen["root"] = self.project.root
        seen["label"] = self.project_label
        seen["home"] = os.environ["OKSTRA_HOME"]
        seen["catalog"] = (self.project.root / ".okstra" / "discovery" / "task-catalog.json").is_file()
        seen["handlers"] = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}

    monkeypatch.setattr(OkstraApp, "run", fake_run)
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    assert cli.main(["--demo"]) == 0
    # While the demo is open a stop request or a hang-up asks it to leave (then through the clean-up); afterwards
    # the caller's own handlers are back.
    handlers = seen["handlers"]
    assert isinstance(handlers, dict) and handlers.keys() == before.keys()
    leave = handlers[signal.SIGTERM]
    assert isinstance(leave, cli._Leave) and handlers[signal.SIGHUP] is leave
    assert {sig: signal.getsignal(sig) for sig in before} == before
    root = seen["root"]
    assert isinstance(root, Path) and root.parent.parent == tmp_path
    assert seen["catalog"] is True
    assert seen["home"] == str(root / ".okstra-home")
    assert seen["label"] == f"demo {root}", "the breadcrumbs say where the demo lies"
    assert root.is_dir(), "the demo is kept for the okstra commands"
    out = capsys.readouterr().out.splitlines()
    assert (
        out[-1]
        == f"okstra-tui: the demo project is kept at {root} (try: okstra inbox {root}; --discard-demo removes it)"
    )


def test_discard_demo_removes_it_on_quit_and_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(cli.tempfile, "tempdir", None)
    roots: list[Path] = []
    monkeypatch.setattr(OkstraApp, "run", lambda self: roots.append(self.project.root))
    assert cli.main(["--demo", "--discard-demo"]) == 0
    assert roots and not roots[0].exists() and list(tmp_path.iterdir()) == []
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"okstra-tui: the demo project at {roots[0]} was removed (without --discard-demo it is kept)"


def test_a_demo_cut_short_while_written_is_removed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(cli.tempfile, "tempdir", None)

    def cut(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("okstra_core.demo.generate", cut)
    monkeypatch.setattr(OkstraApp, "run", lambda self: pytest.fail("the workbench must not open"))
    with pytest.raises(KeyboardInterrupt):
        cli.main(["--demo"])
    assert list(tmp_path.iterdir()) == []


def test_demo_without_a_temporary_folder_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """No writable temporary folder: one line naming it, exit 1, and the caller's signal handlers kept."""
    target = tmp_path / "okstra-demo-x"

    def refuse(prefix: str = "") -> str:
        raise PermissionError(13, "Permission denied", str(target))

    monkeypatch.setattr(cli.tempfile, "mkdtemp", refuse)
    monkeypatch.setattr(OkstraApp, "run", lambda self: pytest.fail("the workbench must not open"))
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    assert cli.main(["--demo"]) == 1
    err = capsys.readouterr().err
    assert err == f"okstra-tui: cannot make a folder for the demo: {target}: Permission denied\n"
    assert {sig: signal.getsignal(sig) for sig in before} == before


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--demo-tasks", "50"], "--demo-tasks goes with --demo"),
        (["--discard-demo"], "--discard-demo goes with --demo"),
        (["--demo", "--demo-tasks", "-5"], "--demo-tasks must be between 0 and"),
        (["--demo", "--demo-tasks", "2000000"], "--demo-tasks must be between 0 and"),
        (["--demo", "--all", "--demo-tasks", "50"], "--demo-tasks goes with the single-project demo"),
        (["--demo", "."], "--demo opens the demo only (without PROJECT)"),
    ],
)
def test_demo_tasks_out_of_place_or_range_is_a_usage_error(
    args: list[str], said: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(OkstraApp, "run", lambda self: pytest.fail("the workbench must not open"))
    with pytest.raises(SystemExit) as exit_:
        cli.main(args)
    assert exit_.value.code == 2 and said in capsys.readouterr().err


async def test_the_demo_s_breadcrumbs_say_where_it_lies(demo_root: Path) -> None:
    from okstra_core.store import Project
    from okstra_tui.screens.base import Breadcrumbs
    from okstra_tui.screenshots import settle

    project = Project.open(demo_root)
    assert isinstance(project, Project)
    app = OkstraApp(project, demo_dir=demo_root.parent)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        line = app.screen.query_one(Breadcrumbs).line(120).plain
        assert line.startswith(f"okstra {app.project_label}  ›  ") and str(demo_root.name) in line
    plain = OkstraApp(project)
    assert plain.project_label == demo_root.name  # a project of one's own keeps its short name


def test_a_project_opened_is_remembered_for_all(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from okstra_core.projects import discover, remembered_roots

    monkeypatch.setattr(OkstraApp, "run", lambda self: None)
    assert cli.main([str(demo_root)]) == 0
    assert [r for r, _ in remembered_roots()] == [str(demo_root.resolve())]
    (entry,) = [e for e in discover().entries if e.sources[0].kind == "remembered"]
    assert entry.root == demo_root.resolve() and entry.health == "ok"
    assert capsys.readouterr().err == ""


def test_a_state_file_that_cannot_be_written_is_one_line(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from okstra_core.projects import remembered_path

    remembered_path().mkdir(parents=True)
    opened: list[Path] = []
    monkeypatch.setattr(OkstraApp, "run", lambda self: opened.append(self.project.root))
    assert cli.main([str(demo_root)]) == 0 and opened == [demo_root.resolve()]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"okstra-tui: notice: {remembered_path()}")


def test_the_temporary_demo_is_not_remembered(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from okstra_core.projects import remembered_roots

    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the demo is kept: not in the machine's temporary folder
    monkeypatch.setattr(cli.tempfile, "tempdir", None)
    monkeypatch.setattr(OkstraApp, "run", lambda self: None)
    assert cli.main(["--demo"]) == 0
    assert remembered_roots() == []


def test_demo_all_opens_home_on_three_fresh_projects(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--demo --all`` (``make demo``): the demo of three projects in a new temporary folder, opened on Home
    with the demo's manager home and nothing opened before, kept and named on quit."""
    from okstra_core.demo.projects import BILLING_DIR, HOME_DIR, MOBILE_DIR, SHOP_DIR
    from okstra_core.projects import discover, remember_root

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(cli.tempfile, "tempdir", None)
    monkeypatch.delenv("OKSTRA_HOME", raising=False)  # the demo sets it: put back after the test
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".okstra").mkdir(parents=True)
    remember_root(elsewhere)
    seen: dict[str, object] = {}

    def fake_run(self: OkstraApp) -> None:
        seen.update(root=self.project.root, label=self.project_label, home=os.environ["OKSTRA_HOME"])
        seen.update(start_home=self.start_home, remembered=self.remembered)
        registry = discover(Path(os.environ["OKSTRA_HOME"]), remembered=self.remembered)
        seen["projects"] = [(e.project_id, e.root.name) for e in registry.entries]

    monkeypatch.setattr(OkstraApp, "run", fake_run)
    assert cli.main(["--demo", "--all"]) == 0
    root = seen["root"]
    assert isinstance(root, Path) and root.name == SHOP_DIR and root.parent.parent == tmp_path
    base = root.parent
    assert seen["home"] == str(base / HOME_DIR)
    assert seen["start_home"] is True and seen["remembered"] is False
    assert seen["projects"] == [("demo-shop", SHOP_DIR), ("billing", BILLING_DIR), ("mobile", MOBILE_DIR)]
    assert seen["label"] == f"demo {root}", "the breadcrumbs say where the demo lies"
    assert all((base / name).is_dir() for name in (SHOP_DIR, BILLING_DIR, MOBILE_DIR, HOME_DIR))
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == (
        f"okstra-tui: the demo projects are kept at {base} (try: okstra inbox --all --home {base}/{HOME_DIR}; "
        "--discard-demo removes them)"
    )


def test_demo_all_discarded_removes_every_project(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(cli.tempfile, "tempdir", None)
    monkeypatch.delenv("OKSTRA_HOME", raising=False)
    roots: list[Path] = []
    monkeypatch.setattr(OkstraApp, "run", lambda self: roots.append(self.project.root))
    assert cli.main(["--demo", "--all", "--discard-demo"]) == 0
    assert roots and list(tmp_path.iterdir()) == []
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == (
        f"okstra-tui: the demo projects at {roots[0].parent} were removed (without --discard-demo they are kept)"
    )
