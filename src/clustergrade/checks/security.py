"""Checks: node-side security and isolation (devices a tenant can reach,
kernel knobs, IOMMU, IMEX channels) and the GPUDirect kernel path.

Device modes mean different things for root and for a tenant: as an ordinary
user the access(2) answer is the tenant's view itself; as root it says nothing,
so the mode bits are judged instead.  Every message says which view it saw.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from clustergrade.checks.registry import check
from clustergrade.facts.security import DeviceNode, GpuDirectFacts, HostSecurityFacts
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

if TYPE_CHECKING:
    from clustergrade.facts.node import NodeFacts
    from clustergrade.kb.model import KnowledgeBase

_REF_CMAX = "https://www.clustermax.ai/criteria"
_REF_SYSCTL = "https://docs.kernel.org/admin-guide/sysctl/kernel.html"
_REF_PERMS = "https://developer.nvidia.com/nvidia-development-tools-solutions-ERR_NVGPUCTRPERM-permission-issue-performance-counters"
_REF_IMEX = "https://docs.nvidia.com/multi-node-nvlink-systems/imex-guide/"
_REF_GDR = "https://docs.nvidia.com/cuda/gpudirect-rdma/"
_REF_GDRCOPY = "https://github.com/NVIDIA/gdrcopy"
_REF_HI = "https://nvd.nist.gov/vuln/detail/CVE-2024-54085"

#: dma-buf based GPUDirect RDMA needs kernel 5.12 or newer (NVIDIA GPUDirect
#: RDMA guide, "Using dma-buf"), besides the open kernel module.
DMABUF_MIN_KERNEL = (5, 12)


def _sec(facts: NodeFacts) -> HostSecurityFacts:
    s = facts.security
    assert s is not None
    return s


def _gd(facts: NodeFacts) -> GpuDirectFacts:
    g = facts.gpudirect
    assert g is not None
    return g


def _mode(n: DeviceNode) -> str:
    perms = "?" if n.perms is None else oct(n.perms)[2:].zfill(4)
    return f"{n.path} mode {perms} uid {n.uid} gid {n.gid}"


def _tenant_exposure(n: DeviceNode, sec: HostSecurityFacts) -> str | None:
    """Why ordinary users can use ``n``, or None when they cannot (as far as
    this view shows).  Group access is only reported, not judged, when the
    group's members are unknown."""
    if sec.is_root is False:
        return "this ordinary account can open it" if n.readable and n.writable else None
    if n.world_rw:
        return "its mode lets every local user read and write it"
    return None


def _group_exposure(n: DeviceNode, sec: HostSecurityFacts) -> bool:
    # An ordinary account's own access answer is the tenant view; only root's
    # view leaves "who is in that group" open.
    if sec.is_root is False:
        return False
    return n.perms is not None and (n.perms & 0o060) == 0o060 and n.gid not in (None, 0)


def _virtualized(facts: NodeFacts) -> bool | None:
    if facts.os is not None and facts.os.detect_virt:
        return facts.os.detect_virt != "none"
    if facts.cpu is not None and facts.cpu.hypervisor is not None:
        return facts.cpu.hypervisor
    return None


# ---------------------------------------------------------------------------
# isolation.kvm-exposed
# ---------------------------------------------------------------------------


