"""The search query language, parsed by hand into a tree: never handed raw to FTS5's ``MATCH``.

``idempotency keys`` (every word), ``"exact phrase"``, ``prefix*``, ``a OR b``,
``NOT word`` or ``-word``, parentheses, and the filters ``kind:``, ``task:``
(a glob on the task key, folder or id), ``type:`` (task type) and ``since:``
(the grammar of every time filter, :func:`okstra_core.times.parse_since`: a
date, ``2026-11-30``, a UTC time or an age, ``7d``; it keeps the files whose
recorded time, see :mod:`.recorded`, is at or after it). Words are split into tokens by
:mod:`.tokens`; a word of several tokens (``IO-002``) matches them side by side,
as a phrase. Operators are upper case (``or`` and ``not`` are words); AND binds
tighter than OR. Filters apply to the whole query; ``kind:`` and ``type:`` may
repeat (either matches), ``task:`` too. A query is at most :data:`MAX_CHARS`
characters, :data:`MAX_TERMS` words and phrases and :data:`MAX_DEPTH` levels of
parentheses.

:func:`parse` returns a :class:`Query` or raises :class:`QueryError` with one
line saying what is wrong. :meth:`Query.fts` is the FTS5 expression (every
token quoted), :meth:`Query.matches` the same test in plain Python.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Final

from .. import times
from .tokens import spans, tokens

#: Every artifact kind the index knows, in help order.
KINDS: Final = (
    "report",
    "finding",
    "option",
    "clarification",
    "design-prep",
    "user-response",
    "direction",
    "prompt",
    "brief",
    "instruction",
    "worker-result",
    "note",
    "team-state",
    "log",
)

FILTERS: Final = ("kind", "task", "type", "since")


#: Parentheses nest at most this deep: deeper queries overflow SQLite's FTS5 parser (and Python's stack).
MAX_DEPTH: Final = 10
#: A longer query is refused: nobody types it, and matching it costs time for every keystroke.
MAX_CHARS: Final = 1000
#: Words and phrases (excluded ones included) in one query, at most.
MAX_TERMS: Final = 64


class QueryError(ValueError):
    """A query that cannot be run; the message is one line saying why."""


@dataclass(frozen=True, slots=True)
class Term:
    """A word or a phrase: tokens that must appear side by side; with *prefix*, the last one only begins so."""

    tokens: tuple[str, ...]
    prefix: bool = False

    def fts(self) -> str:
        return '"' + " ".join(self.tokens) + '"' + ("*" if self.prefix else "")

    def matches(self, doc: list[str]) -> bool:
        n = len(self.tokens)
        last = self.tokens[-1]
        head = self.tokens[:-1]
        for i in range(len(doc) - n + 1):
            if tuple(doc[i : i + n - 1]) == head and (
                doc[i + n - 1].startswith(last) if self.prefix else doc[i + n - 1] == last
            ):
                return True
        return False


@dataclass(frozen=True, slots=True)
class And:
    """Every item matches and no excluded one does."""

    items: tuple[Node, ...]
    excluded: tuple[Node, ...] = ()

    def fts(self) -> str:
        text = " AND ".join(_group(item) for item in self.items)
        if not self.excluded:
            return text
        # One NOT of every exclusion ORed together: as deep for 60 exclusions as for one (a NOT per
        # exclusion nests, and FTS5's parser overflows past about 90 of them).
        head = text if len(self.items) == 1 else f"({text})"
        if len(self.excluded) == 1:
            return f"{head} NOT {_group(self.excluded[0])}"
        return f"{head} NOT ({' OR '.join(_group(item) for item in self.excluded)})"

    def matches(self, doc: list[str]) -> bool:
        return all(i.matches(doc) for i in self.items) and not any(i.matches(doc) for i in self.excluded)


@dataclass(frozen=True, slots=True)
class Or:
    """At least one item matches."""

    items: tuple[Node, ...]

    def fts(self) -> str:
        return " OR ".join(_group(item) for item in self.items)

    def matches(self, doc: list[str]) -> bool:
        return any(i.matches(doc) for i in self.items)


Node = Term | And | Or


def _group(node: Node) -> str:
    return node.fts() if isinstance(node, Term) else f"({node.fts()})"


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed query: the text test (None when only filters were given) and the filters."""

    text: str
    node: Node | None
    kinds: frozenset[str] = frozenset()
    tasks: tuple[str, ...] = ()
    types: frozenset[str] = frozenset()
    #: Only files whose recorded time (the run's, else the mtime) is at or after this (nanoseconds since the epoch).
    since_ns: int | None = None

    def fts(self) -> str | None:
        """The FTS5 ``MATCH`` expression: every token double-quoted, so no user text is read as syntax."""
        return None if self.node is None else self.node.fts()

    def matches(self, doc: list[str]) -> bool:
        """Whether a text whose tokens are *doc* matches (the filters aside)."""
        return True if self.node is None else self.node.matches(doc)

    def terms(self) -> list[Term]:
        """The terms a match may show (those not excluded), for highlighting."""
        out: list[Term] = []

        def walk(node: Node) -> None:
            if isinstance(node, Term):
                out.append(node)
            else:
                for item in node.items:
                    walk(item)

        if self.node is not None:
            walk(self.node)
        return out

    def match_spans(self, text: str) -> list[tuple[int, int]]:
        """Where the query's terms (those not excluded) occur in *text*: ``[start, end)`` offsets, in order."""
        terms = self.terms()
        if not terms:
            return []
        found = list(spans(text))
        words = [w for _, _, w in found]
        out: set[tuple[int, int]] = set()
        for term in terms:
            n = len(term.tokens)
            for i in range(len(words) - n + 1):
                if term.matches(words[i : i + n]):
                    out.add((found[i][0], found[i + n - 1][1]))
        return sorted(out)

    @property
    def wants_logs(self) -> bool:
        return "log" in self.kinds


