"""Checks: InfiniBand / RoCE partitions, device-node exposure, link health,
rail consistency, and the ConnectX firmware version observer."""

from __future__ import annotations

import stat as statmod
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from clustergrade.checks.registry import check
from clustergrade.checks.versions import Observed, observer
from clustergrade.facts.network import (
    DEFAULT_PARTITION,
    PKEY_FULL_BIT,
    PKEY_PARTITION_MASK,
    IbDevice,
    IbPort,
    InfinibandFacts,
    pkey_value,
)
from clustergrade.results import Criterion, Finding, Severity, failed, passed, skipped, warned

if TYPE_CHECKING:
    from clustergrade.facts.node import NodeFacts
    from clustergrade.kb.model import KnowledgeBase

NO_IB = "no InfiniBand/RoCE devices"
_REF_SYSFS = "https://www.kernel.org/doc/Documentation/ABI/stable/sysfs-class-infiniband"
_REF_UFM_PKEY = "https://docs.nvidia.com/networking/display/ufmenterpriseumv6151/partition+keys"
_REF_UMAD = "https://www.kernel.org/doc/html/latest/infiniband/user_mad.html"
_REF_CMAX = "https://newsletter.semianalysis.com/p/clustermax-20-the-industry-standard"

#: Any symbol error since the counters were last cleared means the physical
#: layer (cable, transceiver, connector) corrupted bits; healthy NDR links run
#: for days with zero, so the first one is already worth a look.
SYMBOL_ERROR_WARN = 1
#: Every increment is a link that went down and retrained (a flap); a rail
#: that flapped drops every job's traffic on it for seconds.
LINK_DOWNED_WARN = 1

_LINK_UP = "LinkUp"
_DISABLED = "Disabled"
_ACTIVE = "ACTIVE"


def _subject(d: IbDevice, p: IbPort) -> str:
    return f"{d.name}/{p.port}"


def _ib(facts: NodeFacts) -> InfinibandFacts | None:
    ib = facts.infiniband
    if ib is None or not ib.present or not any(d.ports for d in ib.devices):
        return None
    return ib


def _ports(ib: InfinibandFacts) -> Iterable[tuple[IbDevice, IbPort]]:
    for d in ib.devices:
        for p in d.ports:
            yield d, p


def _is_ethernet(p: IbPort) -> bool:
    return (p.link_layer or "").lower() == "ethernet"


def _is_active(p: IbPort) -> bool:
    return (p.state or "").upper() == _ACTIVE


# --------------------------------------------------------------------------
# Partitions (P_Keys)
# --------------------------------------------------------------------------


