"""Facts: the host basics -- OS, kernel, CPU, memory and PCI devices.

Values are kept as the node reported them (raw strings for versions and PCI
ids); judging happens in ``checks/host.py``.  ``None`` always means "could not
be found out", never "zero" or "off".
"""

from __future__ import annotations

from pydantic import Field

from clustergrade.facts.base import FactModel


class OsFacts(FactModel):
    """The distribution and the kind of machine it runs on."""

    #: /etc/os-release was found and parsed.
    os_release_present: bool = False
    id: str | None = None
    id_like: list[str] = Field(default_factory=list)
    version_id: str | None = None
    version_codename: str | None = None
    pretty_name: str | None = None
    hostname: str | None = None
    uptime_s: float | None = None
    #: Output of ``systemd-detect-virt`` ("none", "kvm", "docker", ...); None
    #: when the tool is missing or did not answer.
    detect_virt: str | None = None
    #: Container markers seen: "/.dockerenv", "/run/.containerenv", "cgroup:<hint>".
    container_hints: list[str] = Field(default_factory=list)
    dmi_sys_vendor: str | None = None
    dmi_product_name: str | None = None


class InstalledKernel(FactModel):
    """One kernel found on disk."""

    release: str
    #: Where it was seen: "/boot" (a vmlinuz-* image), "/lib/modules".
    sources: list[str] = Field(default_factory=list)


class KernelFacts(FactModel):
    """The running kernel, the ones installed beside it, taint and userns knobs."""

    release: str | None = None
    proc_version: str | None = None
    cmdline: str | None = None
    installed: list[InstalledKernel] = Field(default_factory=list)
    #: The distro package version of the running kernel (dpkg or rpm), as printed.
    package_version: str | None = None
    #: "dpkg" or "rpm": which tool answered ``package_version``.
    package_tool: str | None = None
    #: /proc/sys/kernel/tainted as a bit mask.
    tainted: int | None = None
    #: Taint letters in the kernel's order, e.g. ["P", "O", "E"].
    taint_flags: list[str] = Field(default_factory=list)
    max_user_namespaces: int | None = None
    #: Debian/Ubuntu's kernel.unprivileged_userns_clone; None when the kernel
    #: has no such knob.
    unprivileged_userns_clone: int | None = None
    #: Ubuntu's kernel.apparmor_restrict_unprivileged_userns; None when absent.
    apparmor_restrict_unprivileged_userns: int | None = None


class NumaNode(FactModel):
    node: int
    cpulist: str | None = None
    cpus: int | None = None
    mem_total_kb: int | None = None
    mem_free_kb: int | None = None


class CpuFacts(FactModel):
    """What /proc/cpuinfo and the cpufreq/NUMA sysfs trees say."""

    model_name: str | None = None
    vendor: str | None = None
    #: Logical CPUs (processor entries).
    threads: int | None = None
    #: Distinct physical packages; None when cpuinfo gives no physical id (VMs, Arm).
    sockets: int | None = None
    #: Distinct (physical id, core id) pairs; None when cpuinfo does not say.
    cores: int | None = None
    #: The few flags checks care about, when present on the first CPU.
    flags: list[str] = Field(default_factory=list)
    hypervisor: bool | None = None
    #: False when no CPU has a cpufreq directory (typical inside VMs).
    cpufreq_present: bool = False
    #: Governor -> number of CPUs using it.
    governors: dict[str, int] = Field(default_factory=dict)
    numa_nodes: list[NumaNode] = Field(default_factory=list)


class MemoryFacts(FactModel):
    """/proc/meminfo's headline numbers and per-NUMA-node totals."""

    mem_total_kb: int | None = None
    mem_available_kb: int | None = None
    swap_total_kb: int | None = None
    swap_free_kb: int | None = None
    hugepages_total: int | None = None
    hugepages_free: int | None = None
    hugepage_size_kb: int | None = None
    numa_nodes: list[NumaNode] = Field(default_factory=list)


class PciDevice(FactModel):
    """One function under /sys/bus/pci/devices."""

    address: str
    vendor: str | None = None
    device: str | None = None
    #: The 24-bit class code as sysfs prints it ("0x030200").
    pci_class: str | None = None
    #: The bound driver's name; None when no driver is bound.
    driver: str | None = None
    current_link_speed: str | None = None
    max_link_speed: str | None = None
    current_link_width: int | None = None
    max_link_width: int | None = None
    numa_node: int | None = None
    iommu_group: str | None = None
    #: "nvidia-gpu", "amd-gpu", "mellanox-nic", "nvme" or None.
    kind: str | None = None


class PciFacts(FactModel):
    """Every PCI function, plus counts of the kinds checks ask about."""

    devices: list[PciDevice] = Field(default_factory=list)

    def of_kind(self, *kinds: str) -> list[PciDevice]:
        return [d for d in self.devices if d.kind in kinds]
