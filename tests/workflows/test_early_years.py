"""A moment before the year 1000 is written with a four-digit year, so every reader takes it back.

``strftime("%Y")`` gives ``999`` for the year 999 on glibc, which no ISO 8601
reader (nor the store's models) accepts; :mod:`okstra_core.times` spells every
time the store records.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from okstra_core import times, write_log

from .helpers import okstra
from .test_inbox_demo import ADDRESS, CARDS, CARDS_PLAN, TAX, TAX_REPORT, TAX_SIDECAR

AT = "0999-03-04T05:06:07Z"


@pytest.mark.parametrize("year", [1, 9, 99, 999, 1000, 2026, 9999])
def test_every_spelling_reads_back(year: int) -> None:
    moment = dt.datetime(year, 3, 4, 5, 6, 7, 89, tzinfo=dt.UTC)
    assert times.parse_time(times.iso(moment)) == moment.replace(microsecond=0)
    assert times.parse_time(times.iso_micro(moment)) == moment
    assert times.parse_stamp(times.compact_stamp(moment)) == moment
    assert times.iso(moment).startswith(f"{year:04d}-03-04T05:06:07")
    assert write_log.at_text(moment) == times.iso_micro(moment)


def test_the_write_verbs_record_a_year_before_1000(
    fresh_demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = fresh_demo
    result = okstra(capsys, "planning", "prepare", root, "--task", ADDRESS, "--at", AT)
    assert result.code == 0, result.err
    selected = root / ".okstra/tasks/checkout/address-validation/instruction-set/selected-direction.json"
    assert json.loads(selected.read_text(encoding="utf-8"))["selectedAt"] == AT

    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"CQ-001": "gross", "CQ-002": "Yes."}), encoding="utf-8")
    result = okstra(
        capsys, "user-response", "export", root, "--task", TAX, "--report", TAX_REPORT, "--answers", answers, "--at", AT
    )
    assert result.code == 0, result.err
    assert (root / TAX_SIDECAR).is_file()

    answer = tmp_path / "prep.md"
    answer.write_text("## vault\n\nThe provider's vault\n\n## rationale\n\nNo card data here.\n", encoding="utf-8")
    result = okstra(
        capsys, "design-prep", "confirm", root, "--task", CARDS, "--item", "PREP-001", "--input", answer, "--at", AT
    )
    assert result.code == 0, result.err
    (made,) = (root / CARDS_PLAN / "design-prep-inputs").glob("*-09990304T050607000000Z.md")
    assert f'confirmed-at: "{AT}"' in made.read_text(encoding="utf-8")

    result = okstra(capsys, "check", root, "--home", root / ".okstra-home", "-j", "1")
    assert "\n0 errors," in "\n" + result.out.splitlines()[-1], result.out[-2000:]
