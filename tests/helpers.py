"""Shared test helpers: collect facts from replayed captures and judge them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clustergrade.checks.registry import registered
from clustergrade.collect.runner import collect_node
from clustergrade.engine import evaluate, evaluate_node
from clustergrade.facts.node import NodeFacts, Snapshot
from clustergrade.kb.loader import load
from clustergrade.kb.model import KnowledgeBase
from clustergrade.results import Result, Status
from clustergrade.seam import ReplayHost

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_bytes(rel: str) -> bytes:
    return (FIXTURES / rel).read_bytes()


def kb() -> KnowledgeBase:
    return load()


def replay_facts(
    sections: list[str] | None = None, hostname: str = "replay", **mapping: Any
) -> NodeFacts:
    """Collect ``sections`` from a ReplayHost built with ``ReplayHost.from_mapping``."""
    host = ReplayHost.from_mapping(hostname=hostname, **mapping)
    return collect_node(host, sections, source="replay")


def judge(
    check_id: str, facts: NodeFacts | Snapshot, knowledge: KnowledgeBase | None = None
) -> list[Result]:
    """Run one check on a node's facts, or on a whole snapshot (cluster checks)."""
    k = knowledge or kb()
    specs = registered(k)
    if check_id not in specs:
        raise KeyError(f"no check {check_id}")
    if isinstance(facts, Snapshot):
        return evaluate(facts, k, {check_id: specs[check_id]})
    return evaluate_node(facts, k, {check_id: specs[check_id]})


def statuses(results: list[Result]) -> set[Status]:
    return {r.status for r in results}


@dataclass(frozen=True)
class Case:
    """One expected judgement: ``check_id`` on ``facts`` gives ``expect``.

    ``facts`` is a zero-argument callable so that building cases is lazy and a
    broken fixture fails only its own case.  ``origin`` says where the facts
    come from: a real capture (name it) or a real capture with one stated
    change.
    """

    check_id: str
    expect: Status
    facts: Any
    origin: str
    subject: str | None = None
