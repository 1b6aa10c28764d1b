"""``okstra completion bash|zsh|fish``: a shell completion script, generated from the parser with shtab.

The script is made from the same argparse parsers that parse the command line, so a new verb or flag
completes without anyone writing shell code. ``--task`` completes the task keys of the project named on the
line (its first word that is a folder holding ``.okstra/``, else the current folder), read by
``okstra task keys``: one small JSON file, no models.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Final

SHELLS: Final = ("bash", "zsh", "fish")

_BASH_TASK_KEYS: Final = r"""
# okstra: the task keys of the project named on the line (the first folder holding .okstra/, else .)
_okstra_task_keys() {
  local i project=.
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ ${COMP_WORDS[i]} != -* && -d ${COMP_WORDS[i]}/.okstra ]]; then
      project=${COMP_WORDS[i]}
      break
    fi
  done
  compgen -W "$(okstra task keys -- "$project" 2>/dev/null)" -- "$1"
}
"""

_ZSH_TASK_KEYS: Final = r"""
# okstra: the task keys of the project named on the line (the first folder holding .okstra/, else .)
_okstra_task_keys() {
  local word project=.
  for word in ${words[2,CURRENT-1]}; do
    if [[ $word != -* && -d $word/.okstra ]]; then
      project=$word
      break
    fi
  done
  local -a keys
  keys=(${(f)"$(okstra task keys -- $project 2>/dev/null)"})
  compadd -a keys
}
"""

_FISH_TASK_KEYS: Final = r"""
# okstra: the task keys of the project named on the line (the first folder holding .okstra/, else .)
function __okstra_task_keys
  set -l project .
  for word in (commandline -opc)[2..-1]
    if not string match -q -- '-*' $word; and test -d $word/.okstra
      set project $word
      break
    end
  end
  okstra task keys -- $project 2>/dev/null
end
"""

#: shtab's custom completion for ``--task``: a shell function per shell, defined in the script's preamble.
TASK_KEYS: Final[dict[str, Any]] = {
    "bash": "_okstra_task_keys",
    "zsh": "_okstra_task_keys",
    "fish": "(__okstra_task_keys)",
    "preamble": {"bash": _BASH_TASK_KEYS, "zsh": _ZSH_TASK_KEYS, "fish": _FISH_TASK_KEYS},
}

#: Arguments that name a folder; every other path-typed argument names a file.
_FOLDERS: Final = frozenset({"project", "dir", "home", "cache_dir"})


def _mark(parser: argparse.ArgumentParser, seen: set[int]) -> None:
    """Give each argument of *parser* and its sub-parsers the completion it needs (task keys, folders, files)."""
    import shtab

    if id(parser) in seen:
        return
    seen.add(id(parser))
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _mark(sub, seen)
        elif "--task" in action.option_strings:
            action.complete = TASK_KEYS  # type: ignore[attr-defined]
        elif action.dest in _FOLDERS:
            action.complete = shtab.DIRECTORY  # type: ignore[attr-defined]
        elif action.type is Path:
            action.complete = shtab.FILE  # type: ignore[attr-defined]


def print_command(prog: str, shell: str) -> str:
    """The command line that prints *prog*'s completion script for *shell*."""
    return f"{prog} completion {shell}" if prog == "okstra" else f"{prog} --print-completion {shell}"


def install_lines(prog: str, shell: str) -> list[str]:
    """Where to put *prog*'s script for *shell*, as shell lines: the one instruction that the script's own
    header, ``okstra completion --help`` and ``docs/ci.md`` all give."""
    command = print_command(prog, shell)
    if shell == "bash":
        return [
            f"{command} > ~/.local/share/bash-completion/completions/{prog}  # bash-completion loads it",
            f"source <({command})  # or this line in ~/.bashrc, without bash-completion",
        ]
    if shell == "zsh":
        return [f'{command} > "${{fpath[1]}}/_{prog}"  # any folder of $fpath, then compinit']
    return [f"{command} > ~/.config/fish/completions/{prog}.fish"]


def instructions(prog: str) -> str:
    """:func:`install_lines` for every shell, under a heading (the verb's ``--help`` ends with it)."""
    lines = [f"To install {prog}'s completion:"]
    lines += [f"  {line}" for shell in SHELLS for line in install_lines(prog, shell)]
    return "\n".join(lines)


def _header(prog: str, shell: str) -> list[str]:
    lines = [f"# {prog}'s completion for {shell}, generated from its parsers by shtab. To install it:"]
    return lines + [f"#   {line}" for line in install_lines(prog, shell)]


def _with_header(text: str, prog: str, shell: str) -> str:
    """*text* with shtab's usage comment (its install paths differ from ours) replaced by :func:`_header`."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("# AUTOMATICALLY GENERATED")), None)
    if start is None:
        return "\n".join([*_header(prog, shell), *lines])
    end = start
    while end + 1 < len(lines) and lines[end + 1].startswith("#"):
        end += 1
    return "\n".join([*lines[:start], *_header(prog, shell), *lines[end + 1 :]])


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script of *parser*'s program for *shell* (one of :data:`SHELLS`)."""
    import shtab

    _mark(parser, set())
    text: str = _with_header(shtab.complete(parser, shell=shell), parser.prog, shell)
    return text if text.endswith("\n") else text + "\n"


def run(args: argparse.Namespace) -> int:
    """Print the script of the ``okstra`` parser (handed over by the command line as ``okstra_parser``)."""
    print(script(args.okstra_parser, args.shell), end="")
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``completion`` verb to ``okstra``."""
    parser = subparsers.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh or fish)",
        description="Print the completion script of okstra for SHELL (okstra-tui's: okstra-tui --print-completion "
        "SHELL).",
        epilog=instructions("okstra"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    parser.set_defaults(func=run)
