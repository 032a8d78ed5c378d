"""Evaluate: facts + knowledge base + checks -> results.  Pure: no commands,
no printing, no exits."""

from __future__ import annotations

from collections.abc import Iterable

from clustergrade.checks.registry import CheckSpec
from clustergrade.facts.node import NodeFacts, Snapshot
from clustergrade.kb.model import KnowledgeBase
from clustergrade.results import Criterion, Finding, Result, Severity, Status

NODE_CHECK_ID = "node.collected"


def evaluate_node(node: NodeFacts, kb: KnowledgeBase, checks: dict[str, CheckSpec]) -> list[Result]:
    """Run ``checks`` on one node."""
    if node.failure is not None:
        return [
            Result(
                check_id=NODE_CHECK_ID,
                node=node.hostname,
                status=Status.ERROR,
                severity=Severity.HIGH,
                criterion=Criterion.RELIABILITY,
                message=f"no facts from this node: {node.failure}",
            )
        ]
    out: list[Result] = []
    for spec in checks.values():
        if spec.meta.scope == "node":
            out.extend(_run_check(spec, node, kb))
    return out


def cluster_node_name(snapshot: Snapshot) -> str:
    """The name cluster-level results are filed under."""
    return f"cluster:{snapshot.target.name}"


def evaluate_cluster(
    snapshot: Snapshot, kb: KnowledgeBase, checks: dict[str, CheckSpec]
) -> list[Result]:
    """Run the cluster-scope ``checks`` once on ``snapshot``."""
    name = cluster_node_name(snapshot)
    out: list[Result] = []
    for spec in checks.values():
        if spec.meta.scope != "cluster":
            continue
        missing = [
            s
            for s in spec.meta.cluster_needs
            if snapshot.cluster is None or getattr(snapshot.cluster, s) is None
        ]
        if missing:
            f = Finding(
                status=Status.SKIP,
                message=f"not a {', '.join(missing)} target: no {', '.join(missing)} facts",
            )
            out.append(_place_named(spec, name, f))
            continue
        try:
            produced = spec.func(snapshot, kb)
            findings = [produced] if isinstance(produced, Finding) else list(produced)
        except Exception as exc:
            findings = [
                Finding(status=Status.ERROR, message=f"check failed: {type(exc).__name__}: {exc}")
            ]
        if not findings:
            findings = [Finding(status=Status.ERROR, message="check produced no finding")]
        out.extend(_place_named(spec, name, f) for f in findings)
    return out


def _run_check(spec: CheckSpec, node: NodeFacts, kb: KnowledgeBase) -> list[Result]:
    meta = spec.meta
    for section in meta.needs:
        problem = node.section_problem(section)
        if problem is not None:
            run = node.collectors.get(section)
            status = Status.SKIP if run is not None and run.status == "skipped" else Status.ERROR
            return [_place(spec, node, Finding(status=status, message=problem))]
    try:
        produced = spec.func(node, kb)
        findings = [produced] if isinstance(produced, Finding) else list(produced)
    except Exception as exc:
        findings = [
            Finding(status=Status.ERROR, message=f"check failed: {type(exc).__name__}: {exc}")
        ]
    if not findings:
        findings = [Finding(status=Status.ERROR, message="check produced no finding")]
    return [_place(spec, node, f) for f in findings]


def _place(spec: CheckSpec, node: NodeFacts, f: Finding) -> Result:
    return _place_named(spec, node.hostname, f)


def _place_named(spec: CheckSpec, node: str, f: Finding) -> Result:
    return Result(
        check_id=spec.meta.id,
        node=node,
        status=f.status,
        severity=f.severity or spec.meta.severity,
        criterion=spec.meta.criterion,
        message=f.message,
        observed=f.observed,
        expected=f.expected,
        subject=f.subject,
        evidence=f.evidence,
        advisories=f.advisories,
    )


def evaluate(snapshot: Snapshot, kb: KnowledgeBase, checks: dict[str, CheckSpec]) -> list[Result]:
    """Run ``checks`` on every node of ``snapshot``."""
    results: list[Result] = []
    for node in snapshot.nodes:
        results.extend(evaluate_node(node, kb, checks))
    results.extend(evaluate_cluster(snapshot, kb, checks))
    return results


def worst(statuses: Iterable[Status]) -> Status:
    from clustergrade.results import STATUS_ORDER

    return min(statuses, key=lambda s: STATUS_ORDER[s], default=Status.SKIP)
