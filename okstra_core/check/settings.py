"""The checker's settings file: ``[tool.okstra.check]`` in ``pyproject.toml``, or ``[check]`` in ``okstra.toml``.

``okstra check``, ``okstra-tui --check`` and the workbench's Checks view all
resolve their settings here, so the three agree. The manners are ruff's:

- At the project root the first of ``.okstra.toml``, ``okstra.toml`` and
  ``pyproject.toml`` that exists is the settings file (``pyproject.toml`` only
  when it has a ``[tool.okstra]`` table). In ``okstra.toml`` / ``.okstra.toml``
  the table is ``[check]``: the file is okstra's own, so its top level is okstra's
  namespace, as ``ruff.toml`` drops ``[tool.ruff]``.
- ``--config FILE`` names the file instead (read as ``pyproject.toml`` when it is
  so named, else as ``okstra.toml``); ``--isolated`` reads none.
- A flag overrides the file's value for its key. ``select``/``ignore`` stack as
  ruff's do: the file's ``select`` then ``ignore`` apply, then a ``--select`` on
  the command line starts afresh and ``--ignore`` removes on top.
- An unknown key, a wrong type, an unknown rule id or a file that cannot be read
  or parsed is a :class:`SettingsError`: one line naming the file, the key and what
  is expected. The file is the user's: it is only ever read.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tomllib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from .. import layout
from ..errors import OkstraError
from ..text import visible
from .catalog import FLAT_LEGACY_ARTIFACT, RULES, expand
from .findings import CheckReport, Finding
from .formats import FORMATS

#: A settings file larger than this is refused rather than read.
MAX_SETTINGS_BYTES: Final = 1 << 20

#: Every key of the settings table and what its value must be.
EXPECTED: Final = {
    "select": "a list of rule ids or prefixes",
    "ignore": "a list of rule ids or prefixes",
    "strict": "true or false",
    "jobs": "a whole number of worker processes, 0 or more (0: all cores)",
    "cache-dir": "a folder path (relative to the settings file's folder)",
    "format": "one of " + ", ".join(FORMATS),
    "per-path-ignores": "a table of globs of the paths findings print (.okstra/tasks/...; the .okstra/ may be "
    f'left out) to lists of rule ids, e.g. {{ ".okstra/tasks/legacy/**" = ["{FLAT_LEGACY_ARTIFACT}"] }}',
}

DEFAULT: Final = "default"


class SettingsError(OkstraError):
    """A settings file that cannot be used; ``str()`` is one line: the file, the key and what is expected."""


@dataclass(frozen=True, slots=True)
class Flags:
    """What the command line said; ``None`` (or empty) where a flag was not given."""

    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    strict: bool | None = None
    jobs: int | None = None
    cache_dir: Path | None = None
    format: str | None = None


@dataclass(slots=True)
class CheckSettings:
    """The resolved settings of one check run; ``sources`` says where each key's value came from."""

    file: Path | None = None
    table: str | None = None
    found_by: str = ""
    file_select: list[str] | None = None
    file_ignore: list[str] = field(default_factory=list)
    flag_select: list[str] = field(default_factory=list)
    flag_ignore: list[str] = field(default_factory=list)
    strict: bool = False
    jobs: int = 0
    cache_dir: Path | None = None
    format: str = "text"
    per_path_ignores: dict[str, list[str]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    _matchers: list[tuple[re.Pattern[str], frozenset[str]]] = field(default_factory=list, repr=False)

    def rules(self) -> set[str]:
        """The rule ids this run reports: the file's select/ignore, then the command line's (as ruff stacks them)."""
        selected = {r.id for r in RULES}
        for select, ignore in ((self.file_select, self.file_ignore), (self.flag_select or None, self.flag_ignore)):
            if select is not None:
                selected = expand(select)
            selected -= expand(ignore)
        return selected

    def ignored_at(self, path: str) -> frozenset[str]:
        """The rule ids ``per-path-ignores`` ignores for a finding's project-relative *path*."""
        inner = _store_relative(path)
        if inner is None or not self._matchers:
            return frozenset()
        name = inner.rsplit("/", 1)[-1]
        out: set[str] = set()
        for pattern, ids in self._matchers:
            if pattern.fullmatch(inner) or pattern.fullmatch(name):
                out |= ids
        return frozenset(out)

    def unmatched_globs(self, project_root: Path, report: CheckReport) -> list[str]:
        """The ``per-path-ignores`` globs that match no file or folder of *project_root*'s ``.okstra/``.

        As ruff reports a ``noqa`` that ignores nothing: such a glob is a typo or a leftover, and would
        otherwise be silent. The paths of *report*'s findings are tried first; the store is walked only for
        the globs they leave unmatched, and only until each has matched.
        """
        pending = dict(zip(self.per_path_ignores, (m for m, _ in self._matchers), strict=True))
        inners = (i for i in (_store_relative(f.path) for f in report.findings) if i is not None)
        pending = _drop_matched(pending, inners)
        if pending:
            pending = _drop_matched(pending, _store_paths(layout.okstra_dir(project_root)))
        return list(pending)

    def apply(self, report: CheckReport) -> CheckReport:
        """*report* with only the selected rules, less what ``per-path-ignores`` ignores; order kept."""
        selected = self.rules()
        by_path: dict[str, frozenset[str]] = {}

        def kept(f: Finding) -> bool:
            if f.rule not in selected:
                return False
            if f.path not in by_path:
                by_path[f.path] = self.ignored_at(f.path)
            return f.rule not in by_path[f.path]

        return replace(report, findings=[f for f in report.findings if kept(f)])

    def describe(self) -> dict[str, dict[str, Any]]:
        """Each setting's value and where it came from (``--show-settings``)."""
        rules = self.rules()
        return {
            "settings-file": {
                "value": str(self.file) if self.file is not None else None,
                "source": f"{self.table}, {self.found_by}" if self.table else self.found_by,
            },
            "select": {"value": self.flag_select or self.file_select, "source": self.sources["select"]},
            "ignore": {
                # A --select starts afresh (as ruff's does): the file's ignore no longer applies.
                "value": self.flag_ignore if self.flag_select else [*self.file_ignore, *self.flag_ignore],
                "source": self.sources["ignore"],
            },
            "strict": {"value": self.strict, "source": self.sources["strict"]},
            "jobs": {"value": self.jobs, "source": self.sources["jobs"]},
            "cache-dir": {"value": str(layout.okstra_cache_dir(self.cache_dir)), "source": self.sources["cache-dir"]},
            "format": {"value": self.format, "source": self.sources["format"]},
            "per-path-ignores": {"value": self.per_path_ignores, "source": self.sources["per-path-ignores"]},
            "rules": {"value": sorted(rules), "source": "select, then ignore"},
        }

    def show(self, *, as_json: bool = False) -> str:
        """:meth:`describe` as text (one line per key) or as JSON."""
        described = self.describe()
        if as_json:
            return json.dumps(described, indent=2, ensure_ascii=False) + "\n"
        lines = []
        for key, item in described.items():
            value = item["value"]
            if key == "rules":
                text = f"{len(value)} of {len(RULES)} selected"
            elif value is None:
                text = "all rules" if key == "select" else "none"
            elif isinstance(value, bool):
                text = "true" if value else "false"
            elif isinstance(value, list):
                text = ", ".join(value) if value else "none"
            elif isinstance(value, dict):
                text = "; ".join(f"{k} = {', '.join(v)}" for k, v in value.items()) or "none"
            else:
                text = str(value)
            lines.append(f"{key:<17} {visible(text)}  ({visible(item['source'])})")
        return "\n".join(lines) + "\n"


def store_glob(glob: str) -> str:
    """A ``per-path-ignores`` glob as a glob inside ``.okstra/``: as findings print it (``.okstra/tasks/…``)
    or, as it was first written, relative to ``.okstra/`` (``tasks/…``)."""
    return glob.removeprefix(layout.OKSTRA_DIR + "/")


def _store_relative(path: str) -> str | None:
    """A finding's project-relative path as a path inside ``.okstra/``, or None when it lies elsewhere."""
    prefix = layout.OKSTRA_DIR + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def _drop_matched(pending: dict[str, re.Pattern[str]], paths: Iterator[str]) -> dict[str, re.Pattern[str]]:
    """*pending* less the globs that match one of *paths* (or its name); stops as soon as none is left."""
    left = dict(pending)
    for inner in paths:
        name = inner.rsplit("/", 1)[-1]
        for glob in [g for g, p in left.items() if p.fullmatch(inner) or p.fullmatch(name)]:
            del left[glob]
        if not left:
            break
    return left


def _store_paths(store: Path) -> Iterator[str]:
    """Every folder and file under *store*, as a path inside it (``/``-separated); unreadable folders skipped."""
    for folder, dirs, files in os.walk(store):
        base = os.path.relpath(folder, store).replace(os.sep, "/")
        prefix = "" if base == "." else base + "/"
        for name in (*dirs, *files):
            yield prefix + name


def glob_pattern(glob: str) -> re.Pattern[str]:
    """A glob as a regex over ``/``-separated paths: ``*`` and ``?`` stay in one segment, ``**`` crosses them.

    ``dir/**`` also matches ``dir`` itself, so a finding about the folder is covered with its contents.
    """
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("(?:/.*)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and "]" in glob[i + 2 :]:
            end = glob.index("]", i + 2)
            body = glob[i + 1 : end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            out.append("[" + ("^/" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out))


# ------------------------------------------------------------------ reading the file


def _read_toml(path: Path) -> dict[str, Any]:
    """The parsed TOML of *path*, or a :class:`SettingsError` naming why it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SettingsError(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SettingsError(path, "cannot read: not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_SETTINGS_BYTES + 1)
    except OSError as exc:
        raise SettingsError(path, f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_SETTINGS_BYTES:
        raise SettingsError(path, f"cannot read: larger than {MAX_SETTINGS_BYTES // 1024} KiB")
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise SettingsError(path, "invalid TOML: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(path, f"invalid TOML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise SettingsError(path, "invalid TOML: arrays or tables nested too deeply to read") from None


def _is_pyproject(path: Path) -> bool:
    return path.name == layout.PYPROJECT_TOML


def _table(path: Path, doc: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The settings table of a parsed file and its name; other keys in okstra's namespace are refused."""
    if _is_pyproject(path):
        tool = doc.get("tool", {})
        where, name = "[tool.okstra]", "[tool.okstra.check]"
        namespace = tool.get("okstra", {}) if isinstance(tool, dict) else None
    else:
        where, namespace, name = "(top level)", doc, "[check]"
    if not isinstance(namespace, dict):
        raise SettingsError(path, f"{where}: expected a table holding {name}")
    for key in namespace:
        if key != "check":
            raise SettingsError(path, f"{_key_text(where, key)}: unknown key (expected only the {name} table)")
    table = namespace.get("check", {})
    if not isinstance(table, dict):
        raise SettingsError(path, f"{name}: expected a table of settings")
    return name, table


def _key_text(table: str, key: str) -> str:
    shown = key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)
    prefix = "" if table == "(top level)" else table.strip("[]") + "."
    return visible(prefix + shown)


def _rule_list(path: Path, key: str, value: object) -> list[str]:
    """A list of known rule ids or prefixes, or a refusal naming *key*."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(
            path, f'{key}: expected a list of rule ids or prefixes, e.g. ["{FLAT_LEGACY_ARTIFACT}", "OKS06"]'
        )
    for item in value:
        try:
            expand([item])
        except ValueError:
            raise SettingsError(
                path,
                f"{key}: unknown rule id or prefix {visible(json.dumps(item, ensure_ascii=False))} "
                "(expected ids or prefixes listed by `okstra check --list-rules`)",
            ) from None
    return list(value)


def _per_path(path: Path, key: str, value: object) -> dict[str, list[str]]:
    if not isinstance(value, dict):
        raise SettingsError(path, f"{key}: expected {EXPECTED['per-path-ignores']}")
    out: dict[str, list[str]] = {}
    for glob, ids in value.items():
        item_key = f"{key}.{json.dumps(glob, ensure_ascii=False)}"
        inner = store_glob(glob)
        if not inner or inner.startswith("/") or ".." in inner.split("/"):
            raise SettingsError(
                path, f"{visible(item_key)}: expected a glob of paths in .okstra/, as findings print them"
            )
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # a set Python reads differently in future ([[:alpha:]]) is refused too
                glob_pattern(inner)
        except (re.error, FutureWarning) as exc:
            raise SettingsError(path, f"{visible(item_key)}: not a valid glob ({exc})") from None
        out[glob] = _rule_list(path, visible(item_key), ids)
    return out


def _checked(path: Path, name: str, table: dict[str, Any]) -> dict[str, Any]:
    """The table's values, each checked for its type; unknown keys refused."""
    out: dict[str, Any] = {}
    for key, value in table.items():
        where = _key_text(name, key)
        if key not in EXPECTED:
            known = ", ".join(EXPECTED)
            raise SettingsError(path, f"{where}: unknown key (expected one of {known})")
        bad = SettingsError(path, f"{where}: expected {EXPECTED[key]}")
        if key in ("select", "ignore"):
            out[key] = _rule_list(path, where, value)
        elif key == "per-path-ignores":
            out[key] = _per_path(path, where, value)
        elif key == "strict":
            if not isinstance(value, bool):
                raise bad
            out[key] = value
        elif key == "jobs":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise bad
            out[key] = value
        elif key == "format":
            if value not in FORMATS:
                raise bad
            out[key] = value
        else:  # cache-dir: relative to the file's folder, as ruff reads paths in its settings
            out[key] = _folder(path, where, value)
    return out


def _folder(path: Path, where: str, value: object) -> Path:
    """A ``cache-dir`` value: a non-empty path without NUL, ``~`` or ``~user`` expanded, relative to *path*'s folder."""
    if not isinstance(value, str) or not value or "\0" in value:
        raise SettingsError(path, f"{where}: expected {EXPECTED['cache-dir']}, without NUL characters")
    try:
        return path.parent / Path(value).expanduser()
    except RuntimeError:
        user = value.split("/", 1)[0]
        shown = visible(json.dumps(user, ensure_ascii=False))
        raise SettingsError(path, f"{where}: cannot expand {shown}: no such user or home folder") from None


def find_file(project_root: Path) -> tuple[Path, dict[str, Any]] | None:
    """The settings file at *project_root* (the first of :data:`~okstra_core.layout.CHECK_SETTINGS_FILES`
    found) and its parsed TOML, or None."""
    for candidate in layout.check_settings_candidates(project_root):
        if not os.path.lexists(candidate):
            continue
        doc = _read_toml(candidate)
        tool = doc.get("tool")
        if _is_pyproject(candidate) and not (isinstance(tool, dict) and "okstra" in tool):
            continue  # a pyproject.toml without [tool.okstra] is not okstra's settings file
        return candidate, doc
    return None


def _read(project_root: Path, config: Path | None, isolated: bool) -> tuple[Path | None, str | None, dict[str, Any]]:
    if isolated:
        return None, None, {}
    if config is not None:
        found: tuple[Path, dict[str, Any]] | None = (config, _read_toml(config))
    else:
        found = find_file(project_root)
    if found is None:
        return None, None, {}
    path, doc = found
    name, table = _table(path, doc)
    return path, name, _checked(path, name, table)


def resolve(
    project_root: Path, flags: Flags | None = None, *, config: Path | None = None, isolated: bool = False
) -> CheckSettings:
    """The settings of a check of *project_root*: *flags* over the settings file over the defaults.

    Raises :class:`SettingsError` for a settings file that cannot be used.
    """
    flags = flags or Flags()
    for name, ids in (("--select", flags.select), ("--ignore", flags.ignore)):
        try:
            expand(ids)
        except ValueError as exc:
            raise SettingsError(None, f"{name}: {exc}") from None
    path, table, values = _read(project_root, config, isolated)
    label = visible(str(path)) if path is not None else DEFAULT

    def pick(key: str, flag: Any, flag_name: str, default: Any) -> Any:
        if flag is not None:
            sources[key] = flag_name
            return flag
        if key in values:
            sources[key] = label
            return values[key]
        sources[key] = DEFAULT
        return default

    sources: dict[str, str] = {}
    names = ", ".join(layout.CHECK_SETTINGS_FILES)
    if isolated:
        found_by = "--isolated: no settings file read"
    elif config is not None:
        found_by = "--config"
    else:
        found_by = f"first found of {names}" if path is not None else f"looked for {names}: none found"
    settings = CheckSettings(file=path, table=table, found_by=found_by)
    settings.strict = pick("strict", flags.strict, "--strict" if flags.strict else "--no-strict", False)
    settings.jobs = pick("jobs", flags.jobs, "--jobs", 0)
    # $OKSTRA_CACHE_DIR counts as the flag, as RUFF_CACHE_DIR does for ruff: a CI job can move the cache.
    env_cache = os.environ.get(layout.CACHE_DIR_ENV)
    if flags.cache_dir is None and env_cache:
        settings.cache_dir = pick("cache-dir", Path(env_cache), f"${layout.CACHE_DIR_ENV}", None)
    else:
        settings.cache_dir = pick("cache-dir", flags.cache_dir, "--cache-dir", None)
    settings.format = pick("format", flags.format, "--format", "text")
    settings.per_path_ignores = values.get("per-path-ignores", {})
    sources["per-path-ignores"] = label if "per-path-ignores" in values else DEFAULT
    settings.file_select = values.get("select")
    settings.file_ignore = values.get("ignore", [])
    settings.flag_select = list(flags.select)
    settings.flag_ignore = list(flags.ignore)
    sources["select"] = _layered(flags.select, "select" in values, "--select", label)
    if flags.select:
        sources["ignore"] = "--ignore" if flags.ignore else f"{DEFAULT} (--select starts afresh)"
    else:
        sources["ignore"] = _layered(flags.ignore, "ignore" in values, "--ignore", label, stacked=True)
    settings.sources = sources
    settings._matchers = [
        (glob_pattern(store_glob(g)), frozenset(expand(ids))) for g, ids in settings.per_path_ignores.items()
    ]
    return settings


def _layered(flag: list[str], in_file: bool, flag_name: str, label: str, *, stacked: bool = False) -> str:
    if flag and in_file and stacked:
        return f"{label}, then {flag_name}"
    if flag:
        return flag_name
    return label if in_file else DEFAULT
