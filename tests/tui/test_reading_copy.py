"""The Reports view shows the reading copy as the report data has it: a ``<`` is a ``<``, in code too."""

from __future__ import annotations

import json
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock, MarkdownFence

from okstra_tui.navigation import Location, View
from okstra_tui.screenshots import settle

from .conftest import SIZE, make_app, wait_until

TASK = ".okstra/tasks/payments/refund-ledger"
REPORT = f"{TASK}/runs/analysis/reports/final-report-analysis-001.data.json"
SUMMARY = (
    "Use `List<int>` here, not <b>bold</b>.<!-- a note -->\n\n```java\nList<Rule> rules;\n```\n\n"
    "<div>a block</div>\n\nAlso a < b."
)


def _shown(md: Markdown) -> str:
    parts = [block._content.plain for block in md.query(MarkdownBlock)]
    parts += [fence.code for fence in md.query(MarkdownFence)]
    return "\n".join(parts)


async def _open_reports(pilot: Pilot[None], root: Path) -> None:
    """Open the Reports view of the task and wait for its first report's reading copy."""
    await settle(pilot)
    pilot.app.navigate(Location(View.REPORTS, root / TASK))  # type: ignore[attr-defined]
    await settle(pilot)
    await wait_until(pilot, lambda: bool(pilot.app.screen.query("#rep-markdown")), "the reading copy is shown")
    await settle(pilot)


async def test_the_reading_copy_shows_angle_brackets_as_written(fresh_demo: Path) -> None:
    path = fresh_demo / REPORT
    value = json.loads(path.read_text(encoding="utf-8"))
    value["summary"] = SUMMARY
    value["title"] = "Adopt <RetryPolicy>"
    path.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await _open_reports(pilot, fresh_demo)
        shown = _shown(app.screen.query_one("#rep-markdown", Markdown))
    assert "&lt;" not in shown, shown
    assert "List<int>" in shown  # a code span
    assert "List<Rule> rules;" in shown  # a fenced block
    assert "not <b>bold</b>." in shown  # raw HTML is text, never dropped
    assert "Adopt <RetryPolicy>" in shown
    assert "<div>a block</div>" in shown  # an HTML block, verbatim
    assert "a < b" in shown
    # Comments are hidden, as in any Markdown viewer: the data's, and the reading copy's own first line.
    assert "a note" not in shown and "Reading copy rendered" not in shown


async def test_a_report_rewritten_in_place_is_shown_again(fresh_demo: Path) -> None:
    """An agent rewriting the report data in place (same file, no rename) changes no folder the view listed:
    what the reading copy read is followed too, so the new text shows."""
    import os

    path = fresh_demo / REPORT
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await _open_reports(pilot, fresh_demo)
        inode, folder = path.stat().st_ino, path.parent.stat().st_mtime_ns
        value = json.loads(path.read_text(encoding="utf-8"))
        value["summary"] = "Rewritten in place by an agent."
        with open(path, "r+", encoding="utf-8") as f:
            f.write(json.dumps(value, indent=2) + "\n")
            f.truncate()
        os.utime(path)  # a later mtime than the first look, whatever the clock's tick
        assert (path.stat().st_ino, path.parent.stat().st_mtime_ns) == (inode, folder)

        def rewritten() -> bool:
            found = app.screen.query("#rep-markdown")
            return bool(found) and "Rewritten in place by an agent." in _shown(found.first(Markdown))

        await wait_until(pilot, rewritten, "the rewritten report is shown")
