"""Collectors: node-side security and isolation (``security``, ``imex``,
``gpudirect``).

Read-only and unprivileged by design: nothing is opened for writing and no
device is opened at all; ``ctx.stat`` gives the mode and what access(2) says
for the audit's account.  The ``parse_*`` functions are pure and total over
their input type (hostile text gives empty or partial results, never an
exception).
"""

from __future__ import annotations

import re
import stat as statmod

from clustergrade.collect.base import CollectContext, collector
from clustergrade.facts.base import Tool
from clustergrade.facts.security import (
    DeviceNode,
    GpuDirectFacts,
    HostSecurityFacts,
    ImexFacts,
    NetInterface,
    PciAcs,
)

SMALL_READ = 64 * 1024
MAX_IOMMU_GROUP_SAMPLE = 64
MAX_PCI_DEVICES = 4096
MAX_MODPROBE_FILES = 128
MAX_NET_IFS = 512
MAX_CHANNELS = 4096
PCI_CONFIG_BYTES = 4096

CMDLINE_IOMMU_KEYS = ("iommu", "intel_iommu", "amd_iommu", "iommu.passthrough", "iommu.strict")
NESTED_PARAMS = {
    "kvm_intel": "/sys/module/kvm_intel/parameters/nested",
    "kvm_amd": "/sys/module/kvm_amd/parameters/nested",
}
#: In-band IPMI device names used by the ipmi_devintf driver across distros.
IPMI_PATHS = ("/dev/ipmi0", "/dev/ipmi/0", "/dev/ipmidev/0")
MUNGE_KEY = "/etc/munge/munge.key"
#: USB network drivers a BMC's Redfish host interface appears through (DMTF
#: DSP0270 uses a USB NIC; AMI and others expose it as CDC-ECM/RNDIS/NCM).
HOST_INTERFACE_DRIVERS = frozenset({"cdc_ether", "rndis_host", "cdc_ncm", "cdc_eem"})
#: Modules that decide the GPUDirect path.  nvidia_peermem is the legacy RDMA
#: path; dma-buf needs no module of its own, only the open nvidia.ko.
GPUDIRECT_MODULES = ("nvidia", "nvidia_peermem", "nv_peer_mem", "nvidia_fs", "gdrdrv")

IMEX_CHANNELS_DIR = "/dev/nvidia-caps-imex-channels"
IMEX_NODES_CONFIG = "/etc/nvidia-imex/nodes_config.cfg"

# PCIe extended capability id of ACS (PCIe base spec, "ACS Extended Capability").
_ACS_CAP_ID = 0x000D
_EXT_CAP_START = 0x100

_INT_RE = re.compile(r"-?[0-9]{1,18}")


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    m = _INT_RE.fullmatch(value.strip())
    return int(m.group(0)) if m else None


def _value(ctx: CollectContext, path: str) -> str | None:
    # Small reads: /proc/sys handlers refuse one huge read() with ENOMEM.
    res = ctx.read(path, limit=SMALL_READ)
    if res.content is not None:
        return (res.text or "").strip()
    if not res.missing:
        ctx.error(f"cannot read {path}: {res.error}", path=path)
    return None


def _node(ctx: CollectContext, path: str) -> DeviceNode:
    info = ctx.stat(path)
    if info.error and not info.exists:
        ctx.error(f"cannot stat {path}: {info.error}", path=path)
    return DeviceNode(
        path=path,
        exists=info.exists,
        perms=info.perms,
        uid=info.uid,
        gid=info.gid,
        is_char_device=info.is_char_device
        or (info.mode is not None and statmod.S_ISCHR(info.mode)),
        readable=info.readable,
        writable=info.writable,
    )


# ---------------------------------------------------------------------------
# Pure parsers
# ---------------------------------------------------------------------------


def parse_status_ids(text: str) -> dict[str, list[int]]:
    """Uid/Gid/Groups lines of /proc/<pid>/status as lists of ints."""
    out: dict[str, list[int]] = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        if sep and key in ("Uid", "Gid", "Groups"):
            nums = [_int(w) for w in rest.split()[:1024]]
            out[key] = [n for n in nums if n is not None and n >= 0]
    return out


def parse_cmdline_options(text: str, keys: tuple[str, ...] = CMDLINE_IOMMU_KEYS) -> dict[str, str]:
    """``key=value`` words of a kernel command line for ``keys`` (the last wins,
    as for the kernel); words after a lone ``--`` belong to init and are ignored."""
    out: dict[str, str] = {}
    for word in text.split():
        if word == "--":
            break
        key, sep, value = word.partition("=")
        if sep and key in keys:
            out[key] = value[:128]
    return out


