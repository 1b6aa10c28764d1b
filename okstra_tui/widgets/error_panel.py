"""The inline panel a view shows for a file that could not be read or validated."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from okstra_core.errors import LoadError
from okstra_core.text import visible


class ErrorPanel(Static):
    """One broken file: its path and the one-line reason."""

    DEFAULT_CSS = """
    ErrorPanel {
        border: round $error;
        color: $text-error;
        background: $error-muted;
        padding: 0 1;
        height: auto;
        margin: 0 0 1 0;
    }
    """

    def __init__(self, error: LoadError | str, *, title: str = "Cannot read", id: str | None = None) -> None:
        if isinstance(error, LoadError):
            body = Text.assemble((visible(str(error.path)), "bold"), "\n", visible(error.reason))
            if error.line is not None:
                body.append(f" (line {error.line})")
        else:
            body = Text(visible(error))
        super().__init__(body, id=id)
        self.border_title = Text(visible(title))
