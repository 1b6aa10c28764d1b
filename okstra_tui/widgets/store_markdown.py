"""Markdown from the store, shown as its author wrote it and never as live HTML or escape sequences."""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt
from textual.widgets import Markdown

from okstra_core.text import visible


def _parser() -> MarkdownIt:
    # Textual's own preset with HTML off: a tag is text like any other, so ``<T>`` shows as ``<T>``
    # (with HTML on, the widget drops tag tokens and the text between them loses its tags silently).
    return MarkdownIt("gfm-like", {"html": False})


class StoreMarkdown(Markdown):
    """A Markdown view of store text: control characters made visible, raw HTML shown as text."""

    def __init__(self, text: str, **kwargs: Any) -> None:
        super().__init__(visible(text, multiline=True), parser_factory=_parser, **kwargs)
