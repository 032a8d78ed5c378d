"""The report: the versioned JSON contract every other view is derived from.

``build_report`` is pure: snapshot + results + check catalogue -> Report.  The
published JSON schema (``docs/report.schema.json``) is generated from these
models and a test keeps it in sync.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clustergrade import __version__
from clustergrade.checks.registry import CheckSpec
from clustergrade.facts.base import CollectorError
from clustergrade.facts.node import Snapshot, Target
from clustergrade.kb.model import KnowledgeBase
from clustergrade.results import (
    SEVERITY_ORDER,
    STATUS_ORDER,
    Criterion,
    Result,
    Severity,
    Status,
)

REPORT_SCHEMA = "clustergrade.report/1"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class ToolInfo(_Model):
    name: Literal["clustergrade"] = "clustergrade"
    version: str


class KBInfo(_Model):
    date: str
    digest: str
    origin: str
    age_days: int
    max_age_days: int


class RunInfo(_Model):
    id: str
    started_at: datetime
    finished_at: datetime
    duration_s: float
    target: Target
    profiles: list[str]
    interrupted: bool
    node_count: int


class CheckInfo(_Model):
    id: str
    title: str
    criterion: Criterion
    severity: Severity
    rationale: str
    remediation: str
    references: list[str]
    profiles: list[str]
    source: str | None = None


class Spread(_Model):
    """How one check's observed value varies across nodes."""

    check_id: str
    #: observed value (as text) -> nodes that showed it
    values: dict[str, list[str]]


class CheckSummary(_Model):
    check_id: str
    status: Status
    counts: dict[Status, int]
    nodes_failing: list[str]


class Summary(_Model):
    counts: dict[Status, int]
    applicable_checks: int
    checks: int
    nodes: int
    worst: Status
    by_criterion: dict[Criterion, dict[Status, int]]


class NodeErrors(_Model):
    node: str
    failure: str | None
    errors: list[CollectorError]


class Report(_Model):
    schema_: Literal["clustergrade.report/1"] = Field("clustergrade.report/1", alias="schema")
    tool: ToolInfo
    kb: KBInfo
    run: RunInfo
    summary: Summary
    checks: list[CheckInfo]
    results: list[Result]
    per_check: list[CheckSummary]
    spread: list[Spread]
    collection: list[NodeErrors]


def check_info(spec: CheckSpec) -> CheckInfo:
    m = spec.meta
    return CheckInfo(
        id=m.id,
        title=m.title,
        criterion=m.criterion,
        severity=m.severity,
        rationale=m.rationale,
        remediation=m.remediation,
        references=list(m.references),
        profiles=list(m.profiles),
        source=m.source,
    )


def _sort_key(r: Result) -> tuple[int, int, str, str, str]:
    return (STATUS_ORDER[r.status], SEVERITY_ORDER[r.severity], r.check_id, r.node, r.subject or "")


def _text(v: Any) -> str:
    return "—" if v is None else str(v)


def build_report(
    *,
    run_id: str,
    snapshot: Snapshot,
    results: list[Result],
    checks: dict[str, CheckSpec],
    kb: KnowledgeBase,
    profiles: list[str],
    started_at: datetime,
    finished_at: datetime,
) -> Report:
    results = sorted(results, key=_sort_key)
    counts = Counter(r.status for r in results)
    by_crit: dict[Criterion, Counter[Status]] = defaultdict(Counter)
    per: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by_crit[r.criterion][r.status] += 1
        per[r.check_id].append(r)

    per_check: list[CheckSummary] = []
    spread: list[Spread] = []
    applicable = 0
    for cid in sorted(per):
        rs = per[cid]
        c = Counter(r.status for r in rs)
        worst = min(c, key=lambda s: STATUS_ORDER[s])
        if any(s is not Status.SKIP for s in c):
            applicable += 1
        per_check.append(
            CheckSummary(
                check_id=cid,
                status=worst,
                counts=dict(c),
                nodes_failing=sorted(
                    {r.node for r in rs if r.status in (Status.FAIL, Status.ERROR)}
                ),
            )
        )
        if snapshot.nodes and len(snapshot.nodes) > 1:
            values: dict[str, set[str]] = defaultdict(set)
            for r in rs:
                if r.observed is not None:
                    values[_text(r.observed)].add(r.node)
            if len(values) > 1:
                spread.append(
                    Spread(check_id=cid, values={k: sorted(v) for k, v in sorted(values.items())})
                )

    collected = [n.collected_at for n in snapshot.nodes]
    age = ((min(collected) if collected else finished_at).date() - kb.meta.date).days
    worst_all = min(counts, key=lambda s: STATUS_ORDER[s]) if counts else Status.SKIP
    return Report(
        tool=ToolInfo(version=__version__),
        kb=KBInfo(
            date=kb.meta.date.isoformat(),
            digest=kb.digest,
            origin=kb.origin,
            age_days=age,
            max_age_days=kb.meta.max_age_days,
        ),
        run=RunInfo(
            id=run_id,
            started_at=started_at,
            finished_at=finished_at,
            duration_s=round((finished_at - started_at).total_seconds(), 3),
            target=snapshot.target,
            profiles=profiles,
            interrupted=snapshot.interrupted,
            node_count=len(snapshot.nodes),
        ),
        summary=Summary(
            counts={s: counts.get(s, 0) for s in Status},
            applicable_checks=applicable,
            checks=len(per),
            nodes=len(snapshot.nodes),
            worst=worst_all,
            by_criterion={k: {s: v.get(s, 0) for s in Status} for k, v in sorted(by_crit.items())},
        ),
        checks=[check_info(checks[c]) for c in sorted(checks)],
        results=results,
        per_check=per_check,
        spread=spread,
        collection=[
            NodeErrors(node=n.hostname, failure=n.failure, errors=list(n.errors))
            for n in snapshot.nodes
            if n.errors or n.failure
        ]
        + (
            [NodeErrors(node="(target)", failure=None, errors=list(snapshot.errors))]
            if snapshot.errors
            else []
        ),
    )
