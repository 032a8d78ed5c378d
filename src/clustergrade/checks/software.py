"""Checks and version observers: CUDA stack, container stack, monitoring.

"GPU node" means the nvidia section reports GPUs.  NvidiaFacts belongs to the
GPU area, so it is read defensively (``gpu_count`` or the GPU list) and a node
without GPUs is SKIPped, never failed: a CPU node or a GPU-less container
does not need NCCL or DCGM.
"""

from __future__ import annotations

from clustergrade.checks.registry import check
from clustergrade.checks.versions import Observed, observer
from clustergrade.facts.base import Tool
from clustergrade.facts.node import NodeFacts
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
from clustergrade.versions import parse

#: First CTK release with the CVE-2025-23266/23267 fixes (NVIDIA bulletin 5659).
CTK_COMPAT_HOOK_FIXED = "1.17.8"


def gpu_count(node: NodeFacts) -> int:
    nv = node.nvidia
    if nv is None:
        return 0
    count = getattr(nv, "gpu_count", None)
    if isinstance(count, int) and count > 0:
        return count
    return len(getattr(nv, "gpus", []) or [])


def _no_gpu(node: NodeFacts) -> Finding | None:
    if gpu_count(node) == 0:
        return skipped("no NVIDIA GPU on this node")
    return None


def _seen(tool: Tool, subject: str | None = None) -> list[Observed]:
    if not tool.installed:
        return []
    return [Observed(tool.version, subject=subject or tool.name, source=tool.source)]


# --------------------------------------------------------------------------
# Version observers (component names are the KB's file names)
# --------------------------------------------------------------------------


@observer("nvidia-container-toolkit", needs=("containers",))
def observe_ctk(node: NodeFacts) -> list[Observed]:
    c = node.containers
    if c is None:
        return []
    tool = c.nvidia_ctk if c.nvidia_ctk.installed else c.nvidia_container_cli
    return _seen(tool, "nvidia-container-toolkit")


@observer("cuda-toolkit", needs=("cuda",))
def observe_cuda(node: NodeFacts) -> list[Observed]:
    return _seen(node.cuda.cuda) if node.cuda else []


@observer("runc", needs=("containers",))
def observe_runc(node: NodeFacts) -> list[Observed]:
    return _seen(node.containers.runc) if node.containers else []


@observer("containerd", needs=("containers",))
def observe_containerd(node: NodeFacts) -> list[Observed]:
    return _seen(node.containers.containerd) if node.containers else []


@observer("docker", needs=("containers",))
def observe_docker(node: NodeFacts) -> list[Observed]:
    # The engine (dockerd) carries the daemon's CVEs; the client is the
    # fallback when only the CLI is installed.
    c = node.containers
    if c is None:
        return []
    return _seen(c.dockerd, "dockerd") if c.dockerd.installed else _seen(c.docker, "docker")


@observer("dcgm", needs=("dcgm",))
def observe_dcgm(node: NodeFacts) -> list[Observed]:
    d = node.dcgm
    if d is None:
        return []
    return _seen(d.nv_hostengine if d.nv_hostengine.installed else d.dcgmi, "dcgm")


@observer("dcgm-exporter", needs=("dcgm",))
def observe_dcgm_exporter(node: NodeFacts) -> list[Observed]:
    """dcgm-exporter versions read '<first>-<second>' (3.3.5-3.4.0); the first
    part is observed, as the knowledge base's rules are written against it."""
    d = node.dcgm
    if d is None or not d.dcgm_exporter.installed:
        return []
    t = d.dcgm_exporter
    first = t.version.split("-", 1)[0] if t.version else None
    return [Observed(first, subject="dcgm-exporter", source=t.source)]


@observer("slurm", needs=("cuda",))
def observe_slurm(node: NodeFacts) -> list[Observed]:
    return _seen(node.cuda.slurm, "slurm (node)") if node.cuda else []


@observer("munge", needs=("cuda",))
def observe_munge(node: NodeFacts) -> list[Observed]:
    """The distribution package version (dpkg scheme) when known, because
    distros backport fixes; else the upstream version, which the dpkg scheme
    also reads."""
    s = node.cuda
    if s is None or not s.munge.installed:
        return []
    if s.munge_package:
        return [Observed(s.munge_package, subject="munge", source="package munge")]
    return _seen(s.munge, "munge")


