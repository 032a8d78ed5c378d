"""Collector: InfiniBand / RoCE adapters from sysfs and /dev/infiniband.

Everything here is world-readable sysfs, so an ordinary account sees the same
facts as root, except the ``readable``/``writable`` answers for the umad and
issm device nodes, which are exactly the point: they say what *this* user may
open.
"""

from __future__ import annotations

import re

from clustergrade.collect.base import CollectContext, collector
from clustergrade.facts.network import DevNode, IbDevice, IbPort, InfinibandFacts

IB_CLASS = "/sys/class/infiniband"
VERBS_CLASS = "/sys/class/infiniband_verbs"
DEV_DIR = "/dev/infiniband"

#: Per-HCA attributes read when present.
DEVICE_ATTRS = ("fw_ver", "board_id", "hca_type", "node_guid", "node_desc")
#: Per-port attributes read when present.
PORT_ATTRS = ("state", "phys_state", "rate", "link_layer", "lid", "sm_lid")
#: The error counters the checks judge and the report shows; the rest of
#: counters/ are traffic totals, of no use for a verdict.
ERROR_COUNTERS = (
    "symbol_error",
    "link_downed",
    "link_error_recovery",
    "port_rcv_errors",
    "excessive_buffer_overrun_errors",
    "local_link_integrity_errors",
    "port_rcv_remote_physical_errors",
    "port_xmit_discards",
)


class IbParseError(ValueError):
    """A sysfs value that does not have the shape the kernel writes."""


#: State names are short words ("ACTIVE", "LinkUp", "Phy Test"); anything
#: longer is not something the kernel wrote.
_STATE_RE = re.compile(r"^\s*(\d{1,3})\s*:\s*([A-Za-z][A-Za-z0-9_ ]{0,40}?)\s*$")
_RATE_RE = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*Gb/sec(?:\s*\(\s*(\d+X)(?:\s+([A-Za-z0-9]+))?\s*\))?\s*$"
)


def parse_state(text: str) -> tuple[int, str]:
    """``"4: ACTIVE"`` -> ``(4, "ACTIVE")``; also for phys_state ``"5: LinkUp"``."""
    m = _STATE_RE.match(text)
    if m is None:
        raise IbParseError(f"not a port state: {text[:60]!r}")
    return int(m.group(1)), m.group(2)


def parse_rate(text: str) -> tuple[float, str | None, str | None]:
    """``"400 Gb/sec (4X NDR)"`` -> ``(400.0, "4X", "NDR")``.

    Older kernels and iWARP devices omit the speed name (``"10 Gb/sec (4X)"``)
    or the whole parenthesis.
    """
    m = _RATE_RE.match(text)
    if m is None:
        raise IbParseError(f"not a port rate: {text[:60]!r}")
    return float(m.group(1)), m.group(2), m.group(3)


def parse_pkey(text: str) -> int:
    """``"0xffff"`` -> ``0xffff``."""
    s = text.strip()
    if not re.fullmatch(r"0x[0-9a-fA-F]{1,4}", s):
        raise IbParseError(f"not a P_Key: {s[:40]!r}")
    return int(s, 16)


def parse_counter(text: str) -> int | None:
    """A counter's value; None for ports without a PMA (``"N/A (no PMA)"``)."""
    s = text.strip()
    if s.startswith("N/A"):
        return None
    if not (s.isascii() and s.isdigit()):
        raise IbParseError(f"not a counter value: {s[:40]!r}")
    return int(s)


def _parsed_state(ctx: CollectContext, path: str, raw: str | None) -> tuple[int | None, str | None]:
    if raw is None:
        return None, None
    try:
        return parse_state(raw)
    except IbParseError as exc:
        ctx.error(f"{path}: {exc}", path=path)
        return None, None


def _read_pkeys(ctx: CollectContext, base: str) -> tuple[list[str] | None, int | None]:
    """The non-zero P_Key entries, in table order, and the table's size.

    The table has up to 128 entries on mlx5, most of them 0x0000; every one is
    read because a full-member key can sit at any index.
    """
    res = ctx.listdir(f"{base}/pkeys")
    if res.entries is None:
        if res.error not in ("no such file", "No such file or directory"):
            ctx.error(f"cannot list {base}/pkeys: {res.error}", path=f"{base}/pkeys")
        return None, None
    indexes = sorted(int(e) for e in res.entries if e.isascii() and e.isdigit())
    keys: list[str] = []
    for idx in indexes:
        path = f"{base}/pkeys/{idx}"
        raw = ctx.read_value(path)
        if raw is None:
            continue
        try:
            value = parse_pkey(raw)
        except IbParseError as exc:
            ctx.error(f"{path}: {exc}", path=path)
            continue
        if value & 0x7FFF:
            keys.append(f"0x{value:04x}")
    return keys, len(indexes)


def _read_counters(
    ctx: CollectContext, base: str, names: tuple[str, ...] | None
) -> dict[str, int | None]:
    present = ctx.entries(base)
    out: dict[str, int | None] = {}
    for name in present:
        if names is not None and name not in names:
            continue
        path = f"{base}/{name}"
        raw = ctx.read_value(path)
        if raw is None:
            continue
        try:
            out[name] = parse_counter(raw)
        except IbParseError as exc:
            ctx.error(f"{path}: {exc}", path=path)
    return out


