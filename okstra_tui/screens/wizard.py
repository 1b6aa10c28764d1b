"""The guided wizard frame: one decision, one step at a time.

A wizard is a full-screen modal of steps. It opens at once and reads what it
shows in a thread worker, saying on its progress line what it reads; Esc
cancels meanwhile. Steps are listed as :class:`StepSpec` and only the step on
screen exists as widgets (a report may ask hundreds of questions): what a step
holds is kept in the wizard's values when it is left and given to it again
when it is built anew. Every step has a title and shows
"step k of n"; Back and Next (the buttons, or ``ctrl+b`` / ``ctrl+n``) move
between steps and Esc cancels, writing nothing (the footer says "esc Cancel"). The review step shows exactly
what will be written and where; its Next writes through one core workflow in a
thread worker. Before writing, the worker compares the files the wizard was
built from with the disk: when one changed the write is refused, the wizard
re-reads them and returns to the review. After a write the checker runs on the
task and the last step shows the file written, the check and what can follow;
there Enter is Done and Esc closes (the footer says "⏎ Done", "esc Close"): the
write stays either way.
Every write is entered in the workbench's write log (:mod:`okstra_core.write_log`)
with the ``okstra`` command lines that make the same write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Static

from okstra_core import layout, reading, write_log
from okstra_core.digests import sha256_bytes
from okstra_core.errors import OkstraError
from okstra_core.store import Task
from okstra_core.text import counted, visible

from ..ui_thread import call_ui
from ..widgets import read_only
from ..widgets.footer import BindingsFooter
from ..widgets.shown import shown_block
from ..widgets.text_lines import TextLines

if TYPE_CHECKING:
    import datetime as dt

    from okstra_core.check.findings import CheckReport
    from okstra_core.workflows.common import Clock

#: What the stale check compares: per source file, the SHA-256 of its bytes (None: absent or unreadable).
Fingerprint = dict[str, str | None]


def fingerprint(paths: Iterable[Path], root: Path) -> Fingerprint:
    """The SHA-256 of each file's bytes (folders: of their sorted entry names); None when absent."""
    import os

    out: Fingerprint = {}
    for path in paths:
        key = layout.rel(path, root)
        if path.is_dir():
            try:
                out[key] = sha256_bytes("\n".join(sorted(os.listdir(path))).encode("utf-8"))
            except OSError:
                out[key] = None
            continue
        data = reading.read_bytes(path, root=root) if os.path.lexists(path) else None
        out[key] = sha256_bytes(data) if isinstance(data, bytes) else None
    return out


def stale_paths(before: Fingerprint, now: Fingerprint) -> list[str]:
    return [key for key in before if before.get(key) != now.get(key)]


@dataclass(frozen=True)
class Written:
    """What a write did: the file written, lines worth saying about it, and the verbs that make it (the log's)."""

    path: Path
    lines: list[Text] = field(default_factory=list)
    #: The ``okstra`` verbs that make the same write, for the write log (none: nothing is logged).
    verbs: tuple[write_log.Verb, ...] = ()
    #: What the write did, in a few words (the write log's title).
    what: str = ""


def task_option(task: Task) -> tuple[str, str]:
    """``--task group/task``: how a logged command line names the task (its folder, which every verb takes)."""
    from okstra_tui.data import seen

    return ("--task", seen.task_key(task.project.root, task.root))


def project_path(path: Path, task: Task) -> str:
    """*path* as a logged command line gives it: relative to the project root (how the verbs resolve it)."""
    return layout.rel(path, task.project.root)


def check_task(task: Task) -> CheckReport | str:
    """The contract checker over this one task (its ``CheckReport``), or a one-line reason it could not run."""
    from okstra_core.check import run_check

    root = task.project.root
    try:
        return run_check(root, only_tasks=[layout.rel(task.root, root)])
    except OkstraError as exc:
        return exc.line(root)


#: Findings listed after a write (the Checks view has them all).
SHOWN_FINDINGS = 3


