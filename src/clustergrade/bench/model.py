"""What a bench run measured: measurements with their units and context.

A bench run is saved next to audit runs (``bench.json`` in a run directory)
and read back later, maybe elsewhere, so the models are strict and frozen.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clustergrade.bench.names import PROBES as PROBES

BENCH_SCHEMA = "clustergrade.bench/1"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Measurement(_Model):
    """One number with what it means and where it came from."""

    probe: str
    #: What was measured, dotted: "gemm.bf16", "memory.device_copy", "nccl.all_reduce".
    name: str
    value: float
    #: "TFLOPS", "GB/s", "Gb/s", "IOPS", "ops/s", "s".
    unit: str
    node: str
    #: "cuda" or "cpu": where the work ran.
    device: str
    gpu_index: int | None = None
    gpu_model: str | None = None
    driver: str | None = None
    #: The shape of the work: dtype, m/n/k, size_bytes, world_size, backend...
    params: dict[str, Any] = Field(default_factory=dict)
    #: "builtin" (clustergrade's own loop) or the external tool that printed it.
    source: str = "builtin"


class ProbeOutcome(_Model):
    probe: str
    status: Literal["ran", "skipped", "error"]
    #: Why it was skipped or failed; for a run, any parts it left out.
    reason: str | None = None
    notes: list[str] = Field(default_factory=list)
    measurements: list[Measurement] = Field(default_factory=list)
    duration_s: float = 0.0


class BenchRun(_Model):
    schema_: Literal["clustergrade.bench/1"] = Field("clustergrade.bench/1", alias="schema")
    run_id: str
    node: str
    started_at: datetime
    finished_at: datetime
    #: "cuda" when any probe ran on a GPU, else "cpu".
    device: str
    torch_version: str | None = None
    probes: list[ProbeOutcome]

    def measurements(self, probe: str | None = None) -> list[Measurement]:
        return [m for p in self.probes for m in p.measurements if probe in (None, m.probe)]

    def outcome(self, probe: str) -> ProbeOutcome | None:
        for p in self.probes:
            if p.probe == probe:
                return p
        return None
