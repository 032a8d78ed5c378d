"""The check catalogue.

A node check is a pure function ``(facts: NodeFacts, kb: KnowledgeBase) ->
Finding | Iterable[Finding]`` registered with :func:`check`.  It never runs
commands, prints or exits.  The engine, not the check, handles the cases
every check shares: a needed section that was not collected becomes ERROR (or
SKIP when it was not requested), and an exception in a check becomes ERROR.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clustergrade.results import Criterion, Finding, Severity

if TYPE_CHECKING:
    from clustergrade.facts.node import NodeFacts, Snapshot
    from clustergrade.kb.model import KnowledgeBase

CheckFunc = Callable[["NodeFacts", "KnowledgeBase"], "Finding | Iterable[Finding]"]
#: A cluster check sees the whole snapshot: cluster facts and every node.
ClusterCheckFunc = Callable[["Snapshot", "KnowledgeBase"], "Finding | Iterable[Finding]"]

#: Cluster-level fact sources a cluster check can need.
CLUSTER_SECTIONS = ("slurm", "k8s")

#: Profiles a check can belong to (``audit --profile``).
PROFILES = (
    "security",
    "versions",
    "isolation",
    "hardware",
    "software",
    "containers",
    "networking",
    "health",
    "orchestration",
    "storage",
    "monitoring",
)

_ID_RE = re.compile(r"^[a-z0-9]+(\.[a-z0-9][a-z0-9_-]*)+$")


@dataclass(frozen=True)
class CheckMeta:
    """Validated metadata of one check: its id is a stable contract."""

    id: str
    title: str
    criterion: Criterion
    severity: Severity
    rationale: str
    remediation: str
    references: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    profiles: tuple[str, ...] = ()
    #: For data-driven checks: the knowledge-base file behind them.
    source: str | None = None
    #: "node": judged on each node; "cluster": judged once on the snapshot.
    scope: str = "node"
    #: For cluster checks: the cluster facts they need ("slurm").
    cluster_needs: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not _ID_RE.match(self.id):
            raise ValueError(
                f"check id {self.id!r} must be dotted lower-case, e.g. 'gpu.ecc-pending'"
            )
        if not self.title or not self.rationale or not self.remediation:
            raise ValueError(f"check {self.id}: title, rationale and remediation are required")
        bad = set(self.profiles) - set(PROFILES)
        if bad:
            raise ValueError(f"check {self.id}: unknown profiles {sorted(bad)}")
        from clustergrade.facts.node import SECTIONS

        missing = set(self.needs) - set(SECTIONS)
        if missing:
            raise ValueError(f"check {self.id}: needs unknown sections {sorted(missing)}")
        if self.scope not in ("node", "cluster"):
            raise ValueError(f"check {self.id}: scope must be 'node' or 'cluster'")
        if set(self.cluster_needs) - set(CLUSTER_SECTIONS):
            raise ValueError(f"check {self.id}: unknown cluster facts {self.cluster_needs}")


@dataclass(frozen=True)
class CheckSpec:
    meta: CheckMeta
    func: Any  # CheckFunc for node checks, ClusterCheckFunc for cluster checks


_REGISTRY: dict[str, CheckSpec] = {}


def check(
    id: str,
    *,
    title: str,
    criterion: Criterion,
    severity: Severity,
    rationale: str,
    remediation: str,
    needs: Iterable[str] = (),
    profiles: Iterable[str] = (),
    references: Iterable[str] = (),
) -> Callable[[CheckFunc], CheckFunc]:
    """Register a node check; see the module docstring."""
    meta = CheckMeta(
        id=id,
        title=title,
        criterion=criterion,
        severity=severity,
        rationale=rationale,
        remediation=remediation,
        references=tuple(references),
        needs=tuple(needs),
        profiles=tuple(profiles),
    )

    def deco(func: CheckFunc) -> CheckFunc:
        register(CheckSpec(meta, func))
        return func

    return deco


def cluster_check(
    id: str,
    *,
    title: str,
    criterion: Criterion,
    severity: Severity,
    rationale: str,
    remediation: str,
    cluster_needs: Iterable[str],
    needs: Iterable[str] = (),
    profiles: Iterable[str] = (),
    references: Iterable[str] = (),
) -> Callable[[ClusterCheckFunc], ClusterCheckFunc]:
    """Register a check judged once per snapshot (scheduler config, drift
    across nodes, tenant isolation probes)."""
    meta = CheckMeta(
        id=id,
        title=title,
        criterion=criterion,
        severity=severity,
        rationale=rationale,
        remediation=remediation,
        references=tuple(references),
        needs=tuple(needs),
        profiles=tuple(profiles),
        scope="cluster",
        cluster_needs=tuple(cluster_needs),
    )

    def deco(func: ClusterCheckFunc) -> ClusterCheckFunc:
        register(CheckSpec(meta, func))
        return func

    return deco


def register(spec: CheckSpec) -> None:
    existing = _REGISTRY.get(spec.meta.id)
    if existing is not None and existing.func is not spec.func:
        raise ValueError(f"check {spec.meta.id!r} registered twice")
    _REGISTRY[spec.meta.id] = spec


def registered(kb: KnowledgeBase | None = None) -> dict[str, CheckSpec]:
    """Every check: the coded ones plus, given a knowledge base, the version
    rules it declares."""
    import clustergrade.checks.builtin  # noqa: F401  (registers on import)

    specs = dict(_REGISTRY)
    if kb is not None:
        from clustergrade.checks.versions import version_checks

        for spec in version_checks(kb):
            specs[spec.meta.id] = spec
    return dict(sorted(specs.items()))


def select(
    specs: dict[str, CheckSpec],
    profiles: Iterable[str] = (),
    ids: Iterable[str] = (),
) -> dict[str, CheckSpec]:
    """Checks in any of ``profiles`` (all when empty) or matching ``ids``
    (exact id or prefix ending in '.')."""
    profiles = set(profiles)
    ids = tuple(ids)
    out = {}
    for cid, spec in specs.items():
        if profiles and not profiles & set(spec.meta.profiles):
            if not ids:
                continue
        if ids and not any(cid == i or (i.endswith(".") and cid.startswith(i)) for i in ids):
            if not profiles or not profiles & set(spec.meta.profiles):
                continue
        out[cid] = spec
    return out