# --------------------------------------------------------------------------
# Container security configuration
# --------------------------------------------------------------------------


def _ctk_installed(node: NodeFacts) -> bool:
    c = node.containers
    return c is not None and (c.nvidia_ctk.installed or c.nvidia_container_cli.installed)


@check(
    "containers.ctk-unprivileged-envvar",
    title="Unprivileged containers cannot pick GPUs with NVIDIA_VISIBLE_DEVICES",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale=(
        "With accept-nvidia-visible-devices-envvar-when-unprivileged = true, an "
        "unprivileged container can set NVIDIA_VISIBLE_DEVICES=all and reach every GPU "
        "on the node, including other tenants'."
    ),
    remediation=(
        "Set accept-nvidia-visible-devices-envvar-when-unprivileged = false in the CTK "
        "config.toml and hand out GPUs with volume mounts or CDI."
    ),
    needs=("containers",),
    profiles=("containers", "security"),
    references=("https://github.com/NVIDIA/nvidia-container-toolkit/issues/110",),
)
def ctk_unprivileged_envvar(node: NodeFacts, kb: KnowledgeBase) -> Finding:
    c = node.containers
    if c is None or not _ctk_installed(node):
        return skipped("NVIDIA Container Toolkit not installed")
    cfg = c.ctk_config
    key = "accept-nvidia-visible-devices-envvar-when-unprivileged"
    if cfg is None:
        return warned(
            f"no CTK config.toml; the toolkit's default for {key} is true",
            observed="default (true)",
            expected="false",
        )
    v = cfg.accept_envvar_unprivileged
    if v is True:
        return failed(f"{cfg.path} sets {key} = true", observed=True, expected=False)
    if v is None:
        return warned(
            f"{cfg.path} leaves {key} unset; the toolkit's default is true",
            observed="default (true)",
            expected="false",
        )
    return passed(f"{cfg.path} sets {key} = false", observed=False, expected=False)


@check(
    "containers.ctk-cuda-compat-hook",
    title="The CTK's CUDA compat hook is fixed or disabled (CVE-2025-23266)",
    criterion=Criterion.SECURITY,
    severity=Severity.CRITICAL,
    rationale=(
        "The enable-cuda-compat hook in NVIDIA Container Toolkit before 1.17.8 lets a "
        "crafted image run code with host privileges (CVE-2025-23266); disabling the hook "
        "is NVIDIA's mitigation until the toolkit is upgraded."
    ),
    remediation=(
        "Upgrade the NVIDIA Container Toolkit to 1.17.8 or later, or set "
        "features.disable-cuda-compat-lib-hook = true in the CTK config.toml."
    ),
    needs=("containers",),
    profiles=("containers", "security"),
    references=(
        "https://nvidia.custhelp.com/app/answers/detail/a_id/5659",
        "https://github.com/NVIDIA/nvidia-container-toolkit/pull/1055",
    ),
)
def ctk_cuda_compat_hook(node: NodeFacts, kb: KnowledgeBase) -> Finding:
    c = node.containers
    if c is None or not _ctk_installed(node):
        return skipped("NVIDIA Container Toolkit not installed")
    raw = c.nvidia_ctk.version if c.nvidia_ctk.installed else c.nvidia_container_cli.version
    v = parse("semver", raw)
    fixed = parse("semver", CTK_COMPAT_HOOK_FIXED)
    if v is None or fixed is None:
        return errored(f"cannot read the NVIDIA Container Toolkit version {raw!r}", observed=raw)
    if v >= fixed:
        return passed(
            f"NVIDIA Container Toolkit {raw} has the CVE-2025-23266 fix",
            observed=raw,
            expected=f">= {CTK_COMPAT_HOOK_FIXED}",
        )
    if c.ctk_config is not None and c.ctk_config.disable_cuda_compat_lib_hook is True:
        return passed(
            f"NVIDIA Container Toolkit {raw} predates the fix but {c.ctk_config.path} "
            "disables the CUDA compat hook",
            observed=raw,
            expected="hook disabled",
        )
    return warned(
        f"NVIDIA Container Toolkit {raw} is below {CTK_COMPAT_HOOK_FIXED} and the CUDA "
        "compat hook is not disabled",
        observed=raw,
        expected=f">= {CTK_COMPAT_HOOK_FIXED} or features.disable-cuda-compat-lib-hook = true",
        advisories=["CVE-2025-23266"],
    )