@dataclass(slots=True)
class _Lexeme:
    kind: str  # "word", "phrase", "(", ")", "OR", "NOT", "AND", "filter"
    text: str
    prefix: bool = False
    negated: bool = False
    name: str = ""


@dataclass(slots=True)
class _Filters:
    kinds: set[str] = field(default_factory=set)
    tasks: list[str] = field(default_factory=list)
    types: set[str] = field(default_factory=set)
    since_ns: int | None = None


def _lex(text: str) -> list[_Lexeme]:
    out: list[_Lexeme] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if c in "()":
            out.append(_Lexeme(c, c))
            i += 1
            continue
        negated = c == "-" and i + 1 < n and not text[i + 1].isspace()
        if negated:
            i += 1
            c = text[i]
        if c == '"':
            end = text.find('"', i + 1)
            if end < 0:
                raise QueryError(f'unclosed quote: {text[i:]!r} needs a closing "')
            lexeme = _Lexeme("phrase", text[i + 1 : end], negated=negated)
            i = end + 1
            if i < n and text[i] == "*":
                lexeme.prefix = True
                i += 1
            out.append(lexeme)
            continue
        start = i
        while i < n and not text[i].isspace() and text[i] not in '()"':
            i += 1
        word = text[start:i]
        name, colon, value = word.partition(":")
        if colon and name.lower() in FILTERS:
            out.append(_Lexeme("filter", value, negated=negated, name=name.lower()))
        elif word in ("OR", "NOT", "AND") and not negated:
            out.append(_Lexeme(word, word))
        else:
            prefix = word.endswith("*")
            out.append(_Lexeme("word", word.rstrip("*") if prefix else word, prefix=prefix, negated=negated))
    return out


def _since(value: str, now: dt.datetime) -> int:
    moment = times.parse_since(value, now)
    if moment is None:
        raise QueryError(f"since:{value} is not {times.SINCE_EXPECTED}")
    # Nanoseconds fit a signed 64-bit integer until 2262; a later date is as good as the largest one.
    return max(0, min(int(moment.timestamp()) * 1_000_000_000, 2**63 - 1))


def _filter(lexeme: _Lexeme, filters: _Filters, now: dt.datetime) -> None:
    name, value = lexeme.name, lexeme.text
    if lexeme.negated:
        raise QueryError(f"-{name}: cannot be negated; filters only narrow the search")
    if not value:
        raise QueryError(f"{name}: needs a value (for example {name}:{_EXAMPLES[name]})")
    if name == "kind":
        for kind in value.split(","):
            if kind not in KINDS:
                raise QueryError(f"unknown kind {kind!r}; one of: {', '.join(KINDS)}")
            filters.kinds.add(kind)
    elif name == "task":
        filters.tasks.append(value)
    elif name == "type":
        filters.types.update(v for v in value.split(",") if v)
    else:
        since = _since(value, now)
        filters.since_ns = since if filters.since_ns is None else max(filters.since_ns, since)


