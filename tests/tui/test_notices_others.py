"""Notices from every project: a decision made in another project while the workbench shows one raises a notice
naming that project and updates Home; the open project's own decisions are told once; the follower (a child
process) ends with the workbench."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot

from okstra_core.demo.projects import BILLING_DIR, HOME_DIR, SHOP_DIR
from okstra_core.projects import ProjectEntry
from okstra_core.store import Project
from okstra_core.watch import StoreWatcher
from okstra_core.workflows.pulse import Notice
from okstra_tui.app import OkstraApp
from okstra_tui.children import child_command
from okstra_tui.notices import summary
from okstra_tui.others import OthersWatcher, notice_of, others_options
from okstra_tui.screens.home import HomeRow, HomeScreen
from okstra_tui.screens.inbox import InboxScreen
from okstra_tui.screenshots import settle
from okstra_tui.store_feed import StoreFeed

from .conftest import SIZE, wait_until

TASKS = ".okstra/tasks"
#: A billing task that waits for a clarification and, once its manifest says so, for an approval too.
BILLING_TASK = "invoices/invoice-rounding"
#: A shop task whose direction choice starts waiting when its recorded answer is removed.
SHOP_SIDECAR = "checkout/address-validation/runs/option-selection/user-responses/user-response-option-selection-001.md"


def workbench(base: Path, current: str = SHOP_DIR, *, home: bool = True) -> OkstraApp:
    """The workbench over the demo of many projects, *current* open, notices on."""
    return OkstraApp(Project(base / current), start_home=home, okstra_home=base / HOME_DIR, notify="toast")


def elsewhere(code: str) -> None:
    """Run *code* in another process, as an agent writing a store would."""
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True, timeout=120)


def ask_approval(project_root: Path, task: str) -> None:
    """An agent-like write: *task*'s manifest says it awaits approval, published by a rename."""
    elsewhere(f"""
        import json, os
        path = os.path.join({str(project_root / TASKS / task)!r}, "task-manifest.json")
        value = json.load(open(path, encoding="utf-8"))
        value["workflow"]["awaitingApproval"] = True
        with open(path + ".new", "w", encoding="utf-8") as fh:
            json.dump(value, fh)
        os.replace(path + ".new", path)
    """)


def announced(app: OkstraApp) -> list[Notice]:
    """Every notice the app announces from now on, in order."""
    seen: list[Notice] = []
    original = app.announce

    def keep(found: list[Notice]) -> None:
        seen.extend(found)
        original(found)

    app.announce = keep  # type: ignore[method-assign]
    return seen


async def following(pilot: Pilot[None], app: OkstraApp) -> OthersWatcher:
    """Wait until both the open project's notices and the follower of the others have read what there is."""
    await wait_until(pilot, lambda: app._notices is not None and app._notices.ready, "the open project watched")
    await wait_until(pilot, lambda: app._others is not None and app._others.ready, "the other projects followed")
    assert app._others is not None
    return app._others


def waiting_in(screen: HomeScreen, project_id: str) -> int | None:
    return next(row.waiting for row in screen.data.rows if row.entry.project_id == project_id)


