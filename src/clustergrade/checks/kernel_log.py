"""Checks on the kernel log's error history: GPU Xids, NVSwitch SXids and PCIe
AER reports.

These run whether or not an NVIDIA driver is seen on the node now: a GPU that
fell off the bus (Xid 79) may no longer be enumerated at all, so "no GPU found"
is exactly when its Xid matters.  An Xid can only be logged by the driver, so a
node that never had one simply has none and passes.  A log that could not be
read is an ERROR, never a PASS: nothing is known.
"""

from __future__ import annotations

from typing import Literal

from clustergrade.checks.registry import check
from clustergrade.facts.kernel_log import KernelLogFacts, XidSummary
from clustergrade.facts.node import NodeFacts
from clustergrade.kb.model import KnowledgeBase, XidAction
from clustergrade.results import Criterion, Finding, Severity, errored, failed, passed, warned

XID_CATALOG = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"
SXID_GUIDE = "https://docs.nvidia.com/datacenter/tesla/pdf/fabric-manager-user-guide.pdf"

_ACTION_TEXT: dict[str, str] = {
    "IGNORE": "no immediate action; watch for recurrence",
    "RESTART_APP": "restart the application",
    "RESET_GPU": "drain the GPU and reset it (nvidia-smi -r)",
    "RESTART_BM": "drain the node and reboot it",
    "WORKFLOW": "follow NVIDIA's documented workflow for this Xid",
    "CHECK_MECHANICALS": "check seating, cabling, power and cooling",
    "FOLLOW_ROOT": "act on the Xid that caused it",
    "CONTACT_SUPPORT": "contact NVIDIA or the system vendor",
}

XidLevel = Literal["critical", "warning", "info"]


def _action_text(action: XidAction | None) -> str:
    if action is None:
        return "not in the catalogue; see NVIDIA's Xid catalogue"
    return f"{action} ({_ACTION_TEXT.get(action, action)})"


def _level(kb: KnowledgeBase, code: int) -> XidLevel:
    entry = kb.xid(code)
    return entry.severity if entry is not None else kb.xids.default_severity


def _log(node: NodeFacts) -> tuple[KernelLogFacts, Finding | None]:
    """The node's kernel-log facts, and an ERROR when the log was unreadable
    (nothing is known then).  A missing section never gets here: every check
    in this module needs ``kernel_log`` and the engine reports that case."""
    log = node.kernel_log
    assert log is not None
    if log.readable:
        return log, None
    return log, errored(
        log.unreadable_reason or "kernel log not readable",
        evidence={"attempts": [a.model_dump() for a in log.attempts]},
    )


def _span(log: KernelLogFacts) -> str:
    where = log.source_detail or log.source or "kernel log"
    span = ""
    if log.first_timestamp and log.last_timestamp:
        span = f", {log.first_timestamp} .. {log.last_timestamp}"
    cut = "; output was truncated" if log.truncated else ""
    return f"{log.lines} lines from {where}{span}{cut}"


def _evidence(log: KernelLogFacts) -> dict[str, object]:
    return {
        "source": log.source_detail,
        "lines": log.lines,
        "first_timestamp": log.first_timestamp,
        "last_timestamp": log.last_timestamp,
        "truncated": log.truncated,
    }


def _xid_message(x: XidSummary, kb: KnowledgeBase) -> str:
    entry = kb.xid(x.code)
    meaning = entry.meaning if entry is not None else "not in the knowledge base's catalogue"
    where = f"GPU {x.bus_id}" if x.bus_id else "an unnamed GPU"
    when = f", last at {x.last_seen}" if x.last_seen else ""
    procs = f", processes {', '.join(x.processes)}" if x.processes else ""
    action = _action_text(entry.action if entry is not None else None)
    return (
        f"Xid {x.code} ({meaning}) logged {x.count}x on {where}{when}{procs}; "
        f"NVIDIA action: {action}"
    )


