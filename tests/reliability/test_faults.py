"""An OSError injected into the Nth ``os.write`` / ``os.fsync`` / ``os.replace`` / ``os.link`` of each
workflow, for every N until the workflow completes: a clear one-line error each time, no new
checker error in the store, and a plain retry completes."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from okstra_core import cli
from okstra_core.models import task as tm
from okstra_core.workflows.tasks import record_fix_cycle

from . import scenario as sc

OPS = ("write", "fsync", "replace", "link")


class Faults:
    """Counts I/O calls that touch the store and fails the Nth one."""

    def __init__(self, root: Path, fail_at: int) -> None:
        self.root = os.path.realpath(root)
        self.fail_at = fail_at
        self.calls = 0
        self.fired: str | None = None

    def _inside(self, target: Any) -> bool:
        if isinstance(target, int):
            try:
                target = os.readlink(f"/proc/self/fd/{target}")
            except OSError:
                return False
        return os.path.realpath(os.fspath(target)).startswith(self.root)

    def wrap(self, name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def hooked(*args: Any, **kwargs: Any) -> Any:
            if args and self._inside(args[0]):
                self.calls += 1
                if self.calls == self.fail_at:
                    self.fired = name
                    raise OSError(errno.EIO, f"injected I/O error in os.{name}")
            return real(*args, **kwargs)

        return hooked


@contextmanager
def injected(root: Path, fail_at: int) -> Iterator[Faults]:
    faults = Faults(root, fail_at)
    saved = {name: getattr(os, name) for name in OPS}
    try:
        for name in OPS:
            setattr(os, name, faults.wrap(name, saved[name]))
        yield faults
    finally:
        for name, real in saved.items():
            setattr(os, name, real)


def _nothing(root: Path) -> None:
    return None


def _export_first(root: Path) -> None:
    from okstra_core.store import Project
    from okstra_core.workflows import user_response_export

    task = Project(root).find_task(sc.REFUND)
    assert task is not None
    user_response_export.export(root, task, root / sc.REFUND_REPORT, {"CQ-001": "All.", "CQ-002": "bank"})


def _answers(root: Path) -> Path:
    path = root / "answers.json"
    path.write_text(json.dumps({"CQ-001": "None.", "CQ-002": "gateway"}))
    return path


def _answer_md(root: Path) -> Path:
    path = root / "answer.md"
    path.write_text("## format\n\nULID\n\n## rationale\n\nsortable\n")
    return path


def _file(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.write_text(text)
    return path


def _fix_event(root: Path) -> None:
    record_fix_cycle(
        root,
        root / ".okstra/tasks/payments/retry-policy",
        tm.FixCycleEvent(event="opened", cycle_id="fc-9", cycle=1, symptom="s", at="2026-12-01T00:00:00Z"),
    )


CASES: dict[str, tuple[Callable[[Path], None], Callable[[Path], list[Any]]]] = {
    "direction select": (
        lambda r: _unselect(r),
        lambda r: ["direction", "select", r, "--task", sc.RETRY, "--option", "IO-001"],
    ),
    "planning prepare": (
        lambda r: (r / sc.ROUNDING_SD).unlink() and None,
        lambda r: ["planning", "prepare", r, "--task", sc.ROUNDING],
    ),
    "design-prep materialize": (
        lambda r: (r / sc.REQUEST).unlink() and None,
        lambda r: ["design-prep", "materialize", r, "--task", sc.RETRY],
    ),
    "design-prep confirm": (
        _nothing,
        lambda r: ["design-prep", "confirm", r, "--task", sc.RETRY, "--item", "PREP-001", "--input", _answer_md(r)],
    ),
    "user-response export": (
        _nothing,
        lambda r: [
            "user-response",
            "export",
            r,
            "--task",
            sc.REFUND,
            "--report",
            sc.REFUND_REPORT,
            "--answers",
            _answers(r),
        ],
    ),
    "clarification attach": (_export_first, lambda r: ["clarification", "attach", r, "--task", sc.REFUND]),
    "team-state dispatch": (
        _nothing,
        lambda r: [
            "team-state",
            "dispatch",
            r,
            "--task",
            sc.RETRY,
            "--run-type",
            "analysis",
            "--dispatch-id",
            "d-f",
            "--worker-id",
            "claude-analyser",
        ],
    ),
    "team-state link": (
        lambda r: _link_setup(r),
        lambda r: [
            "team-state",
            "link",
            r,
            "--task",
            sc.RETRY,
            "--run-type",
            "analysis",
            "--dispatch-id",
            "d-f",
            "--result",
            f"{sc.AN}/worker-results/codex-analyser-audit-analysis-002.md",
        ],
    ),
    "prompt publish": (
        lambda r: (r / (sc.CI_PROMPT + ".meta.json")).unlink() and None,
        lambda r: [
            "prompt",
            "publish",
            r,
            "--manifest",
            sc.CI_MANIFEST,
            "--task",
            sc.CI,
            "--assignment",
            "assign-02-codex-executor",
            "--duty",
            "executor",
            "--body",
            _orphan_body(r),
        ],
    ),
    "agent-prompt start": (
        _nothing,
        lambda r: [
            "agent-prompt",
            "start",
            r,
            "--purpose",
            "code-review",
            "--id",
            "f",
            "--instructions",
            _file(r, "i.md", "I\n"),
            "--prompt",
            _file(r, "p.md", "P\n"),
        ],
    ),
    "agent-prompt complete": (
        lambda r: _started(r),
        lambda r: [
            "agent-prompt",
            "complete",
            r,
            "--purpose",
            "code-review",
            "--id",
            "f",
            "--body",
            _file(r, "b.txt", "fine"),
        ],
    ),
    "migrate-legacy": (_nothing, lambda r: ["migrate-legacy", r, "--task", sc.LATENCY]),
    "convergence seed --restart-from-round0": (
        lambda r: _invalid_convergence(r),
        lambda r: ["convergence", "seed", r, "--task", sc.RETRY, "--run-type", "analysis", "--restart-from-round0"],
    ),
    "task refresh-fix-cycles": (_fix_event, lambda r: ["task", "refresh-fix-cycles", r, "--task", sc.RETRY]),
}


def _unselect(root: Path) -> None:
    (root / ".okstra/tasks/payments/retry-policy/instruction-set/selected-direction.json").unlink()
    runs = root / ".okstra/tasks/payments/retry-policy/runs"
    (runs / "option-selection/user-responses/user-response-option-selection-001.md").unlink()


#: The task folders each case needs (a smaller store checks faster).
TASKS = {
    "planning prepare": (".okstra/tasks/payments/currency-rounding",),
    "user-response export": (".okstra/tasks/payments/refund-ledger",),
    "clarification attach": (".okstra/tasks/payments/refund-ledger",),
    "prompt publish": (".okstra/tasks/platform/ci-speedup",),
    "agent-prompt start": (".okstra/tasks/platform/ci-speedup",),
    "agent-prompt complete": (".okstra/tasks/platform/ci-speedup",),
    "migrate-legacy": (".okstra/tasks/search/query-latency",),
}
RETRY_ONLY = (".okstra/tasks/payments/retry-policy",)


def _link_setup(root: Path) -> None:
    assert (
        cli.main(
            [
                "team-state",
                "dispatch",
                str(root),
                "--task",
                sc.RETRY,
                "--run-type",
                "analysis",
                "--dispatch-id",
                "d-f",
                "--worker-id",
                "claude-analyser",
            ]
        )
        == 0
    )


def _orphan_body(root: Path) -> Path:
    return _file(root, "body.md", (root / sc.CI_PROMPT).read_text())


def _started(root: Path) -> None:
    assert (
        cli.main(
            [
                "agent-prompt",
                "start",
                str(root),
                "--purpose",
                "code-review",
                "--id",
                "f",
                "--instructions",
                str(_file(root, "i.md", "I\n")),
                "--prompt",
                str(_file(root, "p.md", "P\n")),
            ]
        )
        == 0
    )


def _invalid_convergence(root: Path) -> None:
    (root / sc.WORK).write_bytes(b'{"schemaVersion": "1.2", "queue": [')
    (root / sc.FINAL).write_bytes(b'{"schemaVersion": "1.1"}\n')


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_nth_io_call_fails_cleanly(
    case: str, slim_factory: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    setup, argv = CASES[case]
    tasks = TASKS.get(case, RETRY_ONLY)
    reference = slim_factory("reference", tasks)
    setup(reference)
    baseline = sc.error_findings(reference)
    n = 0
    while True:
        n += 1
        root = slim_factory(f"n{n}", tasks)
        setup(root)
        args = [str(a) for a in argv(root)]
        capsys.readouterr()
        with injected(root, n) as faults:
            code = cli.main(args)
        err = capsys.readouterr().err
        if faults.fired is None:
            assert code == 0, err  # the workflow completed before the Nth call: every N has been tried
            assert n > 1, "the workflow made no I/O at all"
            break
        assert code == 1, f"N={n} ({faults.fired}): {err}"
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "injected I/O error" in lines[0] and str(root) in lines[0], lines
        assert sc.unparseable(root) == [], f"N={n}"
        assert sc.error_findings(root) - baseline == set(), f"N={n} ({faults.fired})"
        capsys.readouterr()
        assert cli.main(args) == 0, capsys.readouterr().err  # a plain retry completes
