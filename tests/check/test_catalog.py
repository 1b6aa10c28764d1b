"""The rule catalog names every rule id once, and code reports rules by those names."""

from __future__ import annotations

import re
from pathlib import Path

from okstra_core.check import catalog

CORE = Path(catalog.__file__).resolve().parent.parent
RULE_ID = re.compile(r"^OKS\d{3}$")


def _constants() -> dict[str, str]:
    return {
        name: value
        for name, value in vars(catalog).items()
        if name.isupper() and isinstance(value, str) and RULE_ID.match(value)
    }


def test_every_rule_has_exactly_one_named_constant() -> None:
    constants = _constants()
    assert sorted(constants.values()) == sorted(rule.id for rule in catalog.RULES)
    assert len(set(constants.values())) == len(constants)


def test_code_names_rules_by_constant_not_by_literal() -> None:
    literal = re.compile(r"""["']OKS\d{3}["']""")
    offenders = [
        f"{path.relative_to(CORE.parent).as_posix()}:{number}"
        for path in sorted(CORE.rglob("*.py"))
        if path.name != "catalog.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if literal.search(line)
    ]
    assert offenders == []