@check(
    "containers.containerd-dir-perms",
    title="containerd's state directories are closed to other users (CVE-2024-25621)",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale=(
        "containerd before 1.7.29/2.0.7/2.1.5 created /var/lib/containerd and its CRI and "
        "shim directories with permissions other users could traverse, a local privilege "
        "escalation path; upgrading does not tighten directories that already exist."
    ),
    remediation="Upgrade containerd and chmod 0700 the listed directories.",
    needs=("containers",),
    profiles=("containers", "security"),
    references=(
        "https://github.com/containerd/containerd/security/advisories/GHSA-pwhc-rpq9-4c8w",
    ),
)
def containerd_dir_perms(node: NodeFacts, kb: KnowledgeBase) -> list[Finding]:
    c = node.containers
    if c is None:
        return [skipped("container facts missing")]
    present = [d for d in c.containerd_dirs if d.exists]
    if not present:
        if c.containerd.installed:
            return [skipped("containerd installed but none of its state directories exist")]
        return [skipped("containerd not installed")]
    out = []
    for d in present:
        if d.mode is None:
            out.append(errored(f"cannot read the mode of {d.path}", subject=d.path))
        elif d.mode & 0o007:
            out.append(
                failed(
                    f"{d.path} is mode {d.mode:04o}: other users can reach it",
                    observed=f"{d.mode:04o}",
                    expected="0700",
                    subject=d.path,
                    advisories=["CVE-2024-25621"],
                )
            )
        else:
            out.append(
                passed(f"{d.path} is mode {d.mode:04o}", observed=f"{d.mode:04o}", subject=d.path)
            )
    return out


# --------------------------------------------------------------------------
# Presence on GPU nodes
# --------------------------------------------------------------------------

_GPU_NEEDS = ("nvidia",)


@check(
    "software.nccl-present",
    title="GPU node has NCCL",
    criterion=Criterion.ORCHESTRATION,
    severity=Severity.LOW,
    rationale="Multi-GPU and multi-node training needs NCCL on the node (or in every image).",
    remediation="Install libnccl2 matching the CUDA toolkit, or document that images bring it.",
    needs=("cuda", *_GPU_NEEDS),
    profiles=("software",),
)
def nccl_present(node: NodeFacts, kb: KnowledgeBase) -> Finding:
    if (skip := _no_gpu(node)) is not None:
        return skip
    assert node.cuda is not None
    t = node.cuda.nccl
    if t.installed:
        return passed(f"NCCL {t.version or '(version unknown)'} found", observed=t.version)
    return warned("no NCCL library on this GPU node", observed="absent", expected="NCCL")


@check(
    "software.cuda-toolkit-present",
    title="GPU node has a CUDA toolkit",
    criterion=Criterion.ORCHESTRATION,
    severity=Severity.LOW,
    rationale="Users compiling CUDA code on the node need nvcc; its absence is a usability gap.",
    remediation="Install the CUDA toolkit (or provide it as a module).",
    needs=("cuda", *_GPU_NEEDS),
    profiles=("software",),
)
def cuda_toolkit_present(node: NodeFacts, kb: KnowledgeBase) -> Finding:
    if (skip := _no_gpu(node)) is not None:
        return skip
    assert node.cuda is not None
    t = node.cuda.cuda
    if t.installed:
        return passed(f"CUDA toolkit {t.version or '(version unknown)'}", observed=t.version)
    return warned("no CUDA toolkit (nvcc) on this GPU node", observed="absent", expected="nvcc")


