"""Slurm facts replayed from the real captures in tests/fixtures/slurm/
(local cluster started by tools/slurm-local; see PROVENANCE.md there).

The captures hold ``scontrol show node|partition`` in Slurm's multi-line
form; the collector asks for ``scontrol -o`` (one record per line).  Slurm
prints the same ``Key=value`` tokens either way, so :func:`one_line` derives
the ``-o`` form by joining each record's lines — a labelled derivation, not
invented output.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from clustergrade.collect.base import CollectContext
from clustergrade.facts.node import NodeFacts, Snapshot, Target
from clustergrade.facts.slurm import ClusterFacts, SlurmFacts
from clustergrade.seam import ReplayHost
from clustergrade.slurm.collect import collect_slurm

SLURM = Path(__file__).parent.parent / "fixtures" / "slurm"
LOCAL = "local-4node"
DBD = "local-4node-dbd"
VARIANT = "local-4node-variant"


def text(capture: str, name: str) -> str:
    return (SLURM / capture / name).read_text()


def one_line(multi: str) -> str:
    """``scontrol show X`` (records separated by blank lines) -> ``scontrol -o show X``."""
    records = [
        " ".join(line.strip() for line in block.splitlines() if line.strip())
        for block in multi.split("\n\n")
    ]
    return "\n".join(r for r in records if r) + "\n"


def replay_slurm(
    capture: str = LOCAL,
    *,
    config: str | None = None,
    nodes: str | None = None,
    user: str = "root",
) -> SlurmFacts:
    """Run the real collector on a ReplayHost answering from ``capture``.

    ``config``/``nodes`` name a file in local-4node-variant to use instead
    (the hardened config, the node-down listing).  Commands the captures do
    not hold (sacct, squeue -a, the --version probes) are answered by the
    replay host as "not recorded", i.e. errors — never as success.
    """
    cfg = text(VARIANT, config) if config else text(capture, "scontrol_show_config.txt")
    node_txt = text(VARIANT, nodes) if nodes else text(capture, "scontrol_show_node.txt")
    host = ReplayHost.from_mapping(
        hostname="login",
        commands={
            ("sinfo", "-V"): text(capture, "sinfo_V.txt"),
            ("scontrol", "show", "config"): cfg,
            ("scontrol", "-o", "show", "node"): one_line(node_txt),
            ("scontrol", "-o", "show", "partition"): one_line(
                text(capture, "scontrol_show_partition.txt")
            ),
            ("srun", "--mpi=list"): text(capture, "srun_mpi_list.txt"),
            ("srun", "--help"): text(capture, "srun_help.txt"),
        },
        # The local cluster keeps its config in a temp dir; /etc/slurm holds no cgroup.conf.
        files={"/etc/slurm/cgroup.conf": None},
    )
    return collect_slurm(CollectContext(host, "slurm"), user=user)


def snapshot(slurm: SlurmFacts, nodes: list[NodeFacts] | None = None) -> Snapshot:
    return Snapshot(
        tool_version="test",
        created_at=datetime(2026, 12, 2, 15, 0, tzinfo=UTC),
        target=Target(kind="slurm", name=slurm.setting("ClusterName") or "replay"),
        nodes=nodes or [],
        cluster=ClusterFacts(slurm=slurm),
    )
