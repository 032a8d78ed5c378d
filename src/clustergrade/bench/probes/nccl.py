"""Collective bandwidth: torch.distributed across local processes (NCCL on
GPUs, gloo on the CPU), and nccl-tests binaries when they are installed.

Sizes, algbw and busbw follow nccl-tests: algbw = size / time, busbw =
algbw * busbw_factor(collective, ranks), where "size" is the whole buffer
(the gathered output for all_gather, the input for reduce_scatter).
"""

from __future__ import annotations

import json
import os
import socket
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from clustergrade.bench.model import Measurement
from clustergrade.bench.nccl_tests import (
    BINARIES,
    NcclTestsParseError,
    busbw_factor,
    parse_nccl_tests,
)
from clustergrade.bench.probes.base import (
    ProbeContext,
    ProbeSkip,
    gpus,
    load_torch,
    measurement,
    use_cuda,
)

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")
KIB, MIB = 1 << 10, 1 << 20


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _op(torch: Any, dist: Any, name: str, size: int, world: int, dev: str) -> Any:
    n = size // 4
    x = torch.ones(n, dtype=torch.float32, device=dev)
    if name == "all_reduce":
        return lambda: dist.all_reduce(x)
    if name == "all_gather":
        part = torch.ones(n // world, dtype=torch.float32, device=dev)
        return lambda: dist.all_gather_into_tensor(x, part)
    if name == "reduce_scatter":
        part = torch.empty(n // world, dtype=torch.float32, device=dev)
        return lambda: dist.reduce_scatter_tensor(part, x)
    if name == "all_to_all":
        y = torch.empty_like(x)
        return lambda: dist.all_to_all_single(y, x)
    if name == "broadcast":
        return lambda: dist.broadcast(x, 0)
    raise ValueError(name)


def _worker(
    rank: int,
    world: int,
    port: int,
    backend: str,
    sizes: list[int],
    iters: int,
    ops: list[str],
    out_path: str,
) -> None:
    """One rank; spawned, so it imports torch itself. Rank 0 writes the results."""
    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    cuda = backend == "nccl"
    dev = f"cuda:{rank}" if cuda else "cpu"
    if cuda:
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, rank=rank, world_size=world, timeout=timedelta(seconds=120))

    def sync() -> None:
        if cuda:
            torch.cuda.synchronize(dev)

    rows: list[dict[str, Any]] = []
    unsupported: dict[str, str] = {}
    try:
        for name in ops:
            for size in sizes:
                fn = _op(torch, dist, name, size, world, dev)
                try:
                    fn()
                    fn()
                except RuntimeError as exc:
                    # Raised on every rank alike (the backend lacks the op).
                    unsupported[name] = str(exc)[:200]
                    break
                sync()
                dist.barrier()
                t0 = time.perf_counter()
                for _ in range(iters):
                    fn()
                sync()
                dt = torch.tensor(
                    [(time.perf_counter() - t0) / iters], dtype=torch.float64, device=dev
                )
                dist.all_reduce(dt, op=dist.ReduceOp.MAX)
                rows.append({"op": name, "size": size, "seconds": float(dt.item())})
        if rank == 0:
            Path(out_path).write_text(json.dumps({"rows": rows, "unsupported": unsupported}))
    finally:
        dist.destroy_process_group()


def _spawn(
    torch: Any,
    world: int,
    backend: str,
    sizes: list[int],
    iters: int,
    ops: list[str],
    out_path: Path,
    timeout_s: float,
) -> dict[str, Any]:
    mp = torch.multiprocessing
    args = (world, _free_port(), backend, sizes, iters, ops, str(out_path))
    procs = mp.start_processes(_worker, args=args, nprocs=world, join=False, start_method="spawn")
    deadline = time.monotonic() + timeout_s
    try:
        while not procs.join(timeout=1.0):
            if time.monotonic() > deadline:
                raise ProbeSkip(f"{backend} collectives did not finish in {timeout_s:.0f}s")
    except (mp.ProcessRaisedException, mp.ProcessExitedException) as exc:
        last = (str(exc).strip().splitlines() or ["?"])[-1]
        raise RuntimeError(f"{backend} worker failed: {last}") from exc
    finally:
        for p in procs.processes:
            if p.is_alive():
                p.terminate()
    data: dict[str, Any] = json.loads(out_path.read_text())
    return data


def torch_collectives(ctx: ProbeContext, torch: Any) -> list[Measurement]:
    cuda = use_cuda(torch, ctx.device)
    if cuda:
        found = gpus(torch)
        if not found:
            raise ProbeSkip("CUDA is available but lists no devices")
        world, backend = len(found), "nccl"
        model = found[0].model
        sizes = [MIB << (2 * i) for i in range(3 if ctx.quick else 6)]  # 1 MiB .. 1 GiB
        iters = 5 if ctx.quick else 20
        if world == 1:
            ctx.note("nccl: one GPU, so busbw is 0 by definition")
    else:
        world = max(2, min(4, os.cpu_count() or 2))
        backend, model = "gloo", None
        sizes = (
            [4 * KIB << (2 * i) for i in (0, 2, 4)]
            if ctx.quick
            else [4 * KIB << (2 * i) for i in range(6)]
        )  # 4 KiB .. 4 MiB
        iters = 3 if ctx.quick else 10
    if not torch.distributed.is_available():
        raise ProbeSkip("this PyTorch build has no torch.distributed")
    align = 4 * world
    sizes = [s - s % align for s in sizes]
    out_path = ctx.workdir / f"collectives-{os.getpid()}.json"
    data = _spawn(
        torch,
        world,
        backend,
        sizes,
        iters,
        list(COLLECTIVES),
        out_path,
        timeout_s=120 if ctx.quick else 600,
    )
    for op, why in data.get("unsupported", {}).items():
        ctx.note(f"{backend} {op}: not supported ({why})")
    out = []
    for r in data["rows"]:
        alg = r["size"] / r["seconds"] / 1e9
        factor = busbw_factor(r["op"], world)
        out.append(
            measurement(
                ctx,
                "nccl",
                f"nccl.{r['op']}",
                alg * factor,
                "GB/s",
                on="cuda" if cuda else "cpu",
                collective=r["op"],
                size_bytes=r["size"],
                time_us=r["seconds"] * 1e6,
                algbw_gbs=alg,
                busbw_factor=factor,
                world_size=world,
                backend=backend,
                gpu_model=model,
            )
        )
    return out


def nccl_tests_binaries(ctx: ProbeContext, ngpus: int) -> list[Measurement]:
    """Run the nccl-tests binaries on PATH (single node, one process, -g ngpus)."""
    out: list[Measurement] = []
    ran = 0
    for binary in BINARIES:
        if binary in ("reduce_perf", "sendrecv_perf"):
            continue
        res = ctx.host.run(
            [
                binary,
                "-b",
                "8M",
                "-e",
                "1G" if not ctx.quick else "64M",
                "-f",
                "2",
                "-g",
                str(ngpus),
            ],
            timeout=600,
        )
        if res.not_found:
            continue
        ran += 1
        if not res.ok:
            ctx.note(f"nccl-tests: {res.describe()}")
            continue
        try:
            parsed = parse_nccl_tests(res.text)
        except NcclTestsParseError as exc:
            ctx.note(f"nccl-tests {binary}: {exc}")
            continue
        out += from_nccl_tests(ctx, parsed, BINARIES[binary])
    if not ran:
        ctx.note("nccl-tests binaries (all_reduce_perf ...) not on PATH")
    return out


def from_nccl_tests(ctx: ProbeContext, parsed: Any, collective: str) -> list[Measurement]:
    name = parsed.collective or collective
    nranks = parsed.nranks
    model = parsed.ranks[0].model if parsed.ranks else None
    return [
        measurement(
            ctx,
            "nccl",
            f"nccl.{name}",
            row.out_of_place.busbw_gbs,
            "GB/s",
            on="cuda",
            source="nccl-tests",
            collective=name,
            size_bytes=row.size_bytes,
            time_us=row.out_of_place.time_us,
            algbw_gbs=row.out_of_place.algbw_gbs,
            wrong=row.out_of_place.wrong,
            in_place_busbw_gbs=row.in_place.busbw_gbs,
            in_place_wrong=row.in_place.wrong,
            world_size=nranks,
            gpu_model=model,
            version=parsed.version,
        )
        for row in parsed.rows
    ]


def run(ctx: ProbeContext) -> list[Measurement]:
    torch = load_torch()
    out = torch_collectives(ctx, torch)
    if use_cuda(torch, ctx.device):
        out += nccl_tests_binaries(ctx, int(torch.cuda.device_count()))
    else:
        ctx.note("nccl-tests binaries: no GPU")
    return out
