"""A node's facts and a run's snapshot: the saved, versioned contract between
collecting and judging."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from clustergrade.facts.base import CollectorError, FactModel
from clustergrade.facts.gpu import AmdFacts, NvidiaFacts
from clustergrade.facts.host import CpuFacts, KernelFacts, MemoryFacts, OsFacts, PciFacts
from clustergrade.facts.kernel_log import KernelLogFacts
from clustergrade.facts.network import InfinibandFacts
from clustergrade.facts.security import GpuDirectFacts, HostSecurityFacts, ImexFacts
from clustergrade.facts.slurm import ClusterFacts
from clustergrade.facts.software import ContainerFacts, CudaStackFacts, DcgmFacts

SNAPSHOT_SCHEMA = "clustergrade.facts/1"

#: The NodeFacts fields that collectors fill, one collector per field.
SECTIONS: tuple[str, ...] = (
    "os",
    "kernel",
    "cpu",
    "memory",
    "pci",
    "nvidia",
    "amd",
    "kernel_log",
    "cuda",
    "containers",
    "dcgm",
    "infiniband",
    "gpudirect",
    "security",
    "imex",
)


class CollectorRun(FactModel):
    """How one collector went on one node."""

    status: Literal["ok", "error", "skipped"]
    duration_s: float = 0.0
    message: str | None = None


class NodeFacts(FactModel):
    """Everything collected from one node.  A section is None when its collector
    failed or was not run; ``collectors`` says which and why."""

    hostname: str
    collected_at: datetime
    source: str = "local"
    duration_s: float = 0.0
    #: Set when nothing could be collected from this node at all (down, hung,
    #: garbage): the audit reports one ERROR row for it.
    failure: str | None = None

    os: OsFacts | None = None
    kernel: KernelFacts | None = None
    cpu: CpuFacts | None = None
    memory: MemoryFacts | None = None
    pci: PciFacts | None = None
    nvidia: NvidiaFacts | None = None
    amd: AmdFacts | None = None
    kernel_log: KernelLogFacts | None = None
    cuda: CudaStackFacts | None = None
    containers: ContainerFacts | None = None
    dcgm: DcgmFacts | None = None
    infiniband: InfinibandFacts | None = None
    gpudirect: GpuDirectFacts | None = None
    security: HostSecurityFacts | None = None
    imex: ImexFacts | None = None

    collectors: dict[str, CollectorRun] = Field(default_factory=dict)
    errors: list[CollectorError] = Field(default_factory=list)

    def section_problem(self, section: str) -> str | None:
        """Why ``section`` is missing, or None when it is present."""
        if getattr(self, section) is not None:
            return None
        run = self.collectors.get(section)
        if run is None:
            return f"{section} facts were not collected"
        if run.status == "skipped":
            return f"{section} collector skipped: {run.message or 'not requested'}"
        return f"{section} collector failed: {run.message or 'unknown error'}"


class Target(FactModel):
    """What was audited."""

    kind: Literal["local", "capture", "slurm", "k8s", "facts"]
    name: str
    details: dict[str, Any] = Field(default_factory=dict)


class Snapshot(FactModel):
    """A run's facts: every node plus what was audited and how."""

    schema_: Literal["clustergrade.facts/1"] = Field("clustergrade.facts/1", alias="schema")
    tool_version: str
    created_at: datetime
    target: Target
    nodes: list[NodeFacts]
    #: Cluster-level facts (scheduler, API server), None for a single machine.
    cluster: ClusterFacts | None = None
    interrupted: bool = False
    errors: list[CollectorError] = Field(default_factory=list)

    model_config = {**FactModel.model_config, "populate_by_name": True}
