"""Median wall time of several `clustergrade health` runs on this machine,
against the 1 s bar of a check meant to run every minute.

    python benchmarks/health_speed.py [--runs 7] [--mode npd]

Each run is a fresh process (interpreter start, imports, knowledge base,
collectors, state file), as slurmd or node-problem-detector would start it.
The first run writes the state; the later ones read and rewrite it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import time_process

BAR_S = 1.0


def command() -> list[str]:
    """`clustergrade health` once the main CLI has it, else the same command
    through its own module."""
    probe = subprocess.run(
        [sys.executable, "-m", "clustergrade.cli", "health", "--help"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    if probe.returncode == 0:
        return [sys.executable, "-m", "clustergrade.cli", "health"]
    return [sys.executable, "-m", "clustergrade.health.cli"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--mode", default="npd", choices=("slurm", "npd", "prometheus", "json"))
    args = ap.parse_args()
    base = command()
    with tempfile.TemporaryDirectory() as d:
        argv = [*base, "--mode", args.mode, "--state-dir", d]
        t = time_process(argv, args.runs)
    print(f"command: {' '.join(base[1:])} --mode {args.mode}")
    print(f"runs: {args.runs}, exit status of the last: {t.last_returncode}")
    print(f"last output: {t.last_stdout.strip()[:80]}")
    print(f"wall s: {', '.join(f'{w:.3f}' for w in t.wall_s)}")
    print(f"median wall: {t.median:.3f} s; peak RSS {t.peak:.0f} MiB")
    print(f"ratio to the {BAR_S:g} s bar: {t.median / BAR_S:.2f}")


if __name__ == "__main__":
    main()
