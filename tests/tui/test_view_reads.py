"""Every view and wizard depends on what it read, and on nothing else.

Generated from the registries, so a new view or wizard is covered without a test of its own: each view is opened
by its scene (``okstra_tui/screenshots.py``), each wizard from the inbox. For a view, changing a path it recorded
makes it read again, and changing a store file it did not read does not; for a wizard, changing a path its
opening read makes its write stale, and changing another file does not.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from okstra_core import layout
from okstra_core.store import Project, TaskRef
from okstra_tui.app import OkstraApp
from okstra_tui.navigation import View
from okstra_tui.screens.base import WHOLE_STORE_SECONDS, ViewScreen
from okstra_tui.screens.wizard import WizardScreen, fingerprint, stale_paths
from okstra_tui.screenshots import SCENES, WRITING_SCENES, settle
from okstra_tui.views import SCREENS, screen_class
from okstra_tui.widgets.preview import ArtifactPreview

from .conftest import SIZE, make_app, wait_until

#: Paths of a view's reads changed one at a time, at most (spread over what it read: first, last and between).
SAMPLE = 6

#: The scene that opens each view (a view's scene carries its name).
VIEW_SCENES = {view: SCENES.get(view.value) or WRITING_SCENES[view.value] for view in View}

#: Views whose answer any file of the store may change (a search's hits, a check's findings): they read again
#: after any change in the store (the test below this one), not only after a change to what they read.
WHOLE_STORE = {view for view in View if screen_class(view).WHOLE_STORE}


def _spread(paths: list[str], count: int) -> list[str]:
    if len(paths) <= count:
        return paths
    step = (len(paths) - 1) / (count - 1)
    return [paths[round(i * step)] for i in range(count)]


def _touch(path: str, seconds: int) -> None:
    """Change *path*'s metadata (never its bytes: its mtime moves *seconds* ahead), or make it if it is missing."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text("written meanwhile\n", encoding="utf-8")
        return
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 1_000_000_000))


def _unread_file(root: Path, read: dict[str, Any]) -> str:
    """A file of the store that the view did not read, in a folder it did not list."""
    for path in sorted(layout.okstra_dir(root).rglob("*")):
        name = str(path)
        if path.is_file() and not path.is_symlink() and name not in read and str(path.parent) not in read:
            return name
    raise AssertionError("every file of the store was read")


def _read(screen: ViewScreen) -> dict[str, Any]:
    """What the view read, its previews' reads included."""
    out = dict(screen.depends_on)
    for preview in screen.query(ArtifactPreview):
        out.update(preview.depends_on)
    return out


def _loads(screen: ViewScreen) -> int:
    return screen.reads + sum(preview.loads for preview in screen.query(ArtifactPreview))


async def _opened(pilot: Pilot[None], view: View) -> ViewScreen:
    """*view*, opened by its scene."""
    await VIEW_SCENES[view](pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ViewScreen) and screen.VIEW_NAME is view
    return screen


async def _idle(pilot: Pilot[None], screen: ViewScreen) -> None:
    await wait_until(pilot, lambda: not any(w.is_running for w in screen.workers), "the view's workers finished")
    await settle(pilot)


@pytest.mark.parametrize("view", [v for v in View if v not in WHOLE_STORE], ids=lambda v: v.value)
async def test_a_view_reloads_when_what_it_read_changes_and_only_then(
    view: View, fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OKSTRA_HOME", str(layout.demo_home(fresh_demo)))
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, view)
        await wait_until(pilot, lambda: bool(_read(screen)), f"the {view.value} view says what it read")
        await _idle(pilot, screen)
        read = _read(screen)

        unread = _unread_file(fresh_demo, read)
        before = _loads(screen)
        _touch(unread, 7)
        app._store_changed(frozenset({unread}))
        await _idle(pilot, screen)
        assert _loads(screen) == before, f"{view.value} read again after {unread} changed, which it never read"

        # Only what lies in this test's own copy is changed (Home also reads the projects the demo's manager home
        # registers, the shared demo among them). The deepest first: a path made may be the folder of another.
        # Each is taken from what the view read last: a change may change what it reads next (a search's hits,
        # ranked by their files' times).
        for number in range(1, SAMPLE + 1):
            own = sorted(p for p in _read(screen) if Path(p).is_relative_to(fresh_demo))
            spread = _spread(own, SAMPLE)
            if not spread:
                # It read nothing of this copy (what it shows lies outside the store): known from the start.
                assert number == 1, f"{view.value} read nothing of the store once it read again"
                break
            path = spread[max(0, len(spread) - number)]
            count = _loads(screen)
            _touch(path, 10 * number)
            app._store_changed(frozenset({path}))
            await wait_until(
                pilot, lambda n=count: _loads(screen) > n, f"{view.value} reads again after {path} changed"
            )
            await _idle(pilot, screen)


