"""The Search view: ctrl+f from anywhere, results as you type grouped by task, a hit opened at its match."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Static

from okstra_core.search.index import Results, SearchIndex
from okstra_core.search.query import parse
from okstra_tui.navigation import View
from okstra_tui.screens.file import FileScreen
from okstra_tui.screens.search import SearchScreen
from okstra_tui.screens.task import TaskScreen
from okstra_tui.screenshots import settle
from okstra_tui.widgets.preview import ArtifactPreview
from okstra_tui.widgets.text_lines import TextLines

from .conftest import SIZE, make_app, plain, task_roots, wait_until


async def _search(pilot: Pilot[None], text: str) -> SearchScreen:
    await settle(pilot)
    await pilot.press("ctrl+f")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, SearchScreen)
    await pilot.press(*("space" if c == " " else c for c in text))
    await settle(pilot)
    return screen


def _status(screen: SearchScreen) -> str:
    return plain(screen.query_one("#search-status", Static))


async def test_ctrl_f_opens_search_from_a_task_view_even_in_a_text_field(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        from okstra_tui.navigation import Location

        app.navigate(Location(View.TASK, next(task_roots(demo_root))))
        await settle(pilot)
        assert isinstance(app.screen, TaskScreen)
        await pilot.press("ctrl+f")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        assert isinstance(app.focused, Input)
        await pilot.press("ctrl+f")  # on Search already: no second Search on the stack
        await settle(pilot)
        assert app.screen is screen


async def test_results_come_as_you_type_grouped_by_task(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _search(pilot, "idempotency key")
        options = screen.query_one("#search-results", OptionList)
        headings = [options.get_option_at_index(i) for i in range(options.option_count)]
        tasks = [str(o.prompt).split("  ")[0] for o in headings if o.disabled]
        hits = screen.hits
        assert hits and len(tasks) == len({h.task for h in hits})
        # Each task once, in the order of its best hit; its hits right under it.
        order: list[str] = []
        for hit in hits:
            if hit.task not in order:
                order.append(hit.task)
        assert tasks == order
        assert f"{len(hits)} hits in {len(tasks)} tasks" in _status(screen)
        expected = SearchIndex  # the same index and query as the command
        with expected(demo_root, Path(screen._open().path).parent.parent) as index:
            assert [h.path for h in index.search(parse("idempotency key"), limit=200).hits] == [h.path for h in hits]


async def test_a_malformed_query_says_why_and_keeps_the_last_results(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _search(pilot, "retry")
        before = list(screen.hits)
        await pilot.press("space", "(")
        await settle(pilot)
        assert "unbalanced '('" in _status(screen)
        assert screen.hits == before


async def test_a_stale_result_never_replaces_a_newer_one(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _search(pilot, "gateway")
        shown = list(screen.hits)
        late = Results(hits=[], total=0)
        screen._found("gatewa", late, [], {}, 0.0)  # the result of a query typed before the last keystroke
        assert screen.hits == shown
        assert "No matches" not in _status(screen)


@pytest.mark.parametrize("mode", ["events", "poll"])
async def test_the_hits_follow_the_store_without_a_keystroke(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """A file written anywhere in the store that matches the query shown joins the hits, with nothing typed, and
    the hit under the cursor stays under it: told by the store's file events, or, where the store is polled (and
    only what the views read is looked at), at the view's next reading of its own."""
    from okstra_tui.screens import base

    monkeypatch.setenv("OKSTRA_WATCH", mode)
    monkeypatch.setattr(base, "WHOLE_STORE_POLL_SECONDS", 0.5)
    monkeypatch.setattr(base, "WHOLE_STORE_POLL_SHARE", 1.0)
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _search(pilot, "retry OR quokkaberry")
        await wait_until(pilot, lambda: bool(screen.hits), "the hits of the query")
        await pilot.press("down", "down")
        under = screen._highlighted_hit()
        assert under is not None
        with SearchIndex(fresh_demo, Path(screen._open().path).parent.parent) as index:
            (rel,) = index.conn.execute(
                "SELECT path FROM search_files WHERE kind = 'brief' ORDER BY path LIMIT 1"
            ).fetchone()
        target = fresh_demo / rel
        assert rel not in {hit.path for hit in screen.hits}
        with target.open("a", encoding="utf-8") as out:
            out.write("\nThe quokkaberry gateway needs a look.\n")
        await wait_until(pilot, lambda: rel in {hit.path for hit in screen.hits}, f"{rel} among the hits")
        now = screen._highlighted_hit()
        assert now is not None and (now.path, now.label) == (under.path, under.label)


async def test_searching_runs_off_the_ui_thread(demo_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[threading.Thread] = []
    real = SearchIndex.search

    def spy(self: SearchIndex, *args: object, **kwargs: object) -> Results:
        threads.append(threading.current_thread())
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(SearchIndex, "search", spy)
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await _search(pilot, "retry")
        assert threads and all(t is not threading.main_thread() for t in threads)


async def test_enter_opens_the_file_at_its_match_and_n_steps_through_them(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _search(pilot, "retry kind:finding")
        await pilot.press("down", "down", "down")
        hit = screen.hits[2]
        await pilot.press("enter")
        await settle(pilot)
        shown = app.screen
        assert isinstance(shown, FileScreen) and shown.path == demo_root / hit.path
        assert shown.location.query == "retry kind:finding"
        preview = shown.query_one(ArtifactPreview)
        await wait_until(pilot, lambda: bool(preview.query(TextLines)), "the file's text shown")
        lines = preview.query_one(TextLines)
        assert len(lines.marks) >= 2 and lines.current is not None
        line, start, end = lines.marks[lines.current]
        assert lines.lines[line][start:end].lower() == "retry"
        # The first match shown is the one after the hit's finding, not the file's first.
        assert any(hit.label and hit.label in lines.lines[i] for i in range(line + 1))
        await pilot.pause()
        assert preview.scroll_y > 0  # scrolled to it
        first = lines.current
        await pilot.press("n")
        assert lines.current == (first + 1) % len(lines.marks)
        await pilot.press("N", "N")
        assert lines.current == (first - 1) % len(lines.marks)
        assert f"match {lines.current + 1} of {len(lines.marks)}" in str(preview.border_subtitle)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen  # back to the results


async def test_n_does_nothing_in_a_file_not_opened_from_search(demo_root: Path) -> None:
    from okstra_tui.navigation import Location

    app = make_app(demo_root)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        root = next(task_roots(demo_root))
        app.navigate(Location(View.FILE, root, root / "task-manifest.json"))
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, FileScreen)
        assert screen.check_action("next_match", ()) is False


async def test_the_open_view_brings_the_index_up_to_date_when_the_store_changes(
    fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A note written while the view is open is found by the next search (past the freshness window)."""
    from okstra_tui.screens import search

    monkeypatch.setattr(search, "FRESH_SECONDS", 0.0)  # every search looks at the store again
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _search(pilot, "quokkazebra")
        await wait_until(pilot, lambda: "No matches." in _status(screen), "no match yet")
        notes = fresh_demo / ".okstra/tasks/payments/retry-policy/notes"
        notes.mkdir(exist_ok=True)
        (notes / "20261201T090000Z-sighting.md").write_text("A quokkazebra was seen.\n", encoding="utf-8")
        await pilot.press("backspace")
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        await wait_until(pilot, lambda: "1 hit in 1 task" in _status(screen), "the new note found")
        assert [h.path.rpartition("/")[2] for h in screen.hits] == ["20261201T090000Z-sighting.md"]
