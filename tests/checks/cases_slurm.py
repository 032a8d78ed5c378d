"""Check cases for the Slurm cluster checks: the real captures of the local
cluster (tests/fixtures/slurm/, Slurm 22.05.8) replayed through
clustergrade.slurm.collect (tests/slurm/replay.py).  A case that changes a
fact names the one change in its origin."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clustergrade.facts.node import NodeFacts, Snapshot
from clustergrade.facts.slurm import CommandCheck, IsolationProbe, SlurmFacts
from clustergrade.results import Status
from tests.gpu.replay import ORIGIN_A100, ORIGIN_P100, a100, p100
from tests.helpers import Case
from tests.slurm.replay import DBD, replay_slurm, snapshot

L = "local-4node capture (PrivateData=none, no health check, accounting none)"
H = "local-4node-variant capture (PrivateData=accounts,jobs,usage,users, HealthCheckProgram=/bin/true every 60s)"
D = "local-4node-dbd capture (accounting_storage/slurmdbd)"
DOWN = "local-4node-variant capture with scontrol_show_node_n3_down.txt (n3 DOWN+NOT_RESPONDING)"
_COMMANDS = ("sinfo", "squeue", "scontrol", "sacct", "srun", "sbatch", "salloc")


def _local() -> SlurmFacts:
    return replay_slurm()


def _hardened() -> SlurmFacts:
    return replay_slurm(config="scontrol_show_config.txt")


def _dbd() -> SlurmFacts:
    return replay_slurm(DBD)


def _config(s: SlurmFacts, **changes: str) -> SlurmFacts:
    return s.model_copy(update={"config": {**s.config, **changes}})


def _probe(s: SlurmFacts, probe: IsolationProbe) -> SlurmFacts:
    kept = [p for p in s.isolation if p.probe != probe.probe]
    return s.model_copy(update={"isolation": [*kept, probe]})


def _working(s: SlurmFacts) -> SlurmFacts:
    # The replay host answers commands the captures do not hold as errors; on
    # the running cluster they all worked (tests/slurm/test_audit.py).
    return s.model_copy(
        update={"commands": [CommandCheck(command=c, works=True) for c in _COMMANDS]}
    )


def snap(
    build: Callable[[], SlurmFacts], nodes: Callable[[], list[NodeFacts]] | None = None
) -> Callable[[], Snapshot]:
    return lambda: snapshot(build(), nodes() if nodes else None)


def _as_node(f: NodeFacts, name: str) -> NodeFacts:
    return f.model_copy(update={"hostname": name})


def _sacct_seen(others: int, *, error: bool = False) -> IsolationProbe:
    return IsolationProbe(
        probe="sacct-other-users",
        method="sacct -a -X -S now-30days as the auditing user",
        observed=f"accounting of {others} other user(s) visible",
        exposed=True if others else None,
        error="sacct failed" if error else None,
    )


def _squeue_seen(others: int) -> IsolationProbe:
    return IsolationProbe(
        probe="squeue-other-users",
        method="squeue -a -h -o '%i|%u' as the auditing user",
        observed=f"{others + 1} jobs visible, of {others} other user(s)",
        exposed=True if others else None,
    )


def _job_probe(name: str, exposed: bool, observed: str) -> IsolationProbe:
    return IsolationProbe(
        probe=name, method=f"{name} probe job", observed=observed, exposed=exposed
    )


def _with(
    probe: IsolationProbe, base: Callable[[], SlurmFacts] = _hardened
) -> Callable[[], Snapshot]:
    return snap(lambda: _probe(base(), probe))


def _change(base: Callable[[], SlurmFacts], **update: Any) -> Callable[[], Snapshot]:
    return snap(lambda: base().model_copy(update=update))


CASES: list[Case] = [
    # PrivateData
    Case("slurm.private-data", Status.FAIL, snap(_local), L),
    Case("slurm.private-data", Status.PASS, snap(_hardened), H),
    Case(
        "slurm.private-data",
        Status.WARN,
        snap(lambda: _config(_hardened(), PrivateData="jobs")),
        H + "; PrivateData changed to jobs",
    ),
    Case(
        "slurm.private-data",
        Status.FAIL,
        snap(lambda: _config(_hardened(), PrivateData="usage,users")),
        H + "; PrivateData changed to usage,users (jobs visible)",
    ),
    # Health check
    Case("slurm.health-check", Status.FAIL, snap(_local), L + " (HealthCheckProgram=(null))"),
    Case("slurm.health-check", Status.PASS, snap(_hardened), H),
    Case(
        "slurm.health-check",
        Status.WARN,
        snap(lambda: _config(_hardened(), HealthCheckInterval="300 sec")),
        H + "; HealthCheckInterval changed to 300 sec",
    ),
    Case(
        "slurm.health-check",
        Status.FAIL,
        snap(lambda: _config(_hardened(), HealthCheckInterval="0 sec")),
        H + "; HealthCheckInterval changed to 0 sec",
    ),
    # Prolog/Epilog
    Case("slurm.prolog-epilog", Status.WARN, snap(_local), L + " (Prolog/Epilog (null))"),
    Case(
        "slurm.prolog-epilog",
        Status.PASS,
        snap(
            lambda: _config(_local(), Prolog="/etc/slurm/prolog.sh", Epilog="/etc/slurm/epilog.sh")
        ),
        L + "; Prolog and Epilog set to /etc/slurm/{prolog,epilog}.sh",
    ),
    # Accounting
    Case("slurm.accounting", Status.WARN, snap(_local), L + " (accounting_storage/none)"),
    Case(
        "slurm.accounting", Status.PASS, snap(lambda: _working(_dbd())), D + "; commands all work"
    ),
    Case(
        "slurm.accounting",
        Status.FAIL,
        snap(_dbd),
        D + " (sacct not in the capture: the replay answers it as an error)",
    ),
    # SelectType
    Case("slurm.select-type", Status.PASS, snap(_local), L + " (select/cons_tres)"),
    Case(
        "slurm.select-type",
        Status.WARN,
        snap(lambda: _config(_local(), SelectType="select/linear")),
        L + "; SelectType changed to select/linear",
    ),
    # Default resources
    Case(
        "slurm.default-resources",
        Status.WARN,
        snap(_local),
        L + " (DefMemPerCPU=2711, no DefCpuPerGPU)",
    ),
    Case(
        "slurm.default-resources",
        Status.PASS,
        snap(lambda: _config(_local(), DefCpuPerGPU="8")),
        L + "; DefCpuPerGPU=8 added",
    ),
    # Topology
    Case("slurm.topology", Status.WARN, snap(_local), L + " (topology/none, 4 nodes)"),
    Case(
        "slurm.topology",
        Status.PASS,
        snap(lambda: _config(_local(), TopologyPlugin="topology/tree")),
        L + "; TopologyPlugin changed to topology/tree",
    ),
    # Private /tmp
    Case("slurm.private-tmp", Status.WARN, snap(_local), L + " (job_container/none)"),
    Case(
        "slurm.private-tmp",
        Status.PASS,
        snap(lambda: _config(_local(), JobContainerType="job_container/tmpfs")),
        L + "; JobContainerType changed to job_container/tmpfs",
    ),
    # cgroups
    Case(
        "slurm.cgroup-confinement",
        Status.FAIL,
        snap(_local),
        L + " (proctrack/linuxproc, task/none, no cgroup.conf)",
    ),
    Case(
        "slurm.cgroup-confinement",
        Status.PASS,
        snap(
            lambda: _config(
                _local(), ProctrackType="proctrack/cgroup", TaskPlugin="task/cgroup,task/affinity"
            ).model_copy(update={"cgroup_config": {"ConstrainDevices": "yes"}})
        ),
        L + "; ProctrackType=proctrack/cgroup, TaskPlugin=task/cgroup,task/affinity, "
        "cgroup.conf ConstrainDevices=yes",
    ),
    # MPI
    Case("slurm.mpi-pmix", Status.PASS, snap(_local), L + " (srun --mpi=list has pmix, pmix_v4)"),
    Case(
        "slurm.mpi-pmix",
        Status.WARN,
        _change(_local, mpi_plugins=["none", "cray_shasta", "pmi2"]),
        L + "; pmix and pmix_v4 removed from the plugin list",
    ),
    Case(
        "slurm.mpi-pmix", Status.ERROR, _change(_local, mpi_plugins=[]), L + "; empty plugin list"
    ),
    # Commands
    Case(
        "slurm.commands", Status.PASS, snap(lambda: _working(_local())), L + "; commands all work"
    ),
    Case(
        "slurm.commands", Status.FAIL, snap(_local), L + " (commands not in the capture = errors)"
    ),
    # Containers
    Case(
        "slurm.containers",
        Status.WARN,
        snap(_local),
        L + " (22.05 srun --help: no --container-image)",
    ),
    Case(
        "slurm.containers",
        Status.PASS,
        _change(_local, srun_container_options=["container-image", "container-mounts"]),
        L + "; srun options container-image, container-mounts added (Pyxis)",
    ),
    # GRES vs nvidia
    Case(
        "slurm.gres-matches-nodes",
        Status.PASS,
        snap(_local, lambda: [_as_node(a100(), "n1")]),
        L + " (n1 gpu:h100:4) with node facts " + ORIGIN_A100 + " (attached_gpus 4), hostname n1",
        subject="n1",
    ),
    Case(
        "slurm.gres-matches-nodes",
        Status.FAIL,
        snap(_local, lambda: [_as_node(p100(), "n2")]),
        L + " (n2 gpu:h100:4) with node facts " + ORIGIN_P100 + " (1 GPU), hostname n2",
        subject="n2",
    ),
    # Nodes unavailable
    Case("slurm.nodes-unavailable", Status.PASS, snap(_local), L + " (all IDLE)"),
    Case(
        "slurm.nodes-unavailable",
        Status.WARN,
        snap(
            lambda: replay_slurm(
                config="scontrol_show_config.txt", nodes="scontrol_show_node_n3_down.txt"
            )
        ),
        DOWN,
    ),
    # Controller version
    Case("version.slurm-controller", Status.FAIL, snap(_local), L + " (SLURM_VERSION 22.05.8)"),
    Case(
        "version.slurm-controller",
        Status.PASS,
        snap(lambda: _config(_local(), SLURM_VERSION="25.11.8")),
        L + "; SLURM_VERSION changed to 25.11.8",
    ),
    # Isolation: jobs visible
    Case(
        "isolation.slurm-jobs-visible",
        Status.FAIL,
        _with(_squeue_seen(0), _local),
        L + "; squeue -a probe saw only the auditor's own job (PrivateData=none: would be visible)",
    ),
    Case(
        "isolation.slurm-jobs-visible",
        Status.ERROR,
        snap(_local),
        L + " (squeue -a not in the capture: the probe is an error)",
    ),
    Case(
        "isolation.slurm-jobs-visible",
        Status.PASS,
        _with(_squeue_seen(0)),
        H + "; squeue -a probe saw only the auditor's own job",
    ),
    Case(
        "isolation.slurm-jobs-visible",
        Status.FAIL,
        _with(_squeue_seen(2)),
        H + "; squeue -a probe saw jobs of 2 other users",
    ),
    # Isolation: accounting
    Case(
        "isolation.slurm-accounting-visible",
        Status.PASS,
        snap(
            lambda: _config(_probe(_dbd(), _sacct_seen(0)), PrivateData="accounts,jobs,usage,users")
        ),
        D + "; sacct -a probe saw no other user; PrivateData=accounts,jobs,usage,users set",
    ),
    Case(
        "isolation.slurm-accounting-visible",
        Status.WARN,
        _with(_sacct_seen(0), _dbd),
        D + " (PrivateData=none); sacct -a probe saw no other user",
    ),
    Case(
        "isolation.slurm-accounting-visible",
        Status.FAIL,
        _with(_sacct_seen(3), _dbd),
        D + "; sacct -a probe saw accounting of 3 other users",
    ),
    Case(
        "isolation.slurm-accounting-visible",
        Status.SKIP,
        snap(_local),
        L + " (sacct not in the capture: error, nothing to read)",
    ),
    # Isolation: SSH, /tmp, GPUs (probe jobs; the captures hold no probe runs)
    Case(
        "isolation.ssh-without-allocation",
        Status.PASS,
        _with(_job_probe("ssh-without-allocation", False, "ssh n1 true refused")),
        H + "; probe result ssh refused added",
    ),
    Case(
        "isolation.ssh-without-allocation",
        Status.FAIL,
        _with(_job_probe("ssh-without-allocation", True, "ssh n1 true succeeded")),
        H + "; probe result ssh succeeded added",
    ),
    Case("isolation.ssh-without-allocation", Status.SKIP, snap(_hardened), H + " (no probe run)"),
    Case(
        "isolation.slurm-tmp-shared",
        Status.PASS,
        _with(_job_probe("tmp-shared-between-jobs", False, "absent")),
        H + "; probe result marker absent in the second job added",
    ),
    Case(
        "isolation.slurm-tmp-shared",
        Status.FAIL,
        _with(_job_probe("tmp-shared-between-jobs", True, "present")),
        H + "; probe result marker present in the second job added",
    ),
    Case(
        "isolation.slurm-gpus-outside-allocation",
        Status.PASS,
        _with(_job_probe("gpus-outside-allocation", False, "1 of 4 /dev/nvidiaN openable")),
        H + "; probe result 1 of 4 GPUs openable added",
    ),
    Case(
        "isolation.slurm-gpus-outside-allocation",
        Status.FAIL,
        _with(_job_probe("gpus-outside-allocation", True, "4 of 4 /dev/nvidiaN openable")),
        H + "; probe result 4 of 4 GPUs openable added",
    ),
]
