"""What every probe shares: its context, the skip signal, and PyTorch loading.

PyTorch is an optional extra, imported only inside a probe's run so that
importing clustergrade (and the audit path) never pays for it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from clustergrade.bench.model import Measurement
from clustergrade.seam import Host

if TYPE_CHECKING:
    from types import ModuleType

DeviceChoice = Literal["auto", "cpu", "cuda"]


class ProbeSkip(Exception):
    """The probe does not apply here (hardware or tool absent); the message says why."""


@dataclass
class GpuInfo:
    index: int
    model: str
    driver: str | None


@dataclass
class ProbeContext:
    host: Host
    node: str
    workdir: Path
    device: DeviceChoice = "auto"
    #: Smaller sizes and fewer repetitions: a smoke run, not a measurement to trust.
    quick: bool = False
    #: perftest peer for ib_write_bw (a host running the server side).
    ib_peer: str | None = None
    #: Image for the container-pull timing; none means SKIP.
    pull_image: str | None = None
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        self.notes.append(text)


def load_torch() -> ModuleType:
    try:
        return importlib.import_module("torch")
    except ImportError as exc:
        raise ProbeSkip(
            f"PyTorch is not installed ({exc.msg}); install the bench extra to run this probe"
        ) from exc


def use_cuda(torch: Any, choice: DeviceChoice) -> bool:
    available = bool(torch.cuda.is_available())
    if choice == "cuda" and not available:
        raise ProbeSkip("--device cuda asked for, but torch.cuda.is_available() is False")
    return available and choice != "cpu"


def _driver_version() -> str | None:
    try:
        pynvml = importlib.import_module("pynvml")
        pynvml.nvmlInit()
        try:
            v = pynvml.nvmlSystemGetDriverVersion()
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # NVML absent or refused: the driver is simply unknown
        return None
    return v.decode() if isinstance(v, bytes) else str(v)


def gpus(torch: Any) -> list[GpuInfo]:
    driver = _driver_version()
    return [
        GpuInfo(i, str(torch.cuda.get_device_name(i)), driver)
        for i in range(int(torch.cuda.device_count()))
    ]


def measurement(
    ctx: ProbeContext,
    probe: str,
    name: str,
    value: float,
    unit: str,
    *,
    gpu: GpuInfo | None = None,
    on: str | None = None,
    source: str = "builtin",
    **params: Any,
) -> Measurement:
    return Measurement(
        probe=probe,
        name=name,
        value=value,
        unit=unit,
        node=ctx.node,
        device=on or ("cuda" if gpu is not None else "cpu"),
        gpu_index=gpu.index if gpu else None,
        gpu_model=gpu.model if gpu else None,
        driver=gpu.driver if gpu else None,
        params=params,
        source=source,
    )
