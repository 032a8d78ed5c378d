"""Cluster checks on a Slurm cluster: scheduler configuration, what works for
the user, consistency between what Slurm advertises and what the nodes have,
and tenant isolation as probed from an ordinary account."""

from __future__ import annotations

import re
from collections.abc import Iterable

from clustergrade.checks.registry import cluster_check
from clustergrade.checks.versions import Observed, judge
from clustergrade.facts.node import Snapshot
from clustergrade.facts.slurm import IsolationProbe, SlurmFacts
from clustergrade.kb.model import KnowledgeBase
from clustergrade.results import (
    Criterion,
    Finding,
    Severity,
    errored,
    failed,
    passed,
    skipped,
    warned,
)

_SLURM_CONF = "https://slurm.schedmd.com/slurm.conf.html"
_CGROUP_CONF = "https://slurm.schedmd.com/cgroup.conf.html"
_EXPECT = "https://www.clustermax.ai/expectations/slurm"

#: PrivateData values that keep one tenant's work out of another's sight.
_PRIVATE_WANTED = ("jobs", "usage", "users", "accounts")
#: ClusterMAX 3.0: a failed node must stop receiving jobs within about 2 minutes.
_DETECT_WITHIN_S = 120
_UNSET = ("", "(null)", "none", "0", "unlimited", "n/a")


def _s(snapshot: Snapshot) -> SlurmFacts:
    assert snapshot.cluster is not None and snapshot.cluster.slurm is not None
    return snapshot.cluster.slurm


def _unset(v: str | None) -> bool:
    return v is None or v.strip().lower() in _UNSET


def _interval_s(value: str | None) -> int | None:
    if value is None:
        return None
    m = re.match(r"^\s*(\d+)", value)
    return int(m.group(1)) if m else None


