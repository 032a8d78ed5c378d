"""The GEMM probe's TFLOPS side by side with a bare timing loop of the same
``torch.matmul``, and the ratio: the probe's harness (calibration, callable
indirection, best-of repeats) must cost under 3%.

    python benchmarks/gemm_overhead.py [--rounds 9] [--device cpu|cuda]

Rounds alternate probe and bare loop, and each side keeps its best round, so
machine noise (a 2-core VM) hits both alike.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

BAR = 0.03


def bare_tflops(torch: Any, a: Any, b: Any, shape: Any, iters: int, dev: str) -> float:
    """The loop anyone would write by hand."""
    from clustergrade.bench.probes.gemm import flops

    cuda = dev.startswith("cuda")
    if cuda:
        torch.cuda.synchronize(dev)
    t0 = time.perf_counter()
    for _ in range(iters):
        torch.matmul(a, b)
    if cuda:
        torch.cuda.synchronize(dev)
    return flops(shape) * iters / (time.perf_counter() - t0) / 1e12


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    args = ap.parse_args()

    import torch

    from clustergrade.bench.probes.gemm import (
        CPU_SHAPES,
        GPU_SHAPES,
        _operands,
        best_tflops,
        calibrate,
        device_sync,
    )

    cuda = args.device == "cuda"
    dev = "cuda:0" if cuda else "cpu"
    shapes = GPU_SHAPES if cuda else CPU_SHAPES
    target_s = 1.0 if cuda else 0.3
    sync = device_sync(torch, dev)
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16}
    worst = 0.0
    print(
        f"{'dtype':<5} {'m x n x k':<18} {'iters':>6} {'probe TFLOPS':>13} {'bare TFLOPS':>12} {'ratio':>7}"
    )
    for name, tdt in dtypes.items():
        for shape in shapes:
            op = _operands(torch, name, shape, dev, cuda)
            iters, _ = calibrate(op, sync, target_s)
            a = torch.randn(shape.m, shape.k, device=dev, dtype=tdt)
            b = torch.randn(shape.k, shape.n, device=dev, dtype=tdt)
            torch.matmul(a, b)
            probe_best = bare_best = 0.0
            for r in range(args.rounds):
                # ABBA order: neither side always runs first (warm caches, turbo).
                for side in ("probe", "bare") if r % 2 == 0 else ("bare", "probe"):
                    if side == "probe":
                        probe_best = max(probe_best, best_tflops(op, shape, sync, iters, 1))
                    else:
                        bare_best = max(bare_best, bare_tflops(torch, a, b, shape, iters, dev))
            ratio = probe_best / bare_best
            worst = max(worst, abs(1 - ratio))
            dims = f"{shape.m}x{shape.n}x{shape.k}"
            print(
                f"{name:<5} {dims:<18} {iters:>6} {probe_best:>13.4f} {bare_best:>12.4f} {ratio:>7.3f}"
            )
    verdict = "within" if worst <= BAR else "OUTSIDE"
    print(f"worst deviation {worst:.1%}: {verdict} the {BAR:.0%} bar")
    return 0 if worst <= BAR else 1


if __name__ == "__main__":
    sys.exit(main())
