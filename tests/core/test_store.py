"""The read side is lazy and reports bad files as values."""

from __future__ import annotations

from pathlib import Path

import pytest

from okstra_core import reading
from okstra_core.errors import LoadError
from okstra_core.store import Project, RunDir


def test_opening_a_task_reads_only_its_manifest(demo_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real = reading.read_bytes

    def spy(path: Path, **kwargs: object) -> object:
        opened.append(Path(path).name)
        return real(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(reading, "read_bytes", spy)
    project = Project.open(demo_root)
    assert isinstance(project, Project)
    assert opened == []
    task = project.find_task("demo-shop:payments:retry-policy")
    assert task is not None
    assert opened == ["task-catalog.json"]
    assert not isinstance(task.manifest, LoadError)
    runs = task.run_dirs
    listing = [a for rd in runs for a in rd.artifacts()]
    assert len(listing) > 100
    assert opened == ["task-catalog.json", "task-manifest.json"]  # listings, not file contents
    listing[0].load()
    assert len(opened) == 3


def test_run_dirs_by_type_and_stage(demo_root: Path) -> None:
    project = Project.open(demo_root)
    assert isinstance(project, Project)
    task = project.find_task("payments/retry-policy")
    assert task is not None
    labels = [rd.label for rd in task.run_dirs]
    assert "implementation / stage-2" in labels and "final-verification" in labels
    stale = project.find_task("stale-cache")
    assert stale is not None
    assert [rd.label for rd in stale.run_dirs] == ["final-verification / stage-1"]
    rd = task.run_dir("analysis")
    assert rd is not None
    reports = rd.of_kind("final-report-data")
    assert [a.seq for a in reports] == [1, 2]
    assert rd.latest("final-report-data") == reports[-1]


def test_broken_files_come_back_as_errors(fresh_demo: Path) -> None:
    task_root = fresh_demo / ".okstra" / "tasks" / "payments" / "retry-policy"
    (task_root / "task-manifest.json").write_text("{broken")
    rd = task_root / "runs" / "analysis"
    (rd / "state" / "team-state-analysis-001.json").unlink()
    (rd / "state" / "team-state-analysis-001.json").symlink_to(rd / "state" / "missing.json")
    project = Project.open(fresh_demo)
    assert isinstance(project, Project)
    task = project.find_task("demo-shop:payments:retry-policy")
    assert task is not None
    assert isinstance(task.manifest, LoadError) and "invalid JSON" in task.manifest.reason
    run = task.run_dir("analysis")
    assert run is not None
    state = run.of_kind("team-state")[0].load()
    assert isinstance(state, LoadError) and "dangling symlink" in state.reason


def test_missing_store_and_uncatalogued_tasks(tmp_path: Path, fresh_demo: Path) -> None:
    assert isinstance(Project.open(tmp_path / "nope"), LoadError)
    assert "no .okstra" in str(Project.open(tmp_path))
    stray = fresh_demo / ".okstra" / "tasks" / "misc" / "stray"
    stray.mkdir(parents=True)
    project = Project.open(fresh_demo)
    assert isinstance(project, Project)
    refs = [r for r in project.task_refs if not r.catalogued]
    assert [r.task_id for r in refs] == ["stray"]
    assert isinstance(refs[0].open().manifest, LoadError)


def _retry_policy_analysis(root: Path) -> RunDir:
    """The demo's analysis run dir with two executions."""
    project = Project.open(root)
    assert isinstance(project, Project)
    task = project.find_task("demo-shop:payments:retry-policy")
    assert task is not None
    rd = task.run_dir("analysis")
    assert rd is not None
    return rd


def test_executions_group_files_across_categories(demo_root: Path) -> None:
    rd = _retry_policy_analysis(demo_root)
    first, second = rd.executions()
    assert first.segment < second.segment
    names_first = {a.name.filename for a in first.artifacts}
    assert "run-manifest-analysis-001.json" in names_first and "final-report-analysis-001.data.json" in names_first
    assert "run-manifest-analysis-002.json" not in names_first
    assert {a.name.filename for a in second.artifacts} >= {"team-state-analysis-002.json", "final-analysis-002.status"}
    # Every JSON file of an execution that records a segment records the same one.
    for execution in (first, second):
        for art in execution.artifacts:
            loaded = art.load()
            segment = getattr(loaded, "run_date_time_segment", None) or getattr(
                getattr(loaded, "identity", None), "run_date_time_segment", None
            )
            if segment is not None:
                assert segment == execution.segment, art.path


@pytest.mark.parametrize(
    "hint",
    ["\u00b2", "\u0663", "9" * 5000, "", "-1"],
    ids=["superscript", "arabic-indic", "5000-digits", "empty", "minus"],
)
def test_a_seq_hint_that_is_no_number_is_ignored(fresh_demo: Path, hint: str) -> None:
    """A run context's ``pathHints.seqs`` is what an agent wrote: superscript digits or 5,000 of them are no seq."""
    import json

    def grouping() -> list[tuple[str, list[str]]]:
        return [(e.segment, sorted(a.name.filename for a in e.artifacts)) for e in rd.executions()]

    rd = _retry_policy_analysis(fresh_demo)
    before = grouping()
    context = next((rd.path / "manifests").glob("run-context-analysis-*.json"))
    value = json.loads(context.read_text(encoding="utf-8"))
    # A category this execution has no seq for, so that the hint is read (a hint never overrides a file's seq).
    value["pathHints"]["seqs"]["sessions-extra"] = hint
    context.write_text(json.dumps(value), encoding="utf-8")
    rd = _retry_policy_analysis(fresh_demo)
    assert grouping() == before and len(before) == 2


def test_one_category_is_listed_alone_and_agrees_with_the_whole(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asking for one kind lists its category folder only; the whole listing later holds the same artifacts."""
    import os

    from okstra_core import layout, names

    project = Project.open(demo_root)
    assert isinstance(project, Project)
    task = project.find_task("demo-shop:payments:retry-policy")
    assert task is not None
    listed: list[str] = []
    real = os.listdir

    def spy(path: object) -> list[str]:
        listed.append(Path(str(path)).name)
        return real(path)  # type: ignore[arg-type]

    for rd in task.run_dirs:
        monkeypatch.setattr(os, "listdir", spy)
        reports = rd.of_kind("final-report-data")
        monkeypatch.setattr(os, "listdir", real)
        assert listed == ["reports"]
        listed.clear()
        fresh = task.ref.open().run_dir(rd.task_type, rd.stage)
        assert fresh is not None
        everything = fresh.artifacts()
        assert [a.path for a in reports] == [a.path for a in everything if a.kind == "final-report-data"]
        assert [a.path for a in rd.artifacts()] == [a.path for a in everything]
        for category in layout.RUN_CATEGORIES:
            assert [a.path for a in rd.artifacts(category)] == [a.path for a in everything if a.category == category]
        for kind in {a.kind for a in everything}:
            assert names.KINDS_BY_NAME[kind].category in layout.RUN_CATEGORIES
            assert [a.path for a in rd.of_kind(kind)] == [a.path for a in everything if a.kind == kind]


def test_a_run_dir_lists_only_the_category_folders_it_holds(fresh_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole listing lists the run dir once and each category folder in it; one it lacks lists as empty, and
    a category name that is a file holds nothing."""
    import os

    from okstra_core import layout

    project = Project.open(fresh_demo)
    assert isinstance(project, Project)
    task = project.find_task("demo-shop:payments:retry-policy")
    assert task is not None
    for rd in task.run_dirs:
        held = sorted(c for c in layout.RUN_CATEGORIES if (rd.path / c).is_dir())
        assert held and len(held) < len(layout.RUN_CATEGORIES)
        absent = next(c for c in layout.RUN_CATEGORIES if not (rd.path / c).exists())
        (rd.path / absent).write_text("a file where a folder would be\n", encoding="utf-8")
        listed: list[str] = []
        real = os.listdir

        def spy(path: object, _real: object = real, _listed: list[str] = listed) -> list[str]:
            _listed.append(os.fspath(path))  # type: ignore[arg-type]
            return _real(path)  # type: ignore[operator, no-any-return]

        fresh = task.ref.open().run_dir(rd.task_type, rd.stage)
        assert fresh is not None
        monkeypatch.setattr(os, "listdir", spy)
        artifacts = fresh.artifacts()
        monkeypatch.setattr(os, "listdir", real)
        assert {a.category for a in artifacts} <= set(held)
        assert fresh.artifacts(absent) == []
        # The run dir itself, each folder it holds and the file named as one (which lists as empty).
        assert sorted(listed) == sorted([str(rd.path), *(str(rd.path / c) for c in [*held, absent])])


def test_a_run_dir_that_cannot_be_listed_lists_each_category_folder(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run dir whose own listing is refused (read permission gone, the folder still enterable) is recorded as
    unlistable, and its category folders are listed one by one, as a reader that cannot list it still finds
    them."""
    import os

    project = Project.open(fresh_demo)
    assert isinstance(project, Project)
    task = project.find_task("demo-shop:payments:retry-policy")
    assert task is not None
    expected = {(rd.task_type, rd.stage): [a.path for a in rd.artifacts()] for rd in task.run_dirs}
    assert any(expected.values())
    fresh = task.ref.open()
    real = os.listdir
    refused = {os.fspath(rd.path) for rd in fresh.run_dirs}

    def refusing(path: object) -> list[str]:
        if os.fspath(path) in refused:  # type: ignore[call-overload]
            raise PermissionError(13, "Permission denied")
        return real(path)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(os, "listdir", refusing)
    for rd in fresh.run_dirs:
        assert [a.path for a in rd.artifacts()] == expected[(rd.task_type, rd.stage)]
        assert rd.path in fresh.project.unlisted
