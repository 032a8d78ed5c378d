"""Cluster-level Slurm facts, read from the login node through the seam.

Everything here is read-only and runs as the auditing user: what this user
can see is itself the evidence for the isolation checks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from clustergrade.collect.base import CollectContext
from clustergrade.facts.base import Tool
from clustergrade.facts.slurm import (
    CommandCheck,
    Gres,
    IsolationProbe,
    SlurmFacts,
    SlurmNode,
    SlurmPartition,
)
from clustergrade.slurm.parse import (
    parse_mpi_list,
    parse_one_line_records,
    parse_show_config,
    split_gres,
    split_states,
)

_VERSION = re.compile(r"slurm(?:-wlm)?\s+(\d+\.\d+(?:\.\d+)?(?:-?rc\d+)?)", re.I)
_CONTAINER_OPTS = re.compile(r"--(container-[a-z-]+)")


def _int(v: str | None) -> int | None:
    if v is None:
        return None
    m = re.match(r"^\d+", v)
    return int(m.group()) if m else None


def _null(v: str | None) -> str | None:
    return None if v in (None, "", "(null)", "N/A", "none") else v


def node_from_record(rec: dict[str, str]) -> SlurmNode:
    return SlurmNode(
        name=rec.get("NodeName", "?"),
        states=split_states(rec.get("State", "")),
        reason=_null(rec.get("Reason")),
        partitions=[p for p in (rec.get("Partitions") or "").split(",") if p],
        gres=[Gres(name=n, type=t, count=c) for n, t, c in split_gres(rec.get("Gres", ""))],
        cpus=_int(rec.get("CPUTot")),
        real_memory_mb=_int(rec.get("RealMemory")),
        slurmd_version=_null(rec.get("Version")),
        os=_null(rec.get("OS")),
        raw=rec,
    )


def collect_slurm(ctx: CollectContext, *, user: str | None = None) -> SlurmFacts:
    """Read the scheduler's view: config, nodes, partitions, which commands
    work, MPI plugins, container options, and the isolation probes that need
    no job."""
    client = ctx.tool_version("slurm", ["sinfo", "-V"], lambda t: _m(_VERSION, t))
    if not client.installed:
        return SlurmFacts(present=False, client=client, user=user)
    cfg_out = ctx.run(["scontrol", "show", "config"], timeout=20)
    if not cfg_out.ok:
        ctx.error(cfg_out.describe(), argv=list(cfg_out.argv))
        return SlurmFacts(present=True, controller_reachable=False, client=client, user=user)
    config = (parse_show_config(cfg_out.text).records or [{}])[0]
    cgroup: dict[str, str] = {}
    cg_text = ctx.read_text("/etc/slurm/cgroup.conf")
    if cg_text is not None:
        cgroup = _conf_lines(cg_text)
    nodes_out = ctx.output(["scontrol", "-o", "show", "node"], timeout=30) or ""
    parts_out = ctx.output(["scontrol", "-o", "show", "partition"], timeout=30) or ""
    nodes = [node_from_record(r) for r in parse_one_line_records(nodes_out).records]
    partitions = [
        SlurmPartition(
            name=r.get("PartitionName", "?"),
            nodes=_null(r.get("Nodes")),
            state=_null(r.get("State")),
            default=r.get("Default", "NO").upper() == "YES",
            raw=r,
        )
        for r in parse_one_line_records(parts_out).records
    ]
    commands = [
        _works(ctx, "sinfo", ["sinfo", "-h", "-o", "%P"]),
        _works(ctx, "squeue", ["squeue", "-h", "-o", "%i"]),
        _works(ctx, "scontrol", ["scontrol", "ping"]),
        _works(ctx, "sacct", ["sacct", "-n", "-X", "-S", "now-1days", "-o", "JobID"]),
        _works(ctx, "srun", ["srun", "--version"]),
        _works(ctx, "sbatch", ["sbatch", "--version"]),
        _works(ctx, "salloc", ["salloc", "--version"]),
    ]
    mpi = ctx.run(["srun", "--mpi=list"], timeout=20)
    help_out = ctx.run(["srun", "--help"], timeout=20)
    topo = config.get("TopologyPlugin", "")
    topology_conf: bool | None = None
    conf_dir = _conf_dir(config)
    if conf_dir is not None:
        st = ctx.stat(f"{conf_dir}/topology.conf")
        topology_conf = st.exists if st.error is None else None
    if topo and topo not in ("topology/none", "(null)") and topology_conf is None:
        topology_conf = True
    return SlurmFacts(
        present=True,
        controller_reachable=True,
        user=user,
        client=client,
        config=config,
        cgroup_config=cgroup,
        nodes=nodes,
        partitions=partitions,
        commands=commands,
        mpi_plugins=parse_mpi_list(mpi.text + "\n" + mpi.err_text) if mpi.ran else [],
        srun_container_options=sorted(set(_CONTAINER_OPTS.findall(help_out.text)))
        if help_out.ran
        else [],
        topology_conf=topology_conf,
        isolation=_visibility_probes(ctx, user),
    )


def _m(rx: re.Pattern[str], text: str) -> str | None:
    m = rx.search(text)
    return m.group(1) if m else None


def _conf_lines(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if "=" in line:
            k, _, v = line.partition("=")
            out[k.strip()] = v.strip()
    return out


def _conf_dir(config: dict[str, str]) -> str | None:
    path = config.get("SLURM_CONF")
    if path and "/" in path:
        return path.rsplit("/", 1)[0]
    return None


def _works(ctx: CollectContext, name: str, argv: Sequence[str]) -> CommandCheck:
    res = ctx.run(argv, timeout=20)
    if res.ok:
        return CommandCheck(command=name, works=True)
    return CommandCheck(command=name, works=False, detail=res.describe()[:300])


def _visibility_probes(ctx: CollectContext, user: str | None) -> list[IsolationProbe]:
    """Can this user see other users' jobs and accounting?  Read-only probes."""
    probes = []
    q = ctx.run(["squeue", "-a", "-h", "-o", "%i|%u"], timeout=20)
    if q.ok:
        rows = [line.split("|", 1) for line in q.text.splitlines() if "|" in line]
        others = sorted({u for _, u in rows if user is not None and u != user})
        probes.append(
            IsolationProbe(
                probe="squeue-other-users",
                method="squeue -a -h -o '%i|%u' as the auditing user",
                observed=f"{len(rows)} jobs visible, of {len(others)} other user(s)",
                exposed=True if others else None,
            )
        )
        other_ids = [i for i, u in rows if user is not None and u != user][:3]
        if other_ids:
            shown = 0
            for jid in other_ids:
                r = ctx.run(["scontrol", "-o", "show", "job", jid], timeout=20)
                if r.ok and "Command=" in r.text:
                    shown += 1
            probes.append(
                IsolationProbe(
                    probe="scontrol-other-jobs",
                    method="scontrol -o show job <id> on other users' jobs",
                    observed=f"details (Command, WorkDir) of {shown}/{len(other_ids)} shown",
                    exposed=shown > 0,
                )
            )
    else:
        probes.append(
            IsolationProbe(
                probe="squeue-other-users",
                method="squeue -a",
                observed="squeue failed",
                error=q.describe()[:300],
            )
        )
    a = ctx.run(
        ["sacct", "-a", "-X", "-n", "-P", "-S", "now-30days", "-o", "JobID,User"], timeout=30
    )
    if a.ok:
        users = {
            line.split("|")[1]
            for line in a.text.splitlines()
            if line.count("|") >= 1 and line.split("|")[1]
        }
        others_acct = sorted(u for u in users if user is not None and u != user)
        probes.append(
            IsolationProbe(
                probe="sacct-other-users",
                method="sacct -a -X -S now-30days as the auditing user",
                observed=f"accounting of {len(others_acct)} other user(s) visible",
                exposed=True if others_acct else None,
            )
        )
    else:
        probes.append(
            IsolationProbe(
                probe="sacct-other-users",
                method="sacct -a",
                observed="sacct failed (accounting disabled or refused)",
                error=a.describe()[:300],
            )
        )
    return probes


def client_tool(text: str) -> Tool:
    """The slurm client Tool from `sinfo -V` text (for tests)."""
    v = _m(_VERSION, text)
    return Tool(name="slurm", installed=True, version=v, source="sinfo -V")