def _xid_finding_kw(x: XidSummary, kb: KnowledgeBase) -> dict[str, object]:
    entry = kb.xid(x.code)
    ev: dict[str, object] = {
        "code": x.code,
        "count": x.count,
        "first_seen": x.first_seen,
        "last_seen": x.last_seen,
        "sample": x.sample,
    }
    if entry is not None:
        ev["action"] = entry.action
        if entry.note:
            ev["note"] = entry.note
    return {"subject": f"GPU {x.bus_id}" if x.bus_id else None, "evidence": ev}


@check(
    "gpu.xid-fatal",
    title="No critical GPU Xid errors in the kernel log",
    criterion=Criterion.RELIABILITY,
    severity=Severity.CRITICAL,
    rationale=(
        "Critical Xids (fallen off the bus, double-bit ECC, row-remap failure, GSP "
        "errors, NVLink faults) mean the GPU needs a reset, a reboot or repair; jobs "
        "placed on it fail or silently compute on bad memory."
    ),
    remediation=(
        "Drain the node, take NVIDIA's action for the Xid (reset the GPU or reboot "
        "the node), run `dcgmi diag -r 3`, and RMA the GPU if the Xid recurs."
    ),
    needs=("kernel_log",),
    profiles=("health", "hardware"),
    references=(XID_CATALOG,),
)
def xid_fatal(node: NodeFacts, kb: KnowledgeBase) -> list[Finding]:
    log, bad = _log(node)
    if bad is not None:
        return [bad]
    findings: list[Finding] = []
    xid79_buses = {x.bus_id for x in log.xids if x.code == 79}
    for x in log.xids:
        if _level(kb, x.code) == "critical":
            findings.append(failed(_xid_message(x, kb), observed=x.code, **_xid_finding_kw(x, kb)))
    for f in log.fallen_off_bus:
        if f.bus_id in xid79_buses:
            continue
        where = f"GPU {f.bus_id}" if f.bus_id else "a GPU"
        findings.append(
            failed(
                f"{where} has fallen off the bus ({f.count}x, first at {f.first_seen or 'unknown time'}) "
                f"without an Xid 79 line; NVIDIA action for Xid 79: {_action_text('RESTART_BM')}",
                observed="fallen off the bus",
                subject=f"GPU {f.bus_id}" if f.bus_id else None,
                evidence={"count": f.count, "first_seen": f.first_seen},
            )
        )
    if findings:
        return findings
    minor = sorted({x.code for x in log.xids})
    note = f"; non-critical Xids seen: {', '.join(map(str, minor))}" if minor else ""
    return [
        passed(
            f"no critical Xid in {_span(log)}{note}",
            observed="none",
            expected="no critical Xid",
            evidence=_evidence(log),
        )
    ]


@check(
    "gpu.xid-warning",
    title="No warning-level GPU Xid errors in the kernel log",
    criterion=Criterion.RELIABILITY,
    severity=Severity.MEDIUM,
    rationale=(
        "Warning-level Xids (graphics exceptions, MMU faults, channel resets, contained "
        "ECC errors, context-switch timeouts) usually come from an application, but a "
        "GPU that keeps logging them across jobs is failing or needs a reset."
    ),
    remediation=(
        "Check which jobs logged them; if they recur across different jobs or users, "
        "drain the node, reset the GPU and run `dcgmi diag -r 3`."
    ),
    needs=("kernel_log",),
    profiles=("health", "hardware"),
    references=(XID_CATALOG,),
)
def xid_warning(node: NodeFacts, kb: KnowledgeBase) -> list[Finding]:
    log, bad = _log(node)
    if bad is not None:
        return [bad]
    findings = [
        warned(_xid_message(x, kb), observed=x.code, **_xid_finding_kw(x, kb))
        for x in log.xids
        if _level(kb, x.code) == "warning"
    ]
    if findings:
        return findings
    info = sorted({x.code for x in log.xids if _level(kb, x.code) == "info"})
    note = f"; informational Xids seen: {', '.join(map(str, info))}" if info else ""
    return [
        passed(
            f"no warning-level Xid in {_span(log)}{note}",
            observed="none",
            expected="no warning-level Xid",
            evidence=_evidence(log),
        )
    ]


