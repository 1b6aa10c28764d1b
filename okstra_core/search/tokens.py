"""The words of a text as the index sees them: the one tokenizer of search.

The index uses SQLite FTS5's ``unicode61`` tokenizer with diacritics removed
(:data:`FTS_TOKENIZER`): a token is a run of letters, digits and private-use
characters (Unicode categories L*, N*, Co), folded to lower case with accents
dropped; everything else separates tokens. :func:`spans` is the same rule in
Python, for parsing queries into tokens, for highlighting a match in a
preview, and for the reference scan the tests compare the index with.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Final

#: The FTS5 ``tokenize`` option of the index.
FTS_TOKENIZER: Final = "unicode61 remove_diacritics 2"

# ``[^\W_]`` is a letter or a digit (Python's \w less the underscore); U+E000-U+F8FF is the private-use area.
_TOKEN = re.compile(r"(?:[^\W_]|[\ue000-\uf8ff])+")


def fold(token: str) -> str:
    """*token* lower-cased with its diacritics removed, as ``unicode61 remove_diacritics 2`` folds it."""
    token = token.lower()
    if token.isascii():
        return token
    decomposed = unicodedata.normalize("NFD", token)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def spans(text: str) -> Iterator[tuple[int, int, str]]:
    """Each token of *text*: its start and end offsets in *text* and its folded form."""
    for match in _TOKEN.finditer(text):
        yield match.start(), match.end(), fold(match.group())


def tokens(text: str) -> list[str]:
    """The folded tokens of *text*, in order."""
    return [fold(match.group()) for match in _TOKEN.finditer(text)]
