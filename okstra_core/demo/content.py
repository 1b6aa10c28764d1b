"""The demo's canned content: its project, clock, team, and the findings, options and plans its reports hold."""

from __future__ import annotations

import datetime as dt
from typing import Any

from ..models.convergence import ConvergenceGroups, FindingGroup, GroupedFinding
from ..workflows.tasks import Run, WorkerSpec

PROJECT_ID = "demo-shop"
#: The largest demo asked for in one go (the benchmark trees use 10,000): a typo must not run until killed.
MAX_TASKS = 1_000_000
START = dt.datetime(2026, 11, 2, 9, 0, 0, tzinfo=dt.UTC)

ANALYSERS = [
    WorkerSpec("claude-analyser", "analyser", "claude", "claude-sonnet"),
    WorkerSpec("codex-analyser", "analyser", "codex", "gpt-codex"),
    WorkerSpec("gemini-analyser", "analyser", "antigravity", "gemini-pro"),
]
WRITER = WorkerSpec("report-writer", "report-writer", "claude", "claude-sonnet", runner="native-session")
EXECUTOR = WorkerSpec("codex-executor", "executor", "codex", "gpt-codex")
VERIFIER = WorkerSpec("claude-verifier", "verifier", "claude", "claude-sonnet")


ANALYSIS_FINDINGS = {
    "analysisFindings": [
        {
            "findingId": "F-001",
            "title": "Retries are not idempotent",
            "severity": "high",
            "detail": "The payment retry path re-submits charges without an idempotency key.",
            "evidence": ["src/payments/retry.py:41", "logs/2026-10-29-double-charge.txt"],
        },
        {
            "findingId": "F-002",
            "title": "Backoff ignores Retry-After",
            "severity": "medium",
            "detail": "The gateway's Retry-After header is parsed but never used.",
            "evidence": ["src/payments/backoff.py:17"],
        },
        {
            "findingId": "F-003",
            "title": "Timeout budget exceeds the SLA",
            "severity": "low",
            "detail": "Five retries at 8s exceed the 30s checkout SLA.",
            "evidence": ["config/payments.yaml:12"],
        },
    ]
}


def option_candidates(mode: str, preselected: str | None = None) -> dict[str, Any]:
    value: dict[str, Any] = {
        "mode": mode,
        "candidates": [
            {
                "optionId": "IO-001",
                "title": "Idempotency keys at the gateway client",
                "summary": "Generate a key per logical charge and send it on every attempt.",
                "pros": ["Small change", "Gateway already supports keys"],
                "cons": ["Keys must be persisted"],
                "risk": "low",
            },
            {
                "optionId": "IO-002",
                "title": "Outbox with exactly-once dispatcher",
                "summary": "Write charges to an outbox table and dispatch them from one worker.",
                "pros": ["Survives crashes"],
                "cons": ["New table and worker", "Migration"],
                "risk": "medium",
            },
            {
                "optionId": "IO-003",
                "title": "Disable automatic retries",
                "summary": "Surface failures to the user and let them retry.",
                "pros": ["Trivial"],
                "cons": ["Worse conversion"],
                "risk": "high",
            },
        ],
        "recommendation": "IO-001",
    }
    if preselected:
        value["preselected"] = {
            "optionId": preselected,
            "confirmedBy": "product-owner",
            "confirmedAt": "2026-11-01T10:00:00Z",
        }
    return {"optionCandidates": value}


def retry_plan(assess: bool, variant: int = 1) -> dict[str, Any]:
    def assessment(item: str, risk: str) -> dict[str, Any] | None:
        if not assess:
            return None
        return (
            {"item": item, "risk": risk, "unknowns": ["storage engine" if variant == 1 else "storage engine and TTL"]}
            if item == "PREP-002"
            else {"item": item, "risk": risk}
        )

    items: list[dict[str, Any]] = [
        {
            "prepId": "PREP-001",
            "title": "Idempotency key format",
            "status": "provisional",
            "question": "Which key format do we send to the gateway?",
            "fields": ["format", "rationale"],
            "assessment": assessment("PREP-001", "low"),
        },
        {
            "prepId": "PREP-002",
            "title": "Key storage and expiry",
            "status": "blocked",
            "question": "Where are keys stored, and for how long?",
            "fields": ["store", "ttl"],
            "assessment": assessment("PREP-002", "medium"),
        },
        {
            "prepId": "PREP-003",
            "title": "Client library version",
            "status": "confirmed",
            "question": "",
            "fields": [],
            "assessment": assessment("PREP-003", "low"),
        },
    ]
    for item in items:
        if item["assessment"] is None:
            del item["assessment"]
    return {
        "implementationPlan": {
            "stages": [
                {
                    "stage": 1,
                    "title": "Key generation",
                    "goal": "Generate and persist idempotency keys",
                    "tasks": ["key module", "unit tests"],
                },
                {
                    "stage": 2,
                    "title": "Client wiring",
                    "goal": "Send keys on every attempt",
                    "tasks": ["client change", "contract test"],
                },
                {
                    "stage": 3,
                    "title": "Backoff",
                    "goal": "Honour Retry-After",
                    "tasks": ["backoff change", "load test"],
                },
            ],
            "designItems": items,
        }
    }


