"""Read NVIDIA GPUs through NVML.

The reader talks to a small protocol (:class:`NvmlApi`), not to pynvml, so
tests can answer with recorded readings.  :func:`load_pynvml` is the real
implementation; it imports pynvml only when called, and a missing package or
a missing ``libnvidia-ml.so`` is an answer ("NVML unavailable"), not a crash.

Every call can fail on its own.  NVML's "not supported" is a fact (the field
stays None); any other failure leaves the field None and is listed in
``errors`` for the collector to record.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from clustergrade.facts.gpu import (
    APPLICATIONS_CLOCKS_SETTING,
    DISPLAY_CLOCKS_SETTING,
    GPU_IDLE,
    HW_POWER_BRAKE_SLOWDOWN,
    HW_SLOWDOWN,
    HW_THERMAL_SLOWDOWN,
    SW_POWER_CAP,
    SW_THERMAL_SLOWDOWN,
    SYNC_BOOST,
    Clocks,
    EccCounts,
    Fabric,
    NvidiaGpu,
    NvLink,
    PcieLink,
    RetiredPages,
    RowRemap,
)

T = TypeVar("T")

# nvmlReturn_t values the reader tells apart (nvml.h).
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NOT_FOUND = 6
#: More links than any GPU has (NVML_NVLINK_MAX_LINKS is 18 before 550, 36 after).
MAX_NVLINKS = 36
MAX_GPUS = 256

#: nvmlClocksEventReason* bits (nvml.h) by the names the facts use.
CLOCK_EVENT_BITS: dict[int, str] = {
    0x1: GPU_IDLE,
    0x2: APPLICATIONS_CLOCKS_SETTING,
    0x4: SW_POWER_CAP,
    0x8: HW_SLOWDOWN,
    0x10: SYNC_BOOST,
    0x20: SW_THERMAL_SLOWDOWN,
    0x40: HW_THERMAL_SLOWDOWN,
    0x80: HW_POWER_BRAKE_SLOWDOWN,
    0x100: DISPLAY_CLOCKS_SETTING,
}

#: nvmlGpuFabricState_t, worded as nvidia-smi prints it.
FABRIC_STATES = {0: None, 1: "Not Started", 2: "In Progress", 3: "Completed"}


class NvmlApi(Protocol):
    """The NVML readings the collector uses; GPUs are addressed by index.

    Each method may raise; an exception with ``value == 3``
    (NVML_ERROR_NOT_SUPPORTED) means the GPU or driver lacks the feature.
    """

    def init(self) -> None: ...
    def shutdown(self) -> None: ...
    def driver_version(self) -> str: ...
    def cuda_driver_version(self) -> int: ...
    def device_count(self) -> int: ...
    def name(self, i: int) -> str: ...
    def serial(self, i: int) -> str: ...
    def uuid(self, i: int) -> str: ...
    def vbios(self, i: int) -> str: ...
    def pci_bus_id(self, i: int) -> str: ...
    def minor_number(self, i: int) -> int: ...
    def memory_total_bytes(self, i: int) -> int: ...
    def ecc_mode(self, i: int) -> tuple[int, int]: ...
    def ecc_errors(self, i: int, uncorrected: bool, aggregate: bool) -> int: ...
    def retired_pages(self, i: int, double_bit: bool) -> int: ...
    def retired_pages_pending(self, i: int) -> bool: ...
    def remapped_rows(self, i: int) -> tuple[int, int, bool, bool]: ...
    def clock_mhz(self, i: int, kind: str, maximum: bool) -> int: ...
    def clock_event_reasons(self, i: int) -> int: ...
    def pcie_gen(self, i: int, maximum: bool) -> int: ...
    def pcie_width(self, i: int, maximum: bool) -> int: ...
    def nvlink_up(self, i: int, link: int) -> bool: ...
    def mig_mode(self, i: int) -> tuple[int, int]: ...
    def persistence_mode(self, i: int) -> int: ...
    def fabric(self, i: int) -> tuple[int, int, int, str]: ...
    def performance_state(self, i: int) -> int: ...
    def utilization_pct(self, i: int) -> int: ...
    def temperature_c(self, i: int) -> int: ...
    def power_usage_mw(self, i: int) -> int: ...
    def power_limit_mw(self, i: int) -> int: ...


@dataclass
class NvmlReading:
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    gpu_count: int | None = None
    gpus: list[NvidiaGpu] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _code(exc: BaseException) -> int | None:
    value = getattr(exc, "value", None)
    return value if isinstance(value, int) else None


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


class _Calls:
    """Runs NVML calls, turning failures into None and collecting errors."""

    def __init__(self, reading: NvmlReading) -> None:
        self.reading = reading

    def __call__(self, what: str, fn: Callable[[], T]) -> T | None:
        try:
            return fn()
        except Exception as exc:
            if _code(exc) not in (NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_NOT_FOUND):
                self.reading.errors.append(f"NVML {what}: {_describe(exc)}")
            return None


def _cuda_version(raw: int | None) -> str | None:
    # NVML encodes 12.2 as 12020.
    if raw is None or raw <= 0:
        return None
    return f"{raw // 1000}.{(raw % 1000) // 10}"


def _bool(v: int | bool | None) -> bool | None:
    return None if v is None else bool(v)


def _reasons(mask: int | None) -> list[str] | None:
    if mask is None:
        return None
    return [name for bit, name in CLOCK_EVENT_BITS.items() if mask & bit]


def _nvlinks(api: NvmlApi, i: int, call: _Calls) -> list[NvLink] | None:
    links: list[NvLink] = []
    for link in range(MAX_NVLINKS):
        try:
            up = api.nvlink_up(i, link)
        except Exception as exc:
            code = _code(exc)
            if code == NVML_ERROR_NOT_SUPPORTED and link == 0:
                return []
            if code in (NVML_ERROR_INVALID_ARGUMENT, NVML_ERROR_NOT_SUPPORTED):
                # Past the GPU's last link.
                break
            call.reading.errors.append(f"NVML GPU {i} NVLink {link} state: {_describe(exc)}")
            return None
        links.append(NvLink(link=link, up=bool(up)))
    return links


def _gpu(api: NvmlApi, i: int, call: _Calls) -> NvidiaGpu:
    g = f"GPU {i}"
    ecc_mode = call(f"{g} ECC mode", lambda: api.ecc_mode(i))
    mig = call(f"{g} MIG mode", lambda: api.mig_mode(i))
    remap = call(f"{g} remapped rows", lambda: api.remapped_rows(i))
    fab = call(f"{g} fabric info", lambda: api.fabric(i))
    mem = call(f"{g} memory info", lambda: api.memory_total_bytes(i))
    power = call(f"{g} power usage", lambda: api.power_usage_mw(i))
    limit = call(f"{g} power limit", lambda: api.power_limit_mw(i))
    pstate = call(f"{g} performance state", lambda: api.performance_state(i))
    temp = call(f"{g} temperature", lambda: api.temperature_c(i))

    def ecc(unc: bool, agg: bool) -> int | None:
        label = f"{g} {'aggregate' if agg else 'volatile'} {'un' if unc else ''}corrected ECC"
        return call(label, lambda: api.ecc_errors(i, unc, agg))

    fabric = Fabric()
    if fab is not None:
        state = FABRIC_STATES.get(fab[0], f"state {fab[0]}")
        if state is not None:
            fabric = Fabric(
                state=state,
                status="Success" if fab[1] == 0 else f"NVML error {fab[1]}",
                clique_id=str(fab[2]),
                cluster_uuid=fab[3] or None,
            )
    return NvidiaGpu(
        index=i,
        name=call(f"{g} name", lambda: api.name(i)),
        serial=call(f"{g} serial", lambda: api.serial(i)),
        uuid=call(f"{g} UUID", lambda: api.uuid(i)),
        vbios=call(f"{g} VBIOS version", lambda: api.vbios(i)),
        pci_bus_id=call(f"{g} PCI info", lambda: api.pci_bus_id(i)),
        minor_number=call(f"{g} minor number", lambda: api.minor_number(i)),
        memory_total_mib=None if mem is None else mem // (1024 * 1024),
        ecc_current=None if ecc_mode is None else bool(ecc_mode[0]),
        ecc_pending=None if ecc_mode is None else bool(ecc_mode[1]),
        ecc=EccCounts(
            volatile_correctable=ecc(False, False),
            volatile_uncorrectable=ecc(True, False),
            aggregate_correctable=ecc(False, True),
            aggregate_uncorrectable=ecc(True, True),
        ),
        retired_pages=RetiredPages(
            single_bit=call(f"{g} retired pages (SBE)", lambda: api.retired_pages(i, False)),
            double_bit=call(f"{g} retired pages (DBE)", lambda: api.retired_pages(i, True)),
            pending=_bool(call(f"{g} retired pages pending", lambda: api.retired_pages_pending(i))),
        ),
        row_remap=RowRemap()
        if remap is None
        else RowRemap(
            correctable=remap[0],
            uncorrectable=remap[1],
            pending=bool(remap[2]),
            failure=bool(remap[3]),
        ),
        clocks=Clocks(
            sm_mhz=call(f"{g} SM clock", lambda: api.clock_mhz(i, "sm", False)),
            sm_max_mhz=call(f"{g} max SM clock", lambda: api.clock_mhz(i, "sm", True)),
            mem_mhz=call(f"{g} memory clock", lambda: api.clock_mhz(i, "mem", False)),
            mem_max_mhz=call(f"{g} max memory clock", lambda: api.clock_mhz(i, "mem", True)),
        ),
        throttle_reasons=_reasons(
            call(f"{g} clock event reasons", lambda: api.clock_event_reasons(i))
        ),
        pcie=PcieLink(
            gen_current=call(f"{g} PCIe generation", lambda: api.pcie_gen(i, False)),
            gen_max=call(f"{g} max PCIe generation", lambda: api.pcie_gen(i, True)),
            width_current=call(f"{g} PCIe width", lambda: api.pcie_width(i, False)),
            width_max=call(f"{g} max PCIe width", lambda: api.pcie_width(i, True)),
        ),
        nvlinks=_nvlinks(api, i, call),
        mig_current=None if mig is None else bool(mig[0]),
        mig_pending=None if mig is None else bool(mig[1]),
        persistence_mode=_bool(call(f"{g} persistence mode", lambda: api.persistence_mode(i))),
        fabric=fabric,
        performance_state=None if pstate is None or pstate == 32 else f"P{pstate}",
        utilization_pct=call(f"{g} utilization", lambda: api.utilization_pct(i)),
        temperature_c=None if temp is None else float(temp),
        power_draw_w=None if power is None else power / 1000.0,
        power_limit_w=None if limit is None else limit / 1000.0,
    )


def read_nvml(api: NvmlApi) -> tuple[NvmlReading | None, str | None]:
    """(reading, None), or (None, why NVML is unavailable) when it does not
    initialise (no library, no driver): that is a fact, not an error."""
    try:
        api.init()
    except Exception as exc:
        return None, f"NVML did not initialise: {_describe(exc)}"
    reading = NvmlReading()
    call = _Calls(reading)
    try:
        reading.driver_version = call("driver version", api.driver_version)
        reading.cuda_driver_version = _cuda_version(
            call("CUDA driver version", api.cuda_driver_version)
        )
        count = call("device count", api.device_count)
        reading.gpu_count = count
        for i in range(min(count or 0, MAX_GPUS)):
            reading.gpus.append(_gpu(api, i, call))
    finally:
        try:
            api.shutdown()
        except Exception as exc:
            reading.errors.append(f"NVML shutdown: {_describe(exc)}")
    return reading, None


def _s(v: Any) -> str:
    return v.decode("utf-8", errors="replace") if isinstance(v, bytes) else str(v)


class PynvmlApi:
    """:class:`NvmlApi` over the ``nvidia-ml-py`` package."""

    def __init__(self, nv: Any) -> None:
        self._nv = nv
        self._handles: dict[int, Any] = {}

    def _h(self, i: int) -> Any:
        if i not in self._handles:
            self._handles[i] = self._nv.nvmlDeviceGetHandleByIndex(i)
        return self._handles[i]

    def init(self) -> None:
        self._nv.nvmlInit()

    def shutdown(self) -> None:
        self._nv.nvmlShutdown()

    def driver_version(self) -> str:
        return _s(self._nv.nvmlSystemGetDriverVersion())

    def cuda_driver_version(self) -> int:
        return int(self._nv.nvmlSystemGetCudaDriverVersion())

    def device_count(self) -> int:
        return int(self._nv.nvmlDeviceGetCount())

    def name(self, i: int) -> str:
        return _s(self._nv.nvmlDeviceGetName(self._h(i)))

    def serial(self, i: int) -> str:
        return _s(self._nv.nvmlDeviceGetSerial(self._h(i)))

    def uuid(self, i: int) -> str:
        return _s(self._nv.nvmlDeviceGetUUID(self._h(i)))

    def vbios(self, i: int) -> str:
        return _s(self._nv.nvmlDeviceGetVbiosVersion(self._h(i)))

    def pci_bus_id(self, i: int) -> str:
        return _s(self._nv.nvmlDeviceGetPciInfo(self._h(i)).busId)

    def minor_number(self, i: int) -> int:
        return int(self._nv.nvmlDeviceGetMinorNumber(self._h(i)))

    def memory_total_bytes(self, i: int) -> int:
        return int(self._nv.nvmlDeviceGetMemoryInfo(self._h(i)).total)

    def ecc_mode(self, i: int) -> tuple[int, int]:
        cur, pend = self._nv.nvmlDeviceGetEccMode(self._h(i))
        return int(cur), int(pend)

    def ecc_errors(self, i: int, uncorrected: bool, aggregate: bool) -> int:
        # nvmlMemoryErrorType_t: 0 corrected, 1 uncorrected;
        # nvmlEccCounterType_t: 0 volatile, 1 aggregate.
        return int(
            self._nv.nvmlDeviceGetTotalEccErrors(self._h(i), int(uncorrected), int(aggregate))
        )

    def retired_pages(self, i: int, double_bit: bool) -> int:
        # nvmlPageRetirementCause_t: 0 multiple single-bit, 1 double-bit.
        return len(self._nv.nvmlDeviceGetRetiredPages(self._h(i), int(double_bit)))

    def retired_pages_pending(self, i: int) -> bool:
        return bool(self._nv.nvmlDeviceGetRetiredPagesPendingStatus(self._h(i)))

    def remapped_rows(self, i: int) -> tuple[int, int, bool, bool]:
        corr, unc, pending, failure = self._nv.nvmlDeviceGetRemappedRows(self._h(i))
        return int(corr), int(unc), bool(pending), bool(failure)

    def clock_mhz(self, i: int, kind: str, maximum: bool) -> int:
        clock = 1 if kind == "sm" else 2  # NVML_CLOCK_SM, NVML_CLOCK_MEM
        fn = self._nv.nvmlDeviceGetMaxClockInfo if maximum else self._nv.nvmlDeviceGetClockInfo
        return int(fn(self._h(i), clock))

    def clock_event_reasons(self, i: int) -> int:
        # The "throttle" name is what drivers before 535 call it.
        fn = getattr(self._nv, "nvmlDeviceGetCurrentClocksEventReasons", None)
        if fn is None:
            fn = self._nv.nvmlDeviceGetCurrentClocksThrottleReasons
        return int(fn(self._h(i)))

    def pcie_gen(self, i: int, maximum: bool) -> int:
        nv = self._nv
        fn = (
            nv.nvmlDeviceGetMaxPcieLinkGeneration
            if maximum
            else nv.nvmlDeviceGetCurrPcieLinkGeneration
        )
        return int(fn(self._h(i)))

    def pcie_width(self, i: int, maximum: bool) -> int:
        nv = self._nv
        fn = nv.nvmlDeviceGetMaxPcieLinkWidth if maximum else nv.nvmlDeviceGetCurrPcieLinkWidth
        return int(fn(self._h(i)))

    def nvlink_up(self, i: int, link: int) -> bool:
        return bool(self._nv.nvmlDeviceGetNvLinkState(self._h(i), link))

    def mig_mode(self, i: int) -> tuple[int, int]:
        cur, pend = self._nv.nvmlDeviceGetMigMode(self._h(i))
        return int(cur), int(pend)

    def persistence_mode(self, i: int) -> int:
        return int(self._nv.nvmlDeviceGetPersistenceMode(self._h(i)))

    def fabric(self, i: int) -> tuple[int, int, int, str]:
        info = self._nv.c_nvmlGpuFabricInfo_t()
        self._nv.nvmlDeviceGetGpuFabricInfo(self._h(i), info)
        raw = bytes(info.clusterUuid)
        h = raw.hex()
        # Printed the way nvidia-smi prints the cluster UUID.
        uuid = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}" if any(raw) else ""
        return int(info.state), int(info.status), int(info.cliqueId), uuid

    def performance_state(self, i: int) -> int:
        return int(self._nv.nvmlDeviceGetPerformanceState(self._h(i)))

    def utilization_pct(self, i: int) -> int:
        return int(self._nv.nvmlDeviceGetUtilizationRates(self._h(i)).gpu)

    def temperature_c(self, i: int) -> int:
        return int(self._nv.nvmlDeviceGetTemperature(self._h(i), 0))  # NVML_TEMPERATURE_GPU

    def power_usage_mw(self, i: int) -> int:
        return int(self._nv.nvmlDeviceGetPowerUsage(self._h(i)))

    def power_limit_mw(self, i: int) -> int:
        return int(self._nv.nvmlDeviceGetEnforcedPowerLimit(self._h(i)))


def load_pynvml() -> NvmlApi | None:
    """The real NVML, or None when the nvidia-ml-py package is not installed.

    Importing pynvml does not load libnvidia-ml.so; ``init()`` does, and its
    failure is reported by :func:`read_nvml`.
    """
    try:
        nv = importlib.import_module("pynvml")
    except ImportError:
        return None
    return PynvmlApi(nv)
