"""What a verb imports: the parser of every verb loads no model and no checker engine.

Each probe runs in a fresh interpreter, since this test process has imported everything already.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys

import pytest

from okstra_core import cli, reading
from okstra_core.models import DOC_KINDS_BY_NAME, FINAL_REPORT_VERSIONS


def loaded_after(code: str) -> set[str]:
    """The okstra_core modules imported by a fresh interpreter that runs *code*."""
    probe = (
        code + "\nimport json, sys\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith('okstra_core'))))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(proc.stdout.splitlines()[-1]))


def test_building_the_verb_parser_imports_no_model_and_no_engine() -> None:
    loaded = loaded_after("from okstra_core.cli import build_parser\nbuild_parser()")
    assert "okstra_core.commands.check" in loaded  # the check verb's flags are registered
    heavy = {m for m in loaded if m.startswith(("okstra_core.models", "okstra_core.render", "okstra_core.workflows"))}
    heavy |= {
        m for m in loaded if m.startswith("okstra_core.check.") and m.split(".")[2] in ("engine", "rules", "cache")
    }
    assert heavy == set()


@pytest.mark.parametrize("module", sorted(cli.COMMAND_MODULES))
def test_each_verb_module_registers_the_verbs_the_cli_names_for_it(module: str) -> None:
    sub = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(module).register(sub)
    assert tuple(sub.choices) == cli.COMMAND_MODULES[module]


def test_a_run_of_one_verb_imports_that_verb_module_alone() -> None:
    loaded = loaded_after("from okstra_core.cli import build_parser\nbuild_parser('search')")
    assert {m for m in loaded if m.startswith("okstra_core.commands.")} <= {
        "okstra_core.commands.search",
        "okstra_core.commands.projects",
        "okstra_core.commands.common",
        "okstra_core.commands.output",
    }
    assert "okstra_core.commands.search" in loaded
    whole = loaded_after("from okstra_core.cli import build_parser\nbuild_parser('completion')")
    assert {f"okstra_core.commands.{name.rsplit('.', 1)[1]}" for name in cli.COMMAND_MODULES} <= whole


def test_the_parser_of_one_verb_parses_as_the_whole_parser_does() -> None:
    argv = ["search", "PROJECT", "retry", "--json", "--limit", "3", "--colour", "never", "-q"]
    alone, whole = (vars(parser.parse_args(argv)) for parser in (cli.build_parser("search"), cli.build_parser()))
    for made in ("okstra_parser", "parser"):  # the parser objects themselves: one of each per build
        alone.pop(made, None), whole.pop(made, None)
    assert alone == whole and alone["limit"] == 3 and alone["colour"] == "never"


def test_the_inbox_imports_only_the_models_it_validates() -> None:
    # An answer the store index kept is shown without the rules that read a task, nor their models.
    loaded = loaded_after("import okstra_core.workflows.inbox")
    assert not {"okstra_core.workflows.inbox_scan", "okstra_core.models.report", "pydantic"} & loaded
    loaded = loaded_after("import okstra_core.workflows.inbox_scan")
    assert {"okstra_core.models.report", "okstra_core.models.sidecars"} <= loaded
    unused = {"registry", "convergence", "invocation", "manager", "run"}
    assert {m for m in loaded if m.startswith("okstra_core.models.") and m.split(".")[2] in unused} == set()


def test_the_registry_loads_on_first_use() -> None:
    loaded = loaded_after("from okstra_core.models import DOC_KINDS\nassert len(DOC_KINDS) > 30")
    assert "okstra_core.models.registry" in loaded
    assert "okstra_core.models.convergence" in loaded


def test_an_unknown_name_of_the_lazy_packages_is_an_attribute_error() -> None:
    import okstra_core.check
    import okstra_core.models

    with pytest.raises(AttributeError):
        okstra_core.models.NO_SUCH_NAME  # noqa: B018
    with pytest.raises(AttributeError):
        okstra_core.check.no_such_name  # noqa: B018


@pytest.mark.parametrize("version", sorted(FINAL_REPORT_VERSIONS))
def test_report_model_for_agrees_with_the_registry(version: str) -> None:
    assert (
        reading.report_model_for({"schemaVersion": version}) is DOC_KINDS_BY_NAME[FINAL_REPORT_VERSIONS[version]].model
    )