@check(
    "isolation.kvm-exposed",
    title="/dev/kvm and nested virtualization are not offered to tenants",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale=(
        "A tenant who can open /dev/kvm can run guests and reach the host kernel's KVM code, "
        "a large attack surface for guest-to-host escapes; nested virtualization widens it "
        "further. ClusterMAX's isolation profile checks both (its 'Januscape' item). systemd's "
        "default udev rule makes /dev/kvm mode 0666, so an exposed node is common."
    ),
    remediation=(
        'Make /dev/kvm root-only (a udev rule with MODE="0600" or a group with no tenants) '
        "on nodes that do not host VMs, and disable nested virtualization "
        "(options kvm_intel nested=0 / kvm_amd nested=0) where guests are not trusted."
    ),
    needs=("security",),
    profiles=("security", "isolation"),
    references=(_REF_CMAX, "https://docs.kernel.org/virt/kvm/x86/running-nested-guests.html"),
)
def kvm_exposed(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    sec = _sec(facts)
    kvm = sec.kvm
    view = sec.viewpoint()
    if kvm is None:
        return errored("/dev/kvm was not examined")
    nested = sorted(m for m, v in sec.kvm_nested.items() if v.upper() in ("Y", "1"))
    evidence = {"kvm": kvm.model_dump(), "nested": sec.kvm_nested, "viewpoint": view}
    if not kvm.exists:
        return passed(f"no /dev/kvm on this node ({view})", observed="absent", evidence=evidence)
    why = _tenant_exposure(kvm, sec)
    if why:
        extra = f"; nested virtualization is on ({', '.join(nested)})" if nested else ""
        return failed(
            f"/dev/kvm is usable by tenants: {why} ({_mode(kvm)}, {view}){extra}",
            observed=_mode(kvm),
            expected="root-only /dev/kvm",
            evidence=evidence,
        )
    if _group_exposure(kvm, sec):
        return warned(
            f"/dev/kvm is read-write for group {kvm.gid}; whether tenants are in it is not "
            f"known from here ({_mode(kvm)}, {view})",
            observed=_mode(kvm),
            expected="root-only /dev/kvm",
            evidence=evidence,
        )
    if nested:
        return warned(
            f"nested virtualization is enabled ({', '.join(nested)}): guests on this host can "
            f"run their own hypervisors ({view})",
            observed=sec.kvm_nested,
            expected="nested=N where guests are not trusted",
            evidence=evidence,
        )
    return passed(
        f"/dev/kvm is not open to tenants ({_mode(kvm)}, {view})",
        observed=_mode(kvm),
        evidence=evidence,
    )


# ---------------------------------------------------------------------------
# isolation.bmc-device
# ---------------------------------------------------------------------------


@check(
    "isolation.bmc-device",
    title="In-band IPMI devices are not open to tenants",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale=(
        "Whoever can open /dev/ipmi0 talks to the BMC without a password: they can add BMC "
        "users, change the network setup or flash firmware, and what they leave survives "
        "re-imaging and the next tenant (security-kb §3.6)."
    ),
    remediation=(
        "Keep /dev/ipmi* root-only (0600), unload ipmi_devintf where in-band IPMI is not "
        "needed, and do not give bare-metal tenants root on nodes whose BMC they must not control."
    ),
    needs=("security",),
    profiles=("security", "isolation"),
    references=(_REF_CMAX,),
)
def bmc_device(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    sec = _sec(facts)
    view = sec.viewpoint()
    devs = sec.ipmi_devices
    if not devs:
        return passed(f"no in-band IPMI device (/dev/ipmi*) ({view})", observed="absent")
    evidence = {"devices": [d.model_dump() for d in devs], "viewpoint": view}
    exposed = [(d, w) for d in devs if (w := _tenant_exposure(d, sec))]
    if exposed:
        d, why = exposed[0]
        return failed(
            f"{d.path} is usable by tenants: {why} ({_mode(d)}, {view})",
            observed=[_mode(x) for x in devs],
            expected="root-only IPMI device",
            evidence=evidence,
        )
    grouped = [d for d in devs if _group_exposure(d, sec)]
    if grouped:
        return warned(
            f"{grouped[0].path} is read-write for group {grouped[0].gid}; its members are not "
            f"known from here ({view})",
            observed=[_mode(x) for x in devs],
            expected="root-only IPMI device",
            evidence=evidence,
        )
    return passed(
        f"IPMI device present but root-only ({', '.join(_mode(d) for d in devs)}, {view}); "
        "anyone with root on this node still reaches the BMC",
        observed=[_mode(x) for x in devs],
        evidence=evidence,
    )


# ---------------------------------------------------------------------------
# isolation.redfish-host-interface
# ---------------------------------------------------------------------------


@check(
    "isolation.redfish-host-interface",
    title="No Redfish host interface (BMC USB NIC) is visible to the OS",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale=(
        "A Redfish host interface is a USB network link from the OS to the BMC. On AMI "
        "MegaRAC BMCs it is the path of CVE-2024-54085 (authentication bypass, CVSS 10, in "
        "CISA KEV), so anyone on the node may take over the BMC (security-kb §2.9, §3.6)."
    ),
    remediation=(
        "Disable the Redfish host interface in the BMC settings where it is not needed, or "
        "patch the BMC firmware (MegaRAC SPx 12.7 / 13.5 or later) and restrict it to root."
    ),
    needs=("security",),
    profiles=("security", "isolation"),
    references=(_REF_HI, "https://www.dmtf.org/dsp/DSP0270"),
)
def redfish_host_interface(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    sec = _sec(facts)
    if not sec.net_interfaces:
        return errored("no network interfaces could be listed under /sys/class/net")
    nics = sec.host_interface_nics
    if nics:
        desc = ", ".join(f"{n.name} (driver {n.driver or '?'}, {n.address or '?'})" for n in nics)
        return warned(
            f"USB network interface that looks like a BMC host interface: {desc}",
            observed=[n.model_dump() for n in nics],
            expected="no host interface",
            evidence={"interfaces": sec.net_interfaces},
            advisories=["CVE-2024-54085"],
        )
    return passed(
        f"no USB host-interface NIC among {len(sec.net_interfaces)} interfaces",
        observed=sec.net_interfaces,
    )


# ---------------------------------------------------------------------------
# isolation.imex-channel-shared
# ---------------------------------------------------------------------------


@check(
    "isolation.imex-channel-shared",
    title="IMEX channels are not shared by every user",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale=(
        "An IMEX channel lets processes on different nodes share GPU memory over NVLink. "
        "NVIDIA's example creates channel0 as 0666, so every user on the node is in one "
        "channel and can import another tenant's exported memory (security-kb §3.4). "
        "Per-job channels (Slurm switch/nvidia_imex, Kubernetes ComputeDomains) avoid that."
    ),
    remediation=(
        "Create IMEX channels per job with owner-only permissions (Slurm switch/nvidia_imex, "
        "k8s DRA ComputeDomains) instead of one world-accessible channel0."
    ),
    needs=("imex",),
    profiles=("security", "isolation"),
    references=(_REF_IMEX,),
)
def imex_channel_shared(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    imex = facts.imex
    assert imex is not None
    if not imex.channels_dir_present or not imex.channels:
        return skipped("no IMEX channels on this node (/dev/nvidia-caps-imex-channels)")
    shared = [c for c in imex.channels if c.world_rw]
    modes = [_mode(c) for c in imex.channels]
    evidence = {"nodes_config_entries": imex.nodes_config_entries}
    if shared:
        return failed(
            f"{len(shared)} of {len(imex.channels)} IMEX channel(s) are read-write for every "
            f"user ({_mode(shared[0])}): all users on the node share them",
            observed=modes,
            expected="per-job channels, not world read-write",
            evidence=evidence,
        )
    return passed(
        f"{len(imex.channels)} IMEX channel(s), none world read-write",
        observed=modes,
        evidence=evidence,
    )


# ---------------------------------------------------------------------------
# security.perf-event-paranoid / security.kptr-restrict
# ---------------------------------------------------------------------------


@check(
    "security.perf-event-paranoid",
    title="perf_event_paranoid lets users profile (<= 1)",
    criterion=Criterion.ORCHESTRATION,
    severity=Severity.LOW,
    rationale=(
        "ClusterMAX's software profile expects users to be able to run perf, i.e. "
        "kernel.perf_event_paranoid <= 1. This is a usability expectation: from a pure "
        "security view a higher value (2, or Debian's 3) is the safer one, because perf "
        "events have carried kernel bugs and side channels. It is graded here as ClusterMAX "
        "grades it, at low severity; root is not bound by the setting."
    ),
    remediation="sysctl -w kernel.perf_event_paranoid=1 (persist in /etc/sysctl.d) if users need perf.",
    needs=("security",),
    profiles=("software",),
    references=(_REF_CMAX, _REF_SYSCTL),
)
def perf_event_paranoid(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    sec = _sec(facts)
    v = sec.perf_event_paranoid
    if v is None:
        return skipped("kernel.perf_event_paranoid is not available (perf events not built in)")
    if v <= 1:
        return passed(
            f"kernel.perf_event_paranoid = {v}: users can profile", observed=v, expected="<= 1"
        )
    note = " (this audit ran as root, which is exempt)" if sec.is_root else ""
    return warned(
        f"kernel.perf_event_paranoid = {v}: ordinary users cannot profile with perf{note}",
        observed=v,
        expected="<= 1",
    )


@check(
    "security.kptr-restrict",
    title="kptr_restrict lets profilers resolve kernel symbols (= 0)",
    criterion=Criterion.ORCHESTRATION,
    severity=Severity.LOW,
    rationale=(
        "ClusterMAX's software profile expects kernel.kptr_restrict = 0 so perf can show "
        "kernel symbols. As with perf_event_paranoid this is a usability expectation: a "
        "non-zero value hides kernel addresses and makes exploits harder. Graded as "
        "ClusterMAX grades it, at low severity."
    ),
    remediation="sysctl -w kernel.kptr_restrict=0 (persist in /etc/sysctl.d) if users profile the kernel.",
    needs=("security",),
    profiles=("software",),
    references=(_REF_CMAX, _REF_SYSCTL),
)
def kptr_restrict(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    sec = _sec(facts)
    v = sec.kptr_restrict
    if v is None:
        return skipped("kernel.kptr_restrict is not available")
    if v == 0:
        return passed(
            "kernel.kptr_restrict = 0: kernel symbols visible to profilers", observed=v, expected=0
        )
    return warned(
        f"kernel.kptr_restrict = {v}: profilers see no kernel addresses ({sec.viewpoint()})",
        observed=v,
        expected=0,
    )


# ---------------------------------------------------------------------------
# security.nvidia-profiling-restricted
# ---------------------------------------------------------------------------


@check(
    "security.nvidia-profiling-restricted",
    title="GPU performance counters are open to users (Nsight without sudo)",
    criterion=Criterion.MONITORING,
    severity=Severity.LOW,
    rationale=(
        "With RmProfilingAdminOnly: 1 (NVreg_RestrictProfilingToAdminUsers=1, the driver's "
        "default) Nsight Compute and CUPTI counters fail with ERR_NVGPUCTRPERM for ordinary "
        "users. ClusterMAX expects 'Nsight Compute without sudo'. NVIDIA made the restriction "
        "the default after a counter side channel, so lifting it is a trade-off on shared nodes."
    ),
    remediation=(
        "options nvidia NVreg_RestrictProfilingToAdminUsers=0 in /etc/modprobe.d and reload "
        "the driver, on nodes allocated whole to one tenant."
    ),
    needs=("security",),
    profiles=("software",),
    references=(_REF_PERMS, _REF_CMAX),
)
def nvidia_profiling_restricted(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    sec = _sec(facts)
    if not sec.nvidia_params_present:
        return skipped("no NVIDIA driver loaded (/proc/driver/nvidia/params absent)")
    v = sec.rm_profiling_admin_only
    evidence = {"modprobe.d": sec.modprobe_restrict_profiling}
    if v is None:
        return errored("RmProfilingAdminOnly not found in /proc/driver/nvidia/params")
    if v == 0:
        return passed(
            "RmProfilingAdminOnly: 0: users can read GPU counters",
            observed=v,
            expected=0,
            evidence=evidence,
        )
    return warned(
        f"RmProfilingAdminOnly: {v}: only admins can profile the GPU (ncu/nsys need sudo)",
        observed=v,
        expected=0,
        evidence=evidence,
    )


# ---------------------------------------------------------------------------
# security.iommu
# ---------------------------------------------------------------------------


def iommu_mode(sec: HostSecurityFacts) -> str | None:
    """ "passthrough", "translated", "mixed", "off", or None (not known)."""
    cmd = sec.iommu_cmdline
    types = set(sec.iommu_group_types)
    if types:
        translated = {t for t in types if t.upper().startswith("DMA")}
        if translated and translated != types:
            return "mixed"
        return "translated" if translated else "passthrough" if types <= {"identity"} else "mixed"
    if sec.iommu_groups is None:
        return None
    if sec.iommu_groups == 0 and not sec.iommu_units:
        return "off"
    if cmd.get("iommu") == "pt" or cmd.get("iommu.passthrough") == "1":
        return "passthrough"
    return None


@check(
    "security.iommu",
    title="IOMMU is in passthrough (or off) for GPU peer-to-peer on bare metal",
    criterion=Criterion.NETWORKING,
    severity=Severity.MEDIUM,
    rationale=(
        "With the IOMMU translating every DMA, GPU-to-GPU and GPU-to-NIC peer traffic is "
        "routed through the root complex or fails, which cuts GPUDirect P2P/RDMA bandwidth. "
        "ClusterMAX's hardware profile expects IOMMU passthrough (iommu=pt) on bare metal. "
        "Inside a VM the host decides, so a VM without a virtual IOMMU is skipped."
    ),
    remediation="Boot with iommu=pt (and intel_iommu=on / amd_iommu=on where needed).",
    needs=("security",),
    profiles=("hardware",),
    references=(_REF_CMAX, "https://docs.kernel.org/admin-guide/kernel-parameters.html"),
)
def iommu(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    sec = _sec(facts)
    mode = iommu_mode(sec)
    virt = _virtualized(facts)
    evidence = {
        "units": sec.iommu_units,
        "groups": sec.iommu_groups,
        "group_types": sec.iommu_group_types,
        "cmdline": sec.iommu_cmdline,
        "virtualized": virt,
    }
    if virt and mode in (None, "off"):
        return skipped(
            "virtual machine without a virtual IOMMU: the host decides", evidence=evidence
        )
    if mode is None:
        return errored("IOMMU state could not be determined", evidence=evidence)
    if mode in ("translated", "mixed"):
        return warned(
            f"IOMMU is in {mode} DMA mode ({sec.iommu_group_types}): GPU peer-to-peer goes "
            "through translation",
            observed=mode,
            expected="passthrough",
            evidence=evidence,
        )
    note = "" if mode == "passthrough" else " (no DMA remapping, so also no DMA isolation)"
    return passed(f"IOMMU {mode}{note}", observed=mode, expected="passthrough", evidence=evidence)


# ---------------------------------------------------------------------------
# security.dmesg-restrict
# ---------------------------------------------------------------------------


@check(
    "security.dmesg-restrict",
    title="The kernel log is not readable by ordinary users",
    criterion=Criterion.SECURITY,
    severity=Severity.LOW,
    rationale=(
        "The kernel log holds kernel addresses, device and driver state and other tenants' "
        "events (Xids name processes); with dmesg_restrict = 0 any user can read it, which "
        "helps exploit writers and leaks across tenants."
    ),
    remediation="sysctl -w kernel.dmesg_restrict=1 (persist in /etc/sysctl.d).",
    needs=("security",),
    profiles=("security",),
    references=(_REF_SYSCTL,),
)
def dmesg_restrict(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    sec = _sec(facts)
    v = sec.dmesg_restrict
    if v is None:
        return skipped("kernel.dmesg_restrict is not available")
    if v == 0:
        return warned(
            "kernel.dmesg_restrict = 0: any user can read the kernel log", observed=v, expected=1
        )
    return passed(
        f"kernel.dmesg_restrict = {v}: kernel log for privileged users only", observed=v, expected=1
    )


@check(
    "security.proc-hidepid",
    title="Users cannot see other users' processes",
    criterion=Criterion.SECURITY,
    severity=Severity.MEDIUM,
    rationale=(
        "Without hidepid on /proc, every user can list every process on a shared login or "
        "compute node with its full command line and environment-derived paths: another "
        "tenant's job arguments, data paths and sometimes tokens passed as arguments."
    ),
    remediation="Mount /proc with hidepid=invisible (or hidepid=2) and a gid= for monitoring agents.",
    needs=("security",),
    profiles=("security", "isolation"),
    references=("https://docs.kernel.org/filesystems/proc.html",),
)
def proc_hidepid(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    sec = _sec(facts)
    if sec.proc_mount_options is None:
        return errored("the /proc mount options could not be read")
    hp = (sec.proc_hidepid or "").lower()
    if hp in ("2", "invisible", "1", "noaccess"):
        return passed(f"/proc is mounted with hidepid={hp}", observed=sec.proc_mount_options)
    return warned(
        "/proc has no hidepid: every user sees every process and its command line",
        observed=sec.proc_mount_options,
        expected="hidepid=invisible",
    )


@check(
    "security.ptrace-scope",
    title="Processes cannot attach to other processes they did not start",
    criterion=Criterion.SECURITY,
    severity=Severity.LOW,
    rationale=(
        "With Yama's ptrace_scope = 0, any process may ptrace every other process of the same "
        "user: one compromised tool reads the memory (keys, tokens) of all the user's others."
    ),
    remediation="sysctl -w kernel.yama.ptrace_scope=1 (persist in /etc/sysctl.d).",
    needs=("security",),
    profiles=("security",),
    references=("https://docs.kernel.org/admin-guide/LSM/Yama.html",),
)
def ptrace_scope(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    v = _sec(facts).ptrace_scope
    if v is None:
        return skipped("Yama is not built into this kernel (no kernel.yama.ptrace_scope)")
    if v == 0:
        return warned(
            "kernel.yama.ptrace_scope = 0: classic ptrace permissions", observed=v, expected=">= 1"
        )
    return passed(f"kernel.yama.ptrace_scope = {v}", observed=v, expected=">= 1")


@check(
    "security.munge-key",
    title="The MUNGE key is readable only by the munge account",
    criterion=Criterion.SECURITY,
    severity=Severity.CRITICAL,
    rationale=(
        "Anyone who can read munge.key can mint MUNGE credentials as any user, root included, "
        "and so submit jobs and talk to slurmd as them; it must be mode 0400 (or 0600) owned "
        "by munge."
    ),
    remediation="chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key",
    needs=("security",),
    profiles=("security", "isolation", "orchestration"),
    references=("https://github.com/dun/munge/wiki/Installation-Guide",),
)
def munge_key(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    sec = _sec(facts)
    key = sec.munge_key
    if key is None or not key.exists:
        return skipped("no /etc/munge/munge.key on this node (MUNGE not set up here)")
    if key.perms is None:
        return errored(f"cannot read the mode of {key.path}")
    if key.perms & 0o077:
        return failed(
            f"{_mode(key)}: group or other users can access the key",
            observed=oct(key.perms),
            expected="0400 or 0600, owner munge",
        )
    if sec.is_root is False and key.readable:
        return failed(
            f"{_mode(key)}: this ordinary account can read the key", observed=oct(key.perms)
        )
    return passed(f"{_mode(key)}", observed=oct(key.perms), expected="0400 or 0600")


# ---------------------------------------------------------------------------
# gpudirect.*
# ---------------------------------------------------------------------------


def _release_tuple(release: str | None) -> tuple[int, int] | None:
    m = re.match(r"([0-9]{1,4})\.([0-9]{1,4})", release or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def _no_driver(g: GpuDirectFacts) -> Finding | None:
    if not g.nvidia_driver:
        return skipped("no NVIDIA driver loaded (no /proc/driver/nvidia/version, no nvidia module)")
    return None


@check(
    "gpudirect.peermem-legacy",
    title="GPUDirect RDMA does not rely on nvidia_peermem alone",
    criterion=Criterion.NETWORKING,
    severity=Severity.MEDIUM,
    rationale=(
        "nvidia_peermem is the legacy GPUDirect RDMA path through the peer-memory kernel API; "
        "NVIDIA recommends dma-buf with the open kernel module instead. ClusterMAX: 'the "
        "deprecated nvidia_peermem alone does not pass'."
    ),
    remediation="Use the open NVIDIA kernel module (nvidia-open) so RDMA can use dma-buf.",
    needs=("gpudirect",),
    profiles=("hardware",),
    references=(_REF_GDR, _REF_CMAX),
)
def peermem_legacy(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    g = _gd(facts)
    skip = _no_driver(g)
    if skip:
        return skip
    peer = [m for m in g.loaded_modules if m in ("nvidia_peermem", "nv_peer_mem")]
    if peer and g.open_kernel_module is False:
        return warned(
            f"{', '.join(peer)} loaded with the proprietary kernel module: RDMA uses the legacy "
            "peer-memory path only",
            observed=g.loaded_modules,
            expected="dma-buf (open kernel module)",
            evidence={"version": g.nvidia_version_line},
        )
    if peer:
        return passed(
            f"{', '.join(peer)} loaded, but the open kernel module also offers dma-buf",
            observed=g.loaded_modules,
        )
    return passed("nvidia_peermem not loaded", observed=g.loaded_modules)


@check(
    "gpudirect.dmabuf",
    title="The NVIDIA driver can export GPU memory as dma-buf (open kernel module)",
    criterion=Criterion.NETWORKING,
    severity=Severity.MEDIUM,
    rationale=(
        "dma-buf GPUDirect RDMA needs the open NVIDIA kernel module and Linux 5.12 or newer; "
        "the proprietary module cannot export dma-bufs. ClusterMAX's Slurm expectations ask "
        "for 'GPUDirect RDMA through dma_buf with nvidia-open'."
    ),
    remediation="Install the open kernel module flavour of the driver (nvidia-open / -open packages).",
    needs=("gpudirect",),
    profiles=("hardware",),
    references=(_REF_GDR, _REF_CMAX),
)
def dmabuf(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    g = _gd(facts)
    skip = _no_driver(g)
    if skip:
        return skip
    if g.open_kernel_module is None:
        return errored("nvidia module loaded but /proc/driver/nvidia/version was not readable")
    if not g.open_kernel_module:
        return warned(
            "proprietary NVIDIA kernel module: no dma-buf export for GPUDirect RDMA",
            observed=g.nvidia_version_line,
            expected="Open Kernel Module",
        )
    rel = _release_tuple(g.kernel_release)
    if rel is None:
        return errored(f"kernel release {g.kernel_release!r} could not be parsed")
    if rel < DMABUF_MIN_KERNEL:
        return warned(
            f"open kernel module, but kernel {g.kernel_release} is older than 5.12 (no dma-buf RDMA)",
            observed=g.kernel_release,
            expected=">= 5.12",
        )
    return passed(
        f"open kernel module on kernel {g.kernel_release}: dma-buf available",
        observed=g.nvidia_version_line,
    )


@check(
    "gpudirect.gdrcopy",
    title="GDRCopy's kernel driver (gdrdrv) is loaded on GPU nodes",
    criterion=Criterion.NETWORKING,
    severity=Severity.LOW,
    rationale=(
        "GDRCopy lets the CPU map GPU memory for low-latency small copies; NCCL, UCX and "
        "NVSHMEM use it when gdrdrv is loaded. ClusterMAX's hardware profile checks for it."
    ),
    remediation="Install gdrcopy and load gdrdrv (modprobe gdrdrv), e.g. via the GPU Operator.",
    needs=("gpudirect",),
    profiles=("hardware",),
    references=(_REF_GDRCOPY, _REF_CMAX),
)
def gdrcopy(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    g = _gd(facts)
    skip = _no_driver(g)
    if skip:
        return skip
    dev = g.gdrdrv_device
    if "gdrdrv" in g.loaded_modules or (dev is not None and dev.exists):
        return passed("gdrdrv loaded", observed=g.loaded_modules)
    if not g.modules_known:
        return errored("loaded modules could not be read")
    return warned(
        "gdrdrv not loaded: GDRCopy unavailable", observed=g.loaded_modules, expected="gdrdrv"
    )
