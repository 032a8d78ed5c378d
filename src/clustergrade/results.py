"""The closed vocabulary of judgement: statuses, severities, criteria, results."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Status(StrEnum):
    PASS = "PASS"
    WARN = "WARN"
    FAIL = "FAIL"
    SKIP = "SKIP"
    ERROR = "ERROR"


#: Worst first, for "the worst outcome wins" reductions and sorting.
STATUS_ORDER = {Status.FAIL: 0, Status.ERROR: 1, Status.WARN: 2, Status.PASS: 3, Status.SKIP: 4}


class Severity(StrEnum):
    CRITICAL = "critical"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    INFO = "info"

    @classmethod
    def from_cvss(cls, score: float | None) -> Severity:
        if score is None:
            return cls.MEDIUM
        if score >= 9.0:
            return cls.CRITICAL
        if score >= 7.0:
            return cls.HIGH
        if score >= 4.0:
            return cls.MEDIUM
        if score > 0:
            return cls.LOW
        return cls.INFO


SEVERITY_ORDER = {s: i for i, s in enumerate(Severity)}


class Criterion(StrEnum):
    """The ten rating criteria (ClusterMAX 2.0+)."""

    SECURITY = "Security"
    LIFECYCLE = "Lifecycle"
    ORCHESTRATION = "Orchestration"
    STORAGE = "Storage"
    NETWORKING = "Networking"
    RELIABILITY = "Reliability"
    MONITORING = "Monitoring"
    PRICING = "Pricing"
    PARTNERSHIPS = "Partnerships"
    AVAILABILITY = "Availability"


class Finding(BaseModel):
    """What one check concluded about one subject on one node."""

    model_config = ConfigDict(frozen=True)

    status: Status
    message: str
    observed: Any = None
    expected: Any = None
    #: What the finding is about inside the node ("GPU 3", "mlx5_0/1").
    subject: str | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)
    #: Advisory ids (CVE-...) that make this a finding.
    advisories: list[str] = Field(default_factory=list)
    #: Overrides the check's severity (e.g. a version rule's worst CVSS).
    severity: Severity | None = None


def passed(message: str, observed: Any = None, expected: Any = None, **kw: Any) -> Finding:
    return Finding(status=Status.PASS, message=message, observed=observed, expected=expected, **kw)


def failed(message: str, observed: Any = None, expected: Any = None, **kw: Any) -> Finding:
    return Finding(status=Status.FAIL, message=message, observed=observed, expected=expected, **kw)


def warned(message: str, observed: Any = None, expected: Any = None, **kw: Any) -> Finding:
    return Finding(status=Status.WARN, message=message, observed=observed, expected=expected, **kw)


def skipped(reason: str, **kw: Any) -> Finding:
    return Finding(status=Status.SKIP, message=reason, **kw)


def errored(reason: str, **kw: Any) -> Finding:
    return Finding(status=Status.ERROR, message=reason, **kw)


class Result(BaseModel):
    """A finding placed: which check, which node, with the check's metadata."""

    model_config = ConfigDict(frozen=True)

    check_id: str
    node: str
    status: Status
    severity: Severity
    criterion: Criterion
    message: str
    observed: Any = None
    expected: Any = None
    subject: str | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)
    advisories: list[str] = Field(default_factory=list)
