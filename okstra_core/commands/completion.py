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


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script of *parser*'s program for *shell* (one of :data:`SHELLS`)."""
    import shtab

    _mark(parser, set())
    text: str = shtab.complete(parser, shell=shell)
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
        "SHELL). bash: source it from ~/.bashrc, or save it as ~/.local/share/bash-completion/completions/okstra; "
        "zsh: save it as _okstra in a folder of $fpath; fish: save it as ~/.config/fish/completions/okstra.fish.",
    )
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    parser.set_defaults(func=run)
