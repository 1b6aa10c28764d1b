"""The activity and now-running views: open from anywhere, show the store's events and runs, jump on Enter."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from okstra_tui.screens.activity import ActivityScreen
from okstra_tui.screens.running import RunningScreen, WorkerRow, age
from okstra_tui.screens.runs import RunsScreen
from okstra_tui.screenshots import settle

from .conftest import SIZE, make_app, open_view, wait_until


async def test_activity_opens_with_A_and_enter_opens_the_events_file(fresh_demo: Path) -> None:
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(pilot, "A", ActivityScreen)
        await wait_until(pilot, lambda: screen.events is not None, "the events read")
        assert screen.events and screen.table.current_row is screen.events[0]
        first = screen.events[0]
        assert first.kind == "run-completed" and first.task == "demo-shop:checkout:fraud-rules"
        await pilot.press("w")  # since you last looked: the first launch looked at nothing yet
        await settle(pilot)
        await wait_until(pilot, lambda: screen.window == 1, "the window changed")
        await pilot.press("w")  # today: the demo's story is weeks old
        await settle(pilot)
        await wait_until(pilot, lambda: screen.events == [], "nothing today")
        await pilot.press("w", "w")  # everything again
        await settle(pilot)
        await wait_until(pilot, lambda: bool(screen.events), "every event again")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)


async def test_now_running_marks_a_quiet_run_stalled_by_the_views_clock(fresh_demo: Path) -> None:
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(pilot, "N", RunningScreen)
        await wait_until(pilot, lambda: screen.runs is not None, "the runs read")
        (run,) = screen.runs or []
        assert run.last_write is not None
        screen.fixed_now = run.last_write + dt.timedelta(minutes=10)
        screen.refresh_ages()
        assert screen._cells(run)[4].plain == "prepared"
        screen.fixed_now = run.last_write + dt.timedelta(minutes=16)
        screen.refresh_ages()
        assert screen._cells(run)[4].plain == "STALLED"
        await pilot.press("t")  # 30 minutes
        assert screen.threshold == 30 and screen._cells(run)[4].plain == "prepared"
        workers = [r for r in screen.table.rows if isinstance(r, WorkerRow)]
        assert [w.worker.worker_id for w in workers] == ["claude-verifier", "codex-executor", "probe"]
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)


def test_ages_are_short() -> None:
    assert [age(dt.timedelta(seconds=s)) for s in (5, 125, 3 * 3600 + 300, 50 * 3600)] == [
        "5s",
        "2m",
        "3h 05m",
        "2d 02h",
    ]
    assert age(None) == "-"


async def test_since_you_last_looked_shows_only_what_came_after_the_last_look(fresh_demo: Path) -> None:
    """With an earlier look on record, the window holds the events after it, not everything."""
    from okstra_core.store import Project
    from okstra_core.workflows.activity import activity
    from okstra_tui.data import seen

    everything = activity(Project(fresh_demo))
    looked = everything[len(everything) // 2].at + dt.timedelta(seconds=1)
    after = activity(Project(fresh_demo), looked)
    assert 0 < len(after) < len(everything)
    roots = sorted(p.parent for p in (fresh_demo / ".okstra/tasks").glob("*/*/task-manifest.json"))
    seen.mark_seen(fresh_demo, seen.signatures(fresh_demo, roots), now=looked, replace_all=True)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_view(pilot, "A", ActivityScreen)
        await wait_until(pilot, lambda: screen.events is not None, "the events read")
        assert screen.events == everything
        await pilot.press("w")
        await settle(pilot)
        summary = screen.query_one("#activity-summary")

        def shown() -> bool:
            text = str(summary.render())
            return screen.window == 1 and "since you last looked" in text and "Reading" not in text

        await wait_until(pilot, shown, "the window read again")
        assert screen.events == after
        assert all(event.at > looked for event in screen.events)
