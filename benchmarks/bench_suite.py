"""Time the default ``clustergrade bench`` suite end to end on this machine
(CPU paths where there is no GPU), per probe and in total, against the bar:
under 2 minutes on the project's 2-core CI VM.

    python benchmarks/bench_suite.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

BAR_S = 120.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()

    from clustergrade.bench.judge import judge, to_results
    from clustergrade.bench.runner import DEFAULT_SUITE, run_bench, save_bench
    from clustergrade.kb.loader import load

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        bench = run_bench(DEFAULT_SUITE, quick=args.quick, workdir=Path(d))
        results = to_results(bench, judge(bench, load()))
        save_bench(Path(d) / bench.run_id, bench, results)
    total = time.perf_counter() - t0
    print(f"{'probe':<10} {'status':<8} {'seconds':>8} {'measurements':>13}")
    for p in bench.probes:
        print(f"{p.probe:<10} {p.status:<8} {p.duration_s:>8.1f} {len(p.measurements):>13}")
    verdict = "under" if total < BAR_S else "OVER"
    print(
        f"total {total:.1f}s on {bench.device} (torch {bench.torch_version}): {verdict} the {BAR_S:.0f}s bar"
    )
    return 0 if total < BAR_S else 1


if __name__ == "__main__":
    sys.exit(main())
