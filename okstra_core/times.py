"""The one owner of a time the store records, read and written: a file-name stamp or a time field.

Both must be real moments: ``20261131T101500000000Z`` (31 November) or
``2026-11-30T25:00:00Z`` is no time at all, and every reader (the name grammar,
the models, the checker, the workbench) refuses it through these functions.
Every writer spells a moment through :func:`iso`, :func:`iso_micro` or
:func:`compact_stamp`, whose years always have four digits (``0999``, as ISO
8601 and the readers above ask), whatever the platform's ``strftime`` does.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Final

#: A compact UTC stamp: ``YYYYMMDDTHHMMSS`` and up to six fraction digits, then ``Z``.
STAMP_PATTERN: Final = r"[0-9]{8}T[0-9]{6,12}Z"
_STAMP_RE = re.compile(r"^([0-9]{8}T[0-9]{6})([0-9]{0,6})Z$")

#: The expected side of a message about a bad time field.
TIME_EXPECTED: Final = "an ISO 8601 time such as 2026-11-30T04:15:00Z"


def _utc(moment: dt.datetime) -> dt.datetime:
    return moment.astimezone(dt.UTC)


def iso(moment: dt.datetime) -> str:
    """``2026-11-30T04:15:00Z``: a time field (seconds precision, UTC)."""
    m = _utc(moment)
    return f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}Z"


def iso_micro(moment: dt.datetime) -> str:
    """``2026-12-02T07:41:05.123456Z``: a time field to the microsecond (UTC)."""
    m = _utc(moment)
    return f"{iso(m)[:-1]}.{m.microsecond:06d}Z"


def compact_stamp(moment: dt.datetime) -> str:
    """``20261130T041500123456Z``: the file-name stamp (DECISIONS section 1), read back by :func:`parse_stamp`."""
    m = _utc(moment)
    return f"{m.year:04d}{m.month:02d}{m.day:02d}T{m.hour:02d}{m.minute:02d}{m.second:02d}{m.microsecond:06d}Z"


def parse_stamp(text: str) -> dt.datetime | None:
    """The UTC moment of a compact file-name stamp (``20261130T041500123456Z``), or None when it names none.

    More than six fraction digits is no stamp a writer produces (``%f`` gives six).
    """
    match = _STAMP_RE.match(text)
    if match is None:
        return None
    try:
        moment = dt.datetime.strptime(match.group(1), "%Y%m%dT%H%M%S")
    except ValueError:
        return None
    fraction = match.group(2)
    micro = int(fraction.ljust(6, "0")) if fraction else 0
    return moment.replace(microsecond=micro, tzinfo=dt.UTC)


def parse_time(text: str) -> dt.datetime | None:
    """The UTC moment of an ISO 8601 time field, or None when the text is no real time.

    Any ISO 8601 form Python reads is accepted (``Z`` or an offset; a time
    without an offset is read as UTC, since the contract records UTC times);
    what is refused is text that names no moment: a day the month does not
    have, an hour 24 or more, an offset out of range, free text.
    """
    if not text or len(text) > 64 or not text[:4].isdigit():
        return None
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=dt.UTC)
    try:
        return moment.astimezone(dt.UTC)
    except OverflowError:  # an offset that moves the time out of the years 1-9999
        return None


def time_problem(text: str) -> str | None:
    """Why *text* is not a time field's value (None when it is one).

    A real calendar time whose offset takes it before the year 1 in UTC is
    still a time (:func:`parse_time` gives None for it, and readers fall back).
    """
    if text and len(text) <= 64 and text[:4].isdigit():
        try:
            dt.datetime.fromisoformat(text)
        except ValueError:
            pass
        else:
            return None
    return f"{text[:40]!r} is not a real time (expected {TIME_EXPECTED})"


# ------------------------------------------------------------------ time filters

#: What every time filter accepts: ``okstra stats --since``, ``since:`` in search and in the Insights view.
SINCE_EXPECTED: Final = "a date (2026-11-30), a UTC time (2026-11-30T04:15:00Z) or an age (12h, 7d, 2w)"
_AGE_RE = re.compile(r"^([1-9][0-9]{0,4})([hdw])$")
_AGE_SECONDS: Final = {"h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str, now: dt.datetime | None = None) -> dt.datetime | None:
    """The UTC moment a time filter names, or None when *text* is none of :data:`SINCE_EXPECTED`.

    A date is its midnight in UTC; a time without an offset is UTC (as :func:`parse_time` reads it); an
    age counts back from *now* (default: the current time). The one grammar of every time filter, so that
    ``okstra stats --since 7d`` and the search's ``since:7d`` mean the same moment.
    """
    age = _AGE_RE.match(text)
    if age is not None:
        moment = now if now is not None else dt.datetime.now(dt.UTC)
        return _utc(moment) - dt.timedelta(seconds=int(age.group(1)) * _AGE_SECONDS[age.group(2)])
    return parse_time(text)


def since_text(moment: dt.datetime) -> str:
    """A moment as a time filter spells it back: the date alone at midnight UTC, else :func:`iso`."""
    m = _utc(moment)
    if (m.hour, m.minute, m.second, m.microsecond) == (0, 0, 0, 0):
        return f"{m.year:04d}-{m.month:02d}-{m.day:02d}"
    return iso(m)
