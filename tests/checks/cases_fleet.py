"""Cases for the fleet checks: snapshots of several nodes built from one
real capture (the CI VM's host tree), with one node changed where stated."""

from __future__ import annotations

from clustergrade.audit import snapshot_of
from clustergrade.facts.node import NodeFacts, Snapshot, Target
from clustergrade.results import Status
from tests.helpers import Case
from tests.host.fixture_tree import tree_facts


def _fleet(n: int = 3) -> list[NodeFacts]:
    base = tree_facts("ci-vm")
    return [base.model_copy(update={"hostname": f"n{i}"}) for i in range(1, n + 1)]


def uniform() -> Snapshot:
    return snapshot_of(_fleet(), Target(kind="slurm", name="t"))


def kernel_drift() -> Snapshot:
    nodes = _fleet()
    odd = nodes[2]
    assert odd.kernel is not None
    nodes[2] = odd.model_copy(
        update={"kernel": odd.kernel.model_copy(update={"release": "6.1.0-99-amd64"})}
    )
    return snapshot_of(nodes, Target(kind="slurm", name="t"))


def single() -> Snapshot:
    return snapshot_of(_fleet(1), Target(kind="local", name="t"))


CASES = [
    Case("fleet.uniform", Status.PASS, uniform, "host capture ci-vm as three nodes"),
    Case("fleet.uniform", Status.WARN, kernel_drift, "ci-vm x3; node n3's kernel release changed"),
    Case("fleet.uniform", Status.SKIP, single, "ci-vm as one node"),
]
