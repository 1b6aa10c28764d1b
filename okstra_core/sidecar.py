"""Markdown files with a strict ``---`` header block (DECISIONS section 3).

The header is ``key: value`` lines between two ``---`` lines: kebab-case keys,
values that are a JSON scalar or a bare string, no nesting. Parsing is strict:
a repeated key or a malformed line is an error, never a guess; an unknown key
is kept (the checker warns about it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_KEY = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
DELIM = "---"


class HeaderError(ValueError):
    """A malformed header block; ``line`` is 1-based within the file."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        self.reason = reason
        self.line = line
        super().__init__(reason if line is None else f"line {line}: {reason}")


@dataclass(frozen=True, slots=True)
class Sidecar:
    header: dict[str, Any]
    body: str


def _value(text: str, lineno: int) -> Any:
    if text == "":
        raise HeaderError("empty value", lineno)
    if text[0] in "[{":
        raise HeaderError("nested values are not allowed", lineno)
    if text[0] in '"-0123456789' or text in ("true", "false", "null"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            if text[0] == '"':
                raise HeaderError("malformed quoted string", lineno) from None
            return text
        except ValueError:  # a number past the integer conversion limit
            raise HeaderError("number is too long", lineno) from None
        if isinstance(value, (dict, list)):  # pragma: no cover - excluded above
            raise HeaderError("nested values are not allowed", lineno)
        return value
    return text


def parse(text: str) -> Sidecar:
    """Split a sidecar into its header mapping and body text."""
    sidecar, errors = parse_lenient(text)
    if errors:
        raise errors[0]
    assert sidecar is not None
    return sidecar


def parse_lenient(text: str) -> tuple[Sidecar | None, list[HeaderError]]:
    """Like :func:`parse`, but every bad header line is reported and left out instead of ending the parse.

    The keys that did parse stay usable (a reader can still check a digest on a
    header with one bad line). A repeated key is left out entirely: which value
    was meant cannot be known. No header block at all gives ``None``.
    """
    lines = text.split("\n")
    if not lines or lines[0] != DELIM:
        return None, [HeaderError("file does not start with a '---' header block", 1)]
    header: dict[str, Any] = {}
    repeated: set[str] = set()
    errors: list[HeaderError] = []
    for index in range(1, len(lines)):
        line = lines[index]
        lineno = index + 1
        if line == DELIM:
            for key in repeated:
                header.pop(key, None)
            return Sidecar(header, "\n".join(lines[index + 1 :])), errors
        if line == "" and index == len(lines) - 1:
            break
        key, sep, raw = line.partition(": ")
        try:
            if not sep:
                if line.endswith(":") and _KEY.match(line[:-1]):
                    raise HeaderError("empty value", lineno)
                raise HeaderError(f"malformed header line {line[:60]!r}", lineno)
            if not _KEY.match(key):
                raise HeaderError(f"header key {key[:60]!r} is not kebab-case", lineno)
            if key in header or key in repeated:
                repeated.add(key)
                raise HeaderError(f"repeated header key {key!r}", lineno)
            header[key] = _value(raw, lineno)
        except HeaderError as exc:
            errors.append(exc)
    return None, [*errors, HeaderError("header block is not closed by '---'")]


def _format_value(value: Any) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        return json.dumps(value)
    if not isinstance(value, str):
        raise TypeError(f"header values are scalars, not {type(value).__name__}")
    bare_ok = (
        value != ""
        and value == value.strip()
        and "\n" not in value
        and value[0] not in '"-0123456789[{'
        and value not in ("true", "false", "null")
    )
    return value if bare_ok else json.dumps(value, ensure_ascii=False)


def format_sidecar(header: dict[str, Any], body: str) -> str:
    """The canonical text of a sidecar; ``parse(format_sidecar(h, b))`` gives back ``h`` and ``b``."""
    out = [DELIM]
    for key, value in header.items():
        if value is None:
            continue
        if not _KEY.match(key):
            raise ValueError(f"header key {key!r} is not kebab-case")
        out.append(f"{key}: {_format_value(value)}")
    out.append(DELIM)
    return "\n".join(out) + "\n" + body
