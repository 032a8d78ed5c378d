"""Facts: a Slurm cluster as the auditing user sees it from a login node."""

from __future__ import annotations

from pydantic import Field

from clustergrade.facts.base import FactModel, Tool
from clustergrade.facts.k8s import K8sFacts


class Gres(FactModel):
    name: str
    type: str | None = None
    count: int = 1


class SlurmNode(FactModel):
    name: str
    states: list[str] = Field(default_factory=list)
    reason: str | None = None
    partitions: list[str] = Field(default_factory=list)
    gres: list[Gres] = Field(default_factory=list)
    cpus: int | None = None
    real_memory_mb: int | None = None
    slurmd_version: str | None = None
    os: str | None = None
    raw: dict[str, str] = Field(default_factory=dict)


class SlurmPartition(FactModel):
    name: str
    nodes: str | None = None
    state: str | None = None
    default: bool = False
    raw: dict[str, str] = Field(default_factory=dict)


class IsolationProbe(FactModel):
    """One tenant-isolation probe: what was tried, what was seen.

    ``exposed`` is True when the probe saw something it should not, False
    when it was properly refused or hidden, None when it could not tell.
    """

    probe: str
    method: str
    observed: str
    exposed: bool | None = None
    error: str | None = None


class CommandCheck(FactModel):
    """Whether one Slurm command works for this user."""

    command: str
    works: bool
    detail: str | None = None


class SlurmFacts(FactModel):
    present: bool
    controller_reachable: bool = False
    user: str | None = None
    client: Tool | None = None
    config: dict[str, str] = Field(default_factory=dict)
    cgroup_config: dict[str, str] = Field(default_factory=dict)
    nodes: list[SlurmNode] = Field(default_factory=list)
    partitions: list[SlurmPartition] = Field(default_factory=list)
    commands: list[CommandCheck] = Field(default_factory=list)
    mpi_plugins: list[str] = Field(default_factory=list)
    srun_container_options: list[str] = Field(default_factory=list)
    topology_conf: bool | None = None
    isolation: list[IsolationProbe] = Field(default_factory=list)

    def setting(self, key: str) -> str | None:
        """A slurm.conf value as the controller reports it (case-insensitive key)."""
        for k, v in self.config.items():
            if k.lower() == key.lower():
                return v
        return None


class ClusterFacts(FactModel):
    """Facts about the cluster as a whole (scheduler, API server)."""

    slurm: SlurmFacts | None = None
    k8s: K8sFacts | None = None