@check(
    "isolation.ib-default-pkey-full",
    title="No InfiniBand port is a full member of the default partition",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale="Bit 15 of a P_Key marks full membership and the low 15 bits the "
    "partition; 0xffff is full membership of the default partition 0x7fff. Two full "
    "members of a partition can reach each other, so a tenant host holding 0xffff on a "
    "shared fabric can talk to every other such host, whatever its tenant partition. "
    "NVIDIA's guidance is that end nodes are limited members (0x7fff) of the default "
    "partition and full members only of their tenant's. ClusterMAX found exactly this "
    "(0xffff left active next to a tenant key, 532 hosts visible).",
    remediation="In the subnet manager's partition configuration (UFM "
    "default_membership = limited, or opensm partitions.conf 'Default=0x7fff, ipoib : "
    "ALL=limited'), make end nodes limited members of the default partition and full "
    "members of one per-tenant P_Key; then re-sweep the fabric.",
    needs=("infiniband",),
    profiles=("isolation", "security", "networking"),
    references=(_REF_UFM_PKEY, _REF_SYSFS, _REF_CMAX),
)
def default_pkey_full(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    ib = _ib(facts)
    if ib is None:
        return skipped(NO_IB)
    out: list[Finding] = []
    for d, p in _ports(ib):
        s = _subject(d, p)
        if _is_ethernet(p):
            out.append(skipped("RoCE (Ethernet link layer): P_Keys do not isolate", subject=s))
            continue
        if p.pkeys is None:
            out.append(skipped("P_Key table not present in sysfs", subject=s))
            continue
        values = {pkey_value(k) for k in p.pkeys}
        ev = {"pkeys": p.pkeys}
        if 0xFFFF in values:
            out.append(
                failed(
                    "full member of the default partition (P_Key 0xffff): reachable by "
                    "every other full member on the fabric",
                    observed=p.pkeys,
                    expected="0x7fff (limited) or no default key",
                    subject=s,
                    evidence=ev,
                )
            )
        elif DEFAULT_PARTITION in values:
            out.append(
                passed(
                    "limited member of the default partition (0x7fff)",
                    observed=p.pkeys,
                    subject=s,
                    evidence=ev,
                )
            )
        else:
            out.append(passed("not a member of the default partition", observed=p.pkeys, subject=s))
    return out


@check(
    "isolation.ib-multiple-full-pkeys",
    title="The node is a full member of at most one non-default partition",
    criterion=Criterion.SECURITY,
    severity=Severity.MEDIUM,
    rationale="A host that is a full member of two tenant partitions bridges them: "
    "anything running on it can reach both tenants' hosts. ClusterMAX found nodes with "
    "full membership in 0x7001 and 0x7fff whose fabric showed 80 foreign nodes.",
    remediation="Give each host full membership of exactly one tenant P_Key in the "
    "subnet manager's partition configuration; remove stale partitions after a "
    "re-provision.",
    needs=("infiniband",),
    profiles=("isolation", "security", "networking"),
    references=(_REF_UFM_PKEY, _REF_CMAX),
)
def multiple_full_pkeys(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    ib = _ib(facts)
    if ib is None:
        return skipped(NO_IB)
    full: dict[str, list[str]] = defaultdict(list)
    read_any = False
    for d, p in _ports(ib):
        if _is_ethernet(p) or p.pkeys is None:
            continue
        read_any = True
        for k in p.pkeys:
            v = pkey_value(k)
            if v is None or not v & PKEY_FULL_BIT:
                continue
            part = v & PKEY_PARTITION_MASK
            if part != DEFAULT_PARTITION:
                full[f"0x{part:04x}"].append(_subject(d, p))
    if not read_any:
        return skipped("no InfiniBand port exposes a P_Key table")
    parts = sorted(full)
    ev = {"full_partitions": {k: sorted(set(v)) for k, v in full.items()}}
    if len(parts) > 1:
        return warned(
            f"full member of {len(parts)} non-default partitions ({', '.join(parts)}): "
            "this node bridges them",
            observed=parts,
            expected="at most one",
            evidence=ev,
        )
    return passed(
        f"full member of {len(parts)} non-default partition(s)"
        + (f" ({parts[0]})" if parts else ""),
        observed=parts,
        evidence=ev,
    )


# --------------------------------------------------------------------------
# /dev/infiniband/umad*
# --------------------------------------------------------------------------


def _audit_uid(facts: NodeFacts) -> int | None:
    sec = facts.security
    for attr in ("euid", "uid"):
        v = getattr(sec, attr, None)
        if isinstance(v, int):
            return v
    return None


@check(
    "isolation.umad-open",
    title="Only root can open /dev/infiniband/umad*",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale="umad sends raw management datagrams (SMPs): with it a user can query "
    "and, where M_Key is not set, reconfigure any port on the fabric, read keys at "
    "protection level 0, or impersonate a subnet manager via issm. It should be "
    "root-only.",
    remediation='Restore root-only modes (udev rule KERNEL=="umad*", MODE="0600"; '
    "same for issm*) and set M_Key protection on the subnet manager.",
    needs=("infiniband",),
    profiles=("isolation", "security"),
    references=(_REF_UMAD,),
)
def umad_open(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    ib = facts.infiniband
    assert ib is not None
    nodes = [n for n in (*ib.umad, *ib.issm) if n.exists]
    if not nodes:
        if not ib.present:
            return skipped(NO_IB)
        return skipped("no /dev/infiniband/umad* or issm* device nodes")
    uid = _audit_uid(facts)
    who = "root" if uid == 0 else (f"uid {uid}" if uid is not None else "the auditing user")
    out: list[Finding] = []
    for n in nodes:
        perms = None if n.mode is None else statmod.S_IMODE(n.mode)
        mode = "?" if perms is None else f"{perms:04o}"
        ev = {"mode": mode, "owner_uid": n.uid, "group_gid": n.gid, "audited_as": who}
        opens = n.readable or n.writable
        kw = {"subject": n.path, "evidence": ev}
        if perms is not None and perms & 0o006:
            out.append(
                failed(f"mode {mode}: any user can open it", observed=mode, expected="0600", **kw)
            )
        elif opens and uid is not None and uid != 0:
            access = "+".join(a for a, ok in (("read", n.readable), ("write", n.writable)) if ok)
            out.append(
                failed(
                    f"{who} (not root) can open it for {access} (mode {mode})",
                    observed=access,
                    expected="root only",
                    **kw,
                )
            )
        elif opens and uid is None and (perms is None or perms & 0o060):
            # Root opens anything, so access alone cannot tell a user from root.
            out.append(
                warned(
                    f"mode {mode}: the auditing user can open it, and whether that user "
                    "is root is unknown",
                    observed=mode,
                    expected="0600",
                    **kw,
                )
            )
        elif perms is None and uid == 0:
            out.append(skipped("audited as root and the mode is unknown", subject=n.path))
        else:
            out.append(passed(f"root only (mode {mode}); audited as {who}", observed=mode, **kw))
    return out


# --------------------------------------------------------------------------
# Link health and rail consistency
# --------------------------------------------------------------------------


@check(
    "network.ib-port-down",
    title="Every InfiniBand/RoCE port is ACTIVE with its physical link up",
    criterion=Criterion.NETWORKING,
    severity=Severity.HIGH,
    rationale="A rail that is not ACTIVE/LinkUp carries no traffic: jobs that "
    "expect eight rails lose bandwidth or fail to start. LinkUp with a non-ACTIVE "
    "state is the 'cable fine, no subnet manager configured the port' signature; "
    "Polling means no peer (cable, transceiver or switch port).",
    remediation="LinkUp but INIT/ARMED: check the subnet manager (sminfo). Polling "
    "or Sleep: reseat or replace the cable/transceiver, check the switch port. A port "
    "an administrator disabled on purpose is reported, not judged.",
    needs=("infiniband",),
    profiles=("networking", "health"),
    references=(_REF_SYSFS,),
)
def port_down(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    ib = _ib(facts)
    if ib is None:
        return skipped(NO_IB)
    out: list[Finding] = []
    for d, p in _ports(ib):
        s = _subject(d, p)
        obs = f"{p.state_raw or '?'} / {p.phys_state_raw or '?'}"
        if p.state is None or p.phys_state is None:
            out.append(skipped("state or phys_state not readable", subject=s))
        elif p.phys_state == _DISABLED:
            out.append(skipped(f"disabled by an administrator ({obs}): not judged", subject=s))
        elif _is_active(p) and p.phys_state == _LINK_UP:
            out.append(passed(f"ACTIVE, LinkUp at {p.rate_raw or '?'}", observed=obs, subject=s))
        else:
            hint = (
                "physical link up but the port is not ACTIVE (subnet manager?)"
                if p.phys_state == _LINK_UP
                else f"physical link {p.phys_state}"
            )
            out.append(failed(hint, observed=obs, expected="4: ACTIVE / 5: LinkUp", subject=s))
    return out


def _rails(ib: InfinibandFacts) -> dict[str, list[tuple[IbDevice, IbPort]]]:
    """Active ports grouped by HCA type (the same card model is one rail set)."""
    groups: dict[str, list[tuple[IbDevice, IbPort]]] = defaultdict(list)
    for d, p in _ports(ib):
        if _is_active(p):
            groups[d.hca_type or "unknown HCA type"].append((d, p))
    return groups


@check(
    "network.ib-rate-consistent",
    title="Every rail of the same HCA type runs at the same, best rate",
    criterion=Criterion.NETWORKING,
    severity=Severity.HIGH,
    rationale="NCCL spreads traffic over all rails, so one rail that trained down "
    "(NDR 400 -> HDR 200) halves that share and becomes the straggler for every "
    "collective; Together AI's 2026 report traced halved bandwidth to exactly such "
    "fabric drift.",
    remediation="Find the slow rail's cable/transceiver and switch port (iblinkinfo), "
    "reseat or replace it, and check both ends' configured speeds (mlxlink).",
    needs=("infiniband",),
    profiles=("networking", "health"),
    references=(_REF_SYSFS,),
)
def rate_consistent(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    ib = _ib(facts)
    if ib is None:
        return skipped(NO_IB)
    out: list[Finding] = []
    for hca_type, ports in sorted(_rails(ib).items()):
        rated = [(d, p) for d, p in ports if p.rate_gbps is not None]
        if len(rated) < 2:
            out.append(
                skipped(
                    f"{hca_type}: fewer than two active ports with a known rate", subject=hca_type
                )
            )
            continue
        best = max(p.rate_gbps or 0.0 for _, p in rated)
        slow = [(d, p) for d, p in rated if (p.rate_gbps or 0.0) < best]
        ev = {_subject(d, p): p.rate_raw for d, p in rated}
        if slow:
            names = ", ".join(f"{_subject(d, p)} at {p.rate_raw}" for d, p in slow)
            out.append(
                failed(
                    f"{hca_type}: {len(slow)} of {len(rated)} rails below the best "
                    f"{best:g} Gb/s: {names}",
                    observed=sorted({p.rate_gbps for _, p in rated if p.rate_gbps is not None}),
                    expected=f"{best:g} Gb/s on every rail",
                    subject=hca_type,
                    evidence=ev,
                )
            )
        else:
            out.append(
                passed(
                    f"{hca_type}: all {len(rated)} rails at {best:g} Gb/s",
                    observed=best,
                    subject=hca_type,
                    evidence=ev,
                )
            )
    return out or skipped("no active ports")


@check(
    "network.ib-link-layer-consistent",
    title="Rails of the same HCA type share one link layer",
    criterion=Criterion.NETWORKING,
    severity=Severity.MEDIUM,
    rationale="A rail that came up as Ethernet among InfiniBand rails (a port-type "
    "flip after a firmware reset) is invisible to the IB fabric and to a hard-coded "
    "NCCL_IB_HCA list, so collectives lose that rail silently.",
    remediation="Set the port type back (mlxconfig LINK_TYPE_P1=1 for IB), reset the "
    "adapter, and confirm with ibstat.",
    needs=("infiniband",),
    profiles=("networking", "health"),
    references=(_REF_SYSFS,),
)
def link_layer_consistent(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    ib = _ib(facts)
    if ib is None:
        return skipped(NO_IB)
    out: list[Finding] = []
    for hca_type, ports in sorted(_rails(ib).items()):
        layers: dict[str, list[str]] = defaultdict(list)
        for d, p in ports:
            layers[p.link_layer or "unknown"].append(_subject(d, p))
        known = {k for k in layers if k != "unknown"}
        if not known:
            out.append(skipped(f"{hca_type}: link layer not reported", subject=hca_type))
        elif len(known) > 1:
            out.append(
                warned(
                    f"{hca_type}: rails mix link layers: "
                    + "; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(layers.items())),
                    observed=sorted(known),
                    expected="one link layer",
                    subject=hca_type,
                    evidence=dict(layers),
                )
            )
        else:
            out.append(
                passed(
                    f"{hca_type}: {len(ports)} active port(s), all {next(iter(known))}",
                    observed=sorted(known),
                    subject=hca_type,
                )
            )
    return out or skipped("no active ports")


@check(
    "network.ib-error-counters",
    title="No symbol errors or link flaps on any InfiniBand/RoCE port",
    criterion=Criterion.RELIABILITY,
    severity=Severity.MEDIUM,
    rationale="symbol_error counts bits the physical layer corrupted and link_downed "
    "counts retrains; both point at a marginal cable or transceiver that will cause "
    "retransmits, stalls and eventually job failures. Counters are cumulative since "
    "they were last cleared.",
    remediation="Check the link with mlxlink (BER, eye), reseat or replace the cable "
    "or transceiver, clear the counters (perfquery -x -R) and watch them.",
    needs=("infiniband",),
    profiles=("networking", "health"),
    references=(_REF_SYSFS,),
)
def error_counters(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    ib = _ib(facts)
    if ib is None:
        return skipped(NO_IB)
    out: list[Finding] = []
    for d, p in _ports(ib):
        s = _subject(d, p)
        sym = p.counters.get("symbol_error")
        down = p.counters.get("link_downed")
        if sym is None and down is None:
            out.append(skipped("error counters not available (no PMA)", subject=s))
            continue
        ev = {k: v for k, v in p.counters.items() if v is not None}
        bad = []
        if sym is not None and sym >= SYMBOL_ERROR_WARN:
            bad.append(f"symbol_error={sym}")
        if down is not None and down >= LINK_DOWNED_WARN:
            bad.append(f"link_downed={down}")
        if bad:
            out.append(warned(", ".join(bad), observed=ev, expected="0", subject=s, evidence=ev))
        else:
            out.append(passed("symbol_error and link_downed are 0", observed=ev, subject=s))
    return out


# --------------------------------------------------------------------------
# Firmware version (judged by the KB rule components/mlnx-firmware.yaml)
# --------------------------------------------------------------------------


def _is_mellanox(d: IbDevice) -> bool:
    return d.name.startswith("mlx") or (d.hca_type or "").startswith("MT")


@observer("mlnx-firmware", needs=("infiniband",))
def mlnx_firmware(facts: NodeFacts) -> list[Observed]:
    ib = facts.infiniband
    if ib is None:
        return []
    return [
        Observed(
            version=d.fw_ver,
            subject=d.name,
            source=f"/sys/class/infiniband/{d.name}/fw_ver",
        )
        for d in ib.devices
        if _is_mellanox(d)
    ]
