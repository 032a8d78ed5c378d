"""A fake NVML answering with readings recorded from the A100 capture
(tests/fixtures/nvidia/a100-sxm4-80gb-mig.xml: nvidia-smi prints what NVML
returns), so the NVML path can be tested without a GPU.

Values the capture shows as N/A raise NOT_SUPPORTED, as NVML does.  NVLink
state is not in nvidia-smi -q -x; the fake answers 12 links up (an A100 SXM4
has 12), stated here because it is not from the capture.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class FakeNvmlError(Exception):
    def __init__(self, value: int, text: str = "") -> None:
        super().__init__(text or f"NVML error {value}")
        self.value = value


NOT_SUPPORTED = 3
INVALID_ARGUMENT = 2
GPU_IS_LOST = 15


def _ns() -> FakeNvmlError:
    return FakeNvmlError(NOT_SUPPORTED, "Not Supported")


@dataclass
class FakeNvml:
    init_error: FakeNvmlError | None = None
    #: method name -> error raised for every GPU
    fail: dict[str, FakeNvmlError] = field(default_factory=dict)
    nvlinks: int = 12
    down_links: tuple[int, ...] = ()
    remap: tuple[int, int, bool, bool] | None = None
    fabric_info: tuple[int, int, int, str] | None = None
    reasons: int = 0
    calls: list[str] = field(default_factory=list)
    shut: bool = False

    def _check(self, name: str) -> None:
        self.calls.append(name)
        if name in self.fail:
            raise self.fail[name]

    def init(self) -> None:
        if self.init_error is not None:
            raise self.init_error

    def shutdown(self) -> None:
        self.shut = True

    def driver_version(self) -> str:
        return "535.54.03"

    def cuda_driver_version(self) -> int:
        return 12020

    def device_count(self) -> int:
        return 1

    def name(self, i: int) -> str:
        self._check("name")
        return "NVIDIA A100-SXM4-80GB"

    def serial(self, i: int) -> str:
        self._check("serial")
        return "1650522003820"

    def uuid(self, i: int) -> str:
        return "GPU-513536b6-7d19-9063-b049-1e69664bb298"

    def vbios(self, i: int) -> str:
        return "92.00.36.00.02"

    def pci_bus_id(self, i: int) -> str:
        return "00000000:01:00.0"

    def minor_number(self, i: int) -> int:
        return 1

    def memory_total_bytes(self, i: int) -> int:
        return 81920 * 1024 * 1024

    def ecc_mode(self, i: int) -> tuple[int, int]:
        return 1, 1

    def ecc_errors(self, i: int, uncorrected: bool, aggregate: bool) -> int:
        self._check("ecc_errors")
        return 0

    def retired_pages(self, i: int, double_bit: bool) -> int:
        raise _ns()

    def retired_pages_pending(self, i: int) -> bool:
        raise _ns()

    def remapped_rows(self, i: int) -> tuple[int, int, bool, bool]:
        if self.remap is None:
            raise _ns()
        return self.remap

    def clock_mhz(self, i: int, kind: str, maximum: bool) -> int:
        return {("sm", False): 1275, ("sm", True): 1410, ("mem", False): 1593, ("mem", True): 1593}[
            (kind, maximum)
        ]

    def clock_event_reasons(self, i: int) -> int:
        return self.reasons

    def pcie_gen(self, i: int, maximum: bool) -> int:
        return 4

    def pcie_width(self, i: int, maximum: bool) -> int:
        return 16

    def nvlink_up(self, i: int, link: int) -> bool:
        self._check("nvlink_up")
        if link >= self.nvlinks:
            raise FakeNvmlError(INVALID_ARGUMENT, "Invalid Argument")
        return link not in self.down_links

    def mig_mode(self, i: int) -> tuple[int, int]:
        return 1, 1

    def persistence_mode(self, i: int) -> int:
        return 0

    def fabric(self, i: int) -> tuple[int, int, int, str]:
        if self.fabric_info is None:
            raise _ns()
        return self.fabric_info

    def performance_state(self, i: int) -> int:
        return 0

    def utilization_pct(self, i: int) -> int:
        raise _ns()  # N/A with MIG enabled

    def temperature_c(self, i: int) -> int:
        return 27

    def power_usage_mw(self, i: int) -> int:
        return 67030

    def power_limit_mw(self, i: int) -> int:
        return 500000
