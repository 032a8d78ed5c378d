"""Session-wide local Slurm cluster for tests marked ``slurm``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.slurm.cluster import FAST_DOWN_KNOBS, SlurmCluster, launch_cluster


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[SlurmCluster]:
    """4 nodes n1..n4, gpu:h100:4 each, no accounting, fast down-node detection.

    Tests that stop a node must start it again (and wait for idle) before they end.
    Config variants (PrivateData, HealthCheck*, extra lines) get their own cluster
    from ``launch_cluster({...})``: start takes about a second once installed.
    """
    with launch_cluster(FAST_DOWN_KNOBS) as cluster:
        yield cluster