def finding_groups(run: Run, roster: list[str]) -> ConvergenceGroups:
    """Round 0: three finding groups over the analysers' findings."""
    return ConvergenceGroups(
        schema_version="1.2",
        task_key=run.task_key,
        run_date_time_segment=run.segment,
        roster=roster,
        groups=[
            FindingGroup(
                group_id="G-001",
                title="Non-idempotent retries",
                tickets=["PAY-812"],
                findings=[
                    GroupedFinding(
                        finding_id="F-001", analyser_id="claude-analyser", summary="retry re-submits charges"
                    ),
                    GroupedFinding(finding_id="F-001b", analyser_id="codex-analyser", summary="no idempotency key"),
                ],
            ),
            FindingGroup(
                group_id="G-002",
                title="Retry-After ignored",
                tickets=["PAY-815"],
                findings=[
                    GroupedFinding(finding_id="F-002", analyser_id="gemini-analyser", summary="header parsed, unused")
                ],
            ),
            FindingGroup(
                group_id="G-003",
                title="SLA budget",
                tickets=[],
                findings=[
                    GroupedFinding(finding_id="F-003", analyser_id="codex-analyser", summary="retry budget > SLA")
                ],
            ),
        ],
    )


VOTES_BY_ROUND: dict[int, dict[str, dict[str, str]]] = {
    1: {
        "claude-analyser": {"G-001": "agree", "G-002": "agree", "G-003": "disagree"},
        "codex-analyser": {"G-001": "agree", "G-002": "abstain", "G-003": "agree"},
        "gemini-analyser": {"G-001": "agree", "G-002": "agree", "G-003": "abstain"},
    },
    2: {
        "claude-analyser": {"G-003": "disagree"},
        "codex-analyser": {"G-003": "disagree"},
        "gemini-analyser": {"G-003": "abstain"},
    },
}

#: A reverify round that leaves G-003 disputed (one for, one against, one abstaining).
_SPLIT_ROUND = {
    "claude-analyser": {"G-003": "disagree"},
    "codex-analyser": {"G-003": "agree"},
    "gemini-analyser": {"G-003": "abstain"},
}


def convergence_votes(rounds: int, settled: bool = True) -> dict[int, dict[str, dict[str, str]]]:
    """The votes of *rounds* reverify rounds: G-003 is rejected in the last one, or stays disputed."""
    first = VOTES_BY_ROUND[1]
    if rounds == 1 and settled:
        first = {**first, "codex-analyser": {**first["codex-analyser"], "G-003": "disagree"}}
    votes = {1: first}
    for rnd in range(2, rounds + 1):
        votes[rnd] = VOTES_BY_ROUND[2] if rnd == rounds and settled else _SPLIT_ROUND
    return votes


FRAUD_OPTIONS: dict[str, Any] = {
    "optionCandidates": {
        "mode": "comparison",
        "candidates": [
            {
                "optionId": "IO-001",
                "title": "Rules in the checkout service",
                "summary": "Keep the fraud rules in code next to checkout and ship them with each release.",
                "pros": ["No new service", "Rules are reviewed like code"],
                "cons": ["A rule change needs a release"],
                "risk": "low",
            },
            {
                "optionId": "IO-002",
                "title": "Hosted rules engine",
                "summary": "Move the rules to the payment provider's hosted engine and call it before capture.",
                "pros": ["Analysts change rules without a release", "Shared signals across merchants"],
                "cons": ["Vendor lock-in", "One more network hop on checkout"],
                "risk": "medium",
            },
            {
                "optionId": "IO-003",
                "title": "Score with a model, review by hand",
                "summary": "Score every order with a model and queue the risky ones for manual review.",
                "pros": ["Catches new patterns"],
                "cons": ["Needs labelled data", "Review queue staffing"],
                "risk": "high",
            },
        ],
        "recommendation": "IO-002",
    }
}

ADDRESS_OPTIONS: dict[str, Any] = {
    "optionCandidates": {
        "mode": "comparison",
        "candidates": [
            {
                "optionId": "IO-001",
                "title": "Validate on submit only",
                "summary": "Check the address once when the order is placed.",
                "pros": ["One call per order"],
                "cons": ["Errors surface late"],
                "risk": "low",
            },
            {
                "optionId": "IO-002",
                "title": "Autocomplete while typing",
                "summary": "Suggest verified addresses as the customer types.",
                "pros": ["Fewer typos", "Faster checkout"],
                "cons": ["Per-keystroke API cost"],
                "risk": "medium",
            },
        ],
        "recommendation": "IO-002",
    }
}


def cards_plan(variant: int) -> dict[str, Any]:
    """The saved-cards plan; the re-plan (variant 2) widens PREP-002's assessment, so its earlier answer goes stale."""
    unknowns = ["retention law per country"] if variant == 1 else ["retention law per country", "card expiry"]
    return {
        "implementationPlan": {
            "stages": [
                {
                    "stage": 1,
                    "title": "Token vault",
                    "goal": "Store card tokens, never card numbers",
                    "tasks": ["vault"],
                },
                {"stage": 2, "title": "Checkout", "goal": "Offer saved cards at checkout", "tasks": ["ui", "api"]},
            ],
            "designItems": [
                {
                    "prepId": "PREP-001",
                    "title": "Where card tokens live",
                    "status": "provisional",
                    "question": "Which vault holds the card tokens?",
                    "fields": ["vault", "rationale"],
                    "assessment": {"item": "PREP-001", "risk": "medium"},
                },
                {
                    "prepId": "PREP-002",
                    "title": "How long tokens are kept",
                    "status": "blocked",
                    "question": "How long is a token kept after the last order, and how is it deleted?",
                    "fields": ["retention", "deletion"],
                    "assessment": {"item": "PREP-002", "risk": "high", "unknowns": unknowns},
                },
                {
                    "prepId": "PREP-003",
                    "title": "Card form library",
                    "status": "confirmed",
                    "assessment": {"item": "PREP-003", "risk": "low"},
                },
            ],
        }
    }
