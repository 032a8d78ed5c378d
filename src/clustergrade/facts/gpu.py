"""Facts: the node's GPUs as the vendor tools report them (NVIDIA, AMD).

Every reading is optional: ``None`` means "not reported" (not supported by
this GPU or driver, or not readable), never "zero" or "off".  Checks turn
``None`` into SKIP, so an unsupported counter is not mistaken for a clean one.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from clustergrade.facts.base import FactModel

#: Clock event (throttle) reason names, shared by the NVML and nvidia-smi
#: readers: nvidia-smi's ``clocks_event_reason_<name>`` tags and NVML's
#: ``nvmlClocksEventReason*`` bits map onto these.
GPU_IDLE = "gpu_idle"
APPLICATIONS_CLOCKS_SETTING = "applications_clocks_setting"
SW_POWER_CAP = "sw_power_cap"
HW_SLOWDOWN = "hw_slowdown"
SYNC_BOOST = "sync_boost"
SW_THERMAL_SLOWDOWN = "sw_thermal_slowdown"
HW_THERMAL_SLOWDOWN = "hw_thermal_slowdown"
HW_POWER_BRAKE_SLOWDOWN = "hw_power_brake_slowdown"
DISPLAY_CLOCKS_SETTING = "display_clocks_setting"

#: Reasons that mean the hardware itself pulled the clocks down.
HW_THROTTLE_REASONS = (HW_SLOWDOWN, HW_THERMAL_SLOWDOWN, HW_POWER_BRAKE_SLOWDOWN)


class EccCounts(FactModel):
    """ECC error counters; SRAM and DRAM (or single/double bit) summed."""

    volatile_correctable: int | None = None
    volatile_uncorrectable: int | None = None
    aggregate_correctable: int | None = None
    aggregate_uncorrectable: int | None = None


class RetiredPages(FactModel):
    """Dynamic page retirement (pre-Ampere); None throughout where unsupported."""

    single_bit: int | None = None
    double_bit: int | None = None
    pending: bool | None = None


class RowRemap(FactModel):
    """Row remapping (Ampere and newer)."""

    correctable: int | None = None
    uncorrectable: int | None = None
    pending: bool | None = None
    failure: bool | None = None


class Clocks(FactModel):
    sm_mhz: int | None = None
    sm_max_mhz: int | None = None
    mem_mhz: int | None = None
    mem_max_mhz: int | None = None


class PcieLink(FactModel):
    gen_current: int | None = None
    gen_max: int | None = None
    width_current: int | None = None
    width_max: int | None = None


class NvLink(FactModel):
    link: int
    up: bool


class Fabric(FactModel):
    """NVLink fabric registration (NVL72 and other multi-node NVLink systems).

    ``state`` is nvidia-smi's wording ("Completed", "In Progress", "Not
    Started"); ``status`` is "Success" or the error it reports.  Both None on
    GPUs without a fabric.
    """

    state: str | None = None
    status: str | None = None
    clique_id: str | None = None
    cluster_uuid: str | None = None


class NvidiaGpu(FactModel):
    #: Position in nvidia-smi / NVML enumeration order (what ``-i`` takes).
    index: int
    name: str | None = None
    serial: str | None = None
    uuid: str | None = None
    vbios: str | None = None
    pci_bus_id: str | None = None
    minor_number: int | None = None
    memory_total_mib: int | None = None
    ecc_current: bool | None = None
    ecc_pending: bool | None = None
    ecc: EccCounts = Field(default_factory=EccCounts)
    retired_pages: RetiredPages = Field(default_factory=RetiredPages)
    row_remap: RowRemap = Field(default_factory=RowRemap)
    clocks: Clocks = Field(default_factory=Clocks)
    #: Active clock event reasons (names above); None when not reported.
    throttle_reasons: list[str] | None = None
    pcie: PcieLink = Field(default_factory=PcieLink)
    #: Per-link NVLink state; None when not read (nvidia-smi -q -x has none),
    #: [] when the GPU has no NVLink.
    nvlinks: list[NvLink] | None = None
    mig_current: bool | None = None
    mig_pending: bool | None = None
    persistence_mode: bool | None = None
    fabric: Fabric = Field(default_factory=Fabric)
    performance_state: str | None = None
    utilization_pct: int | None = None
    temperature_c: float | None = None
    power_draw_w: float | None = None
    power_limit_w: float | None = None


class NvidiaFacts(FactModel):
    """What the NVIDIA driver reports about the node."""

    #: True when NVML initialised, nvidia-smi answered or the kernel module's
    #: /proc/driver/nvidia/version exists.
    driver_loaded: bool
    #: Raw, as reported ("535.54.03").
    driver_version: str | None = None
    #: The release branch: the version's first component ("535").
    branch: str | None = None
    #: CUDA version the driver supports ("12.2").
    cuda_driver_version: str | None = None
    source: Literal["nvml", "nvidia-smi", "procfs", "none"] = "none"
    #: First line of /proc/driver/nvidia/version, as read (no root needed).
    proc_version: str | None = None
    #: Whether the nvidia-smi program exists on the node.
    smi_installed: bool | None = None
    #: How nvidia-smi failed, when it is installed but did not answer.
    smi_error: str | None = None
    #: Number of GPUs the driver reports (NVML device count, nvidia-smi
    #: attached_gpus); may exceed ``len(gpus)`` when a GPU could not be read.
    gpu_count: int | None = None
    gpus: list[NvidiaGpu] = Field(default_factory=list)


class AmdGpu(FactModel):
    index: int
    model: str | None = None
    vbios: str | None = None
    pci_bus_id: str | None = None
    serial: str | None = None
    memory_total_mib: int | None = None


class AmdFacts(FactModel):
    """What amd-smi reports; ``present`` is False when amd-smi is not installed."""

    present: bool
    amd_smi_version: str | None = None
    rocm_version: str | None = None
    driver_version: str | None = None
    gpu_count: int | None = None
    gpus: list[AmdGpu] = Field(default_factory=list)
