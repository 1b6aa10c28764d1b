"""Store text made safe to show: control characters become visible, never sent raw.

Everything in the store is written by agents and may hold terminal escape
sequences (``ESC ]52;…BEL`` writes the clipboard, ``ESC [2J`` wipes the
screen). Every string from the store that reaches a terminal or a line-based
report goes through :func:`visible` first:

* C0 controls (U+0000-U+001F) become their Unicode Control Pictures, one
  character each: ESC is ``␛``, BEL ``␇``, NUL ``␀``, CR ``␍``; DEL is ``␡``.
  With ``multiline=True`` a newline and a tab are kept (and CR LF becomes LF).
* C1 controls (U+0080-U+009F, which some terminals read as ESC + a letter) and
  the bidirectional embedding, override and isolate marks (which reorder what a
  reader sees) have no picture: they become a ``\\x9b`` / ``\\u202e`` escape.
* A lone surrogate (an undecodable byte of a file name read with
  ``surrogateescape``) becomes ``\\xff``, the byte it stands for.

The mapping is one fixed table applied with :meth:`str.translate`, so it is
cheap on large previews and the same everywhere.
"""

from __future__ import annotations

import re

_PICTURES: dict[int, str] = {code: chr(0x2400 + code) for code in range(0x20)}
_PICTURES[0x7F] = "\u2421"
for _code in range(0x80, 0xA0):
    _PICTURES[_code] = f"\\x{_code:02x}"
for _code in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)):
    _PICTURES[_code] = f"\\u{_code:04x}"
# Lone surrogates: a file name's undecodable byte (``surrogateescape``) shows as that byte.
for _code in range(0xD800, 0xE000):
    _PICTURES[_code] = f"\\x{_code - 0xDC00:02x}" if 0xDC80 <= _code <= 0xDCFF else f"\\u{_code:04x}"

_ONE_LINE = str.maketrans(_PICTURES)
_MULTI_LINE = str.maketrans({code: pic for code, pic in _PICTURES.items() if code not in (0x09, 0x0A)})
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_MULTI = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def visible(text: str, *, multiline: bool = False) -> str:
    """*text* with every control character shown as a visible stand-in (see the module doc)."""
    if multiline:
        if _UNSAFE_MULTI.search(text) is None:
            return text
        return text.replace("\r\n", "\n").translate(_MULTI_LINE)
    if _UNSAFE.search(text) is None:
        return text
    return text.translate(_ONE_LINE)


def has_controls(text: str, *, multiline: bool = False) -> bool:
    """True when :func:`visible` with the same *multiline* would change *text*."""
    return (_UNSAFE_MULTI if multiline else _UNSAFE).search(text) is not None


# What JSON's own escaping leaves raw with ``ensure_ascii=False``: DEL, the C1 controls, the line and
# paragraph separators (a line break to many readers and to JavaScript before ES2019), the bidi marks and
# lone surrogates. Each of these can occur in ``json.dumps`` output only inside a string.
_JSON_RAW = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def json_escaped(json_text: str) -> str:
    """*json_text* (``json.dumps(..., ensure_ascii=False)`` output) with the characters above as ``\\uXXXX``.

    The value is unchanged (a JSON parser reads ``\\u009b`` as U+009B); only
    what reaches a terminal or a log differs: no control character raw, other
    non-ASCII text kept as it is.
    """
    if _JSON_RAW.search(json_text) is None:
        return json_text
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)


def counted(count: int, word: str) -> str:
    """*count* and *word*, plural unless one: ``1 error``, ``0 errors``, ``17 warnings``."""
    return f"{count} {word}{'s' if count != 1 else ''}"
