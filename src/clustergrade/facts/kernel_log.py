"""Facts: what the kernel log says about GPU, NVSwitch, PCIe and machine-check
errors.

The log is history, not state: an Xid seen here happened at some point during
the span the source covers (the current boot for ``journalctl -k`` and
``dmesg``).  Timestamps are kept as printed, because the sources print them in
different clocks (wall time, seconds since boot, syslog time without a year).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from clustergrade.facts.base import FactModel

LogSource = Literal["journalctl", "dmesg", "file"]


class SourceAttempt(FactModel):
    """One source the collector tried, in order, and what became of it."""

    source: LogSource
    #: The command line or path that was tried.
    detail: str
    outcome: Literal["used", "not_installed", "empty", "denied", "failed", "missing"]
    message: str | None = None


class XidEvent(FactModel):
    """One ``NVRM: Xid (PCI:<bus>): <code>, ...`` line."""

    code: int
    #: The bus id as the driver printed it (``0000:91:00``).
    bus_id: str | None = None
    timestamp: str | None = None
    pid: int | None = None
    process: str | None = None
    #: The text after the code, truncated.
    message: str = ""


class XidSummary(FactModel):
    """Every Xid line of one code on one GPU."""

    code: int
    bus_id: str | None = None
    count: int
    first_seen: str | None = None
    last_seen: str | None = None
    #: Distinct process names that were running on the GPU (capped).
    processes: list[str] = Field(default_factory=list)
    #: The most recent message text, truncated.
    sample: str = ""


class SxidSummary(FactModel):
    """Every ``nvidia-nvswitchN: SXid (PCI:<bus>): <code>, ...`` line of one
    code on one NVSwitch.  The driver labels the headline line ``Fatal`` or
    ``Non-fatal``; continuation lines (``Severity ...``, ``Data {...}``) carry
    no label."""

    code: int
    bus_id: str | None = None
    device: str | None = None
    lines: int
    fatal: int = 0
    nonfatal: int = 0
    first_seen: str | None = None
    last_seen: str | None = None
    sample: str = ""


class FallenOffBus(FactModel):
    """``NVRM: GPU <bus>: GPU has fallen off the bus`` or the multi-line
    ``The NVIDIA GPU <bus> ... has fallen off the bus`` notice, which newer
    drivers can print without an Xid 79 line."""

    bus_id: str | None = None
    count: int
    first_seen: str | None = None


class AerCounts(FactModel):
    """``PCIe Bus Error: severity=...`` lines (one per error report per device)."""

    corrected: int = 0
    uncorrected_nonfatal: int = 0
    uncorrected_fatal: int = 0
    #: Devices that reported an uncorrected error (capped).
    uncorrected_devices: list[str] = Field(default_factory=list)
    #: The most recent uncorrected line, truncated.
    sample: str | None = None

    @property
    def uncorrected(self) -> int:
        return self.uncorrected_nonfatal + self.uncorrected_fatal


class KernelLogFacts(FactModel):
    """What the kernel log could be read from, and the error events in it."""

    readable: bool
    #: Why no source could be read (set when ``readable`` is False).
    unreadable_reason: str | None = None
    source: LogSource | None = None
    source_detail: str | None = None
    attempts: list[SourceAttempt] = Field(default_factory=list)
    #: ``/proc/sys/kernel/dmesg_restrict`` when it could be read.
    dmesg_restrict: int | None = None
    lines: int = 0
    #: The source's output was cut (size cap) or the parser stopped at its line cap.
    truncated: bool = False
    first_timestamp: str | None = None
    last_timestamp: str | None = None

    xids: list[XidSummary] = Field(default_factory=list)
    #: The most recent events, a bounded number per code.
    xid_events: list[XidEvent] = Field(default_factory=list)
    sxids: list[SxidSummary] = Field(default_factory=list)
    fallen_off_bus: list[FallenOffBus] = Field(default_factory=list)
    gpu_crash_dumps: int = 0
    aer: AerCounts = Field(default_factory=AerCounts)
    #: Machine-check error lines (``[Hardware Error]``, ``Machine check events logged``).
    mce_lines: int = 0
