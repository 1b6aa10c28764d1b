"""The HTML report in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

The page is opened from disk (``file://``), the form filled, Export pressed,
and the download compared byte for byte with ``render_sidecar`` for the same
answers. Text holding ``<script>`` must show as text and run nothing, the
page must make no request anywhere, read without JavaScript, and hide its
controls in print. Screenshots go to ``screenshots/``.

``.ci/run`` installs Chromium with apt-get; without it this test fails (it
never skips), because the Export button is only proven in a browser.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "render"))
from render_samples import SCRIPT_TEXT, report_bytes

from okstra_core.cli import main
from okstra_core.digests import sha256_bytes
from okstra_core.render.source import load_source
from okstra_core.workflows import user_response as ur

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "screenshots"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Answers that exercise every normalisation rule: CRLF, leading/trailing blank
# lines, trailing spaces, whitespace JS and Python disagree on (U+001C, U+0085,
# U+FEFF), non-ASCII, Markdown and HTML specials, and an empty answer.
ANSWERS = {
    "CQ-001": "\r\n  \nstaging first, then canary  \r\n<b>not</b> prod\u00a0\u3000\nbom stays\ufeff\nnel "
    "goes\u0085\n\u001c\n\n",
    "CQ-002": "",
}
EXPECTED_CQ_001 = "staging first, then canary\n<b>not</b> prod\nbom stays\ufeff\nnel goes"

#: Each test here drives Chromium (launched once for the module): more than the suite's default limit on 2 loaded
#: cores.
pytestmark = pytest.mark.timeout(300)


def _chromium() -> str:
    found = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if found is None:
        pytest.fail(
            "Debian's chromium is not installed (no `chromium` on PATH, no /usr/bin/chromium). "
            "Install it with: apt-get update && apt-get install -y chromium  (.ci/run does this).",
            pytrace=False,
        )
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail(
            "Python package playwright is missing; install the test extra: pip install -e '.[test]'", pytrace=False
        )
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def _render(root: Path, task_type: str, extra: bytes | None = None) -> tuple[Path, Path]:
    """Write report data into a project tree and render its HTML with the CLI."""
    data = (
        root / ".okstra/tasks/checkout/chk-42/runs" / task_type / "reports" / f"final-report-{task_type}-001.data.json"
    )
    data.parent.mkdir(parents=True)
    data.write_bytes(extra if extra is not None else report_bytes(task_type))
    html = data.with_name(f"final-report-{task_type}-001.html")
    assert main(["render-final-report", str(data), "--html", "-o", str(html)]) == 0
    return data, html


def _expected(data: Path, answers: dict[str, str], selected: str | None) -> bytes:
    source = load_source(data)
    assert not hasattr(source, "reason"), source
    inp = ur.ExportInput(source.report, source.report_rel, source.report_stem, sha256_bytes(data.read_bytes()))  # type: ignore[union-attr]
    assert not ur.validate_answers(inp, answers, selected)
    return ur.render_sidecar(inp, answers, selected).encode("utf-8")


def _open(browser: Any, html: Path, **context: Any) -> tuple[Any, Any, list[str], list[str]]:
    ctx = browser.new_context(accept_downloads=True, viewport={"width": 1200, "height": 900}, **context)
    page = ctx.new_page()
    requests: list[str] = []
    errors: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(html.as_uri())
    return ctx, page, requests, errors


def _only_local(requests: list[str], html: Path) -> None:
    stray = [u for u in requests if u != html.as_uri() and not u.startswith("blob:")]
    assert stray == [], f"the page requested other addresses: {stray}"


def test_option_selection_export_matches_render_sidecar(browser: Any, tmp_path: Path) -> None:
    data, html = _render(tmp_path, "option-selection")
    before = data.read_bytes()
    ctx, page, requests, errors = _open(browser, html)
    try:
        downloads: list[Any] = []
        page.on("download", lambda d: downloads.append(d))
        page.click("#export-button")  # nothing chosen yet: refused with a message, no file
        assert "Choose one of the option candidates" in page.inner_text("#export-status")
        assert downloads == []

        page.check("#choose-IO-002")
        page.click("#CQ-001 button.suggest >> nth=1")  # "Use" canary
        assert page.input_value("#answer-CQ-001") == "canary"
        page.fill("#answer-CQ-002", "Yes: 60 s matches the SLA.")
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "report-option-selection.png"), full_page=True)

        page.fill("#answer-CQ-001", ANSWERS["CQ-001"])
        page.fill("#answer-CQ-002", ANSWERS["CQ-002"])
        with page.expect_download() as info:
            page.click("#export-button")
        download = info.value
        assert download.suggested_filename == "user-response-option-selection-001.md"
        got = Path(download.path()).read_bytes()
        assert got == _expected(data, ANSWERS, "IO-002")
        assert f"\n\n{EXPECTED_CQ_001}\n\n".encode() in got
        assert b"_(no answer)_" in got and b"selected-option: IO-002" in got
        assert f'source-data-sha256: "{sha256_bytes(before)}"'.encode() in got
        assert "Downloaded user-response-option-selection-001.md" in page.inner_text("#export-status")
        _only_local(requests, html)
        assert errors == []
    finally:
        ctx.close()
    assert data.read_bytes() == before


def test_script_in_a_finding_is_text_and_runs_nothing(browser: Any, tmp_path: Path) -> None:
    data, html = _render(tmp_path, "analysis")
    ctx, page, requests, errors = _open(browser, html)
    try:
        assert page.evaluate("typeof window.__okstraInjected") == "undefined"
        assert SCRIPT_TEXT in page.inner_text("#F-001")
        assert page.locator("#F-001 script, #F-001 img").count() == 0
        answers = {"CQ-001": "staging", "CQ-002": "yes\n\n  - 60 s is fine  "}
        page.fill("#answer-CQ-001", answers["CQ-001"])
        page.fill("#answer-CQ-002", answers["CQ-002"])
        with page.expect_download() as info:
            page.click("#export-button")
        assert Path(info.value.path()).read_bytes() == _expected(data, answers, None)
        SCREENSHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "report-analysis.png"), full_page=True)
        _only_local(requests, html)
        assert errors == []
    finally:
        ctx.close()


def test_readable_without_javascript_and_in_print(browser: Any, tmp_path: Path) -> None:
    _, html = _render(tmp_path, "option-selection")
    ctx, page, requests, _ = _open(browser, html, java_script_enabled=False)
    try:
        text = page.inner_text("main")
        for expected in ("Option candidates", "IO-001 · Patch the client", "Adopt the SDK's <RetryPolicy>", "CQ-001"):
            assert expected in text
        assert not page.is_visible("#export-button")
        assert page.is_visible("noscript p") or "Exporting needs JavaScript" in page.content()
        _only_local(requests, html)
    finally:
        ctx.close()
    ctx, page, _, _ = _open(browser, html)
    try:
        assert page.is_visible("#export-button")
        page.emulate_media(media="print")
        assert not page.is_visible("#export-button")
        assert page.is_visible("#IO-002")
    finally:
        ctx.close()


def _answers_of(sidecar_text: str) -> tuple[dict[str, str], str | None]:
    """The answers a user-response sidecar records (its body is the documented assembly)."""
    from okstra_core import sidecar

    body = sidecar.parse(sidecar_text).body
    answers: dict[str, str] = {}
    selected = None
    for chunk in body.split("\n## ")[1:]:
        heading, _, rest = chunk.partition("\n\n")
        if heading == "Selected option":
            selected = rest.strip()
            continue
        _quote, _, answer = rest.partition("\n\n")
        answer = answer.removesuffix("\n")
        answers[heading] = "" if answer == ur.NO_ANSWER else answer
    return answers, selected


def test_demo_pages_export_the_demos_own_sidecars(browser: Any, demo_root: Path) -> None:
    """The workflow's sidecar and the page's Export agree on the demo's real answers."""
    sidecars = sorted(demo_root.glob(".okstra/tasks/*/*/runs/**/user-responses/user-response-*-[0-9][0-9][0-9].md"))
    assert sidecars, "the demo carries user-response sidecars"
    for path in sidecars:
        stem = path.name.removeprefix("user-response-").removesuffix(".md")
        html = path.parent.parent / "reports" / f"final-report-{stem}.html"
        assert html.exists(), html
        answers, selected = _answers_of(path.read_text(encoding="utf-8"))
        ctx, page, requests, errors = _open(browser, html)
        try:
            if selected:
                page.check(f"#choose-{selected}")
            for item, answer in answers.items():
                page.fill(f"#answer-{item}", answer)
            with page.expect_download() as info:
                page.click("#export-button")
            assert Path(info.value.path()).read_bytes() == path.read_bytes(), path
            _only_local(requests, html)
            assert errors == []
        finally:
            ctx.close()
