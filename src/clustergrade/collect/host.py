"""Collectors: the host basics (os, kernel, cpu, memory, pci).

Everything is read through ``ctx``; the ``parse_*`` functions are pure and
total over ``str`` (hostile text gives empty or partial results, never an
exception other than :class:`HostParseError` where a caller asked for strict
parsing).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from clustergrade.collect.base import CollectContext, collector
from clustergrade.collect.pci import (
    classify,
    is_pci_address,
    norm_hex,
    parse_link_width,
    parse_numa_node,
)
from clustergrade.facts.host import (
    CpuFacts,
    InstalledKernel,
    KernelFacts,
    MemoryFacts,
    NumaNode,
    OsFacts,
    PciDevice,
    PciFacts,
)

CMD_TIMEOUT_S = 10.0
#: Bounds that keep facts small whatever a node (or a hostile capture) holds.
MAX_VALUE_CHARS = 512
MAX_CPULIST_CPUS = 1 << 16
MAX_PCI_DEVICES = 4096
MAX_KERNELS = 64

#: CPU flags worth keeping in the facts (the full list is ~150 words per CPU).
INTERESTING_FLAGS = frozenset(
    {"hypervisor", "vmx", "svm", "avx2", "avx512f", "amx_tile", "sev", "sev_snp", "tdx_guest"}
)

#: Kernel taint bits in order (Documentation/admin-guide/tainted-kernels.rst).
TAINT_LETTERS = "PFSRMBUDAWCIOELKXTNJ"

SYS_NODE = "/sys/devices/system/node"
SYS_CPU = "/sys/devices/system/cpu"
SYS_PCI = "/sys/bus/pci/devices"


_INT_RE = re.compile(r"-?[0-9]{1,18}")


class HostParseError(ValueError):
    """A value that had to be parsed strictly was not what the kernel prints."""


#: procfs sysctl files refuse reads with a buffer over a few MiB (ENOMEM), so
#: one-line values are read with a small limit.
SMALL_READ = 64 * 1024


def _read_value(ctx: CollectContext, path: str) -> str | None:
    """A one-line value, stripped; missing is silent, other failures an error."""
    res = ctx.read(path, limit=SMALL_READ)
    if res.content is not None:
        return (res.text or "").strip()
    if not res.missing:
        ctx.error(f"cannot read {path}: {res.error}", path=path)
    return None


def _clip(value: str | None, limit: int = MAX_VALUE_CHARS) -> str | None:
    if value is None:
        return None
    v = value.strip()
    return v[:limit] if v else None


def _int_or_none(value: str | None) -> int | None:
    if value is None:
        return None
    m = _INT_RE.fullmatch(value.strip())
    return int(m.group(0)) if m else None


# ---------------------------------------------------------------------------
# Pure parsers
# ---------------------------------------------------------------------------


def parse_os_release(text: str) -> dict[str, str]:
    """KEY=value lines of os-release(5); quotes and backslash escapes removed."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip()
        if not re.fullmatch(r"[A-Z0-9_]{1,64}", key):
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        value = re.sub(r"\\(.)", r"\1", value)
        out[key] = value[:MAX_VALUE_CHARS]
    return out


def parse_meminfo(text: str) -> dict[str, int]:
    """``Key: N [kB]`` lines (also ``Node 0 Key: N kB``) as {Key: N}."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        if not sep:
            continue
        key = re.sub(r"^Node\s+\d+\s+", "", key.strip())
        parts = rest.split()
        if not key or not parts:
            continue
        n = _int_or_none(parts[0])
        if n is not None and n >= 0:
            out[key[:64]] = n
    return out


def parse_cpulist(text: str) -> list[int]:
    """A sysfs cpulist ("0-3,8,10-11") as CPU numbers; malformed parts are skipped."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        a = _int_or_none(lo)
        b = _int_or_none(hi) if sep else a
        if a is None or b is None or a < 0 or b < a:
            continue
        if len(cpus) + (b - a + 1) > MAX_CPULIST_CPUS:
            break
        cpus.extend(range(a, b + 1))
    return cpus


@dataclass
class CpuInfo:
    model_name: str | None = None
    vendor: str | None = None
    threads: int = 0
    sockets: int | None = None
    cores: int | None = None
    flags: set[str] = field(default_factory=set)


