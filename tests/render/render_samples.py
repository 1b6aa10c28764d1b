"""Report data for the render tests: one report per task type, in schema 3.0 and 2.0.

Built here (not copied from a tree) so each golden file has an obvious source.
The texts deliberately hold Markdown and HTML specials, non-ASCII and a
``<script>`` so escaping shows up in the goldens.
"""

from __future__ import annotations

import copy
from typing import Any

from okstra_core.digests import pretty_json

TASK_TYPES = ("analysis", "option-selection", "implementation-planning", "implementation", "final-verification")
VERSIONS = ("3.0", "2.0")
TASK_KEY = "shop:checkout:CHK-42"

SCRIPT_TEXT = '<script>window.__okstraInjected = 1</script><img src="x" onerror="window.__okstraInjected = 2">'

DELIVERABLES: dict[str, dict[str, Any]] = {
    "analysis": {
        "analysisFindings": [
            {
                "findingId": "F-001",
                "title": "Retry loop ignores `Retry-After` | header",
                "severity": "high",
                "detail": "The payment client retries **immediately** on 429.\n\nSee `client.py`: " + SCRIPT_TEXT,
                "evidence": ["src/pay/client.py:88", "logs: 429 × 37 in 5 min"],
            },
            {
                "findingId": "F-002",
                "title": "Timeouts are & stay at 30 s",
                "severity": "low",
                "detail": "Defaults come from the SDK.",
            },
        ]
    },
    "option-selection": {
        "optionCandidates": {
            "mode": "comparison",
            "recommendation": "IO-002",
            "candidates": [
                {
                    "optionId": "IO-001",
                    "title": "Patch the client",
                    "summary": "Honour `Retry-After` in the existing client.",
                    "pros": ["small change"],
                    "cons": ["keeps the SDK's other quirks"],
                    "risk": "low",
                },
                {
                    "optionId": "IO-002",
                    "title": "Adopt the SDK's <RetryPolicy>",
                    "summary": "Replace the hand-written loop with the SDK policy.",
                    "pros": ["maintained upstream", "jitter built in"],
                    "cons": ["new dependency version"],
                    "risk": "medium",
                },
                {
                    "optionId": "IO-003",
                    "title": "Queue retries",
                    "summary": "Move retries to the job queue.",
                    "risk": "high",
                },
            ],
        }
    },
    "implementation-planning": {
        "implementationPlan": {
            "stages": [
                {
                    "stage": 1,
                    "title": "Retry policy",
                    "goal": "Honour `Retry-After`.",
                    "tasks": ["wire the policy", "unit tests"],
                },
                {"stage": 2, "title": "Observability", "goal": "Count retries.", "tasks": ["metric retry_total"]},
            ],
            "designItems": [
                {
                    "prepId": "PREP-001",
                    "title": "Backoff ceiling",
                    "status": "confirmed",
                    "question": "What is the longest wait?",
                    "fields": ["ceilingSeconds"],
                    "assessment": {"ceilingSeconds": 60, "source": "SLA §4"},
                },
                {
                    "prepId": "PREP-002",
                    "title": "Metric name",
                    "status": "provisional",
                    "question": "Which naming scheme applies?",
                    "fields": ["metricName", "labels"],
                    "assessment": {"candidates": ["retry_total", "payments_retry_total"], "note": "```fence```"},
                },
                {
                    "prepId": "PREP-003",
                    "title": "Alert owner",
                    "status": "blocked",
                    "question": "Who is paged?",
                    "fields": ["team"],
                    "assessment": {"blockedOn": "on-call rota"},
                },
            ],
        },
        "selectedDirectionRef": ".okstra/tasks/checkout/chk-42/instruction-set/selected-direction.json",
    },
    "implementation": {
        "implementationResults": {
            "stage": 1,
            "outcome": "partial",
            "changes": [{"path": "src/pay/client.py", "summary": "use RetryPolicy | drop loop"}],
            "checks": [{"name": "pytest tests/pay", "result": "passed"}, {"name": "mypy", "result": "failed"}],
        }
    },
    "final-verification": {
        "verificationVerdict": {
            "verdict": "conditional",
            "criteria": [
                {"criterion": "429 responses respect Retry-After", "result": "met", "evidence": "test_retry_after"},
                {"criterion": "No duplicate charges", "result": "not-assessed"},
            ],
        }
    },
}

CLARIFICATIONS = [
    {
        "itemId": "CQ-001",
        "question": "Which environments\n  may we deploy to first?",
        "context": "Staging is shared with the mobile team.",
        "options": ["staging", "canary"],
    },
    {"itemId": "CQ-002", "question": "Is a 60 s ceiling acceptable?"},
]

CONVERGENCE = {
    "terminalState": "converged",
    "rounds": 2,
    "confirmed": 3,
    "rejected": 1,
    "disputed": 0,
    "statePath": ".okstra/tasks/checkout/chk-42/runs/analysis/state/convergence-analysis-001.json",
}


def report_data(task_type: str, version: str = "3.0", *, language: str = "en") -> dict[str, Any]:
    """A valid report data value of *task_type* in schema *version*."""
    data: dict[str, Any] = {
        "schemaVersion": version,
        "taskKey": TASK_KEY,
        "taskType": task_type,
        "title": f"Checkout retries — {task_type}",
        "summary": "Payments retry too eagerly.\n\nThis report covers *one* deliverable.",
    }
    if version == "3.0":
        data.update(
            reportLanguage=language,
            runDateTimeSegment="20261130T041500Z",
            generatedAt="2026-11-30T04:30:00Z",
        )
    if language == "ko":
        data["title"] = f"결제 재시도 — {task_type}"
        data["summary"] = "결제 요청이 너무 성급하게 재시도됩니다.\n\n이 보고서는 *하나의* 결과물을 다룹니다."
    data.update(copy.deepcopy(DELIVERABLES[task_type]))
    if task_type in ("analysis", "option-selection", "implementation-planning"):
        data["clarificationItems"] = copy.deepcopy(CLARIFICATIONS)
    if task_type == "analysis":
        data["convergence"] = copy.deepcopy(CONVERGENCE)
    return data


def report_bytes(task_type: str, version: str = "3.0", **kw: Any) -> bytes:
    """The data as a writer stores it."""
    return pretty_json(report_data(task_type, version, **kw))


def stem(task_type: str) -> str:
    return f"final-report-{task_type}-001"


def report_rel(task_type: str) -> str:
    run = f"runs/{task_type}" if task_type != "implementation" else "runs/implementation/stage-1"
    return f".okstra/tasks/checkout/chk-42/{run}/reports/{stem(task_type)}.data.json"
