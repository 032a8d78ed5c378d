"""Smoke test of tools/slurm-local: real daemons, real client commands."""

from __future__ import annotations

import re

import pytest

from tests.slurm.cluster import SlurmCluster, launch_cluster

pytestmark = pytest.mark.slurm

NODES = {"n1", "n2", "n3", "n4"}


def test_four_nodes_idle(slurm_cluster: SlurmCluster) -> None:
    out = slurm_cluster.run(["sinfo", "-N", "-h", "-o", "%N %T"]).stdout
    states = dict(line.split() for line in out.splitlines())
    assert states == {n: "idle" for n in NODES}


def test_srun_on_all_nodes_gives_distinct_hostnames(slurm_cluster: SlurmCluster) -> None:
    out = slurm_cluster.run(["srun", "-N4", "hostname"], timeout=60).stdout
    names = out.split()
    assert len(names) == 4
    assert set(names) == NODES


def test_gres_visible_in_scontrol_show_node(slurm_cluster: SlurmCluster) -> None:
    out = slurm_cluster.run(["scontrol", "show", "node"]).stdout
    assert len(re.findall(r"^\s*Gres=gpu:h100:4\b", out, re.MULTILINE)) == 4


def test_stopped_node_goes_down_and_comes_back(slurm_cluster: SlurmCluster) -> None:
    slurm_cluster.stop_node("n3")
    try:
        # '*' = not responding; SlurmdTimeout=4 + MessageTimeout=3 take ~6 s here
        went_down = slurm_cluster.wait_for(
            lambda: "*" in (s := slurm_cluster.node_state("n3")) or s.startswith("down"),
            timeout=30,
        )
        assert went_down, (
            f"n3 still {slurm_cluster.node_state('n3')!r} 30 s after its slurmd stopped"
        )
        # the others are unaffected
        others = slurm_cluster.run(["sinfo", "-N", "-h", "-n", "n1,n2,n4", "-o", "%T"]).stdout
        assert others.split() == ["idle"] * 3
    finally:
        slurm_cluster.start_node("n3")
    # ReturnToService=2: a DOWN node that registers again is idle again
    assert slurm_cluster.wait_for(lambda: slurm_cluster.node_state("n3") == "idle", timeout=30)


def test_config_variant_knobs_reach_scontrol_show_config() -> None:
    knobs = {
        "SLURM_LOCAL_NODES": "2",
        "SLURM_LOCAL_GPUS": "8",
        "SLURM_LOCAL_GPU_TYPE": "a100",
        "SLURM_LOCAL_PRIVATE_DATA": "jobs,usage,users,accounts",
        "SLURM_LOCAL_HEALTHCHECK_PROGRAM": "/bin/true",
        "SLURM_LOCAL_HEALTHCHECK_INTERVAL": "300",
        "SLURM_LOCAL_EXTRA_CONF": "MaxJobCount=4321",
    }
    with launch_cluster(knobs) as cluster:
        config = cluster.run(["scontrol", "show", "config"]).stdout
        nodes = cluster.run(["sinfo", "-N", "-h", "-o", "%N %G"]).stdout
    values = dict(
        (m.group(1), m.group(2).strip())
        for m in re.finditer(r"^(\S+)\s*=\s*(.*)$", config, re.MULTILINE)
    )
    assert values["PrivateData"] == "accounts,jobs,usage,users"
    assert values["HealthCheckProgram"] == "/bin/true"
    assert values["HealthCheckInterval"] == "300 sec"
    assert values["MaxJobCount"] == "4321"
    assert nodes.split() == ["n1", "gpu:a100:8", "n2", "gpu:a100:8"]
