"""Shell completion: the scripts shtab makes from the parsers load in each shell and complete verbs, flags, keys."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def shell(argv: list[str], cwd: Path | None = None) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=ENV, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def needs(program: str) -> pytest.MarkDecorator:
    """Skip where *program* is missing on a developer's machine; CI installs it (.ci/run), so there it must run."""
    return pytest.mark.skipif(
        shutil.which(program) is None and not os.environ.get("CI"), reason=f"{program} is not installed"
    )


def bash_complete(command: str, words: list[str], cwd: Path | None = None, *, load: str | None = None) -> list[str]:
    """What bash's completion function offers for *words* (the last one being completed)."""
    function = "_shtab_" + command.replace("-", "_")
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    script = (
        f"source <({load or f'{command} completion bash'})\n"
        f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}\n"
        f'{function}\nprintf "%s\\n" "${{COMPREPLY[@]}}"\n'
    )
    return [line for line in shell(["bash", "-c", script], cwd).splitlines() if line]


def test_the_bash_script_loads() -> None:
    out = shell(["bash", "-c", "source <(okstra completion bash); complete -p okstra"])
    assert out.strip() == "complete -o bashdefault -F _shtab_okstra okstra"


def test_bash_completes_a_verb_and_a_flag() -> None:
    assert bash_complete("okstra", ["okstra", "ch"]) == ["check"]
    assert "completion" in bash_complete("okstra", ["okstra", "comp"])
    assert bash_complete("okstra", ["okstra", "check", "--stat"]) == ["--statistics"]
    assert bash_complete("okstra", ["okstra", "check", "--format", "g"]) == ["github", "gitlab"]
    assert bash_complete("okstra", ["okstra", "completion", ""]) == ["bash", "zsh", "fish"]


def test_bash_completes_task_keys_from_the_project_on_the_line(demo_root: Path, tmp_path: Path) -> None:
    keys = shell(["okstra", "task", "keys", str(demo_root)]).split()
    assert len(keys) >= 10 and all(k.count(":") == 2 for k in keys)
    words = ["okstra", "task", "refresh-fix-cycles", str(demo_root), "--task", ""]
    assert bash_complete("okstra", words, cwd=tmp_path) == keys
    prefix = keys[0].rsplit(":", 1)[0] + ":"
    words[-1] = prefix
    assert bash_complete("okstra", words, cwd=tmp_path) == [k for k in keys if k.startswith(prefix)]
    # No project on the line: the current folder's.
    assert bash_complete("okstra", ["okstra", "task", "refresh-fix-cycles", "--task", ""], cwd=demo_root) == keys


def test_task_keys_leave_out_what_cannot_be_a_completion_word(fresh_demo: Path) -> None:
    import json

    from okstra_core import layout

    catalog = layout.task_catalog_path(fresh_demo)
    doc = json.loads(catalog.read_text(encoding="utf-8"))
    tasks = doc["tasks"] if isinstance(doc, dict) else doc
    hostile = ["evil:\x1b[2J:key", "two words:x:y", "$(touch PWNED):x:y", "`touch PWNED`:x:y", "{a,b}:x:y", "-x:y:z"]
    for task, key in zip(tasks, hostile, strict=False):
        task["taskKey"] = key
    tasks[len(hostile)]["taskKey"] = "déjà-vu:group:task"
    catalog.write_text(json.dumps(doc), encoding="utf-8")
    keys = shell(["okstra", "task", "keys", str(fresh_demo)]).splitlines()
    assert keys == [t["taskKey"] for t in tasks[len(hostile) :]]
    # Completing in bash runs nothing a key says.
    offered = bash_complete("okstra", ["okstra", "task", "refresh-fix-cycles", "--task", ""], cwd=fresh_demo)
    assert offered == keys
    assert not (fresh_demo / "PWNED").exists()


def test_okstra_tui_completion_loads_and_completes_its_flags_and_the_checkers() -> None:
    load = "okstra-tui --print-completion bash"
    out = shell(["bash", "-c", f"source <({load}); complete -p okstra-tui"])
    assert out.strip() == "complete -o bashdefault -F _shtab_okstra_tui okstra-tui"
    assert bash_complete("okstra-tui", ["okstra-tui", "--dem"], load=load) == ["--demo", "--demo-tasks"]
    assert bash_complete("okstra-tui", ["okstra-tui", "--check", "--exit"], load=load) == ["--exit-zero"]


