"""Error-counter readings the health check judges by rate.

The audit's facts do not keep these counters (an audit is one reading, and a
cumulative count says little without a time base), so they are read here:
IB port counters from the infiniband facts, the PCIe replay counter from the
``nvidia-smi -q -x`` document the nvidia collector already fetched, and, on
the machine itself, the PCIe replay and NVLink CRC counters from NVML.
Every reader is total: a value it cannot read is left out, never guessed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, TypeVar

from clustergrade.collect.nvsmi_xml import MAX_GPUS, _int, _text, _tree
from clustergrade.facts.network import InfinibandFacts

T = TypeVar("T")

#: More links than any GPU has (NVML_NVLINK_MAX_LINKS is 18 before 550, 36 after).
MAX_NVLINKS = 36
# nvmlNvLinkErrorCounter_t (nvml.h): the two CRC counters DCGM also reports.
NVML_NVLINK_ERROR_DL_CRC_FLIT = 2
NVML_NVLINK_ERROR_DL_CRC_DATA = 3


@dataclass(frozen=True)
class CounterReading:
    #: One of thresholds.CounterKind.
    kind: str
    #: Stable identity across checks (bus id, HCA/port), part of the state key.
    ident: str
    #: What a person reads ("GPU 0", "mlx5_0/1").
    subject: str
    value: int

    @property
    def key(self) -> str:
        return f"{self.kind}|{self.ident}"


def from_infiniband(ib: InfinibandFacts | None) -> list[CounterReading]:
    out: list[CounterReading] = []
    if ib is None:
        return out
    for d in ib.devices:
        for p in d.ports:
            s = f"{d.name}/{p.port}"
            for name, kind in (
                ("symbol_error", "ib_symbol_error"),
                ("link_downed", "ib_link_downed"),
            ):
                v = p.counters.get(name)
                if v is not None and v >= 0:
                    out.append(CounterReading(kind, s, s, v))
    return out


def from_nvidia_smi_xml(data: bytes) -> list[CounterReading]:
    """``<pci><replay_counter>`` of every GPU in one ``nvidia-smi -q -x``
    document; never raises."""
    if not data.strip():
        return []
    root, _closed, _error = _tree(data)
    if root is None or root.tag != "nvidia_smi_log":
        return []
    out: list[CounterReading] = []
    for i, gpu in enumerate(root.findall("gpu")[:MAX_GPUS]):
        value = _int(gpu, "pci/replay_counter")
        if value is None or value < 0:
            continue
        bus = _text(gpu, "pci/pci_bus_id") or gpu.get("id") or f"index {i}"
        out.append(CounterReading("pcie_replay", bus[:64], f"GPU {i}", value))
    return out


class CounterApi(Protocol):
    """The NVML calls the counter reader makes; GPUs by index.  Each method
    may raise (NVML errors, missing features)."""

    def init(self) -> None: ...
    def shutdown(self) -> None: ...
    def device_count(self) -> int: ...
    def pci_bus_id(self, i: int) -> str: ...
    def pcie_replay(self, i: int) -> int: ...
    def nvlink_up(self, i: int, link: int) -> bool: ...
    def nvlink_error(self, i: int, link: int, counter: int) -> int: ...


def _try(fn: Callable[[], T]) -> T | None:
    try:
        return fn()
    except Exception:
        return None


def from_nvml(api: CounterApi) -> tuple[list[CounterReading], str | None]:
    """(readings, why NVML could not be used at all)."""
    try:
        api.init()
    except Exception as exc:
        return [], f"NVML init failed: {type(exc).__name__}: {str(exc)[:120]}"
    out: list[CounterReading] = []
    try:
        count = _try(api.device_count)
        for i in range(min(count or 0, MAX_GPUS)):
            bus = _try(partial(api.pci_bus_id, i)) or f"index {i}"
            s = f"GPU {i}"
            replay = _try(partial(api.pcie_replay, i))
            if replay is not None and replay >= 0:
                out.append(CounterReading("pcie_replay", bus, s, int(replay)))
            crc = _nvlink_crc(api, i)
            if crc is not None:
                out.append(CounterReading("nvlink_crc", bus, s, crc))
    finally:
        _try(api.shutdown)
    return out, None


def _nvlink_crc(api: CounterApi, i: int) -> int | None:
    """Flit and data CRC errors summed over the GPU's links; None when the GPU
    has no NVLink or does not report the counters (NVLink 5 dropped them)."""
    total: int | None = None
    for link in range(MAX_NVLINKS):
        try:
            api.nvlink_up(i, link)
        except Exception:
            # Past the last link (invalid argument) or no NVLink at all.
            break
        for counter in (NVML_NVLINK_ERROR_DL_CRC_FLIT, NVML_NVLINK_ERROR_DL_CRC_DATA):
            v = _try(partial(api.nvlink_error, i, link, counter))
            if v is not None and v >= 0:
                total = (total or 0) + int(v)
    return total


class PynvmlCounters:
    """:class:`CounterApi` over the ``nvidia-ml-py`` package."""

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

    def device_count(self) -> int:
        return int(self._nv.nvmlDeviceGetCount())

    def pci_bus_id(self, i: int) -> str:
        v = self._nv.nvmlDeviceGetPciInfo(self._h(i)).busId
        return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)

    def pcie_replay(self, i: int) -> int:
        return int(self._nv.nvmlDeviceGetPcieReplayCounter(self._h(i)))

    def nvlink_up(self, i: int, link: int) -> bool:
        return bool(self._nv.nvmlDeviceGetNvLinkState(self._h(i), link))

    def nvlink_error(self, i: int, link: int, counter: int) -> int:
        return int(self._nv.nvmlDeviceGetNvLinkErrorCounter(self._h(i), link, counter))


def load_pynvml_counters() -> CounterApi | None:
    """The real NVML, or None when nvidia-ml-py is not installed."""
    try:
        nv = importlib.import_module("pynvml")
    except ImportError:
        return None
    return PynvmlCounters(nv)


def by_kind(readings: Iterable[CounterReading]) -> dict[str, list[CounterReading]]:
    out: dict[str, list[CounterReading]] = {}
    for r in readings:
        out.setdefault(r.kind, []).append(r)
    return out
