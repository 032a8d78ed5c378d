"""K8s facts collected from the loopback API server, for check cases."""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path

from clustergrade.facts.k8s import K8sFacts
from clustergrade.k8s.client import K8sClient
from clustergrade.k8s.collect import collect_k8s
from tests.k8s.apiserver import ClusterState, FakeApiServer, Persona, admin, gpu_cluster, tenant


def collect(state: ClusterState, persona: Persona, namespace: str | None = None) -> K8sFacts:
    with FakeApiServer(state, [persona]) as srv, tempfile.TemporaryDirectory() as d:
        client = K8sClient(str(srv.kubeconfig(Path(d) / "kubeconfig", persona, namespace)))
        try:
            facts, _ = collect_k8s(client)
        finally:
            client.close()
        return facts


@cache
def admin_view() -> K8sFacts:
    """The captured GPU node x3, device plugin, dcgm-exporter, ingress-nginx, as admin."""
    return collect(gpu_cluster(3), admin())


@cache
def tenant_view() -> K8sFacts:
    """The same cluster as a tenant service account in team-a (enforce=baseline)."""
    return collect(gpu_cluster(3), tenant(), "team-a")


@cache
def clean_admin_view() -> K8sFacts:
    """No ingress-nginx, default deny everywhere non-system, as admin."""
    state = gpu_cluster(3, ingress_nginx=False)
    return collect(state, admin())
