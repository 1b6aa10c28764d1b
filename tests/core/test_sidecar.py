"""Strict header blocks of Markdown sidecars."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from okstra_core import sidecar


def test_parse_and_format_round_trip() -> None:
    header = {"kind": "user-response", "format-version": 1, "task-key": "p:g:t", "note": "12 apples", "flag": True}
    text = sidecar.format_sidecar(header, "# Body\n")
    parsed = sidecar.parse(text)
    assert parsed.header == header and parsed.body == "# Body\n"
    assert 'note: "12 apples"' in text  # strings that would read as numbers are quoted


@given(
    st.dictionaries(
        st.from_regex(r"[a-z]{1,5}(-[a-z]{1,5}){0,2}", fullmatch=True),
        st.one_of(st.text(min_size=0, max_size=30), st.integers(), st.booleans()),
        max_size=6,
    ),
    st.text(max_size=50),
)
def test_round_trip_property(header: dict[str, object], body: str) -> None:
    parsed = sidecar.parse(sidecar.format_sidecar(header, body))
    assert parsed.header == header and parsed.body == body


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no header\n", "does not start"),
        ("---\nkind: x\n", "not closed"),
        ("---\nkind: x\nkind: y\n---\n", "repeated header key"),
        ("---\nKind: x\n---\n", "kebab-case"),
        ("---\nkind x\n---\n", "malformed header line"),
        ("---\nkind: [1]\n---\n", "nested"),
        ("---\nkind:\n---\n", "empty value"),
        ('---\nkind: "unterminated\n---\n', "malformed quoted string"),
    ],
)
def test_strict_errors(text: str, reason: str) -> None:
    with pytest.raises(sidecar.HeaderError, match=reason):
        sidecar.parse(text)
