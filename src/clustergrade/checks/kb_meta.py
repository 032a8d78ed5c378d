"""Checks about the knowledge base itself: a stale one judges with old facts."""

from __future__ import annotations

from clustergrade.checks.registry import check
from clustergrade.facts.node import NodeFacts
from clustergrade.kb.model import KnowledgeBase
from clustergrade.results import Criterion, Finding, Severity, passed, warned


@check(
    "kb.fresh",
    title="The knowledge base is recent enough to judge versions",
    criterion=Criterion.SECURITY,
    severity=Severity.MEDIUM,
    rationale=(
        "Advisories are published every week; a knowledge base older than its stated "
        "maximum age can pass a version that has since been found vulnerable."
    ),
    remediation="Run `clustergrade kb update --from DIR` with current feeds, or upgrade clustergrade.",
    profiles=("security", "versions"),
)
def kb_fresh(node: NodeFacts, kb: KnowledgeBase) -> Finding:
    age = (node.collected_at.date() - kb.meta.date).days
    if age > kb.meta.max_age_days:
        return warned(
            f"knowledge base edition {kb.meta.date} is {age} days older than the facts "
            f"(maximum {kb.meta.max_age_days}): version verdicts may miss newer advisories",
            observed=f"{age} days",
            expected=f"<= {kb.meta.max_age_days} days",
        )
    return passed(
        f"knowledge base edition {kb.meta.date} is {max(age, 0)} days old",
        observed=f"{max(age, 0)} days",
        expected=f"<= {kb.meta.max_age_days} days",
    )
