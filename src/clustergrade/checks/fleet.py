"""Checks across the nodes of one snapshot: a fleet should be uniform.

The ClusterMAX CLI reads versions from one worker, so a half-patched fleet
passes; here every node is collected and differences are findings.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from clustergrade.checks.registry import cluster_check
from clustergrade.facts.node import NodeFacts, Snapshot
from clustergrade.kb.model import KnowledgeBase
from clustergrade.results import Criterion, Finding, Severity, passed, skipped, warned


def _gpu_models(n: NodeFacts) -> str | None:
    if n.nvidia is None or not n.nvidia.gpus:
        return None
    names = sorted({g.name or "?" for g in n.nvidia.gpus})
    return f"{len(n.nvidia.gpus)}x {'+'.join(names)}"


def _vbios(n: NodeFacts) -> str | None:
    if n.nvidia is None or not n.nvidia.gpus:
        return None
    return ",".join(sorted({g.vbios or "?" for g in n.nvidia.gpus}))


#: What must be the same on every node, and how to read it from the facts.
#: Nodes where a value is unknown are left out of that comparison.
ATTRIBUTES: dict[str, Callable[[NodeFacts], str | None]] = {
    "operating system": lambda n: n.os.pretty_name if n.os else None,
    "running kernel": lambda n: n.kernel.release if n.kernel else None,
    "NVIDIA driver": lambda n: n.nvidia.driver_version if n.nvidia else None,
    "GPUs": _gpu_models,
    "GPU VBIOS": _vbios,
    "CPU model": lambda n: n.cpu.model_name if n.cpu else None,
}


def attribute_spread(nodes: Iterable[NodeFacts]) -> dict[str, dict[str, list[str]]]:
    """attribute -> value -> node names, for attributes with more than one value."""
    out: dict[str, dict[str, list[str]]] = {}
    nodes = [n for n in nodes if n.failure is None]
    for label, read in ATTRIBUTES.items():
        values: dict[str, list[str]] = defaultdict(list)
        for n in nodes:
            try:
                v = read(n)
            except AttributeError:
                v = None
            if v is not None:
                values[v].append(n.hostname)
        if len(values) > 1:
            out[label] = {
                k: sorted(v) for k, v in sorted(values.items(), key=lambda kv: -len(kv[1]))
            }
    return out


@cluster_check(
    "fleet.uniform",
    title="Every node runs the same OS, kernel, driver and hardware",
    criterion=Criterion.LIFECYCLE,
    severity=Severity.MEDIUM,
    rationale=(
        "A fleet that drifted (one node on an older driver, another with a different kernel) "
        "behaves differently under the same job, hides half-applied patches and turns "
        "collective hangs into hunts. Every node is compared, not a sample."
    ),
    remediation="Bring the odd nodes to the fleet's image (reimage or upgrade them), then re-audit.",
    cluster_needs=(),
    profiles=("software", "hardware", "versions"),
)
def fleet_uniform(snapshot: Snapshot, kb: KnowledgeBase) -> Iterable[Finding] | Finding:
    usable = [n for n in snapshot.nodes if n.failure is None]
    if len(usable) < 2:
        return skipped("fewer than two nodes with facts: nothing to compare")
    spread = attribute_spread(usable)
    if not spread:
        return passed(
            f"{len(usable)} nodes agree on {', '.join(ATTRIBUTES)}",
            observed=len(usable),
        )
    out = []
    for label, values in spread.items():
        (majority, mnodes), *rest = values.items()
        odd = "; ".join(
            f"{len(ns)} on {v} ({', '.join(ns[:6])}{' …' if len(ns) > 6 else ''})" for v, ns in rest
        )
        out.append(
            warned(
                f"{label}: {len(mnodes)}/{len(usable)} nodes on {majority}; {odd}",
                observed={v: len(ns) for v, ns in values.items()},
                expected="one value on every node",
                subject=label,
                evidence={"nodes": values},
            )
        )
    return out