def parse_cpuinfo(text: str) -> CpuInfo:
    """/proc/cpuinfo (x86 and Arm layouts): model, vendor, counts, a flag subset."""
    info = CpuInfo()
    packages: set[str] = set()
    cores: set[tuple[str, str]] = set()
    current: dict[str, str] = {}

    def flush() -> None:
        if "processor" not in current:
            return
        info.threads += 1
        if info.model_name is None:
            info.model_name = current.get("model name") or current.get("Model") or None
        if info.vendor is None:
            info.vendor = current.get("vendor_id") or current.get("CPU implementer") or None
        pid = current.get("physical id")
        if pid is not None:
            packages.add(pid)
            cid = current.get("core id")
            if cid is not None:
                cores.add((pid, cid))
        words = (current.get("flags") or current.get("Features") or "").split()
        info.flags.update(w for w in words if w in INTERESTING_FLAGS)

    for line in text.splitlines():
        if not line.strip():
            flush()
            current = {}
            continue
        key, sep, value = line.partition(":")
        if not sep:
            continue
        k = key.strip()
        if k == "processor" and "processor" in current:
            flush()
            current = {}
        current[k[:64]] = value.strip()[: MAX_VALUE_CHARS * 8]
    flush()
    if packages:
        info.sockets = len(packages)
    if cores:
        info.cores = len(cores)
    if info.model_name:
        info.model_name = info.model_name[:MAX_VALUE_CHARS]
    if info.vendor:
        info.vendor = info.vendor[:MAX_VALUE_CHARS]
    return info


def parse_taint(value: str) -> tuple[int, list[str]]:
    """/proc/sys/kernel/tainted: the mask and its letters; raises on non-numbers."""
    v = value.strip()
    if not re.fullmatch(r"[0-9]{1,20}", v):
        raise HostParseError(f"tainted is not a number: {v[:40]!r}")
    mask = int(v)
    letters = [c for i, c in enumerate(TAINT_LETTERS) if mask & (1 << i)]
    return mask, letters


def parse_cgroup_hints(text: str) -> list[str]:
    """Container runtimes named in /proc/1/cgroup paths."""
    hints: set[str] = set()
    for word in ("docker", "kubepods", "containerd", "libpod", "lxc", "crio"):
        if re.search(rf"[/:.\-]{word}\b", text):
            hints.add(f"cgroup:{word}")
    return sorted(hints)


def kernels_from_listings(boot: Iterable[str], modules: Iterable[str]) -> list[InstalledKernel]:
    """Installed kernels from /boot (vmlinuz-<rel>) and /lib/modules (<rel>)."""
    found: dict[str, list[str]] = {}
    for name in boot:
        if name.startswith("vmlinuz-") and len(name) > 8:
            rel = name[8:]
            if rel in ("rescue", "old") or rel.startswith("0-rescue-"):
                continue
            found.setdefault(rel[:MAX_VALUE_CHARS], []).append("/boot")
    for name in modules:
        if name and name[0].isdigit():
            found.setdefault(name[:MAX_VALUE_CHARS], []).append("/lib/modules")
    items = sorted(found.items())[:MAX_KERNELS]
    return [InstalledKernel(release=r, sources=s) for r, s in items]


# ---------------------------------------------------------------------------
# Collectors
# ---------------------------------------------------------------------------


def _command_text(ctx: CollectContext, argv: list[str]) -> tuple[bool, int | None, str]:
    """(installed, returncode, stdout) without judging the exit status; a
    timeout or OS error is a collector error."""
    res = ctx.run(argv, timeout=CMD_TIMEOUT_S)
    if res.not_found:
        return False, None, ""
    if not res.ran:
        ctx.error(res.describe(), argv=argv)
        return True, None, ""
    return True, res.returncode, res.text


