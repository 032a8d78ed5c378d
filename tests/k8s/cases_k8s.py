"""Check cases for checks/k8s.py.

Each ``facts`` callable returns a Snapshot once ClusterFacts has a ``k8s``
field; ``K8S[i]`` returns the K8sFacts for the same case, which
tests/k8s/test_checks.py judges directly until then.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from clustergrade.facts.k8s import AdmissionProbe, K8sFacts, Rule, RulesReview
from clustergrade.facts.node import Snapshot, Target
from clustergrade.results import Status
from tests.helpers import Case
from tests.k8s import scenarios as sc

WHEN = datetime(2026, 12, 2, tzinfo=UTC)


@dataclass(frozen=True)
class K8sCaseFacts:
    build: Callable[[], K8sFacts]

    def k8s(self) -> K8sFacts:
        return self.build()

    def __call__(self) -> Snapshot:
        from clustergrade.facts.slurm import ClusterFacts

        return Snapshot(
            tool_version="test",
            created_at=WHEN,
            target=Target(kind="k8s", name="test"),
            nodes=[],
            cluster=ClusterFacts(**{"k8s": self.build()}),
        )


def _case(cid: str, expect: Status, build: Callable[[], K8sFacts], origin: str) -> Case:
    return Case(cid, expect, K8sCaseFacts(build), origin)


def _upd(base: Callable[[], K8sFacts], **update: object) -> Callable[[], K8sFacts]:
    return lambda: base().model_copy(update=update)


def _node_upd(base: Callable[[], K8sFacts], **update: object) -> Callable[[], K8sFacts]:
    def build() -> K8sFacts:
        k = base()
        first = k.nodes[0].model_copy(update=update)
        return k.model_copy(update={"nodes": [first, *k.nodes[1:]]})

    return build


A = "captured RKE2 A16 node x3 + device plugin/dcgm-exporter/ingress-nginx manifests, as admin"
T = "same cluster as tenant team-a (PodSecurity enforce=baseline)"
C = "captured node x3 + device plugin/dcgm-exporter, no ingress-nginx, as admin"

CASES: list[Case] = [
    _case("k8s.identity", Status.PASS, sc.tenant_view, T),
    _case("k8s.identity", Status.WARN, sc.admin_view, A + " (kubeadm:cluster-admins)"),
    _case("k8s.version-skew", Status.PASS, sc.admin_view, A),
    _case(
        "k8s.version-skew",
        Status.FAIL,
        _node_upd(sc.admin_view, kubelet_version="v1.27.16"),
        A + "; first node's kubelet set to v1.27.16 (4 minors behind)",
    ),
    _case(
        "k8s.version-skew",
        Status.FAIL,
        _node_upd(sc.admin_view, kubelet_version="v1.32.1"),
        A + "; first node's kubelet set to v1.32.1 (newer than the server)",
    ),
    _case(
        "k8s.container-runtime",
        Status.FAIL,
        sc.admin_view,
        A + " (containerd://2.0.2-k3s2 as captured)",
    ),
    _case(
        "k8s.container-runtime",
        Status.PASS,
        lambda: sc.admin_view().model_copy(
            update={
                "nodes": [
                    n.model_copy(update={"container_runtime": "containerd://2.1.5"})
                    for n in sc.admin_view().nodes
                ]
            }
        ),
        A + "; runtime set to containerd://2.1.5 on every node",
    ),
    _case("k8s.gpu-labels", Status.PASS, sc.admin_view, A),
    _case(
        "k8s.gpu-labels",
        Status.FAIL,
        _node_upd(sc.admin_view, gpu_capacity=0, gpu_allocatable=0),
        A + "; first node's nvidia.com/gpu capacity set to 0",
    ),
    _case(
        "k8s.gpu-labels",
        Status.WARN,
        _node_upd(sc.admin_view, gpu_allocatable=0),
        A + "; first node's allocatable set to 0",
    ),
    _case("k8s.ingress-nginx", Status.FAIL, sc.admin_view, A),
    _case("k8s.ingress-nginx", Status.PASS, sc.clean_admin_view, C),
    _case("k8s.ingress-nginx", Status.SKIP, sc.tenant_view, T),
    _case("k8s.monitoring", Status.WARN, sc.admin_view, A + " (no Prometheus stack)"),
    _case(
        "k8s.monitoring",
        Status.PASS,
        lambda: sc.admin_view().model_copy(
            update={
                "components": [
                    *sc.admin_view().components,
                    *[
                        sc.admin_view().components[0].model_copy(update={"component": c})
                        for c in ("prometheus", "kube-state-metrics", "node-exporter")
                    ],
                ]
            }
        ),
        A + "; prometheus, kube-state-metrics, node-exporter components added",
    ),
    _case(
        "k8s.gang-scheduler", Status.PASS, sc.admin_view, A + " (Kueue group derived from its CRD)"
    ),
    _case(
        "k8s.gang-scheduler",
        Status.WARN,
        lambda: sc.admin_view().model_copy(
            update={
                "api_groups": [g for g in sc.admin_view().api_groups if "x-k8s.io" not in g.name]
            }
        ),
        A + "; kueue.x-k8s.io removed from discovery",
    ),
    _case(
        "k8s.default-storageclass",
        Status.FAIL,
        sc.admin_view,
        A + " (local-path, not annotated default, as captured)",
    ),
    _case(
        "k8s.default-storageclass",
        Status.PASS,
        lambda: sc.admin_view().model_copy(
            update={
                "storage_classes": [
                    s.model_copy(update={"default": True}) for s in sc.admin_view().storage_classes
                ]
            }
        ),
        A + "; local-path marked default",
    ),
    _case(
        "k8s.default-deny",
        Status.FAIL,
        sc.admin_view,
        A + " (default, gpu-monitoring, ingress-nginx have none)",
    ),
    _case("k8s.default-deny", Status.PASS, sc.tenant_view, T),
    _case("k8s.rbac-secrets", Status.PASS, sc.tenant_view, T),
    _case("k8s.rbac-secrets", Status.FAIL, sc.admin_view, A),
    _case("k8s.rbac-nodes-proxy", Status.PASS, sc.tenant_view, T),
    _case("k8s.rbac-nodes-proxy", Status.FAIL, sc.admin_view, A),
    _case("k8s.rbac-pods-exec", Status.PASS, sc.tenant_view, T),
    _case(
        "k8s.rbac-pods-exec",
        Status.FAIL,
        lambda: sc.tenant_view().model_copy(
            update={
                "rules": [
                    *sc.tenant_view().rules,
                    RulesReview(
                        namespace="team-b",
                        rules=[Rule(verbs=["create"], api_groups=[""], resources=["pods/exec"])],
                    ),
                ]
            }
        ),
        T + "; a team-b review granting create pods/exec added",
    ),
    _case("k8s.rbac-cluster-reads", Status.PASS, sc.tenant_view, T),
    _case("k8s.rbac-cluster-reads", Status.WARN, sc.admin_view, A),
    _case("k8s.admission-privileged", Status.PASS, sc.tenant_view, T),
    _case(
        "k8s.admission-privileged",
        Status.FAIL,
        sc.admin_view,
        A + " (namespace default has no PodSecurity label)",
    ),
    _case(
        "k8s.admission-privileged",
        Status.SKIP,
        _upd(
            sc.tenant_view,
            admission=[
                AdmissionProbe(
                    probe="privileged-pod",
                    namespace="team-a",
                    admitted=None,
                    status_code=403,
                    refused_by="rbac",
                )
            ],
        ),
        T + "; probe replaced by an RBAC refusal",
    ),
    _case("k8s.admission-hostpath", Status.PASS, sc.tenant_view, T),
    _case("k8s.admission-hostpath", Status.FAIL, sc.admin_view, A),
]
