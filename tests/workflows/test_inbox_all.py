"""``okstra inbox --all``, ``okstra search --all``, ``okstra stats --all`` over the demo of many projects."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from okstra_core import layout, projects
from okstra_core.demo.projects import BILLING_DIR, HOME_DIR, MOBILE_DIR, SHOP_DIR
from okstra_core.workflows.inbox_all import read_all_inboxes

from .helpers import okstra

PROJECTS = {"demo-shop": SHOP_DIR, "billing": BILLING_DIR, "mobile": MOBILE_DIR}


def _home(base: Path) -> str:
    return str(base / HOME_DIR)


def _all(capsys: pytest.CaptureFixture[str], verb: str, base: Path, *extra: str) -> Any:
    result = okstra(capsys, verb, "--all", "--home", _home(base), "--json", *extra)
    return result.code, json.loads(result.out), result.err


def _with_project(item: dict[str, Any], project: str, root: Path) -> dict[str, Any]:
    return {**item, "project": project, "projectRoot": str(root.resolve())}


def test_inbox_all_is_the_union_of_every_projects_inbox(many_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, err = _all(capsys, "inbox", many_root)
    assert (code, err) == (0, "")
    union = []
    for project, folder in PROJECTS.items():
        one = okstra(capsys, "inbox", many_root / folder, "--json")
        assert one.code == 0
        union += [_with_project(i, project, many_root / folder) for i in json.loads(one.out)["items"]]
    assert doc["items"] == union
    assert {i["project"] for i in doc["items"]} == set(PROJECTS), "decisions wait in every project"
    assert [(p["project"], p["read"], p["health"]) for p in doc["projects"]] == [(p, True, "ok") for p in PROJECTS]
    assert doc["unreadable"] == 0


def test_inbox_all_without_the_index_gives_the_same_bytes(many_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cached = okstra(capsys, "inbox", "--all", "--home", _home(many_root), "--json").out
    assert okstra(capsys, "inbox", "--all", "--home", _home(many_root), "--json").out == cached
    assert okstra(capsys, "inbox", "--all", "--home", _home(many_root), "--json", "--no-cache").out == cached


@pytest.mark.parametrize("form", [(), ("--json",)])
def test_inbox_all_prints_fresh_kept_inboxes_without_building_a_decision(
    many_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, form: tuple[str, ...]
) -> None:
    """Each project's inbox its store index keeps fresh is printed from its rows, as ``okstra inbox`` prints one:
    the same bytes as a reading without the index, no decision built."""
    from okstra_core.workflows import inbox as inbox_module

    args = ("inbox", "--all", "--home", _home(many_root), *form)
    fresh = okstra(capsys, *args, "--no-cache")
    okstra(capsys, *args)  # the indexes keep every project's inbox

    def built(*_: object) -> None:
        raise AssertionError("a decision was built")

    monkeypatch.setattr(inbox_module, "_decode_decision", built)
    kept = okstra(capsys, *args)
    assert (kept.code, kept.out, kept.err) == (fresh.code, fresh.out, fresh.err)
    assert kept.code == 0 and ("waiting in 3 projects" in kept.out if not form else json.loads(kept.out)["items"])


def test_project_narrows_the_projects(many_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, doc, _ = _all(capsys, "inbox", many_root, "--project", "mobile", "--project", "billing")
    assert [p["project"] for p in doc["projects"]] == ["billing", "mobile"], "registry order"
    assert {i["project"] for i in doc["items"]} == {"billing", "mobile"}


def test_an_unknown_project_is_a_usage_error(many_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        okstra(capsys, "inbox", "--all", "--home", _home(many_root), "--project", "nope")
    assert caught.value.code == 2
    assert capsys.readouterr() == ("", "okstra inbox: no project 'nope' (the projects: demo-shop, billing, mobile)\n")


@pytest.mark.parametrize(
    "argv",
    [["--project", "x"], ["--root", "/"], ["--home", "/"]],
)
def test_the_all_options_need_all(many_root: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        okstra(capsys, "inbox", many_root / SHOP_DIR, *argv)
    assert caught.value.code == 2
    assert "go with --all" in capsys.readouterr().err


def test_text_groups_by_project(many_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = okstra(capsys, "inbox", "--all", "--home", _home(many_root))
    assert result.code == 0
    headers = [line for line in result.out.splitlines() if line and not line.startswith(" ")]
    roots = [str((many_root / folder).resolve()) for folder in PROJECTS.values()]
    assert headers[:3] == [f"{p}  {r}" for p, r in zip(PROJECTS, roots, strict=True)]
    assert headers[3] == "11 decisions waiting in 3 projects of 3 read"


def test_roots_given_with_root_join_the_projects(
    many_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = okstra(capsys, "inbox", "--all", "--home", str(tmp_path), "--root", many_root / BILLING_DIR, "--json")
    doc = json.loads(result.out)
    (project,) = doc["projects"]
    assert project["sources"] == [{"kind": "named", "where": "command line", "given": str(many_root / BILLING_DIR)}]
    assert {i["projectRoot"] for i in doc["items"]} == {str((many_root / BILLING_DIR).resolve())}


def _break(base: Path, tmp_path: Path) -> Path:
    """Register, beside the three projects, a missing root, a FIFO and a folder with no store."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "plain").mkdir()
    path = base / HOME_DIR / layout.MANAGERS_DIR / "platform" / layout.MANAGER_PROJECTS
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["projects"] += [
        {"projectId": "gone", "projectRoot": str(tmp_path / "gone")},
        {"projectId": "pipe", "projectRoot": str(fifo)},
        {"projectId": "plain", "projectRoot": str(tmp_path / "plain")},
    ]
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize("verb", ["inbox", "search", "stats"])
def test_each_broken_root_is_one_line_and_the_rest_is_read(
    fresh_many: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], verb: str
) -> None:
    _break(fresh_many, tmp_path)
    query = ["invoice"] if verb == "search" else []
    code, doc, err = _all(capsys, verb, fresh_many, *query)
    lines = err.splitlines()
    assert len(lines) == 3, err
    assert lines[0] == f"okstra {verb}: project 'gone' ({tmp_path / 'gone'}): the root does not exist"
    assert lines[1] == f"okstra {verb}: project 'pipe' ({tmp_path / 'fifo'}): the root is a FIFO, not a folder"
    assert lines[2] == f"okstra {verb}: project 'plain' ({tmp_path / 'plain'}): no .okstra/ store in this folder"
    read = {p["project"]: p["read"] for p in doc["projects"]}
    assert read == {"demo-shop": True, "billing": True, "mobile": True, "gone": False, "pipe": False, "plain": False}
    unread = [p for p in doc["projects"] if not p["read"]]
    assert all(p["problem"] and "\n" not in p["problem"] for p in unread)
    assert code == (0 if verb == "search" else 1), "search exits on its hits; inbox and stats on completeness"


