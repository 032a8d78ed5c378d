"""Checks: GPU health and configuration (NVIDIA), and the driver's version."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from clustergrade.checks.registry import check
from clustergrade.checks.versions import Observed, observer
from clustergrade.facts.gpu import (
    GPU_IDLE,
    HW_POWER_BRAKE_SLOWDOWN,
    HW_SLOWDOWN,
    HW_THERMAL_SLOWDOWN,
    NvidiaFacts,
    NvidiaGpu,
)
from clustergrade.results import Criterion, Finding, Severity, failed, passed, skipped, warned

if TYPE_CHECKING:
    from clustergrade.facts.node import NodeFacts
    from clustergrade.kb.model import KnowledgeBase

_REF_XID = "https://docs.nvidia.com/deploy/xid-errors/index.html"
_REF_REMAP = "https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html"
_REF_RETIRE = "https://docs.nvidia.com/deploy/dynamic-page-retirement/index.html"
_REF_SMI = "https://docs.nvidia.com/deploy/nvidia-smi/index.html"
_REF_NVML = "https://docs.nvidia.com/deploy/nvml-api/index.html"
_REF_PERSIST = "https://docs.nvidia.com/deploy/driver-persistence/index.html"
_REF_MIG = "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/index.html"
_REF_FABRIC = "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html"


def _subject(g: NvidiaGpu) -> str:
    return f"GPU {g.index}"


def _per_gpu(facts: NodeFacts, judge: Callable[[NvidiaGpu], Finding]) -> Finding | list[Finding]:
    nv = facts.nvidia
    if nv is None or not nv.driver_loaded:
        return skipped("no NVIDIA driver loaded")
    if not nv.gpus:
        return skipped(f"no per-GPU readings (source: {nv.source})")
    return [judge(g) for g in nv.gpus]


def _pci_nvidia_gpus(facts: NodeFacts) -> int | None:
    """NVIDIA GPUs on the PCI bus (driver or not), or None when PCI facts are
    missing."""
    if facts.pci is None:
        return None
    return len(facts.pci.of_kind("nvidia-gpu"))


@check(
    "gpu.driver-loaded",
    title="The NVIDIA kernel driver is loaded where NVIDIA GPUs are present",
    criterion=Criterion.RELIABILITY,
    severity=Severity.CRITICAL,
    rationale="Without the kernel driver no GPU on the node can run work; the node "
    "should not be scheduled.",
    remediation="Load the driver (modprobe nvidia), check dmesg for why it failed "
    "(kernel/driver mismatch after an upgrade, nouveau bound, Secure Boot signing).",
    needs=("nvidia",),
    profiles=("hardware", "health"),
    references=(_REF_SMI,),
)
def driver_loaded(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    nv = facts.nvidia
    assert nv is not None
    if nv.driver_loaded:
        return passed(
            f"NVIDIA driver {nv.driver_version or '(version unknown)'} loaded "
            f"(read via {nv.source})",
            observed=nv.driver_version,
            evidence={"source": nv.source},
        )
    on_pci = _pci_nvidia_gpus(facts)
    if on_pci:
        return failed(
            f"{on_pci} NVIDIA GPU(s) on the PCI bus but no NVIDIA driver loaded",
            observed="not loaded",
            expected="driver loaded",
            evidence={"pci_nvidia_gpus": on_pci, "nvidia_smi": nv.smi_error},
        )
    if nv.smi_installed and nv.smi_error:
        return failed(
            "nvidia-smi is installed but cannot reach the kernel driver, and "
            "/proc/driver/nvidia/version is absent",
            observed=nv.smi_error,
            expected="driver loaded",
        )
    if on_pci == 0:
        return skipped("no NVIDIA GPU on the PCI bus")
    return skipped("no NVIDIA driver or tools found, and the PCI bus was not read")


@check(
    "gpu.ecc-enabled",
    title="ECC is enabled on every GPU",
    criterion=Criterion.RELIABILITY,
    severity=Severity.HIGH,
    rationale="Without ECC, HBM bit flips silently corrupt training state instead of "
    "being corrected or reported.",
    remediation="nvidia-smi -i <gpu> -e 1, then reset the GPU or reboot.",
    needs=("nvidia",),
    profiles=("hardware", "health"),
    references=(_REF_SMI,),
)
def ecc_enabled(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    def judge(g: NvidiaGpu) -> Finding:
        s = _subject(g)
        if g.ecc_current is None:
            return skipped("ECC mode not reported (not supported on this GPU)", subject=s)
        if not g.ecc_current:
            pend = " (enabled after the next reset)" if g.ecc_pending else ""
            return failed(f"ECC disabled{pend}", observed="disabled", expected="enabled", subject=s)
        if g.ecc_pending is False:
            return warned(
                "ECC enabled now but disabled at the next reset",
                observed="pending disabled",
                expected="enabled",
                subject=s,
            )
        return passed("ECC enabled", observed="enabled", subject=s)

    return _per_gpu(facts, judge)


@check(
    "gpu.ecc-uncorrectable",
    title="No uncorrectable ECC errors",
    criterion=Criterion.RELIABILITY,
    severity=Severity.CRITICAL,
    rationale="An uncorrectable (double-bit) ECC error since the last driver load means "
    "memory returned bad data to a job; the GPU needs a reset and, if it recurs, an RMA.",
    remediation="Drain the node, reset the GPU (nvidia-smi -r) so pages are retired or "
    "rows remapped, and run DCGM diagnostics level 3 before returning it to service.",
    needs=("nvidia",),
    profiles=("hardware", "health"),
    references=(_REF_XID, _REF_REMAP),
)
def ecc_uncorrectable(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    def judge(g: NvidiaGpu) -> Finding:
        s = _subject(g)
        e = g.ecc
        ev = e.model_dump()
        if e.volatile_uncorrectable is None and e.aggregate_uncorrectable is None:
            return skipped("ECC error counters not reported", subject=s)
        if e.volatile_uncorrectable:
            return failed(
                f"{e.volatile_uncorrectable} uncorrectable ECC error(s) since the driver loaded",
                observed=e.volatile_uncorrectable,
                expected=0,
                subject=s,
                evidence=ev,
            )
        if e.aggregate_uncorrectable:
            return warned(
                f"{e.aggregate_uncorrectable} uncorrectable ECC error(s) over the GPU's lifetime",
                observed=e.aggregate_uncorrectable,
                expected=0,
                subject=s,
                evidence=ev,
            )
        return passed("no uncorrectable ECC errors", observed=0, subject=s, evidence=ev)

    return _per_gpu(facts, judge)


@check(
    "gpu.retired-pages-pending",
    title="No page retirement is waiting for a GPU reset",
    criterion=Criterion.RELIABILITY,
    severity=Severity.HIGH,
    rationale="A pending retirement means a known-bad memory page stays in use until "
    "the GPU is reset (pre-Ampere GPUs).",
    remediation="Drain the node and reset the GPU (or reboot) so the page is retired.",
    needs=("nvidia",),
    profiles=("hardware", "health"),
    references=(_REF_RETIRE,),
)
def retired_pages_pending(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    def judge(g: NvidiaGpu) -> Finding:
        s = _subject(g)
        rp = g.retired_pages
        if rp.pending is None:
            return skipped("page retirement not reported (row remapping GPUs use that)", subject=s)
        if rp.pending:
            return warned(
                "page retirement pending until the next GPU reset",
                observed="pending",
                expected="none pending",
                subject=s,
                evidence=rp.model_dump(),
            )
        return passed("no page retirement pending", subject=s, evidence=rp.model_dump())

    return _per_gpu(facts, judge)


@check(
    "gpu.row-remap-pending",
    title="No row remapping is waiting for a GPU reset",
    criterion=Criterion.RELIABILITY,
    severity=Severity.HIGH,
    rationale="A pending remap means a bad HBM row is still in use until the GPU is "
    "reset (Ampere and newer).",
    remediation="Drain the node and reset the GPU (nvidia-smi -r) or reboot.",
    needs=("nvidia",),
    profiles=("hardware", "health"),
    references=(_REF_REMAP,),
)
def row_remap_pending(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    def judge(g: NvidiaGpu) -> Finding:
        s = _subject(g)
        rr = g.row_remap
        if rr.pending is None:
            return skipped("row remapping not reported (not supported or not read)", subject=s)
        if rr.pending:
            return warned(
                "row remapping pending until the next GPU reset",
                observed="pending",
                expected="none pending",
                subject=s,
                evidence=rr.model_dump(),
            )
        return passed("no row remapping pending", subject=s, evidence=rr.model_dump())

    return _per_gpu(facts, judge)


@check(
    "gpu.row-remap-failure",
    title="No GPU has run out of spare rows",
    criterion=Criterion.RELIABILITY,
    severity=Severity.CRITICAL,
    rationale="A remapping failure means a bank has no spare rows left: the GPU can no "
    "longer repair its memory and must be replaced.",
    remediation="Take the GPU out of service and open an RMA.",
    needs=("nvidia",),
    profiles=("hardware", "health"),
    references=(_REF_REMAP,),
)
def row_remap_failure(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    def judge(g: NvidiaGpu) -> Finding:
        s = _subject(g)
        rr = g.row_remap
        if rr.failure is None:
            return skipped("row remapping not reported (not supported or not read)", subject=s)
        if rr.failure:
            return failed(
                "row remapping failed: no spare rows left",
                observed="failure",
                expected="no failure",
                subject=s,
                evidence=rr.model_dump(),
            )
        return passed("no row remapping failure", subject=s, evidence=rr.model_dump())

    return _per_gpu(facts, judge)


@check(
    "gpu.pcie-link-degraded",
    title="Every GPU's PCIe link runs at its full width and generation",
    criterion=Criterion.RELIABILITY,
    severity=Severity.HIGH,
    rationale="A link trained below its width (x8 instead of x16) halves host-device "
    "bandwidth: a seating, riser or retimer fault.  Generation drops at idle to save "
    "power, so generation is judged only on a busy GPU.",
    remediation="Reseat the GPU or riser; check the slot, retimer and BIOS link settings.",
    needs=("nvidia",),
    profiles=("hardware", "health"),
    references=(_REF_SMI,),
)
def pcie_link_degraded(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    def judge(g: NvidiaGpu) -> Finding:
        s = _subject(g)
        p = g.pcie
        ev = p.model_dump()
        if p.width_current is None or p.width_max is None:
            return skipped("PCIe link width not reported", subject=s, evidence=ev)
        if p.width_current < p.width_max:
            return failed(
                f"PCIe link x{p.width_current}, GPU supports x{p.width_max}",
                observed=f"x{p.width_current}",
                expected=f"x{p.width_max}",
                subject=s,
                evidence=ev,
            )
        if p.gen_current is None or p.gen_max is None:
            return passed(f"PCIe width x{p.width_current} (generation not reported)", subject=s)
        if p.gen_current >= p.gen_max:
            return passed(f"PCIe Gen{p.gen_current} x{p.width_current}", subject=s, evidence=ev)
        idle = g.throttle_reasons is not None and GPU_IDLE in g.throttle_reasons
        if idle:
            return passed(
                f"PCIe x{p.width_current} at full width; Gen{p.gen_current} of Gen{p.gen_max} "
                "while idle (power saving, generation not judged)",
                subject=s,
                evidence=ev,
            )
        return warned(
            f"PCIe Gen{p.gen_current}, GPU supports Gen{p.gen_max}, and the GPU is not "
            "reported idle",
            observed=f"Gen{p.gen_current}",
            expected=f"Gen{p.gen_max}",
            subject=s,
            evidence=ev,
        )

    return _per_gpu(facts, judge)


@check(
    "gpu.nvlink-down",
    title="Every NVLink is up",
    criterion=Criterion.RELIABILITY,
    severity=Severity.HIGH,
    rationale="A down link on a GPU whose other links are up cuts its NVLink bandwidth "
    "and slows every collective it takes part in.",
    remediation="Check nvidia-smi nvlink -s and -e; reset the GPU; reseat or RMA the "
    "baseboard if the link stays down.",
    needs=("nvidia",),
    profiles=("hardware", "health"),
    references=(_REF_NVML,),
)
def nvlink_down(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    def judge(g: NvidiaGpu) -> Finding:
        s = _subject(g)
        if g.nvlinks is None:
            return skipped("NVLink state not read (nvidia-smi -q -x does not report it)", subject=s)
        if not g.nvlinks:
            return skipped("GPU has no NVLink", subject=s)
        down = [link.link for link in g.nvlinks if not link.up]
        up = len(g.nvlinks) - len(down)
        if down and up:
            return failed(
                f"NVLink(s) {', '.join(map(str, down))} down while {up} are up",
                observed=down,
                expected="all links up",
                subject=s,
            )
        if down:
            return skipped(f"all {len(down)} NVLinks down (not wired on this system?)", subject=s)
        return passed(f"all {up} NVLinks up", subject=s)

    return _per_gpu(facts, judge)


@check(
    "gpu.clocks-hw-throttle",
    title="No GPU is held down by a hardware slowdown",
    criterion=Criterion.RELIABILITY,
    severity=Severity.HIGH,
    rationale="HW thermal slowdown and power-brake slowdown cut clocks sharply; they "
    "point at cooling, power supply or an external brake signal, not at the workload.",
    remediation="Check inlet temperature, fans and airflow (thermal), PSU and power "
    "brake wiring (power brake); nvidia-smi -q -d PERFORMANCE shows the reasons.",
    needs=("nvidia",),
    profiles=("hardware", "health"),
    references=(_REF_NVML,),
)
def clocks_hw_throttle(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    def judge(g: NvidiaGpu) -> Finding:
        s = _subject(g)
        reasons = g.throttle_reasons
        if reasons is None:
            return skipped("clock event reasons not reported", subject=s)
        ev = {"active": reasons}
        hard = [r for r in (HW_THERMAL_SLOWDOWN, HW_POWER_BRAKE_SLOWDOWN) if r in reasons]
        if hard:
            return failed(
                f"hardware slowdown active: {', '.join(hard)}",
                observed=hard,
                expected="none",
                subject=s,
                evidence=ev,
            )
        if HW_SLOWDOWN in reasons:
            return warned(
                "hardware slowdown active (cause not reported)",
                observed=[HW_SLOWDOWN],
                expected="none",
                subject=s,
                evidence=ev,
            )
        return passed("no hardware slowdown", subject=s, evidence=ev)

    return _per_gpu(facts, judge)


@check(
    "gpu.persistence-mode",
    title="Persistence mode is on",
    criterion=Criterion.RELIABILITY,
    severity=Severity.LOW,
    rationale="Without persistence the driver tears GPU state down when the last client "
    "exits: slow job starts, and ECC/remap state re-initialised between jobs.",
    remediation="Run nvidia-persistenced (systemctl enable --now nvidia-persistenced).",
    needs=("nvidia",),
    profiles=("hardware",),
    references=(_REF_PERSIST,),
)
def persistence_mode(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    def judge(g: NvidiaGpu) -> Finding:
        s = _subject(g)
        if g.persistence_mode is None:
            return skipped("persistence mode not reported", subject=s)
        if not g.persistence_mode:
            return warned("persistence mode off", observed="off", expected="on", subject=s)
        return passed("persistence mode on", observed="on", subject=s)

    return _per_gpu(facts, judge)


@check(
    "gpu.mig-pending",
    title="No MIG mode change is waiting for a GPU reset",
    criterion=Criterion.RELIABILITY,
    severity=Severity.MEDIUM,
    rationale="A pending MIG change means the GPU runs in a different mode than the "
    "one configured; the scheduler and the GPU disagree until a reset.",
    remediation="Drain the node and reset the GPU, or revert the pending mode.",
    needs=("nvidia",),
    profiles=("hardware",),
    references=(_REF_MIG,),
)
def mig_pending(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    def judge(g: NvidiaGpu) -> Finding:
        s = _subject(g)
        if g.mig_current is None or g.mig_pending is None:
            return skipped("MIG mode not reported (not a MIG-capable GPU)", subject=s)

        def word(v: bool) -> str:
            return "enabled" if v else "disabled"

        if g.mig_current != g.mig_pending:
            return warned(
                f"MIG {word(g.mig_current)} now, {word(g.mig_pending)} after the next reset",
                observed=word(g.mig_current),
                expected=word(g.mig_pending),
                subject=s,
            )
        return passed(f"MIG {word(g.mig_current)}, nothing pending", subject=s)

    return _per_gpu(facts, judge)


@check(
    "gpu.fabric-state",
    title="Every GPU has joined the NVLink fabric",
    criterion=Criterion.RELIABILITY,
    severity=Severity.CRITICAL,
    rationale="On NVL72-class systems a GPU whose fabric registration is not completed "
    "cannot use multi-node NVLink: jobs fail or fall back to the network.",
    remediation="Check nvidia-fabricmanager / NVLink Subnet Manager and IMEX on the "
    "rack; nvidia-smi -q shows the Fabric state and status per GPU.",
    needs=("nvidia",),
    profiles=("hardware", "health"),
    references=(_REF_FABRIC,),
)
def fabric_state(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    nv = facts.nvidia
    assert nv is not None
    if not nv.driver_loaded or not nv.gpus:
        return skipped("no NVIDIA GPU readings")
    if all(g.fabric.state is None for g in nv.gpus):
        return skipped("no GPU reports a fabric state (not an NVLink-fabric system)")
    out: list[Finding] = []
    for g in nv.gpus:
        s = _subject(g)
        f = g.fabric
        ev = f.model_dump()
        if f.state is None:
            out.append(
                failed(
                    "no fabric state while other GPUs report one",
                    subject=s,
                    evidence=ev,
                )
            )
        elif f.state.lower() != "completed":
            out.append(
                failed(
                    f"fabric registration {f.state}",
                    observed=f.state,
                    expected="Completed",
                    subject=s,
                    evidence=ev,
                )
            )
        elif f.status is not None and f.status.lower() != "success":
            out.append(
                failed(
                    f"fabric registration completed with status {f.status}",
                    observed=f.status,
                    expected="Success",
                    subject=s,
                    evidence=ev,
                )
            )
        else:
            out.append(passed(f"fabric Completed (clique {f.clique_id})", subject=s, evidence=ev))
    return out


@check(
    "gpu.count-consistent",
    title="All GPUs are the same model with the same VBIOS",
    criterion=Criterion.RELIABILITY,
    severity=Severity.MEDIUM,
    rationale="A node mixing GPU models runs collectives at the slowest one; VBIOS drift "
    "between identical GPUs points at a partial firmware update.",
    remediation="Replace the odd GPU; update every GPU's firmware to the same bundle.",
    needs=("nvidia",),
    profiles=("hardware",),
    references=(_REF_SMI,),
)
def count_consistent(facts: NodeFacts, kb: KnowledgeBase) -> Finding:
    nv = facts.nvidia
    assert nv is not None
    if not nv.driver_loaded or not nv.gpus:
        return skipped("no NVIDIA GPU readings")
    models = sorted({g.name or "?" for g in nv.gpus})
    vbios = sorted({g.vbios or "?" for g in nv.gpus})
    ev: dict[str, Any] = {"models": models, "vbios": vbios, "listed": len(nv.gpus)}
    if nv.gpu_count is not None:
        ev["reported"] = nv.gpu_count
    if len(models) > 1:
        return failed(
            f"mixed GPU models: {', '.join(models)}",
            observed=models,
            expected="one model",
            evidence=ev,
        )
    if len(vbios) > 1:
        return warned(
            f"VBIOS differs across {len(nv.gpus)} {models[0]} GPUs: {', '.join(vbios)}",
            observed=vbios,
            expected="one VBIOS",
            evidence=ev,
        )
    return passed(
        f"{len(nv.gpus)} x {models[0]}, VBIOS {vbios[0]}",
        observed=len(nv.gpus),
        evidence=ev,
    )


@check(
    "gpu.model-known",
    title="The GPU model is in the knowledge base",
    criterion=Criterion.RELIABILITY,
    severity=Severity.LOW,
    rationale="Performance and configuration expectations are per model; a model the "
    "knowledge base does not know is judged against nothing.",
    remediation="Add the model to kb/data/gpus.yaml (with sources) or report it upstream.",
    needs=("nvidia",),
    profiles=("hardware",),
)
def model_known(facts: NodeFacts, kb: KnowledgeBase) -> Finding | list[Finding]:
    if not kb.gpus.gpus:
        return skipped("the knowledge base has no GPU catalogue")

    def judge(g: NvidiaGpu) -> Finding:
        s = _subject(g)
        if not g.name:
            return skipped("GPU model name not reported", subject=s)
        model = kb.gpu_model(g.name)
        if model is None:
            return warned(f"{g.name} is not in the knowledge base", observed=g.name, subject=s)
        return passed(f"{g.name} is {model.id}", observed=g.name, expected=model.id, subject=s)

    return _per_gpu(facts, judge)


def _driver_observed(nv: NvidiaFacts) -> Iterable[Observed]:
    if not nv.driver_loaded and not nv.driver_version:
        return []
    return [
        Observed(
            version=nv.driver_version,
            installed=nv.driver_loaded or nv.driver_version is not None,
            source="/proc/driver/nvidia/version" if nv.source == "procfs" else nv.source,
        )
    ]


@observer("nvidia-driver", needs=("nvidia",))
def nvidia_driver(facts: NodeFacts) -> Iterable[Observed]:
    nv = facts.nvidia
    if nv is None:
        return []
    return _driver_observed(nv)