@check(
    "containers.runtime-present",
    title="GPU node has a container runtime",
    criterion=Criterion.ORCHESTRATION,
    severity=Severity.LOW,
    rationale="Most GPU workloads ship as containers; a node without a runtime cannot run them.",
    remediation="Install Docker/containerd with the NVIDIA Container Toolkit, or enroot+pyxis.",
    needs=("containers", *_GPU_NEEDS),
    profiles=("containers",),
)
def runtime_present(node: NodeFacts, kb: KnowledgeBase) -> Finding:
    if (skip := _no_gpu(node)) is not None:
        return skip
    c = node.containers
    assert c is not None
    names = [
        t.name
        for t in (c.docker, c.dockerd, c.containerd, c.runc, c.crun, c.enroot, c.apptainer)
        + (c.singularity,)
        if t.installed
    ]
    if names:
        return passed(f"container tooling found: {', '.join(names)}", observed=names)
    return warned("no container runtime, enroot or Apptainer on this GPU node", observed="none")


@check(
    "monitoring.dcgm-present",
    title="GPU node has DCGM",
    criterion=Criterion.MONITORING,
    severity=Severity.MEDIUM,
    rationale="DCGM provides GPU health watches and diagnostics that monitoring builds on.",
    remediation="Install datacenter-gpu-manager and run nv-hostengine.",
    needs=("dcgm", *_GPU_NEEDS),
    profiles=("monitoring",),
)
def dcgm_present(node: NodeFacts, kb: KnowledgeBase) -> Finding:
    if (skip := _no_gpu(node)) is not None:
        return skip
    d = node.dcgm
    assert d is not None
    for t in (d.nv_hostengine, d.dcgmi):
        if t.installed:
            return passed(f"DCGM {t.version or '(version unknown)'} ({t.name})", observed=t.version)
    return warned("no DCGM (dcgmi, nv-hostengine) on this GPU node", observed="absent")


@check(
    "monitoring.dcgm-exporter-present",
    title="GPU node has dcgm-exporter",
    criterion=Criterion.MONITORING,
    severity=Severity.LOW,
    rationale="Without an exporter, GPU metrics never reach the cluster's monitoring.",
    remediation="Run dcgm-exporter on the node (binary or container).",
    needs=("dcgm", *_GPU_NEEDS),
    profiles=("monitoring",),
)
def dcgm_exporter_present(node: NodeFacts, kb: KnowledgeBase) -> Finding:
    if (skip := _no_gpu(node)) is not None:
        return skip
    assert node.dcgm is not None
    t = node.dcgm.dcgm_exporter
    if t.installed:
        return passed(f"dcgm-exporter {t.version or '(version unknown)'}", observed=t.version)
    return warned(
        "no dcgm-exporter binary on this GPU node (a containerised exporter is not seen)",
        observed="absent",
    )


@check(
    "health.nhc-present",
    title="GPU node has LBNL Node Health Check",
    criterion=Criterion.RELIABILITY,
    severity=Severity.LOW,
    rationale="A health check run by the scheduler drains a broken node before jobs land on it.",
    remediation="Install NHC (/usr/sbin/nhc) and set HealthCheckProgram in slurm.conf.",
    needs=("dcgm", *_GPU_NEEDS),
    profiles=("health",),
)
def nhc_present(node: NodeFacts, kb: KnowledgeBase) -> Finding:
    if (skip := _no_gpu(node)) is not None:
        return skip
    assert node.dcgm is not None
    t = node.dcgm.nhc
    if t.installed:
        return passed(f"NHC {t.version or '(version unknown)'} at {t.path}", observed=t.version)
    return warned("no /usr/sbin/nhc on this GPU node", observed="absent")


@check(
    "software.essential-tools",
    title="The everyday tools users expect are installed",
    criterion=Criterion.ORCHESTRATION,
    severity=Severity.LOW,
    rationale=(
        "ClusterMAX's Slurm expectations list python, git, curl, wget, vim and nano as "
        "installed where users work; each missing one is a ticket and a lost hour on day one."
    ),
    remediation="Install the missing packages in the node image.",
    needs=("cuda",),
    profiles=("software",),
    references=("https://www.clustermax.ai/expectations/slurm",),
)
def essential_tools(node: NodeFacts, kb: KnowledgeBase) -> Finding:
    assert node.cuda is not None
    tools = node.cuda.essential_tools
    if not tools:
        return skipped("essential tools were not looked for (older snapshot)")
    missing = sorted(t for t, ok in tools.items() if not ok)
    if missing:
        return warned(f"missing: {', '.join(missing)}", observed=tools, expected="all installed")
    return passed(f"all of {', '.join(sorted(tools))} installed", observed=tools)