def test_a_root_that_disappears_after_the_registry_looked(fresh_many: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry = projects.discover(fresh_many / HOME_DIR, remembered=False)
    shutil.rmtree(fresh_many / MOBILE_DIR)
    inboxes = read_all_inboxes(registry.entries)
    gone = next(pi for pi in inboxes if pi.entry.project_id == "mobile")
    assert gone.inbox is None and gone.problem is not None
    assert (
        gone.problem.startswith(str(fresh_many / MOBILE_DIR))
        and "it was there when the projects were listed" in gone.problem
    )
    assert all(pi.inbox is not None for pi in inboxes if pi is not gone)


def test_a_root_replaced_by_a_symlink_after_the_look_is_not_followed(fresh_many: Path, tmp_path: Path) -> None:
    registry = projects.discover(fresh_many / HOME_DIR, remembered=False)
    elsewhere = tmp_path / "elsewhere"
    (fresh_many / MOBILE_DIR).rename(elsewhere)
    (fresh_many / MOBILE_DIR).symlink_to(elsewhere)
    mobile = read_all_inboxes([registry.find("mobile")])[0]  # type: ignore[list-item]
    assert mobile.inbox is None and mobile.problem == f"{fresh_many / MOBILE_DIR}: now leads to {elsewhere}; not read"


def _hits(doc: dict[str, Any]) -> list[tuple[str, ...]]:
    return sorted(
        (h["project"], h["projectRoot"], h["path"], h["kind"], str(h["label"]), h["snippet"]) for h in doc["hits"]
    )


def test_search_all_is_the_union_of_every_projects_search(many_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, _ = _all(capsys, "search", many_root, "--limit", "1000", "-q", "clarification OR invoice OR cart")
    assert code == 0
    union: list[dict[str, Any]] = []
    totals = 0
    for project, folder in PROJECTS.items():
        one = okstra(
            capsys, "search", many_root / folder, "clarification OR invoice OR cart", "--limit", "1000", "-q", "--json"
        )
        single = json.loads(one.out)
        totals += single["total"]
        union += [_with_project(h, project, many_root / folder) for h in single["hits"]]
    assert _hits(doc) == _hits({"hits": union})
    assert doc["total"] == totals and {h["project"] for h in doc["hits"]} == set(PROJECTS)
    scores = [h["score"] for h in doc["hits"]]
    assert scores == sorted(scores), "best first across the projects"


def test_search_all_keeps_the_best_hits_within_the_limit(many_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, every, _ = _all(capsys, "search", many_root, "--limit", "1000", "-q", "invoice")
    _, best, _ = _all(capsys, "search", many_root, "--limit", "3", "-q", "invoice")
    assert best["hits"] == every["hits"][:3] and best["total"] == every["total"]


def test_stats_all_breaks_down_per_project(many_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc, _ = _all(capsys, "stats", many_root)
    assert code == 0
    for entry, folder in zip(doc["projects"], PROJECTS.values(), strict=True):
        single = json.loads(okstra(capsys, "stats", many_root / folder, "--json").out)
        assert entry["stats"] == single
    assert doc["tasks"] == sum(p["stats"]["tasks"] for p in doc["projects"])
    assert doc["runs"] == sum(p["stats"]["runs"] for p in doc["projects"])
    text = okstra(capsys, "stats", "--all", "--home", _home(many_root)).out
    table = text.split("\n\n")[0].splitlines()
    assert table[0] == "Projects" and [row.split()[0] for row in table[2:]] == list(PROJECTS)
    assert text.count("\n== ") + text.startswith("== ") == 3


def _bytes_and_times(base: Path) -> dict[str, tuple[bytes | None, int]]:
    out: dict[str, tuple[bytes | None, int]] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            out[path] = (None if name in dirnames else Path(path).read_bytes(), st.st_mtime_ns)
    return out


def test_looking_changes_no_store_and_no_manager_home(many_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from okstra_core.manager_home import list_managers
    from okstra_core.workflows.manager_live import live_task

    before = _bytes_and_times(many_root)
    for verb, extra in (("inbox", []), ("search", ["-q", "invoice"]), ("stats", [])):
        okstra(capsys, verb, "--all", "--home", _home(many_root), *extra)
        okstra(capsys, verb, "--all", "--home", _home(many_root), "--json", *extra)
    for manager in list_managers(many_root / HOME_DIR):
        for task in manager.tasks():
            live_task(manager, task)
    assert _bytes_and_times(many_root) == before


def test_inbox_all_reads_again_a_project_changed_since_its_inbox_was_kept(
    fresh_many: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A project whose inbox changed after its index kept it is read again, never printed as kept."""
    args = ("inbox", "--all", "--home", _home(fresh_many), "--json")
    before = okstra(capsys, *args).out
    assert okstra(capsys, *args).out == before  # printed from the kept rows
    shop = fresh_many / SHOP_DIR
    assert okstra(capsys, "planning", "prepare", shop, "--task", "demo-shop:checkout:address-validation").code == 0
    after = okstra(capsys, *args).out
    assert after != before
    assert after == okstra(capsys, *args, "--no-cache").out
