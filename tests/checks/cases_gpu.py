"""Check cases for the GPU checks, from real nvidia-smi -q -x captures replayed
through the nvidia collector (tests/gpu/replay.py; sources in
tests/fixtures/nvidia/PROVENANCE.md).  A case that changes a capture says
which field in its origin."""

from __future__ import annotations

from clustergrade.facts.gpu import (
    GPU_IDLE,
    HW_SLOWDOWN,
    HW_THERMAL_SLOWDOWN,
    EccCounts,
    Fabric,
    NvLink,
    PcieLink,
    RetiredPages,
    RowRemap,
)
from clustergrade.facts.node import NodeFacts
from clustergrade.results import Status
from tests.gpu.replay import (
    ORIGIN_A100,
    ORIGIN_P100,
    a100,
    change_driver,
    change_gpu,
    no_driver,
    nothing_nvidia,
    p100,
    with_gpus,
)
from tests.helpers import Case, kb
from tests.host.fixture_tree import tree_facts

A, P = ORIGIN_A100, ORIGIN_P100
ZERO_REMAP = RowRemap(correctable=0, uncorrectable=0, pending=False, failure=False)
# A100 SXM4 has 12 NVLinks.
LINKS_UP = [NvLink(link=i, up=True) for i in range(12)]
FABRIC_OK = Fabric(
    state="Completed",
    status="Success",
    clique_id="1",
    cluster_uuid="0f0e0d0c-0b0a-0908-0706-050403020100",
)


def _a100_remap(rr: RowRemap) -> NodeFacts:
    return change_gpu(a100(), row_remap=rr)


def _two_a100(vbios: str) -> NodeFacts:
    f = a100()
    assert f.nvidia is not None
    g = f.nvidia.gpus[0]
    return with_gpus(f, [g, g.model_copy(update={"index": 1, "vbios": vbios})])


def _a100_and_p100() -> NodeFacts:
    f = a100()
    p = p100()
    assert f.nvidia is not None and p.nvidia is not None
    return with_gpus(f, [f.nvidia.gpus[0], p.nvidia.gpus[0].model_copy(update={"index": 1})])