@collector("os")
def collect_os(ctx: CollectContext) -> OsFacts:
    text = ctx.read_text("/etc/os-release")
    if text is None:
        text = ctx.read_text("/usr/lib/os-release")
    rel = parse_os_release(text) if text is not None else {}
    hints: list[str] = []
    for marker in ("/.dockerenv", "/run/.containerenv"):
        st = ctx.stat(marker)
        if st.exists:
            hints.append(marker)
        elif st.error:
            ctx.error(f"cannot stat {marker}: {st.error}", path=marker)
    cgroup = ctx.read_text("/proc/1/cgroup")
    if cgroup is not None:
        hints.extend(parse_cgroup_hints(cgroup))
    virt: str | None = None
    installed, rc, out = _command_text(ctx, ["systemd-detect-virt"])
    # It exits 1 while printing "none" on bare metal: the text is the answer.
    if installed and rc is not None:
        virt = _clip(out.splitlines()[0] if out.strip() else None)
    uptime: float | None = None
    up = _read_value(ctx, "/proc/uptime")
    if up:
        try:
            uptime = float(up.split()[0])
        except ValueError:
            ctx.error(f"unparseable /proc/uptime: {up[:40]!r}", path="/proc/uptime")
    return OsFacts(
        os_release_present=bool(rel),
        id=rel.get("ID"),
        id_like=rel.get("ID_LIKE", "").split()[:16],
        version_id=rel.get("VERSION_ID"),
        version_codename=rel.get("VERSION_CODENAME"),
        pretty_name=rel.get("PRETTY_NAME"),
        hostname=_clip(_read_value(ctx, "/proc/sys/kernel/hostname")),
        uptime_s=uptime,
        detect_virt=virt,
        container_hints=hints,
        dmi_sys_vendor=_clip(_read_value(ctx, "/sys/class/dmi/id/sys_vendor")),
        dmi_product_name=_clip(_read_value(ctx, "/sys/class/dmi/id/product_name")),
    )


def _package_version(ctx: CollectContext, release: str) -> tuple[str | None, str | None]:
    installed, rc, out = _command_text(
        ctx, ["dpkg-query", "-W", "-f=${Version}", f"linux-image-{release}"]
    )
    if installed:
        # Exit 1 with "no packages found": a kernel not installed from a package.
        return (_clip(out), "dpkg") if rc == 0 and out.strip() else (None, "dpkg")
    installed, rc, out = _command_text(
        ctx, ["rpm", "-q", "--qf", "%{VERSION}-%{RELEASE}.%{ARCH}\\n", "kernel-core", "kernel"]
    )
    if installed:
        for line in out.splitlines():
            if line.strip() == release:
                return release, "rpm"
        return None, "rpm"
    return None, None