_EXAMPLES = {"kind": "finding", "task": "payments:*", "type": "analysis", "since": "2026-11-30"}


class _Parser:
    def __init__(self, lexemes: list[_Lexeme], filters: _Filters, now: dt.datetime) -> None:
        self.lexemes = lexemes
        self.pos = 0
        self.filters = filters
        self.now = now
        self.depth = 0
        self.terms = 0

    def peek(self) -> _Lexeme | None:
        return self.lexemes[self.pos] if self.pos < len(self.lexemes) else None

    def parse(self) -> Node | None:
        node = self.or_expr()
        rest = self.peek()
        if rest is not None:  # only a ")" stops an expression early
            raise QueryError("unbalanced ')': no '(' opens it")
        return node

    def or_expr(self) -> Node | None:
        items: list[Node] = []
        empty_side = False
        while True:
            node = self.and_expr()
            if node is None:
                empty_side = True
            else:
                items.append(node)
            lexeme = self.peek()
            if lexeme is None or lexeme.kind != "OR":
                break
            self.pos += 1
            if node is None:
                raise QueryError("OR needs a word or phrase on each side")
        if empty_side and len(items) >= 1 and self.lexemes[self.pos - 1].kind == "OR":
            raise QueryError("OR needs a word or phrase on each side")
        if not items:
            return None
        return items[0] if len(items) == 1 else Or(tuple(items))

    def and_expr(self) -> Node | None:
        items: list[Node] = []
        excluded: list[Node] = []
        while (lexeme := self.peek()) is not None and lexeme.kind not in ("OR", ")"):
            self.pos += 1
            if lexeme.kind == "AND":
                continue
            if lexeme.kind == "filter":
                if self.depth:
                    raise QueryError(f"{lexeme.name}: applies to the whole query; move it out of the parentheses")
                _filter(lexeme, self.filters, self.now)
                continue
            negated = lexeme.negated
            if lexeme.kind == "NOT":
                nxt = self.peek()
                if nxt is None or nxt.kind in ("OR", ")", "NOT", "AND"):
                    raise QueryError("NOT needs a word, phrase or group after it")
                if nxt.kind == "filter":
                    raise QueryError(f"NOT {nxt.name}: filters cannot be negated; they only narrow the search")
                self.pos += 1
                lexeme, negated = nxt, True
            node = self.atom(lexeme)
            (excluded if negated else items).append(node)
        if excluded and not items:
            raise QueryError("NOT needs something to exclude from: add a word before it")
        if not items:
            return None
        if len(items) == 1 and not excluded:
            return items[0]
        return And(tuple(items), tuple(excluded))

    def atom(self, lexeme: _Lexeme) -> Node:
        if lexeme.kind == "(":
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise QueryError(f"too many nested parentheses (at most {MAX_DEPTH})")
            node = self.or_expr()
            closing = self.peek()
            if closing is None or closing.kind != ")":
                raise QueryError("unbalanced '(': add the ')' that closes it")
            self.pos += 1
            self.depth -= 1
            if node is None:
                raise QueryError("empty parentheses: put a word inside or remove them")
            return node
        if lexeme.kind == ")":  # pragma: no cover - and_expr stops before ")"
            raise QueryError("unbalanced ')': no '(' opens it")
        self.terms += 1
        if self.terms > MAX_TERMS:
            raise QueryError(f"too many words and phrases (at most {MAX_TERMS})")
        found = tokens(lexeme.text)
        if not found:
            shown = f'"{lexeme.text}"' if lexeme.kind == "phrase" else lexeme.text or "*"
            raise QueryError(f"{shown} has no letters or digits to search for")
        return Term(tuple(found), lexeme.prefix)


def parse(text: str, *, now: dt.datetime | None = None) -> Query:
    """*text* as a :class:`Query`; :class:`QueryError` (one line) when it cannot be run."""
    if len(text) > MAX_CHARS:
        raise QueryError(f"the query is {len(text)} characters long (at most {MAX_CHARS})")
    filters = _Filters()
    parser = _Parser(_lex(text), filters, now or dt.datetime.now(dt.UTC))
    node = parser.parse()
    if node is None and not (filters.kinds or filters.tasks or filters.types or filters.since_ns is not None):
        raise QueryError('nothing to search for: give a word, a "phrase" or a filter (kind:, task:, type:, since:)')
    return Query(
        text,
        node,
        frozenset(filters.kinds),
        tuple(filters.tasks),
        frozenset(filters.types),
        filters.since_ns,
    )
