"""Helpers shared by the benchmark scripts: timing real processes and their
peak memory."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    wall_s: list[float]
    peak_rss_mib: list[float]
    last_stdout: str
    last_returncode: int

    @property
    def median(self) -> float:
        return statistics.median(self.wall_s)

    @property
    def peak(self) -> float:
        return max(self.peak_rss_mib)


def time_process(
    argv: Sequence[str], runs: int, env: dict[str, str] | None = None, cwd: str | None = None
) -> Timing:
    """Run ``argv`` ``runs`` times; wall time and peak RSS (from wait4) per run."""
    walls: list[float] = []
    rss: list[float] = []
    out = ""
    rc = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            cwd=cwd,
        )
        assert proc.stdout is not None
        data = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - t0)
        rss.append(usage.ru_maxrss / 1024)  # KiB on Linux
        out = data.decode("utf-8", "replace")
        rc = os.waitstatus_to_exitcode(status)
        proc.returncode = rc
    return Timing(walls, rss, out, rc)
