"""Pieces every workflow shares: the clock and validated JSON replace (times are spelt by ``okstra_core.times``)."""

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
from ..models.base import Model
from ..reading import format_validation

M = TypeVar("M", bound=BaseModel)
D = TypeVar("D", bound=Model)


@dataclass
class Clock:
    """Where workflows get the time; the demo uses a stepping clock for reproducible trees."""

    start: dt.datetime | None = None
    step: dt.timedelta = field(default_factory=lambda: dt.timedelta(seconds=17))
    _ticks: int = 0

    @classmethod
    def at(cls, moment: dt.datetime) -> Clock:
        """A clock stopped at *moment*: every time one write records is this one (a replayed write's bytes)."""
        return cls(start=moment, step=dt.timedelta(0))

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


def validated(model: type[M], value: Any, where: Path | str) -> M:
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise ValidationFailed(where, f"does not match {model.__name__}: {format_validation(exc)}") from None


def fresh_unless(current: D | None, fresh: Callable[[], D]) -> D:
    """*current*, or *fresh()* when the file is missing or holds only defaults (``{}``, a bare ``[]``)."""
    if current is None or not current.model_dump(exclude_defaults=True):
        return fresh()
    return current


def update_json(root: Path, path: Path, model: type[D], mutate: Callable[[D | None], D | None]) -> D | None:
    """Locked read-modify-replace of a JSON document that must stay valid under *model*.

    *mutate* gets the current document read through *model* (None when the file
    is missing) and returns the new one (None: leave the file alone); it may
    change the document it is given, which is read afresh for this call. Keys
    the model does not name are kept with their values. An invalid current file
    is refused, not overwritten; the new document is validated again (field
    assignments are not checked as they are made) and an invalid one is refused
    before anything is written.
    """
    result: list[D] = []

    def update(current: bytes | None) -> bytes | None:
        doc: D | None = None
        if current is not None:
            try:
                value = json.loads(current.decode("utf-8"))
            except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, an integer too long
                raise WriteRefused(
                    path, f"existing file is not valid JSON ({exc.__class__.__name__}); not replacing it"
                ) from None
            doc = validated(model, value, path)
        new = mutate(doc)
        if new is None:
            return None
        checked = validated(model, new.model_dump(mode="json", by_alias=True), path)
        result.append(checked)
        return pretty_json(checked.dump())

    writes.replace_locked(root, path, update)
    return result[0] if result else None
