"""The audit as steps: plan -> collect -> evaluate -> report.  No printing and
no exits here; the CLI drives these and decides what to show."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from clustergrade import __version__
from clustergrade.checks.registry import CheckSpec, registered, select
from clustergrade.collect.runner import Interrupted, Progress, collect_node
from clustergrade.engine import evaluate
from clustergrade.facts.node import SECTIONS, NodeFacts, Snapshot, Target
from clustergrade.kb.model import KnowledgeBase
from clustergrade.report.model import Report, build_report
from clustergrade.seam import Host


@dataclass(frozen=True)
class Plan:
    checks: dict[str, CheckSpec]
    sections: tuple[str, ...]
    profiles: tuple[str, ...]


def make_plan(kb: KnowledgeBase, profiles: Iterable[str] = (), ids: Iterable[str] = ()) -> Plan:
    """Which checks to run and which sections they need (profiles narrow both,
    so a ``--profile security`` run collects only what security checks read)."""
    profiles = tuple(profiles)
    ids = tuple(ids)
    specs = select(registered(kb), profiles, ids)
    if not profiles and not ids:
        sections: tuple[str, ...] = SECTIONS
    else:
        needed = {s for spec in specs.values() for s in spec.meta.needs}
        sections = tuple(s for s in SECTIONS if s in needed)
    return Plan(specs, sections, profiles)


def collect_snapshot(
    host: Host,
    target: Target,
    sections: Iterable[str] | None = None,
    progress: Progress | None = None,
) -> Snapshot:
    """Collect one host into a snapshot; Ctrl-C yields an interrupted snapshot
    holding what was collected."""
    interrupted = False
    try:
        node = collect_node(host, sections, source=target.kind, progress=progress)
    except Interrupted as exc:
        node, interrupted = exc.facts, True
    return snapshot_of([node], target, interrupted=interrupted)


def snapshot_of(nodes: list[NodeFacts], target: Target, *, interrupted: bool = False) -> Snapshot:
    return Snapshot(
        tool_version=__version__,
        created_at=datetime.now(UTC),
        target=target,
        nodes=nodes,
        interrupted=interrupted,
    )


def judge(
    snapshot: Snapshot,
    kb: KnowledgeBase,
    plan: Plan,
    run_id: str,
    started_at: datetime,
) -> Report:
    results = evaluate(snapshot, kb, plan.checks)
    return build_report(
        run_id=run_id,
        snapshot=snapshot,
        results=results,
        checks=plan.checks,
        kb=kb,
        profiles=list(plan.profiles),
        started_at=started_at,
        finished_at=datetime.now(UTC),
    )


def capture_target(path: Path) -> Target:
    return Target(kind="capture", name=path.name, details={"path": str(path)})
