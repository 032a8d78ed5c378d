"""Memory bandwidth: device copy and triad (STREAM-style), pinned host<->device,
and GPU<->GPU copies.

Bytes counted the STREAM way: a copy reads and writes each element (2 x
size), a triad reads two arrays and writes one (3 x size).
"""

from __future__ import annotations

from typing import Any

from clustergrade.bench.model import Measurement
from clustergrade.bench.probes.base import (
    GpuInfo,
    ProbeContext,
    ProbeSkip,
    gpus,
    load_torch,
    measurement,
    use_cuda,
)
from clustergrade.bench.probes.gemm import calibrate, device_sync, time_loop

MIB = 1 << 20


def _bandwidth(
    op: Any, nbytes: float, sync: Any, target_s: float, repeats: int
) -> tuple[float, int]:
    iters, _ = calibrate(op, sync, target_s)
    best = min(time_loop(op, iters, sync) for _ in range(repeats))
    return nbytes * iters / best / 1e9, iters


def _stream(ctx: ProbeContext, torch: Any, gpu: GpuInfo | None, size: int) -> list[Measurement]:
    dev = f"cuda:{gpu.index}" if gpu is not None else "cpu"
    sync = device_sync(torch, dev)
    n = size // 4
    a = torch.ones(n, device=dev, dtype=torch.float32)
    b = torch.empty_like(a)
    c = torch.full_like(a, 2.0)
    target_s, repeats = (0.05, 2) if ctx.quick else (0.3, 3)
    out = []
    gbs, iters = _bandwidth(lambda: b.copy_(a), 2 * size, sync, target_s, repeats)
    out.append(
        measurement(
            ctx, "memory", "memory.device_copy", gbs, "GB/s", gpu=gpu, size_bytes=size, iters=iters
        )
    )
    gbs, iters = _bandwidth(
        lambda: torch.add(b, c, alpha=3.0, out=a), 3 * size, sync, target_s, repeats
    )
    out.append(
        measurement(
            ctx, "memory", "memory.triad", gbs, "GB/s", gpu=gpu, size_bytes=size, iters=iters
        )
    )
    return out


def _host_device(ctx: ProbeContext, torch: Any, gpu: GpuInfo, size: int) -> list[Measurement]:
    dev = f"cuda:{gpu.index}"
    sync = device_sync(torch, dev)
    host = torch.ones(size // 4, dtype=torch.float32, pin_memory=True)
    d = torch.empty(size // 4, dtype=torch.float32, device=dev)
    target_s, repeats = (0.05, 2) if ctx.quick else (0.3, 3)
    out = []
    for name, op in (
        ("memory.h2d_pinned", lambda: d.copy_(host, non_blocking=True)),
        ("memory.d2h_pinned", lambda: host.copy_(d, non_blocking=True)),
    ):
        gbs, iters = _bandwidth(op, size, sync, target_s, repeats)
        out.append(
            measurement(ctx, "memory", name, gbs, "GB/s", gpu=gpu, size_bytes=size, iters=iters)
        )
    return out


def _peer(ctx: ProbeContext, torch: Any, src: GpuInfo, dst: GpuInfo, size: int) -> Measurement:
    a = torch.ones(size // 4, dtype=torch.float32, device=f"cuda:{src.index}")
    b = torch.empty(size // 4, dtype=torch.float32, device=f"cuda:{dst.index}")
    s1, s2 = device_sync(torch, f"cuda:{src.index}"), device_sync(torch, f"cuda:{dst.index}")

    def sync() -> None:
        s1()
        s2()

    target_s, repeats = (0.05, 2) if ctx.quick else (0.3, 3)
    gbs, iters = _bandwidth(lambda: b.copy_(a, non_blocking=True), size, sync, target_s, repeats)
    return measurement(
        ctx,
        "memory",
        "memory.p2p",
        gbs,
        "GB/s",
        gpu=src,
        size_bytes=size,
        src=src.index,
        dst=dst.index,
        iters=iters,
    )


def run(ctx: ProbeContext) -> list[Measurement]:
    torch = load_torch()
    if not use_cuda(torch, ctx.device):
        ctx.note("pinned host<->device and GPU<->GPU copies: no GPU")
        return _stream(ctx, torch, None, (16 if ctx.quick else 64) * MIB)
    found = gpus(torch)
    if not found:
        raise ProbeSkip("CUDA is available but lists no devices")
    size = (256 if ctx.quick else 1024) * MIB
    out: list[Measurement] = []
    for g in found:
        out += _stream(ctx, torch, g, size)
        out += _host_device(ctx, torch, g, size)
    if len(found) < 2:
        ctx.note("GPU<->GPU copies: only one GPU")
    else:
        # A ring touches every GPU's links in both roles with n copies, not n^2.
        for i, g in enumerate(found):
            out.append(_peer(ctx, torch, g, found[(i + 1) % len(found)], size))
    return out
