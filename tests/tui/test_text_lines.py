"""Long preview text is drawn a row at a time: what is off screen is never highlighted."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from okstra_tui.screenshots import settle
from okstra_tui.widgets.text_lines import TextLines


class Counting(TextLines):
    highlighted: set[int]

    def _line_strip(self, index: int):  # type: ignore[no-untyped-def]
        self.highlighted.add(index)
        return super()._line_strip(index)


class Pane(App[None]):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("title")
            lines = Counting(self.text, "json")
            lines.highlighted = set()
            yield lines


async def test_only_the_lines_in_view_are_highlighted() -> None:
    text = "".join(f'  "key-{i}": "value {i}",\n' for i in range(50_000))
    app = Pane(text)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        lines = app.query_one(Counting)
        assert lines.size.height == 50_000, "the pane scrolls over every line"
        assert 0 < len(lines.highlighted) <= 24
        app.query_one(VerticalScroll).scroll_end(animate=False)
        await settle(pilot)
        assert 49_999 in lines.highlighted and len(lines.highlighted) <= 48
        assert '"key-49999": "value 49999",' in lines.render_line(49_999).text


async def test_a_long_line_folds_onto_the_rows_it_needs() -> None:
    app = Pane("short\n" + "x" * 250 + "\nend\n")
    async with app.run_test(size=(60, 24)) as pilot:
        await settle(pilot)
        lines = app.query_one(Counting)
        width = lines.content_size.width
        assert lines.size.height == 1 + -(-250 // width) + 1
        rows = [lines.render_line(y).text for y in range(lines.size.height)]
        assert rows[0].rstrip() == "short" and rows[-1].rstrip() == "end"
        assert "".join(r.rstrip() for r in rows[1:-1]) == "x" * 250


class Gutter(App[None]):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield TextLines(self.text, gutter=True)


async def test_with_a_gutter_a_continued_row_is_marked_and_no_space_is_lost() -> None:
    words = "report: " + " ".join(f"word{i}" for i in range(30))
    app = Gutter(f"---\n{words}\nend\n")
    async with app.run_test(size=(60, 24)) as pilot:
        await settle(pilot)
        lines = app.query_one(TextLines)
        fold = lines.content_size.width - 2
        rows = [lines.render_line(y).text for y in range(lines.size.height)]
        assert lines.size.height == 1 + -(-len(words) // fold) + 1
        assert rows[0].rstrip() == "  ---" and rows[-1].rstrip() == "  end"
        assert rows[1].startswith("  report: ") and all(r.startswith("↪ ") for r in rows[2:-1])
        # Each row holds exactly the next cells of the line: a space at the fold is kept, not swallowed.
        assert "".join(r[2 : 2 + fold] for r in rows[1:-1]).rstrip() == words
        lines.update("one\ntwo\n")
        await settle(pilot)
        assert [lines.render_line(y).text.rstrip() for y in range(lines.size.height)] == ["  one", "  two"]
