"""The HTML report without a browser: escaping, self-containment, the pinned CSP, export data."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from render_samples import SCRIPT_TEXT, TASK_TYPES, report_bytes, report_data, report_rel, stem

from okstra_core.render import render_html
from okstra_core.render.source import validate_report
from okstra_core.resources import read_template
from okstra_core.workflows import user_response as ur

ALLOWED_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "main",
    "header",
    "p",
    "h1",
    "h2",
    "h3",
    "dl",
    "dt",
    "dd",
    "code",
    "section",
    "div",
    "article",
    "span",
    "ul",
    "li",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "a",
    "details",
    "summary",
    "pre",
    "form",
    "fieldset",
    "legend",
    "label",
    "textarea",
    "input",
    "button",
    "noscript",
    "script",
}


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._in and self._in[-1] == tag:
            self._in.pop()

    def handle_data(self, data: str) -> None:
        if not (self._in and self._in[-1] in ("script", "style")):
            self.text.append(data)


def _page(task_type: str, data: dict | None = None) -> str:  # type: ignore[type-arg]
    value = data or report_data(task_type)
    report = validate_report(Path("x"), value)
    assert not hasattr(report, "reason"), report
    raw = json.dumps(value).encode()
    return render_html(report, raw, report_rel(task_type), stem(task_type))  # type: ignore[arg-type]


def _parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    return parser


def test_pages_are_self_contained() -> None:
    for task_type in TASK_TYPES:
        parsed = _parse(_page(task_type))
        for tag, attrs in parsed.tags:
            assert tag in ALLOWED_TAGS, tag
            assert "src" not in attrs, (tag, attrs)
            href = attrs.get("href")
            assert href is None or href.startswith("#"), href
            assert not any(k.startswith("on") for k in attrs), attrs
            if tag == "script":
                assert attrs in ({}, {"type": "application/json", "id": "okstra-export-data"})


def test_csp_pins_the_inline_style_and_script() -> None:
    page = _page("option-selection")
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert csp
    policy = csp.group(1).replace("&#x27;", "'")
    assert "default-src 'none'" in policy and "connect-src" not in policy  # default-src covers fetches
    for tag in ("style", "script"):
        body = re.search(rf"<{tag}>(.*?)</{tag}>", page, re.S)
        assert body
        digest = base64.b64encode(hashlib.sha256(body.group(1).encode()).digest()).decode()
        assert f"{tag}-src 'sha256-{digest}'" in policy


def test_page_without_questions_has_no_script() -> None:
    page = _page("implementation")
    assert "<script" not in page and "script-src 'none'" in page.replace("&#x27;", "'")


def test_script_text_in_data_is_shown_as_text() -> None:
    page = _page("analysis")
    parsed = _parse(page)
    assert "".join(parsed.text).count(SCRIPT_TEXT) == 1
    assert [t for t, _ in parsed.tags if t in ("script", "img")] == ["script", "script"]
    assert "&lt;script&gt;window.__okstraInjected" in page


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=40).filter(lambda s: s.strip() and "\x00" not in s))
def test_any_text_is_escaped(text: str) -> None:
    value = report_data("option-selection")
    value["title"] = text
    value["optionCandidates"]["candidates"][0]["title"] = text
    value["clarificationItems"][0]["options"] = [text]
    parsed = _parse(_page("option-selection", value))
    assert {t for t, _ in parsed.tags} <= ALLOWED_TAGS
    assert sum(1 for t, _ in parsed.tags if t == "script") == 2
    assert text in "".join(parsed.text)  # html.parser, unlike a browser, keeps CR as it is
    suggest = [a for t, a in parsed.tags if t == "button" and a.get("class") == "suggest"]
    assert suggest[0]["data-value"] == text


def test_export_headers_are_render_sidecars_headers() -> None:
    data = report_bytes("option-selection")
    value = json.loads(data)
    report = validate_report(Path("x"), value)
    page = render_html(report, data, report_rel("option-selection"), stem("option-selection"))  # type: ignore[arg-type]
    blob = re.search(r'<script type="application/json" id="okstra-export-data">(.*?)</script>', page, re.S)
    assert blob
    cfg = json.loads(blob.group(1))
    inp = ur.ExportInput(
        report, report_rel("option-selection"), stem("option-selection"), hashlib.sha256(data).hexdigest()
    )  # type: ignore[arg-type]
    assert set(cfg["headers"]) == {"IO-001", "IO-002", "IO-003"}
    for option, header in cfg["headers"].items():
        full = ur.render_sidecar(inp, {}, option)
        assert full.startswith(header) and full[len(header) :] == ur.render_body(inp, {}, option)
    assert cfg["fileName"] == "user-response-option-selection-001.md"
    assert [i["quote"] for i in cfg["items"]] == [
        "> Which environments may we deploy to first?",
        "> Is a 60 s ceiling acceptable?",
    ]


def test_js_trailing_whitespace_matches_python_rstrip() -> None:
    script = read_template("reports/final-report.js")
    match = re.search(r"var TRAILING_WS = /\[(.*?)\]\+\$/;", script)
    assert match
    chars: set[str] = set()
    body = match.group(1)
    tokens = re.findall(r"\\u([0-9a-f]{4})-\\u([0-9a-f]{4})|\\u([0-9a-f]{4})|\\([tnfr])|(.)", body)
    escapes = {"t": "\t", "n": "\n", "f": "\f", "r": "\r"}
    for lo, hi, single, esc, literal in tokens:
        if lo:
            chars |= {chr(c) for c in range(int(lo, 16), int(hi, 16) + 1)}
        elif single:
            chars.add(chr(int(single, 16)))
        elif esc:
            chars.add(escapes[esc])
        else:
            chars.add(literal)
    python = {chr(c) for c in range(0x110000) if chr(c).isspace()}
    assert chars == python


def test_preselected_validation_has_no_choice() -> None:
    value = report_data("option-selection")
    value["optionCandidates"]["mode"] = "preselected-validation"
    value["optionCandidates"]["preselected"] = {
        "optionId": "IO-001",
        "confirmedBy": "lead",
        "confirmedAt": "2026-11-30T04:00:00Z",
    }
    page = _page("option-selection", value)
    assert 'type="radio"' not in page and "Preselected option" in page
    blob = re.search(r'id="okstra-export-data">(.*?)</script>', page, re.S)
    assert blob and json.loads(blob.group(1))["mode"] == "clarification"  # still answers the questions
    value["clarificationItems"] = []
    assert "<form" not in _page("option-selection", value)