def _read_port(ctx: CollectContext, hca_dir: str, port: int) -> IbPort:
    base = f"{hca_dir}/ports/{port}"
    names = set(ctx.entries(base))
    raw = {a: (ctx.read_value(f"{base}/{a}") if a in names else None) for a in PORT_ATTRS}
    state_code, state = _parsed_state(ctx, f"{base}/state", raw["state"])
    phys_code, phys = _parsed_state(ctx, f"{base}/phys_state", raw["phys_state"])
    gbps: float | None = None
    width = speed = None
    if raw["rate"] is not None:
        try:
            gbps, width, speed = parse_rate(raw["rate"])
        except IbParseError as exc:
            ctx.error(f"{base}/rate: {exc}", path=f"{base}/rate")
    pkeys, pkey_size = _read_pkeys(ctx, base) if "pkeys" in names else (None, None)
    gid_size = len(ctx.entries(f"{base}/gids")) if "gids" in names else None
    counters = (
        _read_counters(ctx, f"{base}/counters", ERROR_COUNTERS) if "counters" in names else {}
    )
    hw: dict[str, int] = {}
    if "hw_counters" in names:
        hw = {
            k: v
            for k, v in _read_counters(ctx, f"{base}/hw_counters", None).items()
            if v is not None
        }
    return IbPort(
        port=port,
        state_raw=raw["state"],
        state=state,
        state_code=state_code,
        phys_state_raw=raw["phys_state"],
        phys_state=phys,
        phys_state_code=phys_code,
        rate_raw=raw["rate"],
        rate_gbps=gbps,
        width=width,
        speed=speed,
        link_layer=raw["link_layer"] or None,
        lid=raw["lid"],
        sm_lid=raw["sm_lid"],
        pkeys=pkeys,
        pkey_table_size=pkey_size,
        gid_table_size=gid_size,
        counters=counters,
        hw_counters=hw,
    )


def _read_device(ctx: CollectContext, name: str) -> IbDevice:
    hca_dir = f"{IB_CLASS}/{name}"
    names = set(ctx.entries(hca_dir))
    attrs = {a: (ctx.read_value(f"{hca_dir}/{a}") if a in names else None) for a in DEVICE_ATTRS}
    pci_address: str | None = None
    is_vf: bool | None = None
    numvfs: int | None = None
    netdevs: list[str] = []
    if "device" in names:
        link = ctx.stat(f"{hca_dir}/device")
        if link.target:
            pci_address = link.target.rstrip("/").rsplit("/", 1)[-1] or None
        elif link.error:
            ctx.error(f"cannot stat {hca_dir}/device: {link.error}", path=f"{hca_dir}/device")
        physfn = ctx.stat(f"{hca_dir}/device/physfn")
        if physfn.error is None:
            is_vf = physfn.exists
        vfs = ctx.read_value(f"{hca_dir}/device/sriov_numvfs")
        if vfs is not None and vfs.isascii() and vfs.isdigit():
            numvfs = int(vfs)
        netdevs = list(ctx.entries(f"{hca_dir}/device/net"))
    ports: list[IbPort] = []
    if "ports" in names:
        for entry in ctx.entries(f"{hca_dir}/ports"):
            if entry.isascii() and entry.isdigit():
                ports.append(_read_port(ctx, hca_dir, int(entry)))
    return IbDevice(
        name=name,
        fw_ver=attrs["fw_ver"],
        board_id=attrs["board_id"],
        hca_type=attrs["hca_type"],
        node_guid=attrs["node_guid"],
        node_desc=attrs["node_desc"],
        pci_address=pci_address,
        is_vf=is_vf,
        sriov_numvfs=numvfs,
        netdevs=netdevs,
        ports=sorted(ports, key=lambda p: p.port),
    )


def _dev_nodes(ctx: CollectContext, prefix: str, entries: tuple[str, ...]) -> list[DevNode]:
    out = []
    for e in entries:
        if not e.startswith(prefix):
            continue
        info = ctx.stat(f"{DEV_DIR}/{e}")
        if info.error:
            ctx.error(f"cannot stat {DEV_DIR}/{e}: {info.error}", path=f"{DEV_DIR}/{e}")
        out.append(
            DevNode(
                path=f"{DEV_DIR}/{e}",
                exists=info.exists,
                mode=info.mode,
                uid=info.uid,
                gid=info.gid,
                readable=info.readable,
                writable=info.writable,
            )
        )
    return out


@collector("infiniband")
def collect_infiniband(ctx: CollectContext) -> InfinibandFacts:
    devices = [_read_device(ctx, name) for name in ctx.entries(IB_CLASS)]
    dev_entries = ctx.entries(DEV_DIR)
    verbs = ctx.stat(VERBS_CLASS)
    return InfinibandFacts(
        present=bool(devices),
        devices=devices,
        umad=_dev_nodes(ctx, "umad", dev_entries),
        issm=_dev_nodes(ctx, "issm", dev_entries),
        verbs_present=None if verbs.error else verbs.exists,
    )
