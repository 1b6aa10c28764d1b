"""When things happen in the demo: a clock that can wait, the rich tasks' calendar, the bulk tasks' spread.

The demo's history spans about two weeks of November 2026: several runs on some
days, none at weekends, runs that take minutes or hours by phase, so that the
Insights view and a task's timeline picture have something to show. Nothing
here reads the wall clock or an unseeded random source: the rich tasks follow a
written calendar, and each bulk task draws its day, start and pace from a
``random.Random`` seeded with the demo's seed and the task's index.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..workflows.common import Clock

#: The demo's first day (a Monday); its calendar and the bulk tasks' days count from here.
FIRST_DAY = dt.date(2026, 11, 2)


@dataclass
class DemoClock(Clock):
    """A stepping clock that can also wait: each write still takes the next step, and :meth:`wait` and
    :meth:`wait_until` move the time on to where the calendar puts the next piece of work."""

    _at: dt.datetime = field(default_factory=lambda: dt.datetime(2026, 11, 2, tzinfo=dt.UTC))

    def __post_init__(self) -> None:
        if self.start is not None:
            self._at = self.start

    def now(self) -> dt.datetime:
        self._at += self.step
        return self._at

    def last(self) -> dt.datetime:
        return self._at

    def wait(self, span: dt.timedelta) -> None:
        """Let *span* pass before the next write."""
        self._at += span

    def wait_until(self, moment: dt.datetime) -> None:
        """Let the time pass until *moment* (never backwards: a calendar running late just goes on)."""
        self._at = max(self._at, moment)


@dataclass(frozen=True)
class Slot:
    """When a run starts and how long its team works on it (each worker a share, one after another)."""

    start: dt.datetime
    minutes: float

    @property
    def work(self) -> dt.timedelta:
        return dt.timedelta(minutes=self.minutes)


def on(day: int, hhmm: str) -> dt.datetime:
    """The UTC time *hhmm* on November *day*, 2026."""
    hour, minute = (int(part) for part in hhmm.split(":"))
    return dt.datetime(2026, 11, day, hour, minute, tzinfo=dt.UTC)


def slot(day: int, hhmm: str, minutes: float) -> Slot:
    return Slot(on(day, hhmm), minutes)


#: How long one reverify round of a convergence takes (the analysers vote, the lead tallies).
ROUND_TIME = dt.timedelta(minutes=6)


# ------------------------------------------------------------------ bulk


#: The bulk tasks' calendar: how many tasks start on each day from FIRST_DAY, relatively (weekends: none).
DAY_WEIGHTS = (6, 9, 8, 7, 3, 0, 0, 7, 10, 4, 8, 5, 0, 0, 9, 6)

#: How long a bulk template's team works, by task type (minutes); each clone works at its own pace.
BULK_MINUTES = {
    "analysis": 30.0,
    "option-selection": 14.0,
    "implementation-planning": 35.0,
    "implementation": 75.0,
    "final-verification": 18.0,
}


@dataclass(frozen=True)
class Pace:
    """Where a bulk clone's times go: its template's times from *origin* on, scaled by *scale*, from *start*."""

    origin: dt.datetime
    start: dt.datetime
    scale: float

    def move(self, moment: dt.datetime) -> dt.datetime:
        moved = self.start + (moment - self.origin) * self.scale
        return moved.replace(microsecond=0)


def bulk_pace(seed: int, index: int, origin: dt.datetime) -> Pace:
    """Bulk task *index*'s day, start and pace, drawn from a generator seeded with *seed* and *index*."""
    draw = random.Random(f"okstra-demo:{seed}:{index}")
    day = draw.choices(range(len(DAY_WEIGHTS)), weights=DAY_WEIGHTS)[0]
    start = dt.datetime.combine(FIRST_DAY + dt.timedelta(days=day), dt.time(8), tzinfo=dt.UTC)
    start += dt.timedelta(minutes=draw.randrange(0, 9 * 60))
    scale = min(4.0, max(0.3, draw.lognormvariate(0.0, 0.55)))
    return Pace(origin, start, scale)


def variant(seed: int, index: int, choices: list[tuple[str, int]]) -> str:
    """One of *choices* (name, weight) for bulk task *index*, drawn from its own seeded generator."""
    draw = random.Random(f"okstra-demo-variant:{seed}:{index}")
    return draw.choices([name for name, _ in choices], weights=[w for _, w in choices])[0]


_ISO = re.compile(rb"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z")
_COMPACT = re.compile(rb"(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{6})Z")


def _retimer(form: str, pace: Pace) -> Callable[[re.Match[bytes]], bytes]:
    def swap(match: re.Match[bytes]) -> bytes:
        year, month, day, hour, minute, second = (int(p) for p in match.groups()[:6])
        moment = dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.UTC)
        return pace.move(moment).strftime(form).encode()

    return swap


def retime(data: bytes, pace: Pace) -> bytes:
    """*data* with every time stamp the demo writes (ISO seconds, compact file-name stamps) moved by *pace*."""
    data = _ISO.sub(_retimer("%Y-%m-%dT%H:%M:%SZ", pace), data)
    return _COMPACT.sub(_retimer("%Y%m%dT%H%M%S000000Z", pace), data)
