"""The query language: every form and filter, its FTS5 expression, and one-line errors for malformed queries."""

from __future__ import annotations

import datetime as dt
import random
import sqlite3

import pytest

from okstra_core.search.query import And, Or, QueryError, Term, parse
from okstra_core.search.tokens import FTS_TOKENIZER, tokens

NOW = dt.datetime(2026, 12, 1, 12, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("text", "fts"),
    [
        ("idempotency", '"idempotency"'),
        ("idempotency keys", '"idempotency" AND "keys"'),
        ("Idempotency AND Keys", '"idempotency" AND "keys"'),
        ('"exact phrase"', '"exact phrase"'),
        ("IO-002", '"io 002"'),
        ("retr*", '"retr"*'),
        ('"idempotency ke"*', '"idempotency ke"*'),
        ("a OR b", '"a" OR "b"'),
        ("a b OR c", '("a" AND "b") OR "c"'),
        ("a NOT b", '"a" NOT "b"'),
        ("a -b", '"a" NOT "b"'),
        ("a NOT (b OR c)", '"a" NOT ("b" OR "c")'),
        ("a b -c -d", '("a" AND "b") NOT ("c" OR "d")'),
        ("(a OR b) c", '("a" OR "b") AND "c"'),
        ("or not and", '"or" AND "not" AND "and"'),
        ("résumé", '"resume"'),
        ('say "NOT" OR "OR"', '("say" AND "not") OR "or"'),
    ],
)
def test_query_forms(text: str, fts: str) -> None:
    assert parse(text, now=NOW).fts() == fts


def test_filters() -> None:
    q = parse("kind:finding,option kind:report task:payments:* type:analysis since:2026-11-30 key", now=NOW)
    assert q.kinds == {"finding", "option", "report"}
    assert q.tasks == ("payments:*",)
    assert q.types == {"analysis"}
    assert q.since_ns == int(dt.datetime(2026, 11, 30, tzinfo=dt.UTC).timestamp()) * 10**9
    assert q.node == Term(("key",))


@pytest.mark.parametrize(("age", "seconds"), [("12h", 12 * 3600), ("7d", 7 * 86400), ("2w", 14 * 86400)])
def test_since_takes_an_age(age: str, seconds: int) -> None:
    assert parse(f"since:{age}", now=NOW).since_ns == int(NOW.timestamp() - seconds) * 10**9


def test_a_filter_alone_lists_everything_it_keeps() -> None:
    q = parse("kind:log", now=NOW)
    assert q.node is None and q.fts() is None and q.wants_logs


def test_an_unknown_prefix_is_text() -> None:
    assert parse("http://example", now=NOW).fts() == '"http example"'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "nothing to search for"),
        ("   ", "nothing to search for"),
        ('"open', "unclosed quote"),
        ("(a OR b", "unbalanced '('"),
        ("a)", "unbalanced ')'"),
        ("()", "empty parentheses"),
        ("a OR", "OR needs a word or phrase on each side"),
        ("OR a", "OR needs a word or phrase on each side"),
        ("a OR OR b", "OR needs a word or phrase on each side"),
        ("NOT a", "NOT needs something to exclude from"),
        ("-a", "NOT needs something to exclude from"),
        ("a NOT", "NOT needs a word, phrase or group after it"),
        ("---", "has no letters or digits"),
        ('""', "has no letters or digits"),
        ("*", "has no letters or digits"),
        ("kind:bogus", "unknown kind 'bogus'"),
        ("kind:", "kind: needs a value"),
        ("since:yesterday", "since:yesterday is not a date"),
        ("(a kind:finding)", "applies to the whole query"),
        ("a -kind:finding", "cannot be negated"),
        ("a NOT task:x", "filters cannot be negated"),
    ],
)
def test_malformed_queries_say_what_is_wrong_in_one_line(text: str, message: str) -> None:
    with pytest.raises(QueryError) as caught:
        parse(text, now=NOW)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_matches_agrees_with_the_tree() -> None:
    q = parse('(retry OR refund) "idempotency key"* -gateway', now=NOW)
    assert isinstance(q.node, And) and isinstance(q.node.items[0], Or)
    assert q.matches(tokens("Retry with an idempotency keys store"))
    assert not q.matches(tokens("Retry with an idempotency keys store at the gateway"))
    assert not q.matches(tokens("idempotency keys"))
    assert [t.tokens for t in q.terms()] == [("retry",), ("refund",), ("idempotency", "key")]


def test_any_text_is_a_safe_match_expression_or_a_one_line_error() -> None:
    """Whatever is typed, FTS5 never sees syntax it did not get from the parser (a fuzz over hostile characters)."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{FTS_TOKENIZER}')")
    conn.execute("INSERT INTO t VALUES ('alpha beta gamma NEAR col x:y')")
    alphabet = ['"', "(", ")", "*", "-", ":", "^", "+", "NEAR", "OR", "NOT", "AND", "a", "b", " ", "x:", "{", "}"]
    rng = random.Random(20261201)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        try:
            q = parse(text, now=NOW)
        except QueryError as exc:
            assert "\n" not in str(exc)
            continue
        if q.fts() is not None:
            conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (q.fts(),)).fetchone()


def test_deep_nesting_is_one_line_not_a_crash() -> None:
    from okstra_core.search.query import MAX_DEPTH, QueryError, parse

    parse("(" * MAX_DEPTH + "retry" + ")" * MAX_DEPTH)
    for depth in (MAX_DEPTH + 1, 400):  # 400: as deep as the longest query allowed goes
        with pytest.raises(QueryError, match="too many nested parentheses"):
            parse("(" * depth + "retry" + ")" * depth)
    with pytest.raises(QueryError, match="characters long"):  # past Python's recursion limit when it was unbounded
        parse("(" * 3000 + "retry" + ")" * 3000)


def test_a_query_within_the_bounds_always_parses_in_fts5() -> None:
    """The largest queries allowed: SQLite's FTS5 parser (a small fixed stack) reads each of them."""
    from okstra_core.search.query import MAX_CHARS, MAX_DEPTH, MAX_TERMS, QueryError, parse

    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{FTS_TOKENIZER}')")
    conn.execute("INSERT INTO t VALUES ('alpha beta gamma')")
    excluded = "alpha " + " ".join(f"-w{i}" for i in range(MAX_TERMS - 1))  # 97 of these overflowed it
    nested = "x NOT (a OR " * MAX_DEPTH + "c" + ")" * MAX_DEPTH
    mixed = "x NOT (a OR NOT b " * MAX_DEPTH + "c" + ")" * MAX_DEPTH
    for text in (excluded, nested, mixed):
        assert len(text) <= MAX_CHARS
        conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (parse(text, now=NOW).fts(),)).fetchone()
    for text in (excluded + " -more", "alpha " * 200, "alpha" * 201):
        with pytest.raises(QueryError, match=r"at most (64|1000)\)$"):
            parse(text, now=NOW)
