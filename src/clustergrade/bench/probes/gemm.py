"""GEMM throughput (TFLOPS) per dtype and shape, on each GPU or on the CPU.

The timed loop is a bare ``torch.matmul`` loop (benchmarks/gemm_overhead.py
holds it to within 3% of one written by hand): warm up, pick an iteration
count that fills ``target_s``, then keep the best of a few repeats.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
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

DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8")


@dataclass(frozen=True)
class Shape:
    kind: str  # "square" or "llm"
    m: int
    n: int
    k: int


# LLM-shaped: tokens x hidden times hidden x ffn (a Llama-70B MLP up-projection
# on GPU; the same 1:3.5 ratio scaled down on the CPU).
GPU_SHAPES = (
    Shape("square", 4096, 4096, 4096),
    Shape("square", 8192, 8192, 8192),
    Shape("llm", 8192, 28672, 8192),
)
GPU_QUICK = (Shape("square", 4096, 4096, 4096), Shape("llm", 4096, 14336, 4096))
CPU_SHAPES = (
    Shape("square", 256, 256, 256),
    Shape("square", 1024, 1024, 1024),
    Shape("llm", 256, 3584, 1024),
)
CPU_QUICK = (Shape("square", 256, 256, 256), Shape("llm", 128, 1792, 512))


def device_sync(torch: Any, dev: str) -> Callable[[], None]:
    """Waits for the device's queued work (a no-op on the CPU, which runs eagerly)."""
    if dev.startswith("cuda"):
        return lambda: torch.cuda.synchronize(dev)
    return lambda: None


def flops(shape: Shape) -> float:
    return 2.0 * shape.m * shape.n * shape.k


def time_loop(op: Callable[[], object], iters: int, sync: Callable[[], None]) -> float:
    """Seconds that ``iters`` calls of ``op`` take, device work included."""
    sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        op()
    sync()
    return time.perf_counter() - t0


def calibrate(
    op: Callable[[], object], sync: Callable[[], None], target_s: float
) -> tuple[int, float]:
    """(iterations that fill target_s, seconds per call after warm-up).

    Doubling batches until one lasts a fifth of the target: a single short
    call's time is mostly launch and timer noise.
    """
    time_loop(op, 1, sync)  # first call: kernel selection, allocator warm-up
    n = 1
    while True:
        took = time_loop(op, n, sync)
        if took >= target_s / 5 or n >= 10_000:
            break
        n *= 2
    # Once more at that size: a batch stretched by preemption overstates the cost.
    per_call = max(min(took, time_loop(op, n, sync)) / n, 1e-9)
    return max(1, min(10_000, int(target_s / per_call))), per_call


def best_tflops(
    op: Callable[[], object], shape: Shape, sync: Callable[[], None], iters: int, repeats: int
) -> float:
    best = min(time_loop(op, iters, sync) for _ in range(repeats))
    return flops(shape) * iters / best / 1e12


def _operands(torch: Any, dtype: str, shape: Shape, dev: str, cuda: bool) -> Callable[[], object]:
    """A zero-argument callable doing one GEMM of ``shape`` in ``dtype``."""
    if dtype == "fp8":
        if not cuda:
            raise ProbeSkip("fp8 GEMM needs a GPU (torch._scaled_mm)")
        cap = torch.cuda.get_device_capability(torch.device(dev))
        if tuple(cap) < (8, 9) or not hasattr(torch, "_scaled_mm"):
            raise ProbeSkip(f"fp8 GEMM needs compute capability 8.9+ (this GPU: {cap[0]}.{cap[1]})")
        a = torch.randn(shape.m, shape.k, device=dev).to(torch.float8_e4m3fn)
        # _scaled_mm wants the second operand column-major.
        b = torch.randn(shape.n, shape.k, device=dev).to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device=dev)
        return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    if dtype == "tf32" and not cuda:
        raise ProbeSkip("tf32 is a GPU tensor-core mode; the CPU has none")
    tdt = {
        "fp32": torch.float32,
        "tf32": torch.float32,
        "bf16": torch.bfloat16,
        "fp16": torch.float16,
    }[dtype]
    a = torch.randn(shape.m, shape.k, device=dev, dtype=tdt)
    b = torch.randn(shape.k, shape.n, device=dev, dtype=tdt)
    return lambda: torch.matmul(a, b)


def _run_device(
    ctx: ProbeContext, torch: Any, gpu: GpuInfo | None, dtypes: tuple[str, ...]
) -> list[Measurement]:
    cuda = gpu is not None
    dev = f"cuda:{gpu.index}" if gpu is not None else "cpu"
    shapes = (
        (GPU_QUICK if ctx.quick else GPU_SHAPES)
        if cuda
        else (CPU_QUICK if ctx.quick else CPU_SHAPES)
    )
    target_s = (0.05 if ctx.quick else 0.2) if not cuda else (0.2 if ctx.quick else 1.0)
    repeats = 2 if ctx.quick else 3
    sync = device_sync(torch, dev)
    where = f"GPU {gpu.index}" if gpu is not None else "CPU"
    out: list[Measurement] = []
    tf32_was = torch.backends.cuda.matmul.allow_tf32
    try:
        for dtype in dtypes:
            torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
            for shape in sorted(shapes, key=flops):
                try:
                    op = _operands(torch, dtype, shape, dev, cuda)
                    iters, one = calibrate(op, sync, target_s)
                except ProbeSkip as why:
                    ctx.note(f"{where} {dtype}: {why}")
                    break
                except RuntimeError as exc:  # an op this build/device lacks
                    ctx.note(f"{where} {dtype} {shape.m}x{shape.n}x{shape.k}: {str(exc)[:160]}")
                    break
                tflops = best_tflops(op, shape, sync, iters, 1 if one > target_s else repeats)
                out.append(
                    measurement(
                        ctx,
                        "gemm",
                        f"gemm.{dtype}",
                        tflops,
                        "TFLOPS",
                        gpu=gpu,
                        dtype=dtype,
                        shape=shape.kind,
                        m=shape.m,
                        n=shape.n,
                        k=shape.k,
                        iters=iters,
                    )
                )
                if one > target_s:
                    # One call already overran the budget; larger shapes would too.
                    ctx.note(
                        f"{where} {dtype}: one {shape.m}x{shape.n}x{shape.k} GEMM took {one:.2f}s; larger shapes left out"
                    )
                    break
                del op
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32_was
    return out


def run(ctx: ProbeContext, dtypes: tuple[str, ...] = DTYPES) -> list[Measurement]:
    torch = load_torch()
    if use_cuda(torch, ctx.device):
        found = gpus(torch)
        if not found:
            raise ProbeSkip("CUDA is available but lists no devices")
        return [m for g in found for m in _run_device(ctx, torch, g, dtypes)]
    return _run_device(ctx, torch, None, dtypes)
