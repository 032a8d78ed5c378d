"""Audit a 100-node Kubernetes cluster through its API and print the wall
time against the 5 s bar.

    python benchmarks/k8s_api_audit.py [--nodes 100] [--runs 3]

The cluster is the loopback test API server (tests/k8s/apiserver.py) serving
the captured RKE2 A16 GPU node under N names, the captured device-plugin,
dcgm-exporter and ingress-nginx manifests, 20 tenant namespaces, as the
cluster admin (the identity with the most to read: every namespace's rules
review, cluster-wide lists, both dry runs admitted).  Timed: kubeconfig load,
every API call, parsing, and judging every k8s check.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.k8s.apiserver import FakeApiServer, admin, gpu_cluster

from clustergrade.checks.k8s import JUDGES
from clustergrade.k8s.client import K8sClient
from clustergrade.k8s.collect import collect_k8s
from clustergrade.kb.loader import load

BAR_S = 5.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--tenants", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    kb = load()
    state = gpu_cluster(args.nodes, tenants=args.tenants)
    walls = []
    with FakeApiServer(state, [admin()]) as srv, tempfile.TemporaryDirectory() as d:
        kc = str(srv.kubeconfig(Path(d) / "kubeconfig", admin()))
        for _ in range(args.runs):
            t0 = time.perf_counter()
            client = K8sClient(kc)
            facts, errors = collect_k8s(client)
            client.close()
            findings = 0
            for judge in JUDGES.values():
                got = judge(facts, kb, date.today())
                findings += 1 if not isinstance(got, list) else len(got)
            walls.append(time.perf_counter() - t0)
            assert len(facts.nodes) == args.nodes and not errors, errors
    med = statistics.median(walls)
    print(
        f"k8s API audit: {args.nodes} nodes, {len(facts.namespaces)} namespaces, "
        f"{len(facts.rules)} rules reviews, {len(JUDGES)} checks, {findings} findings, "
        f"{len(srv.requests) // args.runs} requests/run"
    )
    print(
        f"wall median {med:.2f} s (runs: {', '.join(f'{w:.2f}' for w in walls)}) vs bar {BAR_S:.1f} s: "
        f"{'OK' if med < BAR_S else 'OVER'} ({med / BAR_S:.0%} of the bar)"
    )
    return 0 if med < BAR_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