@needs("zsh")
def test_the_zsh_script_registers_its_function() -> None:
    script = shell(["okstra", "completion", "zsh"])
    assert script.startswith("#compdef okstra")
    probe = 'autoload -U compinit && compinit -u -D; eval "$(okstra completion zsh)"; print -r -- ${_comps[okstra]}'
    assert shell(["zsh", "-fc", probe]).strip() == "_shtab_okstra"
    tui = (
        'autoload -U compinit && compinit -u -D; eval "$(okstra-tui --print-completion zsh)"; '
        "print -r -- ${_comps[okstra-tui]}"
    )
    assert shell(["zsh", "-fc", tui]).strip() == "_shtab_okstra_tui"


@needs("zsh")
def test_zsh_offers_the_task_keys_of_the_project_on_the_line(demo_root: Path, tmp_path: Path) -> None:
    keys = shell(["okstra", "task", "keys", str(demo_root)]).split()
    # compadd stubbed to print what it is given: the function's own logic, without a terminal.
    probe = (
        'autoload -U compinit && compinit -u -D; eval "$(okstra completion zsh)"; '
        'compadd() { print -rl -- "${(@P)${@[-1]}}" }; '
        f"words=(okstra task refresh-fix-cycles {demo_root} --task ''); CURRENT=6; _okstra_task_keys"
    )
    assert shell(["zsh", "-fc", probe], cwd=tmp_path).split() == keys


@needs("fish")
def test_fish_completes_a_verb_a_flag_and_task_keys(demo_root: Path, tmp_path: Path) -> None:
    script = tmp_path / "okstra.fish"
    script.write_text(shell(["okstra", "completion", "fish"]), encoding="utf-8")

    def complete(line: str) -> list[str]:
        out = shell(["fish", "--no-config", "-c", f"source {script}; complete -C {line!r}"], cwd=tmp_path)
        return [row.split("\t")[0] for row in out.splitlines()]

    assert complete("okstra ch") == ["check"]
    assert complete("okstra check --stat") == ["--statistics"]
    keys = shell(["okstra", "task", "keys", str(demo_root)]).split()
    assert sorted(complete(f"okstra task refresh-fix-cycles {demo_root} --task ")) == sorted(keys)


PROGRAMS = {"okstra": "okstra completion {shell}", "okstra-tui": "okstra-tui --print-completion {shell}"}


@pytest.mark.parametrize("shell_name", ["bash", "zsh", "fish"])
@pytest.mark.parametrize("prog", sorted(PROGRAMS))
def test_the_script_header_help_and_docs_give_one_install_instruction(prog: str, shell_name: str) -> None:
    """The install lines come from one place: the script's header, the --help and docs/ci.md say them alike."""
    from okstra_core.commands.completion import install_lines

    lines = install_lines(prog, shell_name)
    script = shell(PROGRAMS[prog].format(shell=shell_name).split())
    rows = script.splitlines()
    start = next(i for i, row in enumerate(rows) if row.endswith("generated from its parsers by shtab. To install it:"))
    header = [row.removeprefix("#   ") for row in rows[start + 1 : start + 1 + len(lines)]]
    assert header == lines and not rows[start + 1 + len(lines)].startswith("#   ")
    assert "AUTOMATICALLY GENERATED" not in script and "bash_completion/" not in script
    help_text = shell(["okstra", "completion", "--help"] if prog == "okstra" else ["okstra-tui", "--help"])
    assert all(f"  {line}\n" in help_text for line in lines)
    docs = (Path(__file__).parents[2] / "docs" / "ci.md").read_text(encoding="utf-8")
    assert all(f"\n{line}\n" in docs for line in lines)


@pytest.mark.parametrize("prog", sorted(PROGRAMS))
@pytest.mark.parametrize(
    ("shell_name", "check"),
    [("bash", ["bash", "-n"]), ("zsh", ["zsh", "-n"]), ("fish", ["fish", "--no-execute"])],
)
def test_the_printed_script_is_valid_for_its_shell(
    prog: str, shell_name: str, check: list[str], tmp_path: Path
) -> None:
    if shutil.which(check[0]) is None and not os.environ.get("CI"):
        pytest.skip(f"{check[0]} is not installed")
    script = tmp_path / f"{prog}.{shell_name}"
    script.write_text(shell(PROGRAMS[prog].format(shell=shell_name).split()), encoding="utf-8")
    proc = subprocess.run([*check, str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
