"""Pieces every workflow shares: time stamps and validated JSON replace."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .. import writes
from ..digests import pretty_json
from ..errors import ValidationFailed, WriteRefused
from ..reading import format_validation

M = TypeVar("M", bound=BaseModel)


@dataclass
class Clock:
    """Where workflows get the time; the demo uses a stepping clock for reproducible trees."""

    start: dt.datetime | None = None
    step: dt.timedelta = field(default_factory=lambda: dt.timedelta(seconds=17))
    _ticks: int = 0

    def now(self) -> dt.datetime:
        if self.start is None:
            return dt.datetime.now(dt.UTC)
        self._ticks += 1
        return self.start + self.step * self._ticks

    def last(self) -> dt.datetime:
        """The time :meth:`now` gave last (a stepping clock does not step for it)."""
        if self.start is None:
            return dt.datetime.now(dt.UTC)
        return self.start + self.step * self._ticks


SYSTEM_CLOCK = Clock()


def iso(moment: dt.datetime) -> str:
    """``2026-11-30T04:15:00Z`` (seconds precision, UTC)."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def compact_stamp(moment: dt.datetime) -> str:
    """``20261130T041500123456Z``: the file-name stamp (DECISIONS section 1)."""
    return moment.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")


def validated(model: type[M], value: Any, where: Path | str) -> M:
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise ValidationFailed(where, f"does not match {model.__name__}: {format_validation(exc)}") from None


def dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def update_json(
    root: Path, path: Path, model: type[M], mutate: Callable[[dict[str, Any] | None], dict[str, Any] | None]
) -> M | None:
    """Locked read-modify-replace of a JSON document that must stay valid under *model*.

    *mutate* gets the current value (None when missing) and returns the new
    value (None: leave the file alone). An invalid current file is refused,
    not overwritten; an invalid new value is refused before anything is written.
    """
    result: list[M] = []

    def update(current: bytes | None) -> bytes | None:
        value: dict[str, Any] | None = None
        if current is not None:
            try:
                value = json.loads(current.decode("utf-8"))
            except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, an integer too long
                raise WriteRefused(
                    path, f"existing file is not valid JSON ({exc.__class__.__name__}); not replacing it"
                ) from None
            validated(model, value, path)
        new = mutate(value)
        if new is None:
            return None
        checked = validated(model, new, path)
        result.append(checked)
        return pretty_json(dump(checked))

    writes.replace_locked(root, path, update)
    return result[0] if result else None