@collector("kernel")
def collect_kernel(ctx: CollectContext) -> KernelFacts:
    release = _clip(_read_value(ctx, "/proc/sys/kernel/osrelease"))
    tainted: int | None = None
    letters: list[str] = []
    raw = _read_value(ctx, "/proc/sys/kernel/tainted")
    if raw is not None:
        try:
            tainted, letters = parse_taint(raw)
        except HostParseError as exc:
            ctx.error(str(exc), path="/proc/sys/kernel/tainted")
    boot = ctx.entries("/boot")
    modules = ctx.entries("/lib/modules")
    installed = kernels_from_listings(boot, modules)
    pkg, tool = _package_version(ctx, release) if release else (None, None)
    return KernelFacts(
        release=release,
        proc_version=_clip(_read_value(ctx, "/proc/version")),
        cmdline=_clip(_read_value(ctx, "/proc/cmdline"), 4096),
        installed=installed,
        package_version=pkg,
        package_tool=tool,
        tainted=tainted,
        taint_flags=letters,
        max_user_namespaces=_int_or_none(_read_value(ctx, "/proc/sys/user/max_user_namespaces")),
        unprivileged_userns_clone=_int_or_none(
            _read_value(ctx, "/proc/sys/kernel/unprivileged_userns_clone")
        ),
        apparmor_restrict_unprivileged_userns=_int_or_none(
            _read_value(ctx, "/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
        ),
    )


def _node_ids(ctx: CollectContext) -> list[int]:
    ids = []
    for name in ctx.entries(SYS_NODE):
        m = re.fullmatch(r"node([0-9]{1,4})", name)
        if m:
            ids.append(int(m.group(1)))
    return sorted(ids)


def _numa_nodes(ctx: CollectContext, with_cpus: bool, with_memory: bool) -> list[NumaNode]:
    nodes = []
    for n in _node_ids(ctx):
        base = f"{SYS_NODE}/node{n}"
        cpulist = _read_value(ctx, f"{base}/cpulist") if with_cpus else None
        mem: dict[str, int] = {}
        if with_memory:
            text = ctx.read_text(f"{base}/meminfo")
            mem = parse_meminfo(text) if text is not None else {}
        nodes.append(
            NumaNode(
                node=n,
                cpulist=_clip(cpulist),
                cpus=len(parse_cpulist(cpulist)) if cpulist is not None else None,
                mem_total_kb=mem.get("MemTotal"),
                mem_free_kb=mem.get("MemFree"),
            )
        )
    return nodes


@collector("cpu")
def collect_cpu(ctx: CollectContext) -> CpuFacts:
    text = ctx.read_text("/proc/cpuinfo", required=True)
    info = parse_cpuinfo(text) if text is not None else CpuInfo()
    governors: dict[str, int] = {}
    cpufreq = False
    for name in ctx.entries(SYS_CPU):
        if not re.fullmatch(r"cpu[0-9]{1,5}", name):
            continue
        gov = _read_value(ctx, f"{SYS_CPU}/{name}/cpufreq/scaling_governor")
        if gov is not None:
            cpufreq = True
            key = _clip(gov) or "unknown"
            governors[key[:64]] = governors.get(key[:64], 0) + 1
    return CpuFacts(
        model_name=info.model_name,
        vendor=info.vendor,
        threads=info.threads if text is not None else None,
        sockets=info.sockets,
        cores=info.cores,
        flags=sorted(info.flags),
        hypervisor=("hypervisor" in info.flags) if text is not None else None,
        cpufreq_present=cpufreq,
        governors=governors,
        numa_nodes=_numa_nodes(ctx, with_cpus=True, with_memory=False),
    )


@collector("memory")
def collect_memory(ctx: CollectContext) -> MemoryFacts:
    text = ctx.read_text("/proc/meminfo", required=True)
    mem = parse_meminfo(text) if text is not None else {}
    return MemoryFacts(
        mem_total_kb=mem.get("MemTotal"),
        mem_available_kb=mem.get("MemAvailable"),
        swap_total_kb=mem.get("SwapTotal"),
        swap_free_kb=mem.get("SwapFree"),
        hugepages_total=mem.get("HugePages_Total"),
        hugepages_free=mem.get("HugePages_Free"),
        hugepage_size_kb=mem.get("Hugepagesize"),
        numa_nodes=_numa_nodes(ctx, with_cpus=True, with_memory=True),
    )


def _link_target_name(ctx: CollectContext, path: str) -> str | None:
    st = ctx.stat(path)
    if not st.exists:
        if st.error:
            ctx.error(f"cannot stat {path}: {st.error}", path=path)
        return None
    if st.target:
        return _clip(st.target.rstrip("/").rsplit("/", 1)[-1])
    return None


@collector("pci")
def collect_pci(ctx: CollectContext) -> PciFacts:
    devices = []
    for name in ctx.entries(SYS_PCI)[:MAX_PCI_DEVICES]:
        if not is_pci_address(name):
            continue
        base = f"{SYS_PCI}/{name}"
        vendor = norm_hex(_read_value(ctx, f"{base}/vendor"))
        pci_class = norm_hex(_read_value(ctx, f"{base}/class"))
        devices.append(
            PciDevice(
                address=name.lower(),
                vendor=vendor,
                device=norm_hex(_read_value(ctx, f"{base}/device")),
                pci_class=pci_class,
                driver=_link_target_name(ctx, f"{base}/driver"),
                current_link_speed=_clip(_read_value(ctx, f"{base}/current_link_speed")),
                max_link_speed=_clip(_read_value(ctx, f"{base}/max_link_speed")),
                current_link_width=parse_link_width(_read_value(ctx, f"{base}/current_link_width")),
                max_link_width=parse_link_width(_read_value(ctx, f"{base}/max_link_width")),
                numa_node=parse_numa_node(_read_value(ctx, f"{base}/numa_node")),
                iommu_group=_link_target_name(ctx, f"{base}/iommu_group"),
                kind=classify(vendor, pci_class),
            )
        )
    return PciFacts(devices=devices)
