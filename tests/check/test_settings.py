"""The checker's settings file: every key from each kind of file, precedence, --isolated, refusals, per-path ignores."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from okstra_core.check.catalog import RULES
from okstra_core.check.settings import Flags, SettingsError, glob_pattern, resolve
from okstra_core.commands.check import main_check

ALL_KEYS = """\
select = ["OKS0", "OKS1"]
ignore = ["OKS005"]
strict = true
jobs = 3
cache-dir = "cache/okstra"
format = "json"
per-path-ignores = { "tasks/legacy/**" = ["OKS017"], "*.md" = ["OKS050", "OKS051"] }
"""

#: (file name, table header) for each kind of settings file, as found at the project root.
KINDS = [
    ("pyproject.toml", "[tool.okstra.check]"),
    ("okstra.toml", "[check]"),
    (".okstra.toml", "[check]"),
]


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".okstra").mkdir(parents=True)
    return root


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def assert_all_keys(settings_file: Path, root: Path, *, config: Path | None = None) -> None:
    s = resolve(root, config=config)
    assert s.file == settings_file
    assert s.file_select == ["OKS0", "OKS1"]
    assert s.file_ignore == ["OKS005"]
    assert s.strict is True
    assert s.jobs == 3
    assert s.cache_dir == settings_file.parent / "cache/okstra"  # relative to the file's folder
    assert s.format == "json"
    assert s.per_path_ignores == {"tasks/legacy/**": ["OKS017"], "*.md": ["OKS050", "OKS051"]}
    assert s.rules() == {r.id for r in RULES if r.id.startswith(("OKS0", "OKS1"))} - {"OKS005"}
    label = str(settings_file)
    assert {k: v for k, v in s.sources.items()} == dict.fromkeys(
        ("strict", "jobs", "cache-dir", "format", "per-path-ignores", "select", "ignore"), label
    )


@pytest.mark.parametrize(("name", "header"), KINDS)
def test_every_key_from_each_kind_of_file(tmp_path: Path, name: str, header: str) -> None:
    root = project(tmp_path)
    assert_all_keys(write(root / name, f"{header}\n{ALL_KEYS}"), root)


@pytest.mark.parametrize(
    ("name", "header"), [("ci/okstra-ci.toml", "[check]"), ("ci/pyproject.toml", "[tool.okstra.check]")]
)
def test_every_key_from_a_config_file(tmp_path: Path, name: str, header: str) -> None:
    root = project(tmp_path)
    write(root / "pyproject.toml", "[tool.okstra.check]\nstrict = false\n")  # not read: --config names another
    config = write(tmp_path / name, f"{header}\n{ALL_KEYS}")
    assert_all_keys(config, root, config=config)


def test_the_first_file_found_wins_and_a_pyproject_without_okstra_is_skipped(tmp_path: Path) -> None:
    root = project(tmp_path)
    write(root / "pyproject.toml", "[tool.okstra.check]\njobs = 1\n")
    write(root / "okstra.toml", "[check]\njobs = 2\n")
    write(root / ".okstra.toml", "[check]\njobs = 3\n")
    assert resolve(root).jobs == 3
    (root / ".okstra.toml").unlink()
    assert resolve(root).jobs == 2
    (root / "okstra.toml").unlink()
    assert resolve(root).jobs == 1
    write(root / "pyproject.toml", '[project]\nname = "x"\n[tool.ruff]\nline-length = 100\n')
    s = resolve(root)
    assert s.file is None and s.jobs == 0 and s.sources["jobs"] == "default"


def test_an_okstra_toml_without_a_check_table_is_all_defaults(tmp_path: Path) -> None:
    root = project(tmp_path)
    write(root / "okstra.toml", "")
    s = resolve(root)
    assert s.file == root / "okstra.toml" and s.strict is False and s.format == "text"


def test_flags_override_the_file_which_overrides_the_defaults(tmp_path: Path) -> None:
    root = project(tmp_path)
    defaults = resolve(root)
    assert (defaults.strict, defaults.jobs, defaults.cache_dir, defaults.format) == (False, 0, None, "text")
    assert defaults.rules() == {r.id for r in RULES}
    write(root / "pyproject.toml", f"[tool.okstra.check]\n{ALL_KEYS}")
    flags = Flags(select=["OKS017"], strict=False, jobs=1, cache_dir=Path("/tmp/c"), format="gitlab")
    s = resolve(root, flags)
    assert (s.strict, s.jobs, s.cache_dir, s.format) == (False, 1, Path("/tmp/c"), "gitlab")
    assert s.sources["strict"] == "--no-strict" and s.sources["jobs"] == "--jobs" and s.sources["format"] == "--format"
    # --select starts afresh, as ruff's does: the file's select and ignore no longer apply.
    assert s.rules() == {"OKS017"}
    assert s.sources["select"] == "--select"
    # --ignore stacks on the file's selection.
    s = resolve(root, Flags(ignore=["OKS1"]))
    assert s.rules() == {r.id for r in RULES if r.id.startswith("OKS0")} - {"OKS005"}
    assert s.sources["ignore"].endswith("then --ignore")


def test_the_cache_folder_variable_counts_as_the_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project(tmp_path)
    write(root / "okstra.toml", '[check]\ncache-dir = "from-file"\n')
    assert resolve(root).cache_dir == root / "from-file"
    monkeypatch.setenv("OKSTRA_CACHE_DIR", str(tmp_path / "from-env"))
    s = resolve(root)
    assert (s.cache_dir, s.sources["cache-dir"]) == (tmp_path / "from-env", "$OKSTRA_CACHE_DIR")
    s = resolve(root, Flags(cache_dir=tmp_path / "from-flag"))
    assert (s.cache_dir, s.sources["cache-dir"]) == (tmp_path / "from-flag", "--cache-dir")


def test_isolated_reads_no_file_not_even_a_broken_one(tmp_path: Path) -> None:
    root = project(tmp_path)
    write(root / "pyproject.toml", f"[tool.okstra.check]\n{ALL_KEYS}")
    s = resolve(root, isolated=True)
    assert s.file is None and s.strict is False and s.rules() == {r.id for r in RULES}
    write(root / "pyproject.toml", "[tool.okstra.check\n")
    assert resolve(root, isolated=True).file is None
    with pytest.raises(SettingsError):
        resolve(root)


def test_the_glob_of_per_path_ignores() -> None:
    assert glob_pattern("tasks/legacy/**").fullmatch("tasks/legacy/a/b.json")
    assert glob_pattern("tasks/legacy/**").fullmatch("tasks/legacy")  # the folder itself
    assert not glob_pattern("tasks/legacy/**").fullmatch("tasks/legacy-2/a.json")
    assert glob_pattern("tasks/*/x").fullmatch("tasks/a/x")
    assert not glob_pattern("tasks/*/x").fullmatch("tasks/a/b/x")
    assert glob_pattern("**/runs/**").fullmatch("tasks/a/b/runs/analysis/f.md")
    assert glob_pattern("f-[0-9].md").fullmatch("f-3.md")
    assert not glob_pattern("f-[!0-9].md").fullmatch("f-3.md")
    assert not glob_pattern("a.b").fullmatch("axb")


# ------------------------------------------------------------------ through the command line


def check_json(root: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = main_check([str(root), "--home", str(root / ".okstra-home"), "-j", "1", *argv])
    out = capsys.readouterr().out
    return code, json.loads(out) if out else {}


def rules_of(doc: dict[str, object]) -> list[str]:
    return [f["rule"] for f in doc["findings"]]  # type: ignore[attr-defined,index]


def test_settings_apply_to_okstra_check(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = check_json(fresh_demo, capsys, "--format", "json")
    assert code == 0 and {"OKS017", "OKS050"} <= set(rules_of(doc))
    write(fresh_demo / "pyproject.toml", '[tool.okstra.check]\nignore = ["OKS05"]\nstrict = true\nformat = "json"\n')
    code, doc = check_json(fresh_demo, capsys)  # the format comes from the file
    assert code == 1  # strict: the demo's warnings fail it
    assert "OKS050" not in rules_of(doc) and "OKS017" in rules_of(doc)
    code, doc = check_json(fresh_demo, capsys, "--no-strict")
    assert code == 0
    code, doc = check_json(fresh_demo, capsys, "--isolated", "--format", "json")
    assert code == 0 and "OKS050" in rules_of(doc)


def test_okstra_tui_check_reads_the_same_settings(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from okstra_tui.__main__ import main

    write(fresh_demo / "okstra.toml", '[check]\nselect = ["OKS017"]\nformat = "json"\n')
    assert main(["--check", str(fresh_demo), "--home", str(fresh_demo / ".okstra-home"), "-j", "1"]) == 0
    assert set(rules_of(json.loads(capsys.readouterr().out))) == {"OKS017"}


def test_the_checks_view_reads_the_same_settings(fresh_demo: Path) -> None:
    from okstra_tui.screens.checks import run_checker

    home = fresh_demo / ".okstra-home"
    write(fresh_demo / ".okstra.toml", '[check]\nselect = ["OKS017"]\n')
    outcome = run_checker(fresh_demo, home)
    assert not isinstance(outcome, str)
    report, shown = outcome
    assert report.findings and {f.rule for f in report.findings} == {"OKS017"}
    assert shown == ".okstra.toml"
    write(fresh_demo / ".okstra.toml", "[check]\nstrict = 1\n")
    refusal = run_checker(fresh_demo, home)
    assert isinstance(refusal, str) and ".okstra.toml: check.strict: expected true or false" in refusal


def test_per_path_ignores(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, before = check_json(fresh_demo, capsys, "--format", "json")
    findings = before["findings"]
    assert isinstance(findings, list)
    legacy = [f for f in findings if f["rule"] == "OKS017"]
    assert legacy and all(f["path"].startswith(".okstra/tasks/search/query-latency/") for f in legacy)
    write(
        fresh_demo / "pyproject.toml",
        '[tool.okstra.check]\nper-path-ignores = { "tasks/search/**" = ["OKS01"], "*.md" = ["OKS050"] }\n',
    )
    _, after = check_json(fresh_demo, capsys, "--format", "json")
    expected = [
        f for f in findings if not (f["rule"] == "OKS017" or (f["rule"] == "OKS050" and f["path"].endswith(".md")))
    ]
    assert after["findings"] == expected
    assert len(expected) < len(findings)


@pytest.mark.parametrize("prefix", [".okstra/", ""])
def test_per_path_ignores_take_the_paths_findings_print(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str], prefix: str
) -> None:
    """A glob copied from the checker's output (``.okstra/tasks/…``) ignores what it names; so does the older
    form relative to ``.okstra/``. Neither matches nothing, so neither is warned about."""
    _, before = check_json(fresh_demo, capsys, "--format", "json")
    findings = before["findings"]
    assert isinstance(findings, list)
    write(
        fresh_demo / "okstra.toml",
        f'[check]\nper-path-ignores = {{ "{prefix}tasks/search/query-latency/**" = ["OKS017"] }}\n',
    )
    code = main_check([str(fresh_demo), "--home", str(fresh_demo / ".okstra-home"), "-j", "1", "--format", "json"])
    out, err = capsys.readouterr()
    assert json.loads(out)["findings"] == [f for f in findings if f["rule"] != "OKS017"] != findings
    assert code == 0 and "warning" not in err


def test_a_per_path_glob_that_matches_no_file_is_warned_about(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    globs = '{ ".okstra/tasks/serach/**" = ["OKS017"], "tasks/payments/**" = ["OKS017"], "*.nope" = ["OKS050"] }'
    write(fresh_demo / "okstra.toml", f"[check]\nper-path-ignores = {globs}\n")
    code = main_check([str(fresh_demo), "--home", str(fresh_demo / ".okstra-home"), "-j", "1", "-q"])
    err = capsys.readouterr().err.splitlines()
    where = f"okstra check: warning: {fresh_demo / 'okstra.toml'}: per-path-ignores"
    assert err == [
        f'{where} ".okstra/tasks/serach/**" matches no file in .okstra/ (globs match the paths findings print)',
        f'{where} "*.nope" matches no file in .okstra/ (globs match the paths findings print)',
    ]
    assert code == 0  # a warning about the settings, not a finding


def test_show_settings_says_where_each_value_came_from(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path)
    write(root / "pyproject.toml", f"[tool.okstra.check]\n{ALL_KEYS}")
    assert main_check([str(root), "--show-settings", "--jobs", "2"]) == 0
    shown = json.loads(capsys.readouterr().out)  # format = "json" in the file
    assert shown["settings-file"] == {
        "value": str(root / "pyproject.toml"),
        "source": "[tool.okstra.check], first found of .okstra.toml, okstra.toml, pyproject.toml",
    }
    assert shown["jobs"] == {"value": 2, "source": "--jobs"}
    assert shown["ignore"] == {"value": ["OKS005"], "source": str(root / "pyproject.toml")}
    assert main_check([str(root), "--show-settings", "--select", "OKS0"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["select"] == {"value": ["OKS0"], "source": "--select"}
    assert shown["ignore"] == {"value": [], "source": "default (--select starts afresh)"}
    assert len(shown["rules"]["value"]) == len([r for r in RULES if r.id.startswith("OKS0")])
    assert main_check([str(root), "--show-settings", "--ignore", "OKS1"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["ignore"]["value"] == ["OKS005", "OKS1"]
    assert shown["strict"] == {"value": True, "source": str(root / "pyproject.toml")}
    assert shown["cache-dir"]["value"] == str(root / "cache/okstra")
    assert main_check([str(root), "--show-settings", "--isolated"]) == 0
    text = capsys.readouterr().out
    assert "settings-file     none  (--isolated: no settings file read)" in text
    assert f"rules             {len(RULES)} of {len(RULES)} selected" in text


BAD = [
    ("okstra.toml", '[check]\nper-path-ignores = { "tasks/[z-a]/**" = ["OKS017"] }\n', "not a valid glob"),
    ("okstra.toml", '[check]\nper-path-ignores = { "[[:alpha:]]" = ["OKS017"] }\n', "not a valid glob"),
    ("pyproject.toml", "[tool.okstra.check]\nselct = []\n", "tool.okstra.check.selct: unknown key (expected one of"),
    ("pyproject.toml", '[tool.okstra.check]\nstrict = "yes"\n', "tool.okstra.check.strict: expected true or false"),
    ("okstra.toml", "[check]\njobs = -1\n", "check.jobs: expected a whole number"),
    ("okstra.toml", "[check]\njobs = true\n", "check.jobs: expected a whole number"),
    ("okstra.toml", '[check]\nformat = "yaml"\n', "check.format: expected one of text, json"),
    (".okstra.toml", '[check]\nselect = "OKS017"\n', "check.select: expected a list of rule ids or prefixes"),
    (".okstra.toml", "[check]\ncache-dir = 3\n", "check.cache-dir: expected a folder path"),
    ("okstra.toml", '[check]\nignore = ["OKS999"]\n', 'check.ignore: unknown rule id or prefix "OKS999"'),
    (
        "okstra.toml",
        '[check]\nper-path-ignores = { "tasks/**" = ["XYZ"] }\n',
        'check.per-path-ignores."tasks/**": unknown rule id or prefix "XYZ"',
    ),
    (
        "okstra.toml",
        '[check]\nper-path-ignores = { "../x" = ["OKS017"] }\n',
        'check.per-path-ignores."../x": expected a glob of paths in .okstra/, as findings print them',
    ),
    ("okstra.toml", '[check]\nper-path-ignores = ["x"]\n', "check.per-path-ignores: expected a table of globs"),
    ("pyproject.toml", "[tool.okstra.chek]\nstrict = true\n", "tool.okstra.chek: unknown key (expected only the"),
    ("okstra.toml", "strict = true\n", "strict: unknown key (expected only the [check] table)"),
    ("okstra.toml", "check = 3\n", "[check]: expected a table of settings"),
    ("pyproject.toml", "[tool.okstra.check\nstrict = true\n", "invalid TOML: "),
    ("okstra.toml", "[check]\nstrict = true\nstrict = false\n", "invalid TOML: "),
    pytest.param(
        "okstra.toml",
        "[check]\nselect = " + "[" * 5000 + "]" * 5000 + "\n",
        "invalid TOML: arrays or tables nested",
        id="nested-5000-deep",
    ),
    ("okstra.toml", '[check]\ncache-dir = "a\\u0000b"\n', "check.cache-dir: expected a folder path"),
    ("okstra.toml", '[check]\ncache-dir = "~nosuchuser-okstra/x"\n', 'cannot expand "~nosuchuser-okstra": no such'),
]


@pytest.mark.parametrize(("name", "text", "says"), BAD)
def test_bad_settings_are_one_line_naming_file_and_key_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, says: str
) -> None:
    root = project(tmp_path)
    write(root / name, text)
    assert main_check([str(root)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"okstra check: {root / name}: "), err
    assert says in err, err


def test_bad_bytes_and_a_folder_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project(tmp_path)
    (root / "okstra.toml").write_bytes(b'[check]\nformat = "\xff"\n')
    assert main_check([str(root)]) == 2
    assert capsys.readouterr().err == f"okstra check: {root / 'okstra.toml'}: invalid TOML: not UTF-8 text\n"
    (root / "okstra.toml").unlink()
    (root / "okstra.toml").mkdir()
    assert main_check([str(root)]) == 2
    assert capsys.readouterr().err == f"okstra check: {root / 'okstra.toml'}: cannot read: not a regular file\n"


def test_an_unreadable_settings_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path)
    target = write(root / "pyproject.toml", "[tool.okstra.check]\n")
    real_open = os.open

    def refusing(path: object, *args: object, **kw: object) -> int:
        if Path(str(path)) == target:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refusing)
    assert main_check([str(root)]) == 2
    assert capsys.readouterr().err == f"okstra check: {target}: cannot read: Permission denied\n"


def test_config_names_a_file_that_must_exist_and_excludes_isolated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path)
    missing = tmp_path / "nope.toml"
    assert main_check([str(root), "--config", str(missing)]) == 2
    assert capsys.readouterr().err == f"okstra check: {missing}: cannot read: No such file or directory\n"
    write(missing, "[check]\n")
    assert main_check([str(root), "--config", str(missing), "--isolated"]) == 2
    assert "--config and --isolated exclude each other" in capsys.readouterr().err


def test_an_unknown_rule_on_the_command_line_is_still_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path)
    assert main_check([str(root), "--ignore", "OKS999"]) == 2
    assert capsys.readouterr().err == "okstra check: --ignore: unknown rule id or prefix 'OKS999'\n"


def test_the_settings_file_is_never_written(fresh_demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "[tool.okstra.check]\n" + ALL_KEYS.replace('format = "json"', "")
    path = write(fresh_demo / "pyproject.toml", text)
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    main_check(
        [
            str(fresh_demo),
            "--home",
            str(fresh_demo / ".okstra-home"),
            "-j",
            "1",
            "--cache-dir",
            str(fresh_demo.parent / "c"),
        ]
    )
    capsys.readouterr()
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_the_pre_commit_hook_runs_when_the_store_or_a_settings_file_is_staged() -> None:
    import re

    hooks = (Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    (files,) = re.findall(r"^  files: (.+)$", hooks, flags=re.MULTILINE)
    staged = [".okstra/tasks/a/b/manifest.json", "pyproject.toml", "okstra.toml", ".okstra.toml"]
    assert all(re.search(files, name) for name in staged)
    assert not any(re.search(files, name) for name in ["src/app.py", "docs/pyproject.toml.md", "sub/okstra.tomlx"])


def test_control_characters_in_the_file_never_reach_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = project(tmp_path)
    write(root / "okstra.toml", '[check]\nper-path-ignores = { "x\\u001b[2J/**" = ["OKS017"] }\n')
    assert main_check([str(root), "--show-settings"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "x␛[2J/**" in out
    write(root / "okstra.toml", '[check]\n"bad\\u001b[2J" = 1\n')
    assert main_check([str(root)]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and 'check."bad\\u001b[2J": unknown key' in err


def test_okstra_check_finds_the_settings_of_the_current_folder(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = project(tmp_path)
    write(root / "pyproject.toml", '[tool.okstra.check]\nignore = ["OKS005"]\nformat = "json"\n')
    proc = subprocess.run(
        [sys.executable, "-m", "okstra_core.cli", "check", "--show-settings"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert shown["settings-file"]["value"] == "pyproject.toml"
    assert shown["ignore"] == {"value": ["OKS005"], "source": "pyproject.toml"}


def test_jobs_are_bounded_by_the_cores_and_the_work(
    fresh_demo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from okstra_core import workers
    from okstra_core.check import engine

    started: list[int] = []

    class Pool(workers.ProcessPoolExecutor):
        def __init__(self, max_workers: int, **kwargs: object) -> None:
            started.append(max_workers)
            assert max_workers <= 8, f"{max_workers} worker processes"  # never fork that many
            super().__init__(max_workers=max_workers, **kwargs)  # type: ignore[arg-type]

    # Every worker process of the product is forked by the pool of okstra_core.workers: counted there.
    monkeypatch.setattr(workers, "ProcessPoolExecutor", Pool)
    monkeypatch.setattr(engine, "PARALLEL_MIN_TASKS", 1)
    monkeypatch.setattr(engine, "CHUNK_TASKS", 4)
    monkeypatch.setattr(engine, "cores", lambda: 2, raising=False)
    write(fresh_demo / "okstra.toml", "[check]\njobs = 100000\n")
    assert main_check([str(fresh_demo), "--home", str(fresh_demo / ".okstra-home"), "--no-cache"]) == 0
    err = capsys.readouterr().err
    assert started == [2], started
    assert err.count("\n") == 1, err
    assert err.startswith("okstra check: warning: jobs = 100000 (") and "okstra.toml" in err and "2 cores" in err, err
    # Fewer units of work than cores: one worker per unit.
    monkeypatch.setattr(engine, "cores", lambda: 64, raising=False)
    tasks = len(list((fresh_demo / ".okstra" / "tasks").glob("*/*/task-manifest.json")))
    started.clear()
    assert main_check([str(fresh_demo), "--home", str(fresh_demo / ".okstra-home"), "--no-cache", "-j", "120"]) == 0
    assert started == [-(-tasks // 4)] and 1 < started[0] < 64, (started, tasks)
