"""The notices' pulse: what a reading says happened since the one before, read whole, through the store index, or
only for the tasks a change touched; and what a pulse holds between two readings."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from okstra_core.store import Project
from okstra_core.store_index import StoreIndex
from okstra_core.workflows import inbox as inbox_module
from okstra_core.workflows.inbox import read_inbox
from okstra_core.workflows.pulse import Notice, Pulse, read_pulse, refresh_pulse

from .test_inbox_index import KEY, SCOPE, TASKS, _settle

SIDECAR = "checkout/address-validation/runs/option-selection/user-responses/user-response-option-selection-001.md"


def _said(notices: list[Notice]) -> list[tuple[str, str, str]]:
    return [(n.kind, n.task, n.text) for n in notices]


def _set_status(root: Path, task: str, status: str) -> None:
    manifest = root / TASKS / task / "task-manifest.json"
    value = json.loads(manifest.read_text(encoding="utf-8"))
    value["latestRunStatus"] = status
    manifest.write_text(json.dumps(value), encoding="utf-8")


def _through_index(root: Path, cache: Path, before: Pulse | None) -> tuple[Pulse, list[Notice]]:
    with StoreIndex(root, cache, key=KEY, scope=SCOPE) as index:
        return read_pulse(Project(root), index, before)


def test_a_first_reading_says_nothing_and_holds_no_text(fresh_demo: Path) -> None:
    pulse, said = read_pulse(Project(fresh_demo))
    assert said == []
    waiting = read_inbox(Project(fresh_demo)).items
    assert len(pulse.decisions) == len(waiting) > 0
    # Digests and task folders only: no decision's summary, no run's path is held.
    assert all(isinstance(d, bytes) and len(d) == 16 for d in pulse.decisions)
    assert set(pulse.decisions.values()) == {str(d.task_root) for d in waiting}
    assert all(isinstance(digest, bytes) and Path(folder).is_dir() for digest, folder in pulse.runs.values())


def test_a_decision_that_starts_waiting_and_a_run_that_ends_are_said(fresh_demo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _settle(fresh_demo, time.time())
    before, _ = _through_index(fresh_demo, cache, None)
    (fresh_demo / TASKS / SIDECAR).unlink()  # the recorded choice is gone: the direction waits again
    _set_status(fresh_demo, "search/index-rebuild", "error")
    _settle(fresh_demo, time.time())
    expected = [
        ("decision", "demo-shop:checkout:address-validation"),
        ("run-failed", "demo-shop:search:index-rebuild"),
    ]
    indexed, said = _through_index(fresh_demo, cache, before)
    assert [s[:2] for s in _said(said)] == expected
    assert said[1].text.endswith("run ended: error")
    assert (
        said[0].decision is not None
        and said[0].decision.task_root == fresh_demo / TASKS / "checkout/address-validation"
    )
    assert said[1].task_root == fresh_demo / TASKS / "search/index-rebuild"
    # Read afresh, and only the two tasks read again: the same news and the same pulse.
    fresh, said_fresh = read_pulse(Project(fresh_demo), None, before)
    touched = {fresh_demo / TASKS / "checkout/address-validation", fresh_demo / TASKS / "search/index-rebuild"}
    refreshed, said_refreshed = refresh_pulse(Project(fresh_demo), before, touched)
    assert _said(said) == _said(said_fresh) == _said(said_refreshed)
    assert indexed == fresh == refreshed
    # Nothing changed since: nothing said.
    assert _through_index(fresh_demo, cache, indexed)[1] == []
    assert refresh_pulse(Project(fresh_demo), indexed, touched)[1] == []


def test_a_run_completed_again_and_a_decision_made_are_not_news_twice(fresh_demo: Path) -> None:
    before, _ = read_pulse(Project(fresh_demo))
    _set_status(fresh_demo, "search/index-rebuild", "error")
    failed, said = read_pulse(Project(fresh_demo), None, before)
    assert [n.kind for n in said] == ["run-failed"]
    _set_status(fresh_demo, "search/index-rebuild", "completed")
    completed, said = read_pulse(Project(fresh_demo), None, failed)
    assert [(n.kind, n.task) for n in said] == [("run-completed", "demo-shop:search:index-rebuild")]
    assert said[0].text.endswith(" run completed")
    assert read_pulse(Project(fresh_demo), None, completed)[1] == []
    # The recorded choice removed: the direction waits instead of the hand-off to planning (news); put back, the
    # hand-off waits again (news again), and the pulse is as it was.
    sidecar = fresh_demo / TASKS / SIDECAR
    kept = sidecar.read_bytes()
    sidecar.unlink()
    waiting, said = read_pulse(Project(fresh_demo), None, completed)
    assert [n.kind for n in said] == ["decision"] and waiting != completed
    sidecar.write_bytes(kept)
    made, said = read_pulse(Project(fresh_demo), None, waiting)
    assert [(n.kind, n.decision and n.decision.kind) for n in said] == [("decision", "planning-prepare")]
    assert made == completed


def test_through_the_index_only_the_news_is_built_whole(
    fresh_demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kept inbox is taken a row at a time: a reading builds the decisions that are news, no other."""
    cache = tmp_path / "cache"
    _settle(fresh_demo, time.time())
    _through_index(fresh_demo, cache, None)  # the inbox kept
    built: list[object] = []
    decode = inbox_module._decode_decision

    def counted(row: list[object], *rest: object) -> object:
        built.append(row)
        return decode(row, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(inbox_module, "_decode_decision", counted)
    before, said = _through_index(fresh_demo, cache, None)
    assert said == [] and built == [] and before.decisions
    missing = dict(before.decisions)
    dropped = next(iter(missing))
    del missing[dropped]  # as if that decision had not waited before
    _, said = _through_index(fresh_demo, cache, Pulse(missing, before.runs))
    assert len(built) == len(said) == 1 and said[0].kind == "decision"


def test_a_task_folder_is_told_apart_by_its_text(fresh_demo: Path) -> None:
    """A pulse's folders are the paths' texts: those a change names (as paths) select them."""
    before, _ = read_pulse(Project(fresh_demo))
    task = fresh_demo / TASKS / "search/index-rebuild"
    assert os.fspath(task) in {folder for _, folder in before.runs.values()}
    _set_status(fresh_demo, "search/index-rebuild", "error")
    after, said = refresh_pulse(Project(fresh_demo), before, {task})
    assert [n.task for n in said] == ["demo-shop:search:index-rebuild"]
    assert after.runs.keys() == before.runs.keys()


def test_what_a_reading_packs_is_the_pulse_it_holds() -> None:
    """Texts of any kind (a NUL, a lone surrogate, a long one) come back as packed, and a folder shared by a
    decision and a run is held once."""
    from okstra_core.workflows.pulse import _Packed

    odd = ["", "a\x00b", "ta\udc80sk", "é" * 70_000, "/p/.okstra/tasks/g/t"]
    packed = _Packed()
    for n, text in enumerate(odd):
        packed.add_decision(bytes([n]) * 16, text)
        packed.add_run(text + "!", bytes([n + 100]) * 16, text)
    kept = Pulse({b"k" * 16: "/kept"}, {"kept": (b"r" * 16, "/kept")})
    pulse = packed.pulse(kept)
    assert pulse.decisions == {b"k" * 16: "/kept", **{bytes([n]) * 16: text for n, text in enumerate(odd)}}
    assert pulse.runs == {
        "kept": (b"r" * 16, "/kept"),
        **{t + "!": (bytes([n + 100]) * 16, t) for n, t in enumerate(odd)},
    }
    assert all(pulse.runs[t + "!"][1] is pulse.decisions[bytes([n]) * 16] for n, t in enumerate(odd))


@pytest.mark.parametrize(("first", "second", "ended"), [("completed", "running", False), ("running", "failed", True)])
def test_a_task_key_two_tasks_share_gives_the_later_tasks_run(first: str, second: str, ended: bool) -> None:
    """The runs are packed as they come: where two task folders carry one task key, the later one's run is the
    pulse's and says whether a run ended, whatever the earlier one's says."""
    from okstra_core.workflows import pulse as pulse_module

    key = "p:g:t"
    before = Pulse({}, {key: (pulse_module._digest(("runs/old", "running", None)), "/p/a")})
    runs = [("/p/a", (key, "runs/analysis", first, None)), ("/p/b", (key, "runs/analysis", second, None))]
    now, notices = pulse_module._compared([], lambda: runs, before, Pulse())
    assert now.runs == {key: (pulse_module._digest(("runs/analysis", second, None)), "/p/b")}
    assert [(n.kind, n.task, n.task_root) for n in notices] == ([("run-failed", key, Path("/p/b"))] if ended else [])
