"""Facts: node-side security and isolation (sections ``security``, ``imex``,
``gpudirect``).

Everything here is what the audit's own account could see.  Device modes and
"accessible" flags mean different things for root and for a tenant, so the
account is recorded beside them (``HostSecurityFacts.uid``/``euid``).
``None`` means "could not be found out", never "off" or "zero".
"""

from __future__ import annotations

from pydantic import Field

from clustergrade.facts.base import FactModel, Tool


class DeviceNode(FactModel):
    """A /dev node (or any path) as the audit's account sees it."""

    path: str
    exists: bool
    #: Permission bits only (0o666), not the file type.
    perms: int | None = None
    uid: int | None = None
    gid: int | None = None
    is_char_device: bool = False
    #: access(2) answers for the audit's account: for root these are nearly
    #: always true and say nothing about tenants.
    readable: bool = False
    writable: bool = False

    @property
    def world_rw(self) -> bool:
        return self.perms is not None and (self.perms & 0o006) == 0o006


class PciAcs(FactModel):
    """PCIe Access Control Services on one bridge, from its config space."""

    address: str
    #: Bytes of config space the account could read: 64 (or 256) for an
    #: ordinary user, 4096 for root on PCIe; extended capabilities need 4096.
    config_bytes: int | None = None
    #: "present", "absent", or "unknown" (extended config space not readable).
    acs: str = "unknown"
    capability: int | None = None
    control: int | None = None


class NetInterface(FactModel):
    """A network interface that may be a BMC's Redfish host interface."""

    name: str
    #: Basename of the bound driver ("cdc_ether"), None when not readable.
    driver: str | None = None
    address: str | None = None


class HostSecurityFacts(FactModel):
    """Kernel knobs, IOMMU state and exposed devices that bear on isolation."""

    #: From /proc/self/status: who the audit ran as.
    uid: int | None = None
    euid: int | None = None
    gid: int | None = None
    groups: list[int] = Field(default_factory=list)

    #: Entries under /sys/class/iommu (one per IOMMU unit: dmar0, ivhd0...).
    iommu_units: list[str] = Field(default_factory=list)
    #: Number of /sys/kernel/iommu_groups entries; None when not readable.
    iommu_groups: int | None = None
    #: Default domain type -> groups with it ("identity" = passthrough,
    #: "DMA"/"DMA-FQ" = translated), read from a bounded sample of groups.
    iommu_group_types: dict[str, int] = Field(default_factory=dict)
    #: iommu=, intel_iommu=, amd_iommu=, iommu.passthrough= from /proc/cmdline.
    iommu_cmdline: dict[str, str] = Field(default_factory=dict)
    #: ACS of PCI bridges (class 0x0604).
    pcie_acs: list[PciAcs] = Field(default_factory=list)

    perf_event_paranoid: int | None = None
    kptr_restrict: int | None = None
    dmesg_restrict: int | None = None
    #: Yama's ptrace_scope; None also when Yama is not built in.
    ptrace_scope: int | None = None

    #: /proc/driver/nvidia/params exists (the NVIDIA driver is loaded).
    nvidia_params_present: bool = False
    rm_profiling_admin_only: int | None = None
    #: "file: value" for NVreg_RestrictProfilingToAdminUsers in /etc/modprobe.d.
    modprobe_restrict_profiling: list[str] = Field(default_factory=list)

    kvm: DeviceNode | None = None
    #: Module -> value of its ``nested`` parameter ("Y", "1", "N", "0").
    kvm_nested: dict[str, str] = Field(default_factory=dict)
    ipmi_devices: list[DeviceNode] = Field(default_factory=list)
    #: Interfaces that look like a BMC host interface (USB NIC).
    host_interface_nics: list[NetInterface] = Field(default_factory=list)
    net_interfaces: list[str] = Field(default_factory=list)

    #: Options of the /proc mount; the hidepid= value when set.
    proc_mount_options: str | None = None
    proc_hidepid: str | None = None
    #: The MUNGE key: whoever reads it can forge credentials as any user.
    munge_key: DeviceNode | None = None

    @property
    def is_root(self) -> bool | None:
        return None if self.euid is None else self.euid == 0

    def viewpoint(self) -> str:
        """How a check should say whose view it saw."""
        if self.is_root is None:
            return "audit account unknown"
        return "seen as root" if self.is_root else f"seen as uid {self.euid} (not root)"


class ImexFacts(FactModel):
    """NVIDIA IMEX channels and daemon configuration."""

    channels_dir_present: bool = False
    channels: list[DeviceNode] = Field(default_factory=list)
    nodes_config_present: bool = False
    #: Non-comment, non-empty lines of nodes_config.cfg (one node address each).
    nodes_config_entries: int | None = None
    daemon: Tool | None = None


class GpuDirectFacts(FactModel):
    """Kernel pieces behind GPUDirect RDMA, GDS and GDRCopy."""

    #: /proc/modules (or /sys/module) could be read.
    modules_known: bool = False
    #: Of the modules that matter here, the ones loaded.
    loaded_modules: list[str] = Field(default_factory=list)
    gdrdrv_device: DeviceNode | None = None
    #: First line of /proc/driver/nvidia/version; None when absent.
    nvidia_version_line: str | None = None
    #: True: "Open Kernel Module"; False: proprietary; None: no driver seen.
    open_kernel_module: bool | None = None
    kernel_release: str | None = None

    @property
    def nvidia_driver(self) -> bool:
        return self.nvidia_version_line is not None or "nvidia" in self.loaded_modules