@pytest.mark.parametrize("view", sorted(WHOLE_STORE, key=lambda v: v.value), ids=lambda v: v.value)
async def test_a_whole_store_view_reads_again_after_any_change_in_the_store_and_only_then(
    view: View, fresh_demo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OKSTRA_HOME", str(layout.demo_home(fresh_demo)))
    app = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, view)
        await wait_until(pilot, lambda: screen.reads > 0, f"the {view.value} view shows what it read")
        await _idle(pilot, screen)

        outside = fresh_demo / "notes-outside-the-store.md"
        outside.write_text("retry, outside the store\n", encoding="utf-8")
        before = screen.reads
        app._store_changed(frozenset({str(outside)}))
        await pilot.pause(WHOLE_STORE_SECONDS + 0.5)
        await _idle(pilot, screen)
        assert screen.reads == before, f"{view.value} read again after {outside}, outside the store, changed"

        for number, path in enumerate([_unread_file(fresh_demo, _read(screen)), None], start=1):
            count = screen.reads
            if path is not None:
                _touch(path, 10 * number)
            app._store_changed(None if path is None else frozenset({path}))
            await wait_until(pilot, lambda n=count: screen.reads > n, f"{view.value} reads again after {path}")
            await _idle(pilot, screen)


def test_every_view_has_a_scene_and_a_screen() -> None:
    """What makes the test above cover a new view: its scene (also its snapshots) and its registry line."""
    assert set(VIEW_SCENES) == set(View) == set(SCREENS)


def _decision_wizards() -> Iterator[tuple[str, str]]:
    from okstra_tui.screens.decisions import DECISIONS

    for kind in DECISIONS:
        if kind != "approval":  # no wizard: it is given in the lead's session
            yield kind, kind
    yield "attach", "clarification"


WIZARDS = dict(_decision_wizards())


def _open_wizard(root: Path, name: str) -> WizardScreen:
    from okstra_core.workflows.inbox import pending_decisions
    from okstra_tui.screens.decisions import wizard_for_decision
    from okstra_tui.screens.wizard_attach import AttachWizard

    decision = next(d for d in pending_decisions(Project(root)) if d.kind == WIZARDS[name])
    if name == "attach":
        assert decision.task_root is not None
        task_root = decision.task_root
        return AttachWizard(TaskRef(Project(root), task_root.parent.name, task_root.name, task_root).open())
    wizard = wizard_for_decision(root, decision)
    assert isinstance(wizard, WizardScreen), wizard
    return wizard


@pytest.mark.parametrize("name", list(WIZARDS))
async def test_a_wizard_is_stale_when_what_it_read_changes_and_only_then(name: str, fresh_demo: Path) -> None:
    app: OkstraApp = make_app(fresh_demo)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        wizard = _open_wizard(fresh_demo, name)
        app.push_screen(wizard)
        await wait_until(pilot, lambda: not wizard.opening and bool(wizard.read_paths), f"the {name} wizard opened")
        read = {str(p): None for p in wizard.read_paths}
        assert str(wizard.bundle.root) in read or any(p.startswith(str(wizard.bundle.root)) for p in read)

        unread = Path(_unread_file(fresh_demo, read))
        unread.write_bytes(unread.read_bytes() + b"\n")
        assert stale_paths(wizard.baseline, fingerprint(wizard.read_paths, fresh_demo)) == []

        for path in reversed(_spread(sorted(read), SAMPLE)):  # the deepest first, as above
            target = Path(path)
            if target.is_dir():
                (target / "zz-written-meanwhile.txt").write_text("x\n", encoding="utf-8")
            elif target.exists():
                target.write_bytes(target.read_bytes() + b"\n")
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text("written meanwhile\n", encoding="utf-8")
            stale = stale_paths(wizard.baseline, fingerprint(wizard.read_paths, fresh_demo))
            assert layout.rel(target, fresh_demo) in stale, f"{name}: {path} changed, yet the write is not stale"


def test_every_wizard_is_opened_above(fresh_demo: Path) -> None:
    """A new wizard class is covered once the test above opens it (a name in :data:`WIZARDS`)."""
    import okstra_tui.screens.decisions  # noqa: F401 (imports every wizard)

    def leaves(cls: type[WizardScreen]) -> set[type[WizardScreen]]:
        subs = cls.__subclasses__()
        return set().union(*map(leaves, subs)) if subs else {cls}

    opened = {type(_open_wizard(fresh_demo, name)) for name in WIZARDS}
    assert leaves(WizardScreen) <= opened
