"""Cases for kb.fresh: the CI VM's host capture with its collection date set
relative to the shipped knowledge base's edition."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from clustergrade.facts.node import NodeFacts
from clustergrade.results import Status
from tests.helpers import Case, kb
from tests.host.fixture_tree import tree_facts


def _at(days_after_edition: int) -> NodeFacts:
    when = datetime.combine(kb().meta.date, time(12), UTC) + timedelta(days=days_after_edition)
    return tree_facts("ci-vm", ["os"]).model_copy(update={"collected_at": when})


CASES = [
    Case("kb.fresh", Status.PASS, lambda: _at(5), "ci-vm; collected 5 days after the KB edition"),
    Case("kb.fresh", Status.WARN, lambda: _at(90), "ci-vm; collected 90 days after the KB edition"),
]
