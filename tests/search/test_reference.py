"""The index finds exactly what a plain scan of the same text with the same tokenizer finds."""

from __future__ import annotations

import datetime as dt
import os
from collections import Counter
from collections.abc import Iterator
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

from okstra_core import layout
from okstra_core.search.extract import extract, file_kind
from okstra_core.search.index import SearchIndex
from okstra_core.search.query import Query, parse
from okstra_core.search.recorded import task_times
from okstra_core.search.tokens import tokens
from okstra_core.store import Project

QUERIES = [
    "idempotency",
    "idempotency keys",
    "idempotency key",
    '"idempotency key"',
    '"idempotency keys"',
    "retr*",
    "idem*",
    "gateway OR ledger",
    "retry NOT gateway",
    "retry -gateway -backoff",
    "(retry OR refund) key*",
    "IO-002",
    "IO-001 OR IO-003",
    '"exactly-once"',
    "tenant_id",
    "index",
    "vat",
    "F-001",
    "PREP-001",
    "analysis",
    "kind:finding",
    "kind:finding idempotent",
    "kind:option outbox",
    "kind:clarification",
    "kind:design-prep key",
    "kind:prompt worker",
    "kind:brief",
    "kind:team-state completed",
    "kind:user-response",
    "kind:report,finding retry",
    "task:*retry* key",
    "task:demo-shop:payments:*",
    "task:payments/* refund",
    "task:retry-policy",
    "type:analysis retry",
    "type:implementation-planning,option-selection key",
    "since:2000-01-01 gateway",
    "since:2999-01-01 gateway",
    "since:2026-11-05T16:00:00Z gateway",
    "since:2026-11-20 kind:prompt",
    "rounding OR (fraud NOT rules)",
    "zzzz-not-there",
    "éxactly",
]


def _files(root: Path) -> Iterator[tuple[Path, str, str, str | None]]:
    """Every indexed file by the read side's own listings: (path, kind, task folder, its task type)."""
    project = Project(root)
    for ref in project.task_refs:
        task = ref.open()
        folder = f"{ref.root.parent.name}/{ref.root.name}"
        task_type = ref.entry.task_type if ref.entry is not None else None
        for path in task.instruction_files():
            kind = file_kind("iset", path.name)
            if kind is not None and path.is_file():
                yield path, kind, folder, task_type
        for path in task.notes():
            kind = file_kind("notes", path.name)
            if kind is not None:
                yield path, kind, folder, task_type
        for rd in task.run_dirs:
            for art in rd.artifacts():
                kind = file_kind("cat:" + art.category, art.path.name)
                if kind is not None and kind != "log":
                    yield art.path, kind, folder, rd.task_type


def _reference(root: Path, query: Query) -> Counter[tuple[str, str, str | None]]:
    """The hits of *query* found by reading every file and testing each section's tokens."""
    keys = {f"{r.root.parent.name}/{r.root.name}": r.key for r in Project(root).task_refs}
    recorded: dict[str, int] = {}
    for folder in keys:
        recorded.update(task_times(root, folder))
    out: Counter[tuple[str, str, str | None]] = Counter()
    for path, kind, folder, task_type in _files(root):
        key = keys.get(folder) or folder
        if query.tasks and not any(
            fnmatchcase(key, g) or fnmatchcase(folder, g) or fnmatchcase(folder.split("/")[1], g) for g in query.tasks
        ):
            continue
        if query.types and task_type not in query.types:
            continue
        at = recorded.get(layout.rel(path, root), os.stat(path).st_mtime_ns)
        if query.since_ns is not None and at < query.since_ns:
            continue
        for section in extract(path, root, kind).sections:
            if query.kinds and section.kind not in query.kinds:
                continue
            if query.matches(tokens(section.text)):
                out[(layout.rel(path, root), section.kind, section.label)] += 1
    return out


@pytest.fixture(scope="module")
def demo_index(demo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SearchIndex]:
    with SearchIndex(demo_root, tmp_path_factory.mktemp("search-cache")) as index:
        index.update()
        yield index


def test_enough_queries_and_most_find_something(demo_index: SearchIndex) -> None:
    assert len(QUERIES) >= 30
    found = [q for q in QUERIES if demo_index.search(parse(q), limit=1).total]
    assert len(found) >= 30


@pytest.mark.parametrize("text", QUERIES)
def test_index_equals_the_plain_scan(demo_root: Path, demo_index: SearchIndex, text: str) -> None:
    query = parse(text, now=dt.datetime(2026, 12, 1, tzinfo=dt.UTC))
    results = demo_index.search(query, limit=100_000)
    got = Counter((h.path, h.kind, h.label) for h in results.hits)
    assert got == _reference(demo_root, query)
    assert results.total == len(results.hits)


@pytest.mark.parametrize("text", ["idempotency", "retr*", "gateway OR ledger", "kind:finding"])
def test_hits_are_ranked_then_newest_first(demo_index: SearchIndex, text: str) -> None:
    hits = demo_index.search(parse(text), limit=100_000).hits
    order = [(h.score, -h.modified_ns) for h in hits]
    assert order == sorted(order)
