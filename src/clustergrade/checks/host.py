"""Checks: the host basics (kernel, OS lifecycle, CPU, memory, PCIe links)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from clustergrade.checks.registry import check
from clustergrade.collect.pci import parse_link_speed
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

GPU_KINDS = ("nvidia-gpu", "amd-gpu")
LINK_KINDS = ("nvidia-gpu", "amd-gpu", "mellanox-nic")

#: Taints that say the kernel saw a fault.  Proprietary (P), out-of-tree (O)
#: and unsigned (E) modules are what the NVIDIA driver itself sets, so they
#: alone are expected on a GPU node.
BAD_TAINTS = {
    "M": "machine check",
    "B": "bad page",
    "D": "kernel died (oops/BUG)",
    "W": "kernel warning",
    "L": "soft lockup",
}


# ---------------------------------------------------------------------------
# host.kernel-reboot-pending
# ---------------------------------------------------------------------------

_FLAVOR_RE = re.compile(r"-([a-z][a-z0-9]*)$")


def kernel_flavor(release: str) -> str:
    """The flavour suffix of a release ("generic" in 6.8.0-90-generic), or ""."""
    m = _FLAVOR_RE.search(release)
    return m.group(1) if m else ""


def release_key(release: str) -> tuple[tuple[int, int | str], ...]:
    """A natural sort key: numbers compare as numbers, text as text."""
    parts = re.findall(r"[0-9]+|[a-z]+", release.lower())
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)


@check(
    "host.kernel-reboot-pending",
    title="The newest installed kernel is the one running",
    criterion=Criterion.SECURITY,
    severity=Severity.MEDIUM,
    rationale=(
        "Kernel security fixes take effect only after a reboot: a node that installed a "
        "newer kernel but still runs the old one stays exposed to what the update fixed."
    ),
    remediation="Drain the node and reboot it into the newest installed kernel.",
    needs=("kernel",),
    profiles=("security", "isolation"),
)
def kernel_reboot_pending(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    k = facts.kernel
    assert k is not None
    if not k.release:
        return errored("the running kernel release could not be read")
    images = [i.release for i in k.installed if "/boot" in i.sources]
    if not images:
        return skipped("no kernel images in /boot to compare (container, netboot or image-based)")
    flavor = kernel_flavor(k.release)
    running = release_key(k.release)
    newer = sorted(
        (r for r in images if kernel_flavor(r) == flavor and release_key(r) > running),
        key=release_key,
    )
    if newer:
        return warned(
            f"kernel {newer[-1]} is installed but {k.release} is running",
            observed=k.release,
            expected=newer[-1],
            evidence={"installed": images},
        )
    return passed(
        f"running {k.release}, the newest installed {flavor or 'kernel'}",
        observed=k.release,
        evidence={"installed": images},
    )


# ---------------------------------------------------------------------------
# host.kernel-tainted
# ---------------------------------------------------------------------------


@check(
    "host.kernel-tainted",
    title="The kernel has not recorded a fault taint",
    criterion=Criterion.RELIABILITY,
    severity=Severity.MEDIUM,
    rationale=(
        "The kernel sets a taint bit when it hits a machine check, a bad page, an oops, a "
        "warning or a soft lockup; the bit stays until reboot, so it marks a node that has "
        "already misbehaved. Module taints (P, O, E) are normal with the NVIDIA driver."
    ),
    remediation=(
        "Read the kernel log for the event (dmesg / journalctl -k), fix or replace the "
        "faulty part, then reboot to clear the taint."
    ),
    needs=("kernel",),
    profiles=("hardware",),
    references=("https://docs.kernel.org/admin-guide/tainted-kernels.html",),
)
def kernel_tainted(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    k = facts.kernel
    assert k is not None
    if k.tainted is None:
        return errored("/proc/sys/kernel/tainted could not be read")
    bad = [f for f in k.taint_flags if f in BAD_TAINTS]
    flags = "".join(k.taint_flags) or "none"
    if bad:
        what = ", ".join(f"{f} ({BAD_TAINTS[f]})" for f in bad)
        return warned(
            f"kernel tainted with {what}",
            observed=flags,
            expected="no fault taints",
            evidence={"tainted": k.tainted},
        )
    return passed(f"no fault taints (flags: {flags})", observed=flags)


# ---------------------------------------------------------------------------
# host.unprivileged-userns
# ---------------------------------------------------------------------------


@check(
    "host.unprivileged-userns",
    title="Unprivileged user namespaces are restricted",
    criterion=Criterion.SECURITY,
    severity=Severity.MEDIUM,
    rationale=(
        "Many kernel privilege escalations (nf_tables CVE-2024-1086, OverlayFS "
        "CVE-2023-0386) are reachable only from an unprivileged user namespace. Rootless "
        "container tools (enroot, Apptainer) rely on them, so this is a trade-off to make "
        "knowingly, not a default to inherit."
    ),
    remediation=(
        "Restrict them where no rootless runtime needs them: "
        "kernel.apparmor_restrict_unprivileged_userns=1 (Ubuntu), "
        "kernel.unprivileged_userns_clone=0 (Debian), or user.max_user_namespaces=0; "
        "otherwise keep the kernel patched promptly."
    ),
    needs=("kernel",),
    profiles=("security", "isolation"),
    references=("https://nvd.nist.gov/vuln/detail/CVE-2024-1086",),
)
def unprivileged_userns(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    k = facts.kernel
    assert k is not None
    knobs = {
        "user.max_user_namespaces": k.max_user_namespaces,
        "kernel.unprivileged_userns_clone": k.unprivileged_userns_clone,
        "kernel.apparmor_restrict_unprivileged_userns": k.apparmor_restrict_unprivileged_userns,
    }
    if k.max_user_namespaces == 0:
        return passed("user namespaces are disabled (user.max_user_namespaces=0)", evidence=knobs)
    if k.unprivileged_userns_clone == 0:
        return passed(
            "unprivileged user namespaces are off (unprivileged_userns_clone=0)", evidence=knobs
        )
    if k.apparmor_restrict_unprivileged_userns == 1:
        return passed("AppArmor restricts unprivileged user namespaces", evidence=knobs)
    if k.max_user_namespaces is None:
        return errored("user.max_user_namespaces could not be read", evidence=knobs)
    return warned(
        "unprivileged users can create user namespaces",
        observed=knobs,
        expected="restricted, or a documented need for rootless containers",
        evidence=knobs,
    )


# ---------------------------------------------------------------------------
# host.swap
# ---------------------------------------------------------------------------


@check(
    "host.swap",
    title="No swap on a GPU node",
    criterion=Criterion.RELIABILITY,
    severity=Severity.LOW,
    rationale=(
        "A GPU job that spills host memory to swap stalls its data pipeline instead of "
        "failing fast, and the kubelet refuses to start on a node with swap unless it is "
        "configured for it (failSwapOn)."
    ),
    remediation="Disable swap (swapoff -a and remove it from /etc/fstab) on GPU nodes.",
    needs=("memory",),
    profiles=("hardware",),
    references=("https://kubernetes.io/docs/reference/config-api/kubelet-config.v1beta1/",),
)
def swap(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    m = facts.memory
    assert m is not None
    if facts.pci is not None and not facts.pci.of_kind(*GPU_KINDS):
        return skipped("no GPU on the PCI bus: not a GPU node")
    if m.swap_total_kb is None:
        return errored("SwapTotal not found in /proc/meminfo")
    if m.swap_total_kb > 0:
        return warned(
            f"{m.swap_total_kb // 1024} MiB of swap configured",
            observed=m.swap_total_kb,
            expected=0,
        )
    return passed("no swap configured", observed=0)


# ---------------------------------------------------------------------------
# host.cpu-governor
# ---------------------------------------------------------------------------


@check(
    "host.cpu-governor",
    title="CPU frequency governor is 'performance'",
    criterion=Criterion.RELIABILITY,
    severity=Severity.LOW,
    rationale=(
        "Power-saving governors ramp clocks up only under sustained load, adding latency to "
        "the host-side work (kernel launches, data loading, NCCL proxies) that feeds GPUs."
    ),
    remediation="Set the governor to performance (cpupower frequency-set -g performance).",
    needs=("cpu",),
    profiles=("hardware",),
    references=("https://docs.kernel.org/admin-guide/pm/cpufreq.html",),
)
def cpu_governor(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    c = facts.cpu
    assert c is not None
    if c.hypervisor:
        return skipped("virtual machine: the host, not the guest, sets CPU frequency")
    if not c.cpufreq_present or not c.governors:
        return skipped("no cpufreq interface (frequency managed by firmware or hypervisor)")
    others = {g: n for g, n in c.governors.items() if g != "performance"}
    if others:
        return warned(
            "CPUs not on the performance governor: "
            + ", ".join(f"{n} on {g}" for g, n in sorted(others.items())),
            observed=c.governors,
            expected="performance",
        )
    return passed("every CPU uses the performance governor", observed=c.governors)


# ---------------------------------------------------------------------------
# host.numa-balanced
# ---------------------------------------------------------------------------

#: A node with less than this share of the largest node's memory is uneven.
NUMA_MIN_RATIO = 0.5


@check(
    "host.numa-balanced",
    title="Memory is spread evenly across NUMA nodes",
    criterion=Criterion.RELIABILITY,
    severity=Severity.LOW,
    rationale=(
        "A NUMA node with much less memory than its peers usually means a failed or "
        "missing DIMM; jobs bound to that socket's GPUs then run short of local memory."
    ),
    remediation="Check DIMM population and the BMC's memory event log for the small node.",
    needs=("memory",),
    profiles=("hardware",),
)
def numa_balanced(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    m = facts.memory
    assert m is not None
    # Memory-only nodes (GPU HBM on Grace Hopper, CXL) are meant to differ.
    nodes = [n for n in m.numa_nodes if n.cpus != 0 and n.mem_total_kb]
    if len(nodes) < 2:
        return skipped("fewer than two NUMA nodes with CPUs and memory")
    sizes = {f"node{n.node}": n.mem_total_kb or 0 for n in nodes}
    largest = max(sizes.values())
    small = {k: v for k, v in sizes.items() if v < NUMA_MIN_RATIO * largest}
    if small:
        return warned(
            "NUMA node memory is uneven: "
            + ", ".join(f"{k} has {v // 1024} MiB" for k, v in sorted(small.items()))
            + f" against {largest // 1024} MiB",
            observed=sizes,
            expected=f"each node at least {int(NUMA_MIN_RATIO * 100)}% of the largest",
        )
    return passed(f"{len(nodes)} NUMA nodes with even memory", observed=sizes)


# ---------------------------------------------------------------------------
# host.os-supported
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class OsSupport:
    id: str
    version_id: str
    #: Last day of security updates without a paid extension.
    ends: date
    what: str
    source: str


#: Only dates read on the vendor's own pages; a release not listed is SKIP.
OS_SUPPORT: tuple[OsSupport, ...] = (
    OsSupport(
        "ubuntu",
        "18.04",
        date(2023, 5, 31),
        "standard support (ESM with Ubuntu Pro)",
        "https://ubuntu.com/about/release-cycle",
    ),
    OsSupport(
        "ubuntu",
        "20.04",
        date(2025, 5, 31),
        "standard support (ESM with Ubuntu Pro)",
        "https://ubuntu.com/about/release-cycle",
    ),
    OsSupport("debian", "10", date(2024, 6, 30), "Debian LTS", "https://wiki.debian.org/LTS"),
    OsSupport("debian", "11", date(2026, 8, 31), "Debian LTS", "https://wiki.debian.org/LTS"),
    OsSupport("debian", "12", date(2028, 6, 30), "Debian LTS", "https://wiki.debian.org/LTS"),
    OsSupport(
        "centos",
        "7",
        date(2024, 6, 30),
        "CentOS Linux 7 updates",
        "https://www.centos.org/centos-linux-eol/",
    ),
    OsSupport(
        "rhel",
        "7",
        date(2024, 6, 30),
        "RHEL 7 maintenance support (ELS paid)",
        "https://access.redhat.com/support/policy/updates/errata",
    ),
)


def os_support(os_id: str | None, version_id: str | None) -> OsSupport | None:
    if not os_id or not version_id:
        return None
    major = version_id.split(".")[0]
    for row in OS_SUPPORT:
        if row.id == os_id and row.version_id in (version_id, major):
            return row
    return None


@check(
    "host.os-supported",
    title="The OS release still gets security updates",
    criterion=Criterion.LIFECYCLE,
    severity=Severity.HIGH,
    rationale=(
        "A release past its end of support gets no more security fixes for the kernel or "
        "userland, so every later CVE stays open on the node."
    ),
    remediation="Upgrade to a supported release, or buy the vendor's extended support.",
    needs=("os",),
    profiles=("security", "software"),
    references=tuple(sorted({r.source for r in OS_SUPPORT})),
)
def os_supported(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    o = facts.os
    assert o is not None
    if not o.os_release_present:
        return errored("/etc/os-release could not be read")
    name = o.pretty_name or f"{o.id} {o.version_id}"
    row = os_support(o.id, o.version_id)
    if row is None:
        return skipped(f"{name}: not in the bundled support table")
    today = facts.collected_at.date()
    evidence = {"ends": row.ends.isoformat(), "source": row.source}
    if today > row.ends:
        return warned(
            f"{name}: {row.what} ended {row.ends.isoformat()}",
            observed=name,
            expected=f"supported release ({row.source})",
            evidence=evidence,
        )
    return passed(
        f"{name}: {row.what} until {row.ends.isoformat()}", observed=name, evidence=evidence
    )


# ---------------------------------------------------------------------------
# pci.link-degraded
# ---------------------------------------------------------------------------


@check(
    "pci.link-degraded",
    title="GPU and NIC PCIe links run at full width",
    criterion=Criterion.RELIABILITY,
    severity=Severity.HIGH,
    rationale=(
        "A link that trained narrower than it can (x8 instead of x16) halves host-device "
        "and GPUDirect bandwidth and usually means a bad riser, cable or seating. A lower "
        "speed alone is often idle power saving, so it is only a warning."
    ),
    remediation=(
        "Reseat or replace the card, riser or cable; check the slot's BIOS bifurcation "
        "setting. Re-check a low speed under load before acting on it."
    ),
    needs=("pci",),
    profiles=("hardware",),
)
def link_degraded(facts: NodeFacts, kb: KnowledgeBase) -> Iterator[Finding]:
    p = facts.pci
    assert p is not None
    devices = p.of_kind(*LINK_KINDS)
    if not devices:
        yield skipped("no GPU or Mellanox NIC on the PCI bus")
        return
    for d in devices:
        subject = f"{d.kind} {d.address}"
        cur_w, max_w = d.current_link_width, d.max_link_width
        cur_s, max_s = parse_link_speed(d.current_link_speed), parse_link_speed(d.max_link_speed)
        observed = {
            "width": cur_w,
            "max_width": max_w,
            "speed": d.current_link_speed,
            "max_speed": d.max_link_speed,
        }
        if cur_w is None or max_w is None or max_w == 0:
            yield errored("link width not reported in sysfs", subject=subject, observed=observed)
        elif cur_w < max_w:
            yield failed(
                f"link x{cur_w} of x{max_w}",
                observed=f"x{cur_w}",
                expected=f"x{max_w}",
                subject=subject,
                evidence=observed,
            )
        elif cur_s is not None and max_s is not None and cur_s < max_s:
            yield warned(
                f"link at {d.current_link_speed} of {d.max_link_speed} (idle downshift?)",
                observed=d.current_link_speed,
                expected=d.max_link_speed,
                subject=subject,
                evidence=observed,
            )
        else:
            yield passed(
                f"x{cur_w} at {d.current_link_speed or 'unknown speed'}",
                subject=subject,
                observed=observed,
            )
