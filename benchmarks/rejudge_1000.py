"""Re-judge a saved snapshot of 1,000 nodes offline, side by side with judging
one node, and print the per-node cost and the ratio to the 5 s bar.

    python benchmarks/rejudge_1000.py [--nodes 1000]

The nodes are this machine's real facts (collected once) under 1,000 names,
with the driver-relevant facts left as collected: the work per node is the
whole check catalogue, as in a real fleet.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from clustergrade.audit import make_plan, snapshot_of
from clustergrade.collect.runner import collect_node
from clustergrade.engine import evaluate
from clustergrade.facts.node import Target
from clustergrade.kb.loader import load
from clustergrade.report.model import build_report
from clustergrade.runs import load_snapshot, save_snapshot
from clustergrade.seam import LocalHost


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", type=int, default=1000)
    args = ap.parse_args()

    kb = load()
    plan = make_plan(kb)
    node = collect_node(LocalHost())
    nodes = [node.model_copy(update={"hostname": f"gpu-{i:04d}"}) for i in range(args.nodes)]
    snap = snapshot_of(nodes, Target(kind="slurm", name="bench"))
    with tempfile.TemporaryDirectory() as d:
        path = save_snapshot(Path(d), snap)
        size_mib = path.stat().st_size / 2**20

        def judge_file() -> tuple[float, int]:
            t0 = time.perf_counter()
            loaded = load_snapshot(path)
            results = evaluate(loaded, kb, plan.checks)
            now = datetime.now(UTC)
            build_report(
                run_id="bench",
                snapshot=loaded,
                results=results,
                checks=plan.checks,
                kb=kb,
                profiles=[],
                started_at=now,
                finished_at=now,
            )
            return time.perf_counter() - t0, len(results)

        one_snap = snapshot_of([node], Target(kind="local", name="one"))
        t0 = time.perf_counter()
        evaluate(one_snap, kb, plan.checks)
        one = time.perf_counter() - t0

        times = []
        for _ in range(3):
            t, n_results = judge_file()
            times.append(t)
    best = min(times)
    print(
        f"snapshot: {args.nodes} nodes, {size_mib:.1f} MiB, {len(plan.checks)} checks, "
        f"{n_results} results"
    )
    print(f"{'':28}{'1 node':>12}{f'{args.nodes} nodes':>14}")
    print(f"{'judge (s)':28}{one:>12.4f}{best:>14.3f}   (load + evaluate + report; best of 3)")
    print(
        f"per node (ms): {1000 * best / args.nodes:.2f}; ratio to one node x{args.nodes}: "
        f"{best / (one * args.nodes):.2f}"
    )
    print(f"ratio to the 5 s bar: {best / 5.0:.3f} ({'met' if best < 5.0 else 'NOT MET'})")


if __name__ == "__main__":
    main()