async def test_a_decision_in_another_project_is_a_notice_naming_it_and_updates_home(
    fresh_many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Home hears of other projects through the follower alone: the feed's once-a-second look is off here.
    monkeypatch.setattr(StoreFeed, "_outside_changes", lambda self: set())
    app = workbench(fresh_many)
    seen = announced(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        others = await following(pilot, app)
        assert others.projects is not None and (fresh_many / SHOP_DIR) not in others.projects
        home = app.screen
        assert isinstance(home, HomeScreen)
        await wait_until(pilot, lambda: home.reads and waiting_in(home, "billing") is not None, "Home read")
        before = waiting_in(home, "billing")
        assert before is not None
        ask_approval(fresh_many / BILLING_DIR, BILLING_TASK)
        await wait_until(pilot, lambda: any(n.project == "billing" for n in seen), "a notice naming billing")
        (notice,) = [n for n in seen if n.project == "billing"]
        assert (notice.kind, notice.task) == ("decision", "billing:invoices:invoice-rounding")
        assert notice.text.startswith("a phase to approve: approve in the lead's session")
        assert notice.task_root == fresh_many / BILLING_DIR / TASKS / BILLING_TASK
        await wait_until(pilot, lambda: waiting_in(home, "billing") == before + 1, "Home counts billing's decision")
        toasts = [(n.title, n.message) for n in app._notifications]
        assert ("Waiting for you", f"billing · billing:invoices:invoice-rounding: {notice.text} · g opens it") in toasts
        await pilot.press("g")  # the notice's project opens, on its inbox
        await wait_until(pilot, lambda: isinstance(app.screen, InboxScreen), "billing's inbox")
        assert app.project.root == fresh_many / BILLING_DIR


async def test_any_change_in_another_project_reaches_home_through_the_one_follower(
    fresh_many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The follower is the one watcher of the other projects' stores (the feed watches none of them), and it
    tells Home of every change there, not only of decisions: a file Home read rewritten reloads Home."""
    from okstra_tui import store_feed

    made: list[Path] = []

    def watcher(root: Path, *args: object, **kwargs: object) -> StoreWatcher:
        made.append(root)
        return StoreWatcher(root, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store_feed, "StoreWatcher", watcher)
    app = workbench(fresh_many)
    told: list[frozenset[str] | None] = []
    elsewhere_changed = app._elsewhere_changed

    def tell(paths: frozenset[str] | None) -> None:
        told.append(paths)
        elsewhere_changed(paths)

    app._elsewhere_changed = tell  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await following(pilot, app)
        home = app.screen
        assert isinstance(home, HomeScreen)
        await wait_until(pilot, lambda: home.reads and waiting_in(home, "billing") is not None, "Home read")
        await wait_until(pilot, lambda: None in told, "the follower's snapshot told (Home looks again at all)")
        await settle(pilot)
        assert app._feed.watching() == 0, "no second watcher of the stores the follower watches"
        manifest = fresh_many / BILLING_DIR / TASKS / "invoices/late-fees/task-manifest.json"
        assert str(manifest) in home.depends_on
        reads = home.reads
        elsewhere(f"""
            import json, os
            path = {str(manifest)!r}
            value = json.load(open(path, encoding="utf-8"))
            value["note"] = "written by an agent"
            with open(path + ".new", "w", encoding="utf-8") as fh:
                json.dump(value, fh)
            os.replace(path + ".new", path)
        """)
        await wait_until(
            pilot,
            lambda: any(paths is not None and str(manifest) in paths for paths in told),
            "the follower told the path that changed, though no decision did",
        )
        await wait_until(pilot, lambda: home.reads > reads, "Home read again")
        assert made == [fresh_many / SHOP_DIR / ".okstra"], "the feed watched its own store alone, from the start"


async def test_the_open_project_is_told_once_and_the_follower_switches_with_it(fresh_many: Path) -> None:
    app = workbench(fresh_many, home=False)
    seen = announced(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await following(pilot, app)
        elsewhere(f"import os; os.unlink({str(fresh_many / SHOP_DIR / TASKS / SHOP_SIDECAR)!r})")
        ask_approval(fresh_many / BILLING_DIR, BILLING_TASK)
        await wait_until(pilot, lambda: any(n.project == "billing" for n in seen), "billing's notice")
        await wait_until(pilot, lambda: any(n.project is None for n in seen), "shop's own notice")
        await settle(pilot)
        shop = [n for n in seen if n.task == "demo-shop:checkout:address-validation"]
        assert [(n.kind, n.project) for n in shop] == [("decision", None)], "told once, by the open project's watcher"

        # Opened from Home, billing is followed no more: shop is.
        app.open_project(fresh_many / BILLING_DIR)
        await settle(pilot)
        others = await following(pilot, app)
        assert others.projects is not None
        assert fresh_many / BILLING_DIR not in others.projects and fresh_many / SHOP_DIR in others.projects
        seen.clear()
        ask_approval(fresh_many / BILLING_DIR, "invoices/late-fees")  # awaits approval already: no news
        ask_approval(fresh_many / SHOP_DIR, "search/stale-cache")
        await wait_until(pilot, lambda: any(n.project == "demo-shop" for n in seen), "shop's notice, naming it")
        assert [(n.project, n.task) for n in seen] == [("demo-shop", "demo-shop:search:stale-cache")]


async def test_the_follower_ends_with_the_workbench(fresh_many: Path) -> None:
    app = workbench(fresh_many)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        others = await following(pilot, app)
        child = others._child
        assert child is not None and child.poll() is None
    assert child.poll() is not None


def test_a_follower_whose_workbench_is_gone_ends(many_root: Path) -> None:
    """Started for a parent it does not have (its workbench ended, however), the follower ends unread."""
    command = child_command("others", many_root / SHOP_DIR, "--home", str(many_root / HOME_DIR))
    command[command.index(str(os.getpid()))] = "1"
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == ""


def test_the_follower_skips_the_open_project_and_names_the_others(many_root: Path) -> None:
    """The child's first line is the snapshot of every other project; with none left, it says so and ends."""
    shop = many_root / SHOP_DIR
    options = others_options(many_root / HOME_DIR, (), remembered=False)
    with subprocess.Popen(child_command("others", shop, *options), stdout=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None
        first = json.loads(child.stdout.readline())
        child.kill()
    assert first["event"] == "snapshot"
    assert {p["project"] for p in first["projects"]} == {"billing", "mobile"}
    alone = others_options(many_root / "no-home", (), remembered=False)
    done = subprocess.run(child_command("others", shop, *alone), capture_output=True, text=True, timeout=60)
    assert (done.returncode, json.loads(done.stdout)) == (0, {"event": "none"})


def test_a_follower_line_becomes_a_notice_only_when_it_is_one() -> None:
    item = {
        "kind": "approval",
        "task": "billing:invoices:late\x1b[2J",
        "path": ".okstra/tasks/invoices/late/task-manifest.json",
        "item": None,
        "summary": "approve\x07 it",
        "project": "bill\x1bing",
        "projectRoot": "/p/billing",
    }
    notice = notice_of(item)
    assert notice is not None
    assert "\x1b" not in notice.task + notice.text + (notice.project or "") and "\x07" not in notice.text
    assert notice.text.startswith("a phase to approve: approve")
    assert notice.task_root == Path("/p/billing/.okstra/tasks/invoices/late")
    assert notice_of({**item, "path": "../../elsewhere/x"}) is not None
    assert notice_of({**item, "path": "../../elsewhere/x"}).task_root is None  # type: ignore[union-attr]
    for broken in ({**item, "summary": 7}, {**item, "item": ["x"]}, "not an item", None):
        assert notice_of(broken) is None


def test_a_burst_from_several_projects_names_them() -> None:
    found = [
        Notice("decision", "b:g:a", "", None, project="billing"),
        Notice("decision", "m:g:a", "", None, project="mobile"),
        Notice("decision", "m:g:b", "", None, project="mobile"),
    ]
    assert summary(found) == "3 decisions waiting in 3 tasks (billing, mobile)"


def test_the_feed_leaves_the_followed_stores_to_the_follower(many_root: Path, tmp_path: Path) -> None:
    """What Home read in another project's store is looked at once a second by the feed only while no follower
    watches that store: with one, the follower's lines tell Home, and the feed's look costs nothing there."""
    from okstra_core import layout
    from okstra_core.watch import signature

    other = tmp_path / "billing"
    store = layout.okstra_dir(other)
    store.mkdir(parents=True)
    read = store / "read-by-home.json"
    read.write_text("1", encoding="utf-8")
    os.utime(read, ns=(1_000_000_000, 1_000_000_000))
    feed = StoreFeed(many_root / SHOP_DIR, lambda paths: None)
    feed.follow("home", signature([read]))

    def change(text: str) -> None:
        read.write_text(text, encoding="utf-8")
        os.utime(read, ns=(len(text) * 2_000_000_000, len(text) * 2_000_000_000))

    change("22")
    assert feed._outside_changes() == {str(read)}
    feed.leave_to([store])
    change("333")
    assert feed._outside_changes() == set()
    feed.leave_to([])
    assert feed._outside_changes() == {str(read)}, "looked at again, against what was seen before"


async def test_a_project_registered_meanwhile_is_followed_once_home_lists_it(fresh_many: Path, tmp_path: Path) -> None:
    import shutil

    from okstra_core.projects import remember_root

    extra = tmp_path / "extra"
    shutil.copytree(fresh_many / BILLING_DIR, extra, symlinks=True)
    app = workbench(fresh_many)
    seen = announced(app)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = await following(pilot, app)
        assert first.projects is not None and extra not in first.projects
        remember_root(extra)  # opened in another workbench: Home lists it, and the follower follows it from then on
        await wait_until(
            pilot,
            lambda: app._others is not None and app._others.ready and extra in (app._others.projects or ()),
            "the new project followed",
        )
        assert app._others is not first and first._child is not None and first._child.poll() is not None
        ask_approval(extra, BILLING_TASK)
        await wait_until(pilot, lambda: any(n.project_root == extra for n in seen), "a notice from the new project")


async def test_notify_off_follows_no_other_project(fresh_many: Path) -> None:
    app = OkstraApp(Project(fresh_many / SHOP_DIR), start_home=True, okstra_home=fresh_many / HOME_DIR, notify="off")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app._others is None and app._notices is None


def test_the_followers_lines_are_read_whole_and_a_burst_is_one_announcement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines cut across reads are joined; lines that come together are handed over together, once; what is not
    a line of the follower is skipped."""
    from okstra_tui import others

    monkeypatch.setattr(others, "READ_BYTES", 10)  # every line comes in many pieces
    monkeypatch.setattr(others, "GATHER_MOST_SECONDS", 3600.0)  # however slow the machine, one burst
    delivered: list[list[Notice]] = []
    changed: list[frozenset[str] | None] = []
    watcher = OthersWatcher(tmp_path, [], delivered.append, changed.append)

    def added(task: str) -> bytes:
        path = f"{task}.md"
        item = {"kind": "approval", "task": task, "path": path, "item": None, "summary": "s", "project": "b"}
        return json.dumps({"event": "added", "item": {**item, "projectRoot": "/p/b"}}).encode() + b"\n"

    read, write = os.pipe()
    data = added("b:g:one") + b"not json\n" + json.dumps(["an", "array"]).encode() + b"\n" + added("b:g:two")
    os.write(write, data)
    os.close(write)
    watcher._read(read)
    os.close(read)
    assert [[n.task for n in found] for found in delivered] == [["b:g:one", "b:g:two"]]
    assert changed == [], "what changed is told by the follower's changed lines, not by its decisions'"


def _lines(*values: object) -> bytes:
    return b"".join(json.dumps(v).encode() + b"\n" for v in values)


def _read_burst(watcher: OthersWatcher, data: bytes) -> None:
    read, write = os.pipe()
    os.write(write, data)
    os.close(write)
    watcher._read(read)
    os.close(read)


def test_the_followers_changed_lines_name_the_paths_each_view_looks_at_again(tmp_path: Path) -> None:
    """A burst's ``changed`` lines are handed over as the union of their paths; one that cannot say which paths
    (or a line about a whole project) makes it "everything"."""
    changed: list[frozenset[str] | None] = []
    watcher = OthersWatcher(tmp_path, [], lambda found: None, changed.append)
    _read_burst(
        watcher,
        _lines({"event": "changed", "paths": ["/p/b/.okstra/x"]}, {"event": "changed", "paths": ["/p/c/.okstra/y"]}),
    )
    assert changed == [frozenset({"/p/b/.okstra/x", "/p/c/.okstra/y"})]
    changed.clear()
    _read_burst(watcher, _lines({"event": "changed", "paths": ["/p/b/.okstra/x"]}, {"event": "changed", "paths": None}))
    assert changed == [None]
    changed.clear()
    _read_burst(watcher, _lines({"event": "project", "project": "b"}, {"event": "changed", "paths": ["/p/b/z"]}))
    assert changed == [None]


def test_the_follower_is_left_the_projects_it_does_not_poll(tmp_path: Path) -> None:
    """The snapshot names the projects followed and those polled: the feed is left only the others (a polling
    follower sees only what the inbox reads, so what else views read there is the feed's to look at)."""
    following: list[frozenset[Path]] = []
    watcher = OthersWatcher(tmp_path, [], lambda found: None, lambda paths: None, following.append)
    projects = [{"project": "b", "projectRoot": "/p/b"}, {"project": "c", "projectRoot": "/p/c"}]
    _read_burst(watcher, _lines({"event": "snapshot", "projects": projects, "polled": ["/p/c"]}))
    assert watcher.projects == {Path("/p/b"), Path("/p/c")}
    assert following == [frozenset({Path("/p/b")})]


def test_a_change_in_one_project_reads_that_project_again_alone(
    fresh_many: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Home keeps each project's row with what it was read from: a change told by its paths reads again only the
    projects those touch (a file added to a folder it listed too); a change that cannot be named looks at every
    path read, and reads again the projects whose paths changed."""
    from okstra_tui.screens import home as home_module

    read_roots: list[Path] = []
    waiting_row = home_module.waiting_row

    def counted(entry: ProjectEntry) -> tuple[HomeRow, object]:
        read_roots.append(entry.root)
        return waiting_row(entry)

    monkeypatch.setattr(home_module, "waiting_row", counted)
    home = fresh_many / HOME_DIR

    def read(previous: home_module.Kept | None, changed: frozenset[str] | None) -> home_module.HomeData:
        read_roots.clear()
        return home_module.read_home(home, (), False, previous=previous, changed=changed)

    first = read(None, None)
    assert first.kept is not None
    readable = {row.entry.root for row in first.rows if row.entry.readable}
    assert len(readable) == 3 and set(read_roots) == readable
    waiting = {row.entry.project_id: row.waiting for row in first.rows}

    manifest = fresh_many / BILLING_DIR / TASKS / BILLING_TASK / "task-manifest.json"
    ask_approval(fresh_many / BILLING_DIR, BILLING_TASK)
    time.sleep(0.1)  # past the racy window: what was just written is read as settled (else it is read again)
    second = read(first.kept, frozenset({str(manifest)}))
    assert read_roots == [fresh_many / BILLING_DIR], "the other projects' rows stand"
    assert {row.entry.project_id: row.waiting for row in second.rows} == {**waiting, "billing": waiting["billing"] + 1}
    assert second.kept is not None

    assert read(second.kept, frozenset({str(fresh_many / "elsewhere.txt")})).rows == second.rows
    assert read_roots == [], "a change no project read reads none again"

    added = fresh_many / SHOP_DIR / TASKS / "checkout" / "a-new-task"
    added.mkdir()
    time.sleep(0.1)
    read(second.kept, frozenset({str(added)}))
    assert read_roots == [fresh_many / SHOP_DIR], "a folder the project listed gained an entry"

    # A change that cannot be named: every path each row was read from is looked at, and only the project whose
    # paths changed (shop's listing, since second) is read again.
    third = read(second.kept, None)
    assert read_roots == [fresh_many / SHOP_DIR]
    assert third.rows == read(None, None).rows
    read(third.kept, None)
    assert read_roots == [], "nothing changed: every row stands"


def test_home_keeps_a_bounded_record_of_the_changes_told() -> None:
    """Changes told while Home does not read (it is hidden) are kept up to a bound; past it, they become one
    "everything", which reads every project again."""
    from okstra_tui.screens.home import CHANGES_KEPT, HomeScreen

    screen = HomeScreen()
    for n in range(CHANGES_KEPT):
        screen.paths_changed(frozenset({f"/p/{n}"}))
    assert len(screen._changes) == CHANGES_KEPT and all(paths is not None for _, paths in screen._changes)
    screen.paths_changed(frozenset({"/p/more"}))
    assert screen._changes == [(CHANGES_KEPT + 1, None)]
    screen.paths_changed(frozenset({"/p/after"}))
    assert len(screen._changes) == 2


def test_a_follower_that_cannot_start_gives_the_other_stores_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The feed leaves the other stores to the follower from the start; a follower whose process cannot be
    started says it follows none, so the feed watches them itself again."""
    from okstra_tui import others as others_module

    monkeypatch.setattr(others_module, "child_command", lambda *args: [str(tmp_path / "no-such-program")])
    followed: list[frozenset[Path]] = []
    watcher = OthersWatcher(tmp_path, [], lambda found: None, lambda paths: None, followed.append)
    watcher.start()
    assert followed == [frozenset()]
    watcher.close()


def test_a_row_keeps_the_metadata_its_count_was_read_with(fresh_many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A path the count read and the other columns read again after it changed is recorded as the count saw it
    (the first look wins): the row is then read again at the next look, not kept with a count of the past."""
    from okstra_core import reading
    from okstra_tui.screens import home as home_module

    manifest = str(fresh_many / BILLING_DIR / TASKS / BILLING_TASK / "task-manifest.json")
    completed_row = home_module.completed_row
    later = (1, 2, 3, 4)  # the metadata a later look of the same path found

    def looked_again(row: HomeRow, got: object) -> HomeRow:
        reading.note_reads({manifest: later})
        return completed_row(row, got)  # type: ignore[arg-type]

    monkeypatch.setattr(home_module, "completed_row", looked_again)
    first = home_module.read_home(fresh_many / HOME_DIR, (), False)
    assert first.kept is not None
    recorded = first.kept[fresh_many / BILLING_DIR][1]
    assert manifest in recorded and recorded[manifest] != later