def check_lines(report: CheckReport | str) -> Text:
    """The check result as a few lines: the counts, then the first findings, errors first."""
    if isinstance(report, str):
        return Text(f"check could not run: {report}", style="red")
    text = Text()
    style = "bold red" if report.errors else "bold green"
    text.append(
        f"check of this task: {counted(report.errors, 'error')}, {counted(report.warnings, 'warning')}, "
        f"{counted(report.infos, 'info')}",
        style=style,
    )
    order = {"error": 0, "warning": 1, "info": 2}
    findings = sorted(report.findings, key=lambda f: order.get(f.severity, 3))
    for finding in findings[:SHOWN_FINDINGS]:
        text.append("\n")
        text.append(f"  {finding.severity} {finding.rule} ", style="red" if finding.severity == "error" else "yellow")
        text.append_text(shown_block(f"{finding.path}: {finding.message}"))
    if len(findings) > SHOWN_FINDINGS:
        text.append(
            f"\n  … and {len(findings) - SHOWN_FINDINGS} more (the Checks view, x, lists them all)", style="dim"
        )
    return text


# ---------------------------------------------------------------- steps


class WizardStep(Vertical):
    """One step: a title, its widgets, how to check it, and what it remembers."""

    DEFAULT_CSS = """
    WizardStep { height: 1fr; padding: 0 1; }
    WizardStep .wiz-label { margin-top: 1; text-style: bold; }
    WizardStep .wiz-dim { color: $text-muted; }
    WizardStep TextArea { height: 6; }
    """

    #: The step's Next writes (the review step).
    WRITES: ClassVar[bool] = False
    #: The last step, shown after the write; Next closes the wizard.
    FINAL: ClassVar[bool] = False

    def __init__(self, title: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.title = title

    @property
    def wizard(self) -> WizardScreen:
        screen = self.screen
        assert isinstance(screen, WizardScreen)
        return screen

    def validate(self) -> str | None:
        """Why the step cannot be left with Next (None: it can)."""
        return None

    def store(self, values: dict[str, Any]) -> None:
        """Remember what the step holds (kept across Back, Next and a reload)."""

    def shown(self) -> None:
        """Called each time the step becomes the current one."""

    def focus_first(self) -> None:
        for widget in self.query("*"):
            if widget.focusable:
                widget.focus()
                return

    @on(events.Mount)
    def _entered(self) -> None:
        # Built and mounted when it comes on screen: the wizard fills and focuses it now.
        screen = self.screen
        if isinstance(screen, WizardScreen):
            screen.step_mounted(self)


S = TypeVar("S", bound=WizardStep)


@dataclass(frozen=True)
class StepSpec:
    """A step as the wizard lists it: its class, and how to build it when it comes on screen."""

    kind: type[WizardStep]
    make: Callable[[], WizardStep]

    @property
    def writes(self) -> bool:
        return self.kind.WRITES

    @property
    def final(self) -> bool:
        return self.kind.FINAL


def spec(kind: type[S], make: Callable[[], S]) -> StepSpec:
    """The step *make* builds (a *kind*); called each time the step comes on screen, so it reads the values then."""
    return StepSpec(kind, make)


class ReviewStep(WizardStep):
    """What will be written, byte for byte, and where; Next writes it."""

    WRITES = True

    DEFAULT_CSS = """
    ReviewStep #review-body { height: 1fr; border: round $primary; padding: 0 1; }
    """

    def __init__(
        self, title: str, render: Callable[[], tuple[Text, str]], *, box: str = "exact bytes", id: str | None = None
    ) -> None:
        super().__init__(title, id=id)
        self._make_review = render
        self.box = box

    def compose(self) -> ComposeResult:
        yield Static("", id="review-facts")
        # Folded at the cell, never at a space, with a ↪ gutter on continued rows: one line of the file is one line.
        body = VerticalScroll(TextLines("", gutter=True, id="review-bytes"), id="review-body", can_focus=True)
        body.border_title = self.box
        yield body

    def shown(self) -> None:
        facts, body = self._make_review()
        self.query_one("#review-facts", Static).update(facts)
        self.query_one("#review-bytes", TextLines).update(visible(body, multiline=True))

    def focus_first(self) -> None:
        self.query_one("#review-body").focus()


class DoneStep(WizardStep):
    """After the write: the file written, the check of the task, and what can follow."""

    FINAL = True

    DEFAULT_CSS = """
    DoneStep #done-scroll { height: 1fr; }
    DoneStep #done-result { height: auto; }
    DoneStep Button { margin: 1 2 0 0; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="done-scroll"):
            yield Static(Text("Not written yet.", style="dim"), id="done-result")
            yield from self.follow_ups()

    def follow_ups(self) -> list[Widget]:
        """Widgets offering the next step (a button running a follow-up write, a verdict)."""
        return []

    def shown(self) -> None:
        wizard = self.wizard
        if wizard.written is not None and wizard.written_check is not None:
            self.show_result(wizard.written, wizard.written_check)

    def show_result(self, written: Written, check: CheckReport | str) -> None:
        root = self.wizard.bundle.project.root
        text = Text()
        text.append("✔ wrote ", style="bold green")
        text.append_text(shown_block(layout.rel(written.path, root), "bold"))
        for line in written.lines:
            text.append("\n")
            text.append_text(line)
        text.append("\n\n")
        text.append_text(check_lines(check))
        self.query_one("#done-result", Static).update(text)

    def focus_first(self) -> None:
        # Enter is Done, as the footer says; a follow-up's button is one Tab away.
        self.wizard.query_one("#wiz-next", Button).focus()


# --------------------------------------------------------------- the frame


class WizardScreen(ModalScreen[Path | None]):
    """A decision as steps. Subclasses give ``subject()``, ``build_steps()``, ``sources()`` and ``write()``.

    Dismissed with the path written (None: cancelled, nothing written).
    """

    #: What the wizard decides, shown before the subject (``Answer the clarification questions``).
    KIND: ClassVar[str] = "Decide"

    #: The step on screen takes the focus when it is built (:meth:`step_mounted`); until then nothing has it, so
    #: the app does not give it to the first button (Cancel) when the wizard opens.
    AUTO_FOCUS = ""

    #: Before the write Esc cancels (nothing written); after it Esc closes (the write stays) and Enter is Done.
    BINDINGS = [
        # Priority: shown and taken while the Done button has the focus (a follow-up's button keeps its Enter).
        Binding("enter", "done", "Done", priority=True),
        Binding("escape", "cancel", "Cancel"),
        Binding("escape", "close", "Close"),
        Binding("ctrl+b", "back_step", "Back"),
        Binding("ctrl+n", "next_step", "Next"),
        # After the write ctrl+n, the key that led through the steps, is Done too.
        Binding("ctrl+n", "done", "Done", show=False),
    ]

    DEFAULT_CSS = """
    WizardScreen { background: $background; }
    WizardScreen #wiz-head { height: 2; background: $panel; padding: 0 1; }
    WizardScreen #wiz-head Static { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    WizardScreen #wiz-steps { height: 1fr; }
    WizardScreen #wiz-error { color: $error; height: auto; padding: 0 1; }
    WizardScreen #wiz-buttons { height: 1; align-horizontal: right; padding: 0 1; margin-top: 1; }
    WizardScreen #wiz-buttons Button { margin-left: 2; }
    """

    def __init__(self, task: Task) -> None:
        from okstra_core.workflows.common import SYSTEM_CLOCK

        super().__init__()
        self.bundle = task
        #: What the steps hold, by key; kept across Back, Next and a reload.
        self.values: dict[str, Any] = {}
        self.index = 0
        self.written: Written | None = None
        #: The check of the task after the write (a ``CheckReport`` or a reason), shown with it.
        self.written_check: CheckReport | str | None = None
        self.busy = False
        #: True while the worker reads what the wizard shows (at opening, and after a stale write).
        self.opening = True
        self.closed = False
        self.baseline: Fingerprint = {}
        #: What the opening read (files, folders listed, paths probed): the write is refused when any changed.
        self.read_paths: list[Path] = []
        self.steps: list[StepSpec] = []
        self.current: WizardStep | None = None
        #: The step filled once it came on screen: until the current one is, the wizard does not move.
        self.filled: WizardStep | None = None
        #: Where the writes that record a time take it (the system clock: the moment of writing; a picture fixes it).
        self.clock: Clock = SYSTEM_CLOCK
        #: The clock of the write under way: stopped at one moment, which its logged command lines give as ``--at``.
        self.write_clock: Clock = SYSTEM_CLOCK

    # ------------------------------------------------ what subclasses give

    def subject(self) -> str:
        raise NotImplementedError

    def heading(self) -> str:
        """What the wizard decides, before the subject."""
        return self.KIND

    def opening_text(self) -> str:
        """What the wizard reads while it opens (its progress line)."""
        return f"reading {self.bundle.rel}"

    def build_steps(self) -> list[StepSpec]:
        raise NotImplementedError

    def load(self) -> None:
        """(Re-)read what the wizard decides from (in a worker: no widget access); raises ``OkstraError`` when it
        cannot. What it reads through :mod:`okstra_core.reading` is recorded: a change to any of it before the write
        makes the wizard stale (the write is refused and the wizard reads again)."""

    def write(self, values: dict[str, Any]) -> Written:
        """Write through the core (runs in a worker: no widget access); an ``OkstraError`` is a refusal.

        Times are taken from :attr:`write_clock`; the result names the verbs that make the same write.
        """
        raise NotImplementedError

    # ---------------------------------------------------------- building

    @property
    def root(self) -> Path:
        return self.bundle.project.root

    def compose(self) -> ComposeResult:
        with Vertical(id="wiz-head"):
            yield Static("", id="wiz-subject")
            yield Static("", id="wiz-progress")
        yield Vertical(id="wiz-steps")
        yield Static("", id="wiz-error")
        with Horizontal(id="wiz-buttons"):
            yield Button("Cancel", id="wiz-cancel", compact=True)
            yield Button("◀ Back", id="wiz-back", compact=True)
            yield Button("Next ▶", id="wiz-next", variant="primary", compact=True)
        yield BindingsFooter()

    def on_mount(self) -> None:
        self._start_open(None)

    def progress(self, line: str) -> None:
        """Say on the progress line what the opening worker does now (callable from the worker)."""
        call_ui(self.app, self._show_progress, line)

    def _show_progress(self, line: str) -> None:
        if self.closed or not self.opening:
            return
        text = Text()
        text.append(" opening ", style="bold reverse")
        text.append("  ")
        text.append_text(shown_block(" ".join(line.split()), "dim"))
        self.query_one("#wiz-progress", Static).update(text)

    def _start_open(self, stale: list[str] | None) -> None:
        self.opening = True
        self._show_head()
        self._show_progress(self.opening_text())
        # Esc cancels while it opens; Enter, pressed again on the way in, must not close it.
        self.set_focus(None)
        self._open_worker(stale)

    @work(thread=True, exclusive=True, group="wizard-open", description="wizard-open")
    def _open_worker(self, stale: list[str] | None) -> None:
        try:
            with reading.recording() as reads:
                self.load()
                steps = self.build_steps()
            self.read_paths = [Path(p) for p in sorted(reads.paths)]
            baseline = fingerprint(self.read_paths, self.root)
        except OkstraError as exc:
            call_ui(self.app, self._open_failed, exc.line(self.root), stale)
            return
        # Dropped when the wizard was closed meanwhile (its workers are cancelled with it).
        call_ui(self.app, self._opened, baseline, steps, stale)

    def _open_failed(self, line: str, stale: list[str] | None) -> None:
        if self.closed:
            return
        if stale is not None:
            # The steps of before stay; the write stays refused until the sources read again.
            self.opening = False
            self._show_head()
            names = ", ".join(stale)
            self.refuse(f"{names} changed on disk since this wizard opened; nothing was written. {line}")
            return
        self.query_one("#wiz-progress", Static).update(Text(" cannot open ", style="bold reverse"))
        self.refuse(line)
        self.query_one("#wiz-cancel", Button).focus()

    def _opened(self, baseline: Fingerprint, steps: list[StepSpec], stale: list[str] | None) -> None:
        if self.closed:
            return  # cancelled while it was read
        self.opening = False
        self.baseline = baseline
        self.steps = steps
        if stale is None:
            self.go(0)
            return
        review = next((i for i, s in enumerate(steps) if s.writes), 0)
        self.go(review)
        names = ", ".join(stale)
        self.refuse(
            f"{names} changed on disk since this wizard opened; nothing was written. The wizard has re-read it: "
            "check the review and write again."
        )

    @property
    def step(self) -> WizardStep:
        """The step on screen (the only one that exists as widgets)."""
        if self.current is None:
            raise LookupError("the wizard shows no step yet")
        return self.current

    def go(self, index: int) -> None:
        """Show step *index*: the step on screen is removed and this one built (filled when mounted)."""
        self.index = index
        old = self.current
        step = self.steps[index].make()
        self.current = step
        # Nothing has the focus until the step is on screen (it takes it then): a key pressed meanwhile must not
        # reach the button the focus would otherwise fall back on (Enter on Cancel closes the wizard).
        self.set_focus(None)
        if old is not None:
            old.remove()
        self.query_one("#wiz-steps", Vertical).mount(step)
        note = Text(read_only.WIZARD_LINE, style="bold yellow") if self._read_only_write() else ""
        self.query_one("#wiz-error", Static).update(note)
        self._show_head()

    def step_mounted(self, step: WizardStep) -> None:
        """A step came on screen: fill it and give it the focus."""
        if step is not self.current:
            return
        step.shown()
        self.filled = step
        step.focus_first()
        self.refresh_bindings()

    def _show_head(self) -> None:
        subject = read_only.badge()
        if subject:
            subject.append(" ")
        subject.append(f"{self.heading()}  ", style="bold")
        if self.current is None:
            subject.append_text(shown_block(" ".join(self.opening_text().split()), "dim"))
        else:
            subject.append_text(shown_block(" ".join(self.subject().split())))
        self.query_one("#wiz-subject", Static).update(subject)
        step = self.current
        if step is not None:
            progress = Text()
            progress.append(f" step {self.index + 1} of {len(self.steps)} ", style="bold reverse")
            progress.append("  ")
            progress.append_text(shown_block(" ".join(step.title.split()), "bold"))
            self.query_one("#wiz-progress", Static).update(progress)
        after_write = self.written is not None
        waiting = self.busy or self.opening or step is None
        back = self.query_one("#wiz-back", Button)
        back.disabled = self.index == 0 or after_write or waiting
        nxt = self.query_one("#wiz-next", Button)
        final = step is not None and step.FINAL
        nxt.label = "Done" if final else ("Write ▶" if step is not None and step.WRITES else "Next ▶")
        nxt.disabled = waiting or (final and not after_write) or self._read_only_write()
        if self._read_only_write():
            nxt.label = "Read-only"
            nxt.tooltip = read_only.REASON
        self.query_one("#wiz-cancel", Button).display = not after_write
        self.refresh_bindings()

    def _read_only_write(self) -> bool:
        """The step on screen is the write step and the workbench is read-only."""
        step = self.current
        return step is not None and step.WRITES and read_only.read_only()

    def _can_move(self) -> bool:
        return not self.busy and not self.opening and self.current is not None and self.current is self.filled

    def _done_shown(self) -> bool:
        """The step after the write is on screen: Enter is Done, Esc closes."""
        return self.written is not None and self.current is not None and self.current.FINAL

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back_step":
            return self.index > 0 and self.written is None and self._can_move()
        if action == "next_step":
            if self._done_shown():
                return False  # Enter (Done) takes its place
            return None if self._read_only_write() else self._can_move()
        if action == "cancel":
            return self.written is None
        if action == "close":
            return self.written is not None
        if action == "done":
            other_button = isinstance(self.focused, Button) and self.focused.id != "wiz-next"
            return self._done_shown() and not self.busy and not other_button
        return True

    def refuse(self, line: str) -> None:
        self.query_one("#wiz-error", Static).update(shown_block(line))

    # ---------------------------------------------------------- moving

    @on(Button.Pressed, "#wiz-back")
    def action_back_step(self) -> None:
        if self.index == 0 or self.written is not None or not self._can_move():
            return
        self.step.store(self.values)
        self.go(self.index - 1)

    @on(Button.Pressed, "#wiz-next")
    def action_next_step(self) -> None:
        if not self._can_move():
            return
        step = self.step
        if step.FINAL:
            self._close(self.written.path if self.written else None)
            return
        problem = step.validate()
        if problem is not None:
            self.refuse(problem)
            return
        step.store(self.values)
        if step.WRITES:
            if read_only.read_only():
                self.query_one("#wiz-error", Static).update(Text(read_only.WIZARD_LINE, style="bold yellow"))
                return
            self._start_write()
            return
        self.go(self.index + 1)

    @on(Button.Pressed, "#wiz-cancel")
    def action_cancel(self) -> None:
        if self.busy:
            return
        self._close(self.written.path if self.written else None)

    def action_close(self) -> None:
        """Esc after the write: the wizard closes, the write stays."""
        self.action_cancel()

    def action_done(self) -> None:
        """Enter on the step after the write (when no button of the step takes it): close the wizard."""
        if self._done_shown() and not self.busy:
            self._close(self.written.path if self.written else None)

    def _close(self, result: Path | None) -> None:
        self.closed = True  # a reading still under way is dropped when it ends
        self.dismiss(result)

    # ----------------------------------------------------------- writing

    def _set_busy(self, busy: bool) -> None:
        self.busy = busy
        self._show_head()

    def _start_write(self) -> None:
        self._set_busy(True)
        self.refuse("")
        self.query_one("#wiz-error", Static).update(Text("Writing…", style="dim"))
        self._write_worker(dict(self.values), dict(self.baseline))

    @work(thread=True, exclusive=True, group="wizard-write", description="wizard-write")
    def _write_worker(self, values: dict[str, Any], baseline: Fingerprint) -> None:
        # Handed back with call_from_thread, not call_ui: a write's outcome is always shown, never dropped as
        # superseded (the wizard is busy while one runs, so no second write starts).
        changed = stale_paths(baseline, fingerprint(self.read_paths, self.root))
        if changed:
            self.app.call_from_thread(self._stale_refused, changed)
            return
        try:
            written = self._logged(lambda: self.write(values))
        except OkstraError as exc:
            self.app.call_from_thread(self._refused, exc.line(self.root))
            return
        check = check_task(self.bundle)
        self.app.call_from_thread(self._written, written, check)

    def _logged(self, make: Callable[[], Written]) -> Written:
        """Run the write *make* with a stopped clock and enter it in the write log (in the writing worker)."""
        from okstra_core.workflows.common import Clock

        moment = self.clock.now()
        self.write_clock = Clock.at(moment)
        with write_log.collected_writes() as paths:
            written = make()
        if written.verbs and paths:  # a write that changed nothing is not logged
            self._enter(moment, written, paths)
        return written

    def _enter(self, moment: dt.datetime, written: Written, paths: list[Path]) -> None:
        task = task_option(self.bundle)[1]
        try:
            write_log.record(self.root, moment, written.what, task, paths, written.verbs)
        except OkstraError as exc:
            # The store write happened; only its log entry is missing: say so, do not undo the write.
            self.app.call_from_thread(self.notify, visible(exc.line(self.root)), severity="warning", timeout=8)

    def _refused(self, line: str) -> None:
        self._set_busy(False)
        self.refuse(line)

    def _stale_refused(self, changed: list[str]) -> None:
        """Refuse the write of a stale view: re-read the sources (in the worker), rebuild the steps, show the review."""
        self.busy = False
        self._start_open(changed)

    def _written(self, written: Written, check: CheckReport | str) -> None:
        self.written = written
        self.written_check = check
        self.busy = False
        self.go(next(i for i, s in enumerate(self.steps) if s.final))
        self.notify(visible(f"Wrote {layout.rel(written.path, self.root)}"), timeout=4)

    # ------------------------------------------------------- follow-ups

    def run_follow_up(self, work_fn: Callable[[], Written], show: Callable[[Written | str, Any], None]) -> None:
        """Run a further core write after the main one (attach, planning prepare) off the UI thread."""
        self._set_busy(True)
        self._follow_up_worker(work_fn, show)

    @work(thread=True, exclusive=True, group="wizard-follow-up", description="wizard-follow-up")
    def _follow_up_worker(self, work_fn: Callable[[], Written], show: Callable[[Written | str, Any], None]) -> None:
        try:
            written = self._logged(work_fn)
        except OkstraError as exc:
            self.app.call_from_thread(self._follow_up_done, show, exc.line(self.root), None)
            return
        check = check_task(self.bundle)
        self.app.call_from_thread(self._follow_up_done, show, written, check)

    def _follow_up_done(self, show: Callable[[Written | str, Any], None], result: Written | str, check: Any) -> None:
        self._set_busy(False)
        show(result, check)
        if isinstance(result, Written):
            self.notify(visible(f"Wrote {layout.rel(result.path, self.root)}"), timeout=4)
