"""Storage throughput on a directory: fio when installed, else a small
built-in test (sequential write/read, random 4 KiB reads, metadata ops).

The built-in test is what a node without fio can still tell: it goes through
the page cache (no O_DIRECT on every filesystem), asks the kernel to drop
the file's cached pages before reading, and is small by design.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

from clustergrade.bench.fio import FioParseError, FioResult, parse_fio_json
from clustergrade.bench.model import Measurement
from clustergrade.bench.probes.base import ProbeContext, measurement

MIB = 1 << 20


def from_fio(ctx: ProbeContext, result: FioResult) -> list[Measurement]:
    out = []
    for job in result.jobs:
        if job.error:
            ctx.note(f"fio job {job.name}: error {job.error}")
            continue
        for side_name, side in (("read", job.read), ("write", job.write)):
            if side is None:
                continue
            common: dict[str, Any] = {
                "job": job.name,
                "rw": job.rw,
                "bs": job.bs,
                "io_bytes": side.io_bytes,
                "lat_mean_us": side.lat_mean_ns / 1e3 if side.lat_mean_ns else None,
                "fio_version": result.version,
            }
            out.append(
                measurement(
                    ctx,
                    "storage",
                    f"storage.fio.{job.name}.{side_name}_bw",
                    side.bw_bytes_s / 1e6,
                    "MB/s",
                    source="fio",
                    **common,
                )
            )
            out.append(
                measurement(
                    ctx,
                    "storage",
                    f"storage.fio.{job.name}.{side_name}_iops",
                    side.iops,
                    "IOPS",
                    source="fio",
                    **common,
                )
            )
    return out


def _fio(ctx: ProbeContext, directory: Path, size_mib: int) -> list[Measurement] | None:
    argv = [
        "fio",
        "--output-format=json",
        f"--directory={directory}",
        f"--size={size_mib}M",
        "--ioengine=psync",
        "--end_fsync=1",
        "--stonewall",
        "--name=seqwrite",
        "--rw=write",
        "--bs=1M",
        "--name=seqread",
        "--rw=read",
        "--bs=1M",
        "--name=randread",
        "--rw=randread",
        "--bs=4k",
        "--runtime=5",
        "--time_based=0",
    ]
    res = ctx.host.run(argv, timeout=300)
    if res.not_found:
        return None
    if not res.ok:
        ctx.note(f"fio: {res.describe()}; used the built-in test")
        return None
    try:
        return from_fio(ctx, parse_fio_json(res.text))
    except FioParseError as exc:
        ctx.note(f"fio: {exc}; used the built-in test")
        return None


def _drop_cache(fd: int) -> None:
    if hasattr(os, "posix_fadvise"):
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)


def builtin(ctx: ProbeContext, directory: Path, size_mib: int, files: int) -> list[Measurement]:
    path = directory / "clustergrade-bench.dat"
    block = os.urandom(MIB)
    size = size_mib * MIB
    common: dict[str, Any] = {"directory": str(directory), "size_bytes": size}
    out = []
    try:
        t0 = time.perf_counter()
        with open(path, "wb", buffering=0) as f:
            for _ in range(size_mib):
                f.write(block)
            os.fsync(f.fileno())
        dt = time.perf_counter() - t0
        out.append(
            measurement(
                ctx,
                "storage",
                "storage.seq_write",
                size / dt / 1e6,
                "MB/s",
                bs=MIB,
                fsync=True,
                **common,
            )
        )
        fd = os.open(path, os.O_RDONLY)
        try:
            _drop_cache(fd)
            t0 = time.perf_counter()
            while os.read(fd, MIB):
                pass
            dt = time.perf_counter() - t0
            out.append(
                measurement(
                    ctx, "storage", "storage.seq_read", size / dt / 1e6, "MB/s", bs=MIB, **common
                )
            )
            _drop_cache(fd)
            rng = random.Random(0)
            n = 2000 if ctx.quick else 10000
            offsets = [rng.randrange(0, size // 4096) * 4096 for _ in range(n)]
            t0 = time.perf_counter()
            for off in offsets:
                os.pread(fd, 4096, off)
            dt = time.perf_counter() - t0
            out.append(
                measurement(
                    ctx,
                    "storage",
                    "storage.rand_read_4k",
                    n / dt,
                    "IOPS",
                    bs=4096,
                    reads=n,
                    **common,
                )
            )
        finally:
            os.close(fd)
    finally:
        path.unlink(missing_ok=True)
    meta = directory / "clustergrade-bench-meta"
    meta.mkdir(exist_ok=True)
    try:
        t0 = time.perf_counter()
        for i in range(files):
            (meta / f"f{i}").write_bytes(b"x")
        for i in range(files):
            os.stat(meta / f"f{i}")
        for i in range(files):
            os.unlink(meta / f"f{i}")
        dt = time.perf_counter() - t0
    finally:
        for p in meta.iterdir():
            p.unlink()
        meta.rmdir()
    out.append(
        measurement(
            ctx,
            "storage",
            "storage.metadata",
            3 * files / dt,
            "ops/s",
            files=files,
            ops="create+stat+unlink",
            directory=str(directory),
        )
    )
    return out


def run(ctx: ProbeContext, directory: Path | None = None) -> list[Measurement]:
    target = directory or ctx.workdir
    size_mib = 8 if ctx.quick else 64
    got = _fio(ctx, target, size_mib)
    if got is not None:
        return got
    ctx.note("fio not installed: built-in storage test")
    return builtin(ctx, target, size_mib, files=200 if ctx.quick else 1000)