@cluster_check(
    "slurm.private-data",
    title="PrivateData hides other tenants' jobs, usage, users and accounts",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale=(
        "Slurm's default shows every user's jobs (command lines, working directories, "
        "output paths) and usage to everyone; on a shared cluster that leaks one tenant's "
        "work to another."
    ),
    remediation="Set PrivateData=accounts,jobs,usage,users in slurm.conf (and in slurmdbd.conf for sacct/sreport), then `scontrol reconfigure`.",
    cluster_needs=("slurm",),
    profiles=("security", "isolation", "orchestration"),
    references=(_SLURM_CONF,),
)
def private_data(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    value = _s(snapshot).setting("PrivateData") or ""
    have = {v.strip().lower() for v in value.split(",") if v.strip()}
    missing = [w for w in _PRIVATE_WANTED if w not in have]
    if not have or have <= {"none", "(null)"}:
        return failed(
            "PrivateData is unset: every user sees every job and usage record",
            observed=value or "unset",
            expected=",".join(_PRIVATE_WANTED),
        )
    if "jobs" in missing:
        return failed(
            f"PrivateData={value} does not hide jobs",
            observed=value,
            expected=",".join(_PRIVATE_WANTED),
        )
    if missing:
        return warned(
            f"PrivateData={value} leaves {', '.join(missing)} visible",
            observed=value,
            expected=",".join(_PRIVATE_WANTED),
        )
    return passed(f"PrivateData={value}", observed=value, expected=",".join(_PRIVATE_WANTED))


@cluster_check(
    "slurm.health-check",
    title="A node health check runs often enough to drain a failed node within 2 minutes",
    criterion=Criterion.RELIABILITY,
    severity=Severity.HIGH,
    rationale=(
        "ClusterMAX 3.0 expects a failed node to be detected and blocked from scheduling "
        "within about two minutes; without a HealthCheckProgram, a node with a dead GPU keeps "
        "taking jobs that crash."
    ),
    remediation="Set HealthCheckProgram (e.g. NHC or `clustergrade health`) and HealthCheckInterval<=120 with HealthCheckNodeState=ANY.",
    cluster_needs=("slurm",),
    profiles=("health", "orchestration"),
    references=(_SLURM_CONF, _EXPECT),
)
def health_check(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    s = _s(snapshot)
    prog = s.setting("HealthCheckProgram")
    interval = _interval_s(s.setting("HealthCheckInterval"))
    if _unset(prog):
        return failed(
            "no HealthCheckProgram: failed nodes are never drained automatically",
            observed="unset",
            expected=f"a program, every <= {_DETECT_WITHIN_S}s",
        )
    if interval is None or interval == 0:
        return failed(
            f"HealthCheckProgram={prog} never runs (HealthCheckInterval=0)",
            observed=f"{prog}, interval 0",
            expected=f"<= {_DETECT_WITHIN_S}s",
        )
    if interval > _DETECT_WITHIN_S:
        return warned(
            f"HealthCheckProgram={prog} runs every {interval}s, slower than {_DETECT_WITHIN_S}s",
            observed=f"{interval}s",
            expected=f"<= {_DETECT_WITHIN_S}s",
        )
    return passed(
        f"HealthCheckProgram={prog} every {interval}s",
        observed=f"{interval}s",
        expected=f"<= {_DETECT_WITHIN_S}s",
    )


@cluster_check(
    "slurm.prolog-epilog",
    title="Prolog and epilog scripts are configured",
    criterion=Criterion.RELIABILITY,
    severity=Severity.LOW,
    rationale="ClusterMAX expects light health checks in prolog/epilog so a job never lands on a node that failed since the last periodic check.",
    remediation="Set Prolog and Epilog (and PrologFlags=Alloc,Contain for pam_slurm_adopt).",
    cluster_needs=("slurm",),
    profiles=("health", "orchestration"),
    references=(_SLURM_CONF, _EXPECT),
)
def prolog_epilog(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    s = _s(snapshot)
    prolog, epilog = s.setting("Prolog"), s.setting("Epilog")
    got = {k: v for k, v in (("Prolog", prolog), ("Epilog", epilog)) if not _unset(v)}
    if len(got) == 2:
        return passed(f"Prolog={prolog}, Epilog={epilog}")
    missing = [k for k in ("Prolog", "Epilog") if k not in got]
    return warned(
        f"{' and '.join(missing)} not configured",
        observed=got or "none",
        expected="Prolog and Epilog",
    )


@cluster_check(
    "slurm.accounting",
    title="Job accounting is stored (sacct works)",
    criterion=Criterion.MONITORING,
    severity=Severity.MEDIUM,
    rationale="Without accounting storage there is no sacct history: no per-job usage, no post-mortem of failed jobs.",
    remediation="Run slurmdbd and set AccountingStorageType=accounting_storage/slurmdbd.",
    cluster_needs=("slurm",),
    profiles=("monitoring", "orchestration"),
    references=(_SLURM_CONF,),
)
def accounting(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    s = _s(snapshot)
    t = s.setting("AccountingStorageType") or ""
    sacct = next((c for c in s.commands if c.command == "sacct"), None)
    if t.endswith("/none") or not t:
        return warned(
            f"AccountingStorageType={t or 'unset'}: no job history for sacct",
            observed=t or "unset",
            expected="accounting_storage/slurmdbd",
        )
    if sacct is not None and not sacct.works:
        return failed(
            f"accounting is configured ({t}) but sacct fails: {sacct.detail}",
            observed=t,
            expected="sacct works",
        )
    return passed(f"AccountingStorageType={t}", observed=t)


@cluster_check(
    "slurm.select-type",
    title="GPUs are scheduled as trackable resources (select/cons_tres)",
    criterion=Criterion.ORCHESTRATION,
    severity=Severity.MEDIUM,
    rationale="Only select/cons_tres schedules GPUs per job (--gpus, --gpus-per-task); linear or cons_res hand out whole nodes or ignore GPU counts.",
    remediation="Set SelectType=select/cons_tres and SelectTypeParameters=CR_Core_Memory.",
    cluster_needs=("slurm",),
    profiles=("orchestration",),
    references=(_SLURM_CONF,),
)
def select_type(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    t = _s(snapshot).setting("SelectType") or "unset"
    if t == "select/cons_tres":
        return passed(f"SelectType={t}", observed=t, expected="select/cons_tres")
    return warned(f"SelectType={t}", observed=t, expected="select/cons_tres")


@cluster_check(
    "slurm.default-resources",
    title="Jobs get sane default memory and CPUs per GPU",
    criterion=Criterion.ORCHESTRATION,
    severity=Severity.LOW,
    rationale="ClusterMAX expects logical DefCpu and DefMem values: without them a job that asks only for GPUs gets one CPU and either no memory limit or the whole node's.",
    remediation="Set DefMemPerCPU (or DefMemPerGPU) and DefCpuPerGPU in slurm.conf or per partition.",
    cluster_needs=("slurm",),
    profiles=("orchestration",),
    references=(_SLURM_CONF, _EXPECT),
)
def default_resources(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    s = _s(snapshot)
    mem = {k: s.setting(k) for k in ("DefMemPerCPU", "DefMemPerNode", "DefMemPerGPU")}
    cpu = {k: s.setting(k) for k in ("DefCpuPerGPU",)}
    for p in s.partitions:
        for k in ("DefMemPerCPU", "DefMemPerNode", "DefMemPerGPU", "DefCpuPerGPU"):
            if not _unset(p.raw.get(k)):
                (cpu if k == "DefCpuPerGPU" else mem)[f"{p.name}:{k}"] = p.raw[k]
    mem_set = {k: v for k, v in mem.items() if not _unset(v)}
    cpu_set = {k: v for k, v in cpu.items() if not _unset(v)}
    observed = {**mem_set, **cpu_set} or "none set"
    if mem_set and cpu_set:
        return passed("default memory and CPUs per GPU are set", observed=observed)
    missing = ([] if mem_set else ["DefMem*"]) + ([] if cpu_set else ["DefCpuPerGPU"])
    return warned(
        f"{', '.join(missing)} not set",
        observed=observed,
        expected="DefMemPerCPU/GPU and DefCpuPerGPU",
    )


@cluster_check(
    "slurm.topology",
    title="The scheduler knows the network topology",
    criterion=Criterion.NETWORKING,
    severity=Severity.LOW,
    rationale="Without a topology plugin and topology.conf, multi-node jobs are placed across switches at random and collectives slow down; ClusterMAX lists topology.conf.",
    remediation="Generate topology.conf (e.g. from ibnetdiscover or the provider's rail layout) and set TopologyPlugin=topology/tree (or topology/block on NVL72).",
    cluster_needs=("slurm",),
    profiles=("networking", "orchestration"),
    references=(_SLURM_CONF, _EXPECT),
)
def topology(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    s = _s(snapshot)
    plugin = s.setting("TopologyPlugin") or "unset"
    if plugin not in ("topology/none", "unset", "(null)"):
        return passed(f"TopologyPlugin={plugin}", observed=plugin)
    if len(s.nodes) <= 1:
        return skipped("a single-node cluster has no topology to describe")
    return warned(
        f"TopologyPlugin={plugin}: placement ignores the network",
        observed=plugin,
        expected="topology/tree or topology/block",
    )


@cluster_check(
    "slurm.private-tmp",
    title="Jobs get a private /tmp and /dev/shm",
    criterion=Criterion.SECURITY,
    severity=Severity.MEDIUM,
    rationale="A /tmp shared between jobs leaks data between tenants and lets one job fill or poison another's scratch files.",
    remediation="Set JobContainerType=job_container/tmpfs with a job_container.conf (Slurm 25.11: NamespaceType=namespace/tmpfs or namespace/linux).",
    cluster_needs=("slurm",),
    profiles=("security", "isolation"),
    references=(_SLURM_CONF, "https://slurm.schedmd.com/job_container.conf.html"),
)
def private_tmp(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    s = _s(snapshot)
    jc = s.setting("JobContainerType") or s.setting("NamespaceType") or "unset"
    if "tmpfs" in jc or "namespace/linux" in jc:
        return passed(f"{jc}", observed=jc)
    return warned(
        f"JobContainerType={jc}: /tmp is shared unless something else isolates it",
        observed=jc,
        expected="job_container/tmpfs",
    )


@cluster_check(
    "slurm.cgroup-confinement",
    title="Jobs are confined by cgroups (processes, cores, memory, GPUs)",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale="Without proctrack/cgroup, task/cgroup and ConstrainDevices=yes a job can use cores, memory and GPUs it was not allocated, including another tenant's.",
    remediation="Set ProctrackType=proctrack/cgroup, TaskPlugin=task/cgroup,task/affinity, and ConstrainCores/ConstrainRAMSpace/ConstrainDevices=yes in cgroup.conf.",
    cluster_needs=("slurm",),
    profiles=("security", "isolation"),
    references=(_SLURM_CONF, _CGROUP_CONF),
)
def cgroup_confinement(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    s = _s(snapshot)
    proctrack = s.setting("ProctrackType") or "unset"
    task = s.setting("TaskPlugin") or "unset"
    cg = {k.lower(): v.lower() for k, v in s.cgroup_config.items()}
    devices = cg.get("constraindevices")
    problems = []
    if proctrack != "proctrack/cgroup":
        problems.append(f"ProctrackType={proctrack}")
    if "task/cgroup" not in task:
        problems.append(f"TaskPlugin={task}")
    if devices != "yes":
        problems.append(f"ConstrainDevices={devices or 'unset (or cgroup.conf unreadable)'}")
    observed = {"ProctrackType": proctrack, "TaskPlugin": task, "ConstrainDevices": devices}
    if problems:
        return failed(
            "jobs are not fully confined: " + "; ".join(problems),
            observed=observed,
            expected="proctrack/cgroup, task/cgroup, ConstrainDevices=yes",
        )
    return passed("proctrack/cgroup, task/cgroup and ConstrainDevices=yes", observed=observed)


@cluster_check(
    "slurm.mpi-pmix",
    title="srun can launch MPI through PMIx",
    criterion=Criterion.ORCHESTRATION,
    severity=Severity.MEDIUM,
    rationale="Multi-node NCCL and MPI jobs launched with srun need a PMI plugin; PMIx is what current MPI stacks (HPC-X, Open MPI 5) and pyxis containers expect.",
    remediation="Build/install Slurm with PMIx support and set MpiDefault=pmix.",
    cluster_needs=("slurm",),
    profiles=("orchestration", "networking"),
    references=("https://slurm.schedmd.com/mpi_guide.html",),
)
def mpi_pmix(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    s = _s(snapshot)
    plugins = s.mpi_plugins
    default = s.setting("MpiDefault") or "unset"
    if any(p.startswith("pmix") for p in plugins):
        return passed(
            f"PMIx available ({', '.join(plugins)}); MpiDefault={default}", observed=plugins
        )
    if not plugins:
        return errored("srun --mpi=list gave no plugin list")
    return warned(
        f"no PMIx plugin (available: {', '.join(plugins)}); MpiDefault={default}",
        observed=plugins,
        expected="pmix",
    )


@cluster_check(
    "slurm.commands",
    title="The Slurm user commands work for this user",
    criterion=Criterion.ORCHESTRATION,
    severity=Severity.HIGH,
    rationale="ClusterMAX's first Slurm expectation: sinfo, squeue, scontrol, salloc, sbatch, srun and sacct work from the login node.",
    remediation="Fix the failing commands (client config, munge key, controller reachability, accounting).",
    cluster_needs=("slurm",),
    profiles=("orchestration",),
    references=(_EXPECT,),
)
def commands(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    s = _s(snapshot)
    broken = [c for c in s.commands if not c.works]
    names = [c.command for c in s.commands]
    if broken:
        return failed(
            "not working: " + "; ".join(f"{c.command} ({c.detail})" for c in broken),
            observed=[c.command for c in broken],
            expected=names,
        )
    return passed(f"all of {', '.join(names)} work", observed=names)


@cluster_check(
    "slurm.containers",
    title="Jobs can run containers through srun (Pyxis/enroot)",
    criterion=Criterion.ORCHESTRATION,
    severity=Severity.MEDIUM,
    rationale="ClusterMAX expects Pyxis/enroot so users run NGC containers with `srun --container-image`.",
    remediation="Install enroot and the Pyxis SPANK plugin on the nodes and the login node.",
    cluster_needs=("slurm",),
    profiles=("containers", "orchestration"),
    references=("https://github.com/NVIDIA/pyxis", _EXPECT),
)
def containers(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    opts = _s(snapshot).srun_container_options
    if "container-image" in opts:
        return passed("srun has --container-image (Pyxis)", observed=opts)
    return warned(
        "srun has no --container-image option: no Pyxis",
        observed=opts or "none",
        expected="--container-image",
    )


@cluster_check(
    "slurm.gres-matches-nodes",
    title="The GPUs Slurm advertises are the GPUs the nodes have",
    criterion=Criterion.RELIABILITY,
    severity=Severity.HIGH,
    rationale="A node whose gres.conf promises more GPUs than the driver sees takes jobs that then fail or share GPUs; fewer wastes paid GPUs.",
    remediation="Fix gres.conf (or use AutoDetect=nvml) so each node's gpu count matches nvidia-smi; drain nodes with missing GPUs.",
    cluster_needs=("slurm",),
    profiles=("hardware", "orchestration"),
)
def gres_matches(snapshot: Snapshot, kb: KnowledgeBase) -> Iterable[Finding]:
    s = _s(snapshot)
    by_name = {n.hostname: n for n in snapshot.nodes}
    out: list[Finding] = []
    for sn in s.nodes:
        advertised = sum(g.count for g in sn.gres if g.name == "gpu")
        nf = by_name.get(sn.name)
        if nf is None:
            continue
        if nf.failure is not None:
            out.append(errored(f"no facts from {sn.name}: {nf.failure}", subject=sn.name))
            continue
        if nf.nvidia is None:
            out.append(errored(f"{sn.name}: {nf.section_problem('nvidia')}", subject=sn.name))
            continue
        seen = int(getattr(nf.nvidia, "gpu_count", 0) or 0)
        if advertised == seen:
            if advertised == 0:
                out.append(skipped(f"{sn.name}: no GPUs advertised or present", subject=sn.name))
            else:
                out.append(
                    passed(
                        f"{sn.name}: {seen} GPUs, as advertised",
                        observed=seen,
                        expected=advertised,
                        subject=sn.name,
                    )
                )
        else:
            out.append(
                failed(
                    f"{sn.name}: Slurm advertises {advertised} GPUs, the node has {seen}",
                    observed=seen,
                    expected=advertised,
                    subject=sn.name,
                )
            )
    return out or [skipped("no audited node is known to Slurm")]


@cluster_check(
    "slurm.nodes-unavailable",
    title="No node is down or drained",
    criterion=Criterion.RELIABILITY,
    severity=Severity.MEDIUM,
    rationale="Down and drained nodes are capacity that is paid for and not usable; their reasons say what broke.",
    remediation="Repair the nodes named (their Reason says why) and resume them with `scontrol update nodename=... state=resume`.",
    cluster_needs=("slurm",),
    profiles=("health",),
)
def nodes_unavailable(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    s = _s(snapshot)
    bad = [
        n for n in s.nodes if {"DOWN", "DRAIN", "DRAINED", "FAIL", "NOT_RESPONDING"} & set(n.states)
    ]
    if not s.nodes:
        return errored("the controller listed no nodes")
    if bad:
        detail = "; ".join(
            f"{n.name} {'+'.join(n.states)}" + (f" ({n.reason})" if n.reason else "")
            for n in bad[:20]
        )
        return warned(
            f"{len(bad)}/{len(s.nodes)} nodes unavailable: {detail}", observed=len(bad), expected=0
        )
    return passed(f"all {len(s.nodes)} nodes available", observed=0, expected=0)


@cluster_check(
    "version.slurm-controller",
    title="The Slurm controller has every known security fix",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale="slurmctld's version (SLURM_VERSION in `scontrol show config`) is what a tenant can read and what the advisories are judged on; out-of-support releases get no fixes.",
    remediation="Upgrade Slurm to the fixed release of a supported line.",
    cluster_needs=("slurm",),
    profiles=("security", "versions", "orchestration"),
    references=("https://slurm.schedmd.com/upgrades.html",),
)
def slurm_controller_version(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    comp = kb.component("slurm")
    if comp is None:
        return errored("the knowledge base has no slurm component")
    version = _s(snapshot).setting("SLURM_VERSION")
    if version is None:
        return errored("scontrol show config did not report SLURM_VERSION")
    when = min((n.collected_at for n in snapshot.nodes), default=snapshot.created_at).date()
    return judge(comp, Observed(version, source="scontrol show config"), when, kb.meta.grace_days)


def _probe(s: SlurmFacts, name: str) -> IsolationProbe | None:
    return next((p for p in s.isolation if p.probe == name), None)


def _probe_finding(p: IsolationProbe | None, what: str) -> Finding:
    if p is None:
        return skipped(f"the {what} probe was not run (--no-probes, or no node answered)")
    ev = {"method": p.method}
    if p.error:
        return errored(f"{what}: could not tell ({p.error})", evidence=ev)
    if p.exposed is True:
        return failed(
            f"{what}: {p.observed}", observed=p.observed, expected="refused or hidden", evidence=ev
        )
    if p.exposed is False:
        return passed(f"{what}: {p.observed}", observed=p.observed, evidence=ev)
    return errored(f"{what}: could not tell: {p.observed}", evidence=ev)


@cluster_check(
    "isolation.slurm-jobs-visible",
    title="This user cannot see other users' jobs",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale="Seen from an ordinary account, other tenants' job names, commands and paths are a leak (ClusterMAX found testers could see other customers' jobs).",
    remediation="Set PrivateData=jobs (with usage,users,accounts) in slurm.conf.",
    cluster_needs=("slurm",),
    profiles=("security", "isolation"),
    references=(_SLURM_CONF,),
)
def jobs_visible(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    s = _s(snapshot)
    q = _probe(s, "squeue-other-users")
    detail = _probe(s, "scontrol-other-jobs")
    private = "jobs" in (s.setting("PrivateData") or "").lower()
    if q is not None and q.exposed:
        extra = f"; {detail.observed}" if detail is not None else ""
        return failed(
            f"squeue shows other users' jobs: {q.observed}{extra}",
            observed=q.observed,
            evidence={"method": q.method},
        )
    if q is not None and q.error:
        return errored(f"squeue probe failed: {q.error}")
    if private:
        return passed(
            "no other user's job visible, and PrivateData hides jobs",
            observed=q.observed if q else None,
        )
    return failed(
        "no other user's job was running to look at, but PrivateData does not hide "
        "jobs: they would be visible",
        observed=q.observed if q else None,
        expected="PrivateData includes jobs",
    )


@cluster_check(
    "isolation.slurm-accounting-visible",
    title="This user cannot read other users' accounting",
    criterion=Criterion.SECURITY,
    severity=Severity.MEDIUM,
    rationale="sacct -a shows every tenant's job history (names, sizes, times) unless slurmdbd's PrivateData hides it.",
    remediation="Set PrivateData=accounts,jobs,usage,users in slurmdbd.conf too.",
    cluster_needs=("slurm",),
    profiles=("security", "isolation"),
    references=("https://slurm.schedmd.com/slurmdbd.conf.html",),
)
def accounting_visible(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    s = _s(snapshot)
    p = _probe(s, "sacct-other-users")
    if p is None:
        return skipped("the sacct probe was not run")
    if p.error:
        return skipped(f"no accounting to read ({p.observed})")
    if p.exposed:
        return failed(f"sacct -a: {p.observed}", observed=p.observed, evidence={"method": p.method})
    if (
        "usage" in (s.setting("PrivateData") or "").lower()
        or "jobs" in (s.setting("PrivateData") or "").lower()
    ):
        return passed(f"sacct -a: {p.observed}; PrivateData restricts it", observed=p.observed)
    return warned(
        f"sacct -a: {p.observed}, but nothing restricts it once others run jobs",
        observed=p.observed,
        expected="PrivateData in slurmdbd.conf",
    )


@cluster_check(
    "isolation.ssh-without-allocation",
    title="Nodes refuse SSH from users without a job there",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale="SSH to a compute node without an allocation bypasses the scheduler: a user can run on, and watch, nodes that are another tenant's. pam_slurm_adopt refuses such logins.",
    remediation="Enable pam_slurm_adopt on the nodes (PrologFlags=contain).",
    cluster_needs=("slurm",),
    profiles=("security", "isolation"),
    references=("https://slurm.schedmd.com/pam_slurm_adopt.html",),
)
def ssh_without_allocation(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    return _probe_finding(_probe(_s(snapshot), "ssh-without-allocation"), "SSH without a job")


@cluster_check(
    "isolation.slurm-tmp-shared",
    title="One job cannot see another job's /tmp files",
    criterion=Criterion.SECURITY,
    severity=Severity.MEDIUM,
    rationale="Probed, not assumed: two consecutive jobs on one node, the second looking for the first one's /tmp file.",
    remediation="Set JobContainerType=job_container/tmpfs (25.11: NamespaceType) so each job gets its own /tmp.",
    cluster_needs=("slurm",),
    profiles=("security", "isolation"),
    references=("https://slurm.schedmd.com/job_container.conf.html",),
)
def tmp_shared(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    return _probe_finding(_probe(_s(snapshot), "tmp-shared-between-jobs"), "/tmp between jobs")


@cluster_check(
    "isolation.slurm-gpus-outside-allocation",
    title="A job sees only the GPUs it was allocated",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale="Without device cgroups a 1-GPU job can open every GPU on the node, including GPUs allocated to another tenant's job.",
    remediation="Set ConstrainDevices=yes in cgroup.conf (with TaskPlugin=task/cgroup).",
    cluster_needs=("slurm",),
    profiles=("security", "isolation"),
    references=(_CGROUP_CONF,),
)
def gpus_outside_allocation(snapshot: Snapshot, kb: KnowledgeBase) -> Finding:
    p = _probe(_s(snapshot), "gpus-outside-allocation")
    if p is None:
        return skipped("no node with GPUs in its GRES to probe")
    return _probe_finding(p, "GPUs in a 1-GPU job")