@check(
    "gpu.sxid",
    title="No NVSwitch SXid errors in the kernel log",
    criterion=Criterion.RELIABILITY,
    severity=Severity.HIGH,
    rationale=(
        "An NVSwitch SXid the driver labels Fatal stalls NVLink traffic through that "
        "switch: GPU peers hang and jobs abort (often with Xid 45). Non-fatal SXids "
        "(link error rates, PRIV errors) are early signs of a degrading link."
    ),
    remediation=(
        "For a Fatal SXid, drain the node and reboot it to reset GPUs and NVSwitches; "
        "for recurring non-fatal SXids on one link, check the link and contact the "
        "system vendor (see the Fabric Manager user guide's SXid table)."
    ),
    needs=("kernel_log",),
    profiles=("health", "hardware"),
    references=(SXID_GUIDE,),
)
def sxid(node: NodeFacts, kb: KnowledgeBase) -> list[Finding]:
    log, bad = _log(node)
    if bad is not None:
        return [bad]
    findings: list[Finding] = []
    for s in log.sxids:
        where = f"{s.device or 'NVSwitch'} {s.bus_id}" if s.bus_id else (s.device or "NVSwitch")
        kw: dict[str, object] = {
            "observed": s.code,
            "subject": where,
            "evidence": {
                "code": s.code,
                "lines": s.lines,
                "fatal": s.fatal,
                "nonfatal": s.nonfatal,
                "first_seen": s.first_seen,
                "last_seen": s.last_seen,
                "sample": s.sample,
            },
        }
        if s.fatal:
            findings.append(
                failed(
                    f"SXid {s.code} on {where}: {s.fatal} line(s) labelled Fatal by the "
                    f"driver ({s.sample}); reboot to reset GPUs and NVSwitches",
                    **kw,
                )
            )
        else:
            label = "Non-fatal" if s.nonfatal else "without a Fatal/Non-fatal label"
            findings.append(
                warned(
                    f"SXid {s.code} on {where}: {s.lines} line(s), {label} ({s.sample})",
                    **kw,
                )
            )
    if findings:
        return findings
    return [
        passed(
            f"no SXid in {_span(log)}",
            observed="none",
            expected="no SXid",
            evidence=_evidence(log),
        )
    ]


@check(
    "host.pcie-aer-errors",
    title="No uncorrected PCIe AER errors in the kernel log",
    criterion=Criterion.RELIABILITY,
    severity=Severity.MEDIUM,
    rationale=(
        "Uncorrected PCIe errors (AER) on a GPU, NIC or switch port precede devices "
        "dropping off the bus and data corruption; corrected errors at a high rate "
        "point at a marginal link or riser."
    ),
    remediation=(
        "Identify the device from the AER lines, reseat or replace the riser/cable, "
        "check the slot's link speed and width, and update the BIOS/firmware."
    ),
    needs=("kernel_log",),
    profiles=("health", "hardware"),
    references=("https://docs.kernel.org/PCI/pcieaer-howto.html",),
)
def pcie_aer(node: NodeFacts, kb: KnowledgeBase) -> Finding:
    log, bad = _log(node)
    if bad is not None:
        return bad
    aer = log.aer
    ev: dict[str, object] = {
        **_evidence(log),
        "corrected": aer.corrected,
        "uncorrected_nonfatal": aer.uncorrected_nonfatal,
        "uncorrected_fatal": aer.uncorrected_fatal,
        "devices": aer.uncorrected_devices,
        "sample": aer.sample,
    }
    if aer.uncorrected:
        devices = ", ".join(aer.uncorrected_devices) or "unnamed devices"
        return warned(
            f"{aer.uncorrected} uncorrected PCIe AER error(s) logged "
            f"({aer.uncorrected_fatal} fatal, {aer.uncorrected_nonfatal} non-fatal) on {devices}",
            observed=aer.uncorrected,
            expected=0,
            evidence=ev,
            severity=Severity.HIGH if aer.uncorrected_fatal else None,
        )
    corr = f"; {aer.corrected} corrected" if aer.corrected else ""
    return passed(
        f"no uncorrected PCIe AER error in {_span(log)}{corr}",
        observed=0,
        expected=0,
        evidence=ev,
    )
