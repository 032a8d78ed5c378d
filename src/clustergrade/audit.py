"""The audit as steps: plan -> collect -> evaluate -> report.  No printing and
no exits here; the CLI drives these and decides what to show."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
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
from clustergrade.slurm.fanout import FanoutOptions, NodeProgress


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


def collect_slurm_snapshot(
    host: Host,
    opts: FanoutOptions,
    sections: Iterable[str] | None = None,
    progress: NodeProgress | None = None,
) -> Snapshot:
    """The scheduler's view plus every selected node's facts through srun.

    Raises :class:`SlurmUnavailable` when this is not a usable Slurm login node.
    """
    import getpass

    from clustergrade.collect.base import CollectContext
    from clustergrade.facts.slurm import ClusterFacts
    from clustergrade.slurm.collect import collect_slurm
    from clustergrade.slurm.fanout import fan_out

    ctx = CollectContext(host, "slurm")
    sfacts = collect_slurm(ctx, user=getpass.getuser())
    if not sfacts.present:
        raise SlurmUnavailable("no Slurm client here (sinfo not found)")
    if not sfacts.controller_reachable:
        detail = ctx.errors[0].message if ctx.errors else "scontrol show config failed"
        raise SlurmUnavailable(f"the Slurm controller did not answer: {detail}")
    if sections is not None:
        opts = replace(opts, sections=tuple(sections))
    fan = fan_out(host, sfacts, opts, progress)
    sfacts = sfacts.model_copy(update={"isolation": [*sfacts.isolation, *fan.probes]})
    name = sfacts.setting("ClusterName") or host.name
    return Snapshot(
        tool_version=__version__,
        created_at=datetime.now(UTC),
        target=Target(
            kind="slurm",
            name=name,
            details={
                "login_node": host.name,
                "nodes_selected": len(fan.nodes),
                "fanout_s": round(fan.duration_s, 3),
                "job_name": opts.job_name,
            },
        ),
        nodes=fan.nodes,
        cluster=ClusterFacts(slurm=sfacts),
        interrupted=fan.interrupted,
        errors=ctx.errors,
    )


class SlurmUnavailable(Exception):
    """This machine cannot audit a Slurm cluster; the message says why."""


def slurm_detected(host: Host) -> bool:
    """A Slurm login node: the client is installed and the controller answers."""
    res = host.run(["scontrol", "ping"], timeout=10)
    return res.ok and "UP" in res.text
