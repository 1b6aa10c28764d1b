"""A deliberately small template language: ``{{ name }}`` placeholders, nothing else.

Templates hold the layout and the literal text; Python renders each section.
Filling is strict both ways: a placeholder without a value and a value
without a placeholder are programming errors, so a template and its renderer
cannot drift apart silently. Values are inserted once and never re-scanned,
so text from report data can never inject a placeholder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..resources import read_template

_PLACEHOLDER = re.compile(r"\{\{\s*([a-z][a-z0-9_]*)\s*\}\}")


def placeholders(template: str) -> list[str]:
    """The placeholder names of *template*, in order of first use."""
    seen: list[str] = []
    for match in _PLACEHOLDER.finditer(template):
        if match.group(1) not in seen:
            seen.append(match.group(1))
    return seen


def fill(template: str, values: Mapping[str, str], *, name: str = "template", partial: bool = False) -> str:
    """Replace every placeholder of *template* with its value (single pass).

    *partial* allows values whose placeholder is absent (already dropped as an
    empty block); a placeholder without a value is always an error.
    """
    wanted = set(placeholders(template))
    missing = wanted - set(values)
    unused = set() if partial else set(values) - wanted
    if missing or unused:
        raise ValueError(f"{name}: missing values {sorted(missing)}, unused values {sorted(unused)}")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def fill_template(relpath: str, values: Mapping[str, str]) -> str:
    """:func:`fill` the shipped template ``templates/<relpath>``, dropping empty block placeholders."""
    template = read_template(relpath)
    fill(template, dict.fromkeys(values, ""), name=relpath)  # the names must agree both ways
    return fill(drop_empty_blocks(template, values), values, name=relpath, partial=True)


def drop_empty_blocks(template: str, values: Mapping[str, str]) -> str:
    """Remove whole-line placeholders whose value is empty, with the blank line after them.

    Optional sections (convergence, clarification items) then leave no gap,
    while the text inside the sections is never touched.
    """
    lines = template.split("\n")
    out: list[str] = []
    skip_blank = False
    for line in lines:
        match = _PLACEHOLDER.fullmatch(line.strip())
        if match and line == line.strip() and values.get(match.group(1), None) == "":
            skip_blank = True
            continue
        if skip_blank and line == "":
            skip_blank = False
            continue
        skip_blank = False
        out.append(line)
    return "\n".join(out)