def parse_nvidia_params(text: str) -> dict[str, str]:
    """``Name: value`` lines of /proc/driver/nvidia/params."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key = key.strip()
        if sep and re.fullmatch(r"[A-Za-z0-9_]{1,64}", key):
            out[key] = value.strip()[:256]
    return out


_RESTRICT_RE = re.compile(r"NVreg_RestrictProfilingToAdminUsers=([0-9]+)")


def parse_modprobe_restrict(text: str) -> list[int]:
    """Values of NVreg_RestrictProfilingToAdminUsers on non-comment ``options`` lines."""
    out: list[int] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line.startswith("options"):
            continue
        out.extend(int(m.group(1)[:9]) for m in _RESTRICT_RE.finditer(line))
    return out


def parse_proc_mount(text: str) -> str | None:
    """The options of the last procfs mount on /proc in /proc/mounts."""
    found = None
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[1] == "/proc" and parts[2] == "proc":
            found = parts[3][:512]
    return found


def hidepid_of(options: str | None) -> str | None:
    if not options:
        return None
    for opt in options.split(","):
        key, sep, value = opt.partition("=")
        if key == "hidepid" and sep:
            return value[:32]
    return None


def parse_modules(text: str) -> set[str]:
    """Module names (first word of each line) of /proc/modules."""
    names: set[str] = set()
    for line in text.splitlines():
        parts = line.split(maxsplit=1)
        if parts and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", parts[0]):
            names.add(parts[0])
    return names


def parse_nodes_config(text: str) -> int:
    """Node entries of nodes_config.cfg: one IP or hostname per non-comment line."""
    return sum(
        1 for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")
    )


def is_open_kernel_module(version_text: str) -> bool:
    # The open driver's banner says "Open Kernel Module"; the proprietary one
    # "NVIDIA UNIX x86_64 Kernel Module" (or "... aarch64 Kernel Module").
    return "Open Kernel Module" in version_text


def parse_acs(config: bytes) -> tuple[str, int | None, int | None]:
    """(state, ACS capability register, ACS control register) from a PCI
    config-space dump.  Fewer than 4096 bytes means the extended space was not
    readable (non-root sees 64 bytes), so the state is "unknown"."""
    if len(config) < PCI_CONFIG_BYTES:
        return "unknown", None, None
    offset = _EXT_CAP_START
    seen: set[int] = set()
    while offset and offset not in seen and _EXT_CAP_START <= offset <= PCI_CONFIG_BYTES - 8:
        seen.add(offset)
        header = int.from_bytes(config[offset : offset + 4], "little")
        if header in (0, 0xFFFFFFFF):
            break
        if header & 0xFFFF == _ACS_CAP_ID:
            cap = int.from_bytes(config[offset + 4 : offset + 6], "little")
            ctrl = int.from_bytes(config[offset + 6 : offset + 8], "little")
            return "present", cap, ctrl
        offset = (header >> 20) & 0xFFC
    return "absent", None, None


# ---------------------------------------------------------------------------
# Collectors
# ---------------------------------------------------------------------------


def _pcie_acs(ctx: CollectContext) -> list[PciAcs]:
    out: list[PciAcs] = []
    for addr in ctx.entries("/sys/bus/pci/devices")[:MAX_PCI_DEVICES]:
        base = f"/sys/bus/pci/devices/{addr}"
        cls = _value(ctx, f"{base}/class")
        # ACS is enforced at the downstream and root ports, which are bridges.
        if not cls or not cls.lower().startswith("0x0604"):
            continue
        res = ctx.read(f"{base}/config", limit=PCI_CONFIG_BYTES)
        if res.content is None:
            ctx.error(f"cannot read {base}/config: {res.error}", path=f"{base}/config")
            out.append(PciAcs(address=addr))
            continue
        state, cap, ctrl = parse_acs(res.content)
        out.append(
            PciAcs(
                address=addr,
                config_bytes=len(res.content),
                acs=state,
                capability=cap,
                control=ctrl,
            )
        )
    return out


def _host_interface_nics(ctx: CollectContext, names: tuple[str, ...]) -> list[NetInterface]:
    out: list[NetInterface] = []
    for name in names:
        link = ctx.stat(f"/sys/class/net/{name}/device/driver")
        driver = link.target.rstrip("/").rsplit("/", 1)[-1] if link.target else None
        if driver in HOST_INTERFACE_DRIVERS or name == "usb0" or name.startswith("enx"):
            out.append(
                NetInterface(
                    name=name, driver=driver, address=_value(ctx, f"/sys/class/net/{name}/address")
                )
            )
    return out


@collector("security")
def collect_security(ctx: CollectContext) -> HostSecurityFacts:
    ids: dict[str, list[int]] = {}
    status = ctx.read_text("/proc/self/status", required=True)
    if status is not None:
        ids = parse_status_ids(status)
    uids, gids = ids.get("Uid", []), ids.get("Gid", [])

    cmdline = _value(ctx, "/proc/cmdline") or ""
    groups_dir = ctx.listdir("/sys/kernel/iommu_groups")
    group_names = groups_dir.entries
    group_types: dict[str, int] = {}
    for g in (group_names or ())[:MAX_IOMMU_GROUP_SAMPLE]:
        t = _value(ctx, f"/sys/kernel/iommu_groups/{g}/type")
        if t:
            group_types[t[:32]] = group_types.get(t[:32], 0) + 1

    params_text = ctx.read_text("/proc/driver/nvidia/params")
    params = parse_nvidia_params(params_text) if params_text is not None else {}
    restrict: list[str] = []
    for name in ctx.entries("/etc/modprobe.d")[:MAX_MODPROBE_FILES]:
        if not name.endswith(".conf"):
            continue
        text = ctx.read_text(f"/etc/modprobe.d/{name}")
        for value in parse_modprobe_restrict(text or ""):
            restrict.append(f"/etc/modprobe.d/{name}: {value}")

    nested: dict[str, str] = {}
    for module, path in NESTED_PARAMS.items():
        v = _value(ctx, path)
        if v is not None:
            nested[module] = v[:8]

    kvm = _node(ctx, "/dev/kvm")
    ipmi = [n for n in (_node(ctx, p) for p in IPMI_PATHS) if n.exists]
    net = ctx.entries("/sys/class/net")[:MAX_NET_IFS]
    mounts = ctx.read_text("/proc/mounts")
    proc_opts = parse_proc_mount(mounts) if mounts is not None else None

    return HostSecurityFacts(
        uid=uids[0] if uids else None,
        euid=uids[1] if len(uids) > 1 else None,
        gid=gids[0] if gids else None,
        groups=ids.get("Groups", [])[:1024],
        iommu_units=list(ctx.entries("/sys/class/iommu")[:256]),
        iommu_groups=None if group_names is None else len(group_names),
        iommu_group_types=group_types,
        iommu_cmdline=parse_cmdline_options(cmdline),
        pcie_acs=_pcie_acs(ctx),
        perf_event_paranoid=_int(_value(ctx, "/proc/sys/kernel/perf_event_paranoid")),
        kptr_restrict=_int(_value(ctx, "/proc/sys/kernel/kptr_restrict")),
        dmesg_restrict=_int(_value(ctx, "/proc/sys/kernel/dmesg_restrict")),
        ptrace_scope=_int(_value(ctx, "/proc/sys/kernel/yama/ptrace_scope")),
        nvidia_params_present=params_text is not None,
        rm_profiling_admin_only=_int(params.get("RmProfilingAdminOnly")),
        modprobe_restrict_profiling=restrict,
        kvm=kvm,
        kvm_nested=nested,
        ipmi_devices=ipmi,
        host_interface_nics=_host_interface_nics(ctx, net),
        net_interfaces=list(net),
        proc_mount_options=proc_opts,
        proc_hidepid=hidepid_of(proc_opts),
        munge_key=_node(ctx, MUNGE_KEY),
    )


def _imex_version(text: str) -> str | None:
    m = re.search(r"([0-9]+\.[0-9]+(?:\.[0-9]+)*)", text)
    return m.group(1) if m else None


@collector("imex")
def collect_imex(ctx: CollectContext) -> ImexFacts:
    listing = ctx.listdir(IMEX_CHANNELS_DIR)
    channels = [
        _node(ctx, f"{IMEX_CHANNELS_DIR}/{name}") for name in (listing.entries or ())[:MAX_CHANNELS]
    ]
    if listing.entries is None and listing.error not in (
        None,
        "no such file",
        "No such file or directory",
    ):
        ctx.error(f"cannot list {IMEX_CHANNELS_DIR}: {listing.error}", path=IMEX_CHANNELS_DIR)
    cfg = ctx.read_text(IMEX_NODES_CONFIG)
    daemon: Tool = ctx.tool_version("nvidia-imex", ["nvidia-imex", "--version"], _imex_version)
    return ImexFacts(
        channels_dir_present=listing.entries is not None,
        channels=channels,
        nodes_config_present=cfg is not None,
        nodes_config_entries=None if cfg is None else parse_nodes_config(cfg),
        daemon=daemon,
    )


@collector("gpudirect")
def collect_gpudirect(ctx: CollectContext) -> GpuDirectFacts:
    modules_text = ctx.read_text("/proc/modules")
    known = modules_text is not None
    loaded = parse_modules(modules_text) if modules_text is not None else set()
    # /sys/module/<name> also exists for built-in modules and when /proc/modules
    # is missing (kernels built without module support still show built-ins).
    sys_modules = ctx.listdir("/sys/module")
    if sys_modules.entries is not None:
        known = True
        loaded |= set(sys_modules.entries) & set(GPUDIRECT_MODULES)
    version = ctx.read_text("/proc/driver/nvidia/version")
    first = version.strip().splitlines()[0][:512] if version and version.strip() else None
    gdr = _node(ctx, "/dev/gdrdrv")
    return GpuDirectFacts(
        modules_known=known,
        loaded_modules=sorted(m for m in loaded if m in GPUDIRECT_MODULES),
        gdrdrv_device=gdr,
        nvidia_version_line=first,
        open_kernel_module=None if version is None else is_open_kernel_module(version),
        kernel_release=_value(ctx, "/proc/sys/kernel/osrelease"),
    )
