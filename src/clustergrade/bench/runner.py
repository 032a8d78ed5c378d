"""Run probes, each fenced: a missing tool or device is a SKIP with its reason,
an unexpected exception an error with its message; the others still run."""

from __future__ import annotations

import importlib
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from clustergrade.bench.model import PROBES, BenchRun, Measurement, ProbeOutcome
from clustergrade.bench.probes.base import DeviceChoice, ProbeContext, ProbeSkip
from clustergrade.results import Result
from clustergrade.runs import new_run_id, write_atomic
from clustergrade.seam import Host, LocalHost

#: What ``clustergrade bench`` runs with no probe named.
DEFAULT_SUITE = ("gemm", "memory", "nccl", "ib", "storage", "lifecycle")

Progress = Callable[[str, ProbeOutcome | None], None]


def _probe_fn(name: str) -> Callable[[ProbeContext], list[Measurement]]:
    if name not in PROBES:
        raise ValueError(f"unknown probe {name!r} (known: {', '.join(PROBES)})")
    mod = importlib.import_module(f"clustergrade.bench.probes.{name}")
    fn: Callable[[ProbeContext], list[Measurement]] = mod.run
    return fn


def run_probe(name: str, ctx: ProbeContext) -> ProbeOutcome:
    fn = _probe_fn(name)
    ctx.notes = []
    t0 = time.monotonic()
    try:
        ms = fn(ctx)
    except ProbeSkip as why:
        return ProbeOutcome(
            probe=name,
            status="skipped",
            reason=str(why),
            notes=ctx.notes,
            duration_s=time.monotonic() - t0,
        )
    except Exception as exc:  # a probe's failure is data; the run goes on
        return ProbeOutcome(
            probe=name,
            status="error",
            reason=f"{type(exc).__name__}: {exc}",
            notes=ctx.notes,
            duration_s=time.monotonic() - t0,
        )
    return ProbeOutcome(
        probe=name, status="ran", notes=ctx.notes, measurements=ms, duration_s=time.monotonic() - t0
    )


def _torch_version() -> str | None:
    mod = sys.modules.get("torch")
    return str(getattr(mod, "__version__", None)) if mod is not None else None


def run_bench(
    probes: Sequence[str] = DEFAULT_SUITE,
    *,
    host: Host | None = None,
    device: DeviceChoice = "auto",
    quick: bool = False,
    workdir: Path | None = None,
    ib_peer: str | None = None,
    pull_image: str | None = None,
    progress: Progress | None = None,
) -> BenchRun:
    for p in probes:
        _probe_fn(p)  # unknown names fail before anything runs
    host = host or LocalHost()
    started = datetime.now(UTC)
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="clustergrade-bench-", dir=workdir) as tmp:
        ctx = ProbeContext(
            host=host,
            node=host.name,
            workdir=Path(tmp),
            device=device,
            quick=quick,
            ib_peer=ib_peer,
            pull_image=pull_image,
        )
        for name in probes:
            if progress:
                progress(name, None)
            outcome = run_probe(name, ctx)
            outcomes.append(outcome)
            if progress:
                progress(name, outcome)
    on_gpu = any(m.device == "cuda" for o in outcomes for m in o.measurements)
    return BenchRun(
        run_id=new_run_id(started, host.name),
        node=host.name,
        started_at=started,
        finished_at=datetime.now(UTC),
        device="cuda" if on_gpu else "cpu",
        torch_version=_torch_version(),
        probes=outcomes,
    )


def save_bench(run_dir: Path, bench: BenchRun, results: Sequence[Result] = ()) -> Path:
    """``bench.json`` (measurements) and, when judged, ``bench-results.json``."""
    path = run_dir / "bench.json"
    write_atomic(path, bench.model_dump_json(indent=1, by_alias=True))
    if results:
        write_atomic(
            run_dir / "bench-results.json",
            json.dumps([r.model_dump(mode="json") for r in results], indent=1),
        )
    return path


def load_bench(path: Path) -> BenchRun:
    return BenchRun.model_validate_json(path.read_bytes())
