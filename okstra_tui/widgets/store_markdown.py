"""Markdown from the store, shown as its author wrote it and never as live HTML or escape sequences."""

from __future__ import annotations

from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from textual.widgets import Markdown

from okstra_core.text import visible


def _is_comment(html: str) -> bool:
    text = html.strip()
    return text.startswith("<!--") and text.endswith("-->")


def _html_as_text(state: StateCore) -> None:
    """Raw HTML becomes text (a block of it a code block, shown verbatim); comments stay hidden.

    The Markdown view has no HTML renderer: left as HTML tokens, a tag would be
    dropped without a word and the text around it would lose it (``Adopt
    <RetryPolicy>`` would read ``Adopt``). An HTML comment is hidden, as every
    Markdown viewer hides it (the reading copy starts with one).
    """
    kept = []
    for token in state.tokens:
        if token.type == "html_block":
            if _is_comment(token.content):
                continue
            token.type = "code_block"
        elif token.type == "inline" and token.children:
            token.children = [c for c in token.children if not (c.type == "html_inline" and _is_comment(c.content))]
            for child in token.children:
                if child.type == "html_inline":
                    child.type = "text"
        kept.append(token)
    state.tokens = kept


def _parser() -> MarkdownIt:
    parser = MarkdownIt("gfm-like")  # the widget's own preset
    parser.core.ruler.push("okstra_html_as_text", _html_as_text)
    return parser


class StoreMarkdown(Markdown):
    """A Markdown view of store text: control characters made visible, raw HTML shown as text."""

    def __init__(self, text: str, **kwargs: Any) -> None:
        super().__init__(visible(text, multiline=True), parser_factory=_parser, **kwargs)
