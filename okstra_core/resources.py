"""Access to the shipped ``schemas/`` and ``templates/`` through importlib.resources.

An installed wheel carries them as ``okstra_core/_resources/``; an editable
checkout reads them from the repository root next to the package.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path


@cache
def _root() -> Traversable:
    packaged = resources.files("okstra_core").joinpath("_resources")
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parent.parent
    return checkout


def schemas_dir() -> Traversable:
    """The folder of JSON Schemas."""
    return _root().joinpath("schemas")


def templates_dir() -> Traversable:
    """The folder of report and index templates."""
    return _root().joinpath("templates")


def read_schema_text(name: str) -> str:
    """Text of ``schemas/<name>``."""
    return schemas_dir().joinpath(name).read_text(encoding="utf-8")


@cache
def read_template(relpath: str) -> str:
    """Text of ``templates/<relpath>`` (``/``-separated), read once per process: templates ship with the package."""
    node = templates_dir()
    for part in relpath.split("/"):
        node = node.joinpath(part)
    return node.read_text(encoding="utf-8")
