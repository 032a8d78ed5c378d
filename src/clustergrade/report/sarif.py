"""SARIF 2.1.0.  Every result is included with its SARIF ``kind``: PASS ->
pass, SKIP -> notApplicable, ERROR -> open (the tool could not tell),
FAIL/WARN -> fail with a level from the severity.  Nodes are logical
locations, since findings are about hosts, not source files."""

from __future__ import annotations

import json
from typing import Any

from clustergrade.report.model import Report
from clustergrade.results import Result, Severity, Status

_SECURITY_SEVERITY = {
    Severity.CRITICAL: "9.5",
    Severity.HIGH: "8.0",
    Severity.MEDIUM: "5.5",
    Severity.LOW: "2.0",
    Severity.INFO: "0.0",
}


def _level(r: Result) -> str:
    if r.status is Status.FAIL:
        return "error" if r.severity in (Severity.CRITICAL, Severity.HIGH) else "warning"
    if r.status is Status.WARN:
        return "warning"
    if r.status is Status.ERROR:
        return "note"
    return "none"


_KIND = {
    Status.PASS: "pass",
    Status.SKIP: "notApplicable",
    Status.ERROR: "open",
    Status.FAIL: "fail",
    Status.WARN: "fail",
}


def render(report: Report, verbosity: int = 0) -> str:
    rules = []
    index: dict[str, int] = {}
    for i, c in enumerate(report.checks):
        index[c.id] = i
        rule: dict[str, Any] = {
            "id": c.id,
            "name": c.id.replace(".", "_").replace("-", "_"),
            "shortDescription": {"text": c.title},
            "fullDescription": {"text": c.rationale},
            "help": {"text": c.remediation},
            "properties": {
                "criterion": c.criterion.value,
                "profiles": c.profiles,
                "security-severity": _SECURITY_SEVERITY[c.severity],
                "tags": [c.criterion.value.lower(), *c.profiles],
            },
        }
        if c.references:
            rule["helpUri"] = c.references[0]
        rules.append(rule)
    results = []
    for r in report.results:
        item: dict[str, Any] = {
            "ruleId": r.check_id,
            "kind": _KIND[r.status],
            "level": _level(r),
            "message": {"text": r.message},
            "locations": [
                {
                    "logicalLocations": [
                        {
                            "name": r.subject or r.node,
                            "fullyQualifiedName": f"{r.node}/{r.subject}" if r.subject else r.node,
                            "kind": "resource",
                        }
                    ]
                }
            ],
            "properties": {
                "status": r.status.value,
                "severity": r.severity.value,
                "node": r.node,
                "observed": None if r.observed is None else str(r.observed),
                "expected": None if r.expected is None else str(r.expected),
                "advisories": r.advisories,
            },
        }
        if r.check_id in index:
            item["ruleIndex"] = index[r.check_id]
        results.append(item)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "clustergrade",
                        "version": report.tool.version,
                        "rules": rules,
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": not report.run.interrupted,
                        "startTimeUtc": report.run.started_at.isoformat(),
                        "endTimeUtc": report.run.finished_at.isoformat(),
                    }
                ],
                "properties": {
                    "kb_date": report.kb.date,
                    "kb_digest": report.kb.digest,
                    "report_schema": "clustergrade.report/1",
                    "run_id": report.run.id,
                },
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"