CASES: list[Case] = [
    Case("gpu.driver-loaded", Status.PASS, a100, A),
    Case(
        "gpu.driver-loaded",
        Status.FAIL,
        no_driver,
        "nvidia-smi exit 9 'couldn't communicate with the NVIDIA driver', procfs absent (hand-built)",
    ),
    Case("gpu.driver-loaded", Status.SKIP, nothing_nvidia, "no nvidia-smi, no procfs file"),
    Case(
        "gpu.driver-loaded",
        Status.FAIL,
        lambda: tree_facts(
            "a100-derived",
            ["pci", "nvidia"],
            missing_commands=[["nvidia-smi", "-q", "-x"]],
            missing_files=["/proc/driver/nvidia/version"],
        ),
        "host fixture a100-derived (A100 on the PCI bus); nvidia-smi and the procfs file removed",
    ),
    Case("gpu.ecc-enabled", Status.PASS, a100, A),
    Case("gpu.ecc-enabled", Status.PASS, p100, P),
    Case(
        "gpu.ecc-enabled",
        Status.FAIL,
        lambda: change_gpu(a100(), ecc_current=False, ecc_pending=False),
        A + "; ecc current/pending set to disabled",
        subject="GPU 0",
    ),
    Case(
        "gpu.ecc-enabled",
        Status.WARN,
        lambda: change_gpu(a100(), ecc_pending=False),
        A + "; ecc pending set to disabled",
    ),
    Case("gpu.ecc-uncorrectable", Status.PASS, p100, P + " (aggregate SBE 3, no DBE)"),
    Case(
        "gpu.ecc-uncorrectable",
        Status.FAIL,
        lambda: change_gpu(
            p100(),
            ecc=EccCounts(
                volatile_correctable=0,
                volatile_uncorrectable=2,
                aggregate_correctable=3,
                aggregate_uncorrectable=2,
            ),
        ),
        P + "; volatile and aggregate uncorrectable set to 2",
    ),
    Case(
        "gpu.ecc-uncorrectable",
        Status.WARN,
        lambda: change_gpu(
            p100(),
            ecc=EccCounts(
                volatile_correctable=0,
                volatile_uncorrectable=0,
                aggregate_correctable=3,
                aggregate_uncorrectable=1,
            ),
        ),
        P + "; aggregate uncorrectable set to 1",
    ),
    Case("gpu.retired-pages-pending", Status.PASS, p100, P + " (retirement pending: No)"),
    Case("gpu.retired-pages-pending", Status.SKIP, a100, A + " (retired pages N/A on A100)"),
    Case(
        "gpu.retired-pages-pending",
        Status.WARN,
        lambda: change_gpu(
            p100(), retired_pages=RetiredPages(single_bit=0, double_bit=1, pending=True)
        ),
        P + "; one DBE retirement pending",
    ),
    Case("gpu.row-remap-pending", Status.SKIP, a100, A + " (remapped_rows N/A in MIG mode)"),
    Case(
        "gpu.row-remap-pending",
        Status.PASS,
        lambda: _a100_remap(ZERO_REMAP),
        A + "; remapped rows set to 0/0, pending No, failure No",
    ),
    Case(
        "gpu.row-remap-pending",
        Status.WARN,
        lambda: _a100_remap(ZERO_REMAP.model_copy(update={"uncorrectable": 1, "pending": True})),
        A + "; one uncorrectable remap pending",
    ),
    Case(
        "gpu.row-remap-failure",
        Status.PASS,
        lambda: _a100_remap(ZERO_REMAP),
        A + "; remapped rows set to 0/0, pending No, failure No",
    ),
    Case(
        "gpu.row-remap-failure",
        Status.FAIL,
        lambda: _a100_remap(ZERO_REMAP.model_copy(update={"uncorrectable": 8, "failure": True})),
        A + "; remap failure set to Yes",
    ),
    Case("gpu.pcie-link-degraded", Status.PASS, a100, A + " (Gen4 x16 of Gen4 x16)"),
    Case(
        "gpu.pcie-link-degraded",
        Status.FAIL,
        lambda: change_gpu(
            a100(), pcie=PcieLink(gen_current=4, gen_max=4, width_current=8, width_max=16)
        ),
        A + "; current link width set to 8x",
    ),
    Case(
        "gpu.pcie-link-degraded",
        Status.PASS,
        lambda: change_gpu(
            p100(), pcie=PcieLink(gen_current=1, gen_max=3, width_current=16, width_max=16)
        ),
        P + " (gpu_idle active); current link gen set to 1",
    ),
    Case(
        "gpu.pcie-link-degraded",
        Status.WARN,
        lambda: change_gpu(
            a100(), pcie=PcieLink(gen_current=3, gen_max=4, width_current=16, width_max=16)
        ),
        A + " (not idle); current link gen set to 3",
    ),
    Case("gpu.nvlink-down", Status.SKIP, a100, A + " (nvidia-smi XML has no link state)"),
    Case(
        "gpu.nvlink-down",
        Status.PASS,
        lambda: change_gpu(a100(), nvlinks=LINKS_UP),
        A + "; nvlinks set to 12 links up (as NVML reports them)",
    ),
    Case(
        "gpu.nvlink-down",
        Status.FAIL,
        lambda: change_gpu(
            a100(), nvlinks=[link.model_copy(update={"up": link.link != 3}) for link in LINKS_UP]
        ),
        A + "; nvlinks set to 12 links, link 3 down",
    ),
    Case("gpu.clocks-hw-throttle", Status.PASS, a100, A + " (no clock event reason active)"),
    Case("gpu.clocks-hw-throttle", Status.PASS, p100, P + " (only gpu_idle active)"),
    Case(
        "gpu.clocks-hw-throttle",
        Status.FAIL,
        lambda: change_gpu(a100(), throttle_reasons=[HW_SLOWDOWN, HW_THERMAL_SLOWDOWN]),
        A + "; hw_slowdown and hw_thermal_slowdown set active",
    ),
    Case(
        "gpu.clocks-hw-throttle",
        Status.WARN,
        lambda: change_gpu(p100(), throttle_reasons=[GPU_IDLE, HW_SLOWDOWN]),
        P + "; hw_slowdown set active",
    ),
    Case("gpu.persistence-mode", Status.WARN, a100, A + " (persistence mode Disabled)"),
    Case(
        "gpu.persistence-mode",
        Status.PASS,
        lambda: change_gpu(a100(), persistence_mode=True),
        A + "; persistence mode set to Enabled",
    ),
    Case("gpu.mig-pending", Status.PASS, a100, A + " (MIG Enabled, pending Enabled)"),
    Case("gpu.mig-pending", Status.SKIP, p100, P + " (MIG N/A)"),
    Case(
        "gpu.mig-pending",
        Status.WARN,
        lambda: change_gpu(a100(), mig_pending=False),
        A + "; pending MIG set to Disabled",
    ),
    Case("gpu.fabric-state", Status.SKIP, a100, A + " (fabric state N/A)"),
    Case(
        "gpu.fabric-state",
        Status.PASS,
        lambda: change_gpu(a100(), fabric=FABRIC_OK),
        A + "; fabric set to Completed/Success",
    ),
    Case(
        "gpu.fabric-state",
        Status.FAIL,
        lambda: change_gpu(
            a100(), fabric=FABRIC_OK.model_copy(update={"state": "In Progress", "status": None})
        ),
        A + "; fabric state set to In Progress",
    ),
    Case(
        "gpu.fabric-state",
        Status.FAIL,
        lambda: change_gpu(
            a100(), fabric=FABRIC_OK.model_copy(update={"status": "NVML error 999"})
        ),
        A + "; fabric status set to an error",
    ),
    Case("gpu.count-consistent", Status.PASS, a100, A),
    Case(
        "gpu.count-consistent",
        Status.PASS,
        lambda: _two_a100("92.00.36.00.02"),
        A + "; GPU 0 listed twice (same VBIOS)",
    ),
    Case(
        "gpu.count-consistent",
        Status.WARN,
        lambda: _two_a100("92.00.45.00.03"),
        A + "; GPU 0 listed twice, second VBIOS changed",
    ),
    Case(
        "gpu.count-consistent",
        Status.FAIL,
        _a100_and_p100,
        "A100 capture's GPU with the P100 capture's GPU as GPU 1",
    ),
    Case("version.nvidia-driver", Status.FAIL, a100, A + " (535.54.03 predates R535 fixes)"),
    Case(
        "version.nvidia-driver",
        Status.PASS,
        lambda: change_driver(a100(), driver_version="595.71.05", branch="595"),
        A + "; driver version set to 595.71.05",
    ),
    Case("version.nvidia-driver", Status.SKIP, nothing_nvidia, "no NVIDIA driver at all"),
]

# The model catalogue (kb/data/gpus.yaml) is filled elsewhere; until it knows
# the A100 these cases would judge against nothing (tests/gpu covers the
# check with a locally built catalogue).
if kb().gpu_model("NVIDIA A100-SXM4-80GB") is not None:
    CASES += [
        Case("gpu.model-known", Status.PASS, a100, A),
        Case(
            "gpu.model-known",
            Status.WARN,
            lambda: change_gpu(a100(), name="NVIDIA Imaginary X1"),
            A + "; product name set to an unknown model",
        ),
    ]
