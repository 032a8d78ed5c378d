"""The collector against the loopback API server: facts, no writes, failures."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from clustergrade.facts.k8s import K8sFacts
from clustergrade.k8s.client import K8sClient, K8sUnavailable
from clustergrade.k8s.collect import classify_refusal, collect_k8s, collect_k8s_snapshot
from tests.k8s import scenarios as sc
from tests.k8s.apiserver import FakeApiServer, admin, gpu_cluster, tenant


def test_admin_view_reads_the_captured_objects() -> None:
    k = sc.admin_view()
    assert k.reachable and k.server_version == "v1.31.6+rke2r1" and k.platform == "linux/amd64"
    assert [n.name for n in k.nodes] == ["gpu-node-000", "gpu-node-001", "gpu-node-002"]
    n = k.nodes[0]
    assert (n.kubelet_version, n.container_runtime) == ("v1.31.6+rke2r1", "containerd://2.0.2-k3s2")
    assert (n.gpu_capacity, n.gpu_allocatable) == (1, 1)
    assert n.gpu_labels["nvidia.com/gpu.product"] == "NVIDIA-A16-4Q"
    assert n.gpu_labels["nvidia.com/mig.capable"] == "false"
    comps = {(c.component, c.version) for c in k.components}
    assert comps == {
        ("k8s-device-plugin", "v0.17.1"),
        ("dcgm-exporter", "2.2.9-2.4.1-ubuntu18.04"),
        ("ingress-nginx", "v0.41.2"),
    }
    assert [(s.name, s.provisioner, s.default) for s in k.storage_classes] == [
        ("local-path", "rancher.io/local-path", False)
    ]
    assert {p.namespace for p in k.network_policies} == {"team-a", "team-b"}
    assert k.identity is not None and k.identity.username == "kubernetes-admin"
    assert {r.namespace for r in k.rules} >= {"default", "kube-system", "team-a"}
    assert {(a.probe, a.admitted) for a in k.admission} == {
        ("privileged-pod", True),
        ("hostpath-pod", True),
    }
    team = next(ns for ns in k.namespaces if ns.name == "team-a")
    assert team.pod_security == {"enforce": "baseline"}


def test_tenant_view_records_refusals_as_facts() -> None:
    k = sc.tenant_view()
    assert k.namespace == "team-a" and k.nodes == []
    refused = {a.resource for a in k.lists if not a.allowed}
    assert {
        "nodes",
        "namespaces",
        "pods",
        "daemonsets",
        "storageclasses",
        "networkpolicies",
    } <= refused
    own = k.listed("networkpolicies/team-a")
    assert own is not None and own.allowed and own.count == 1
    assert [r.namespace for r in k.rules] == ["team-a", "default", "kube-system"]
    assert all(a.refused_by == "admission" and a.admitted is False for a in k.admission)


def test_audit_writes_nothing() -> None:
    with FakeApiServer(gpu_cluster(3), [admin()]) as srv, tempfile.TemporaryDirectory() as d:
        collect_k8s(K8sClient(str(srv.kubeconfig(Path(d) / "kc", admin()))))
        assert srv.writes_refused == 0
        posts = [p for m, p in srv.requests if m != "GET"]
        assert posts and all(
            "dryRun=All" in p
            or p.startswith(
                (
                    "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                    "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                )
            )
            for p in posts
        )


def test_rbac_refused_dry_run_is_not_admission() -> None:
    p = tenant()
    p.ns_rules["team-a"] = [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]
    k = sc.collect(gpu_cluster(1), p, "team-a")
    assert {(a.refused_by, a.admitted) for a in k.admission} == {("rbac", None)}


def test_old_server_without_self_subject_review() -> None:
    state = gpu_cluster(1)
    state.self_subject_review = False
    k = sc.collect(state, tenant(), "team-a")
    assert k.identity is not None and k.identity.source == "kubeconfig"
    assert k.identity.username == tenant().username and "404" in (k.identity.error or "")


def test_unreachable_server_is_an_error_not_a_crash(tmp_path: Path) -> None:
    with FakeApiServer(gpu_cluster(1), [admin()]) as srv:
        kc = srv.kubeconfig(tmp_path / "kc", admin())
    facts, errors = collect_k8s(K8sClient(str(kc)))
    assert facts == K8sFacts(
        reachable=False, server=facts.server, context="test", namespace="default"
    )
    assert errors and "did not answer" in errors[0].message


def test_wrong_token_is_unreachable(tmp_path: Path) -> None:
    with FakeApiServer(gpu_cluster(1), [admin()]) as srv:
        facts, errors = collect_k8s(K8sClient(str(srv.kubeconfig(tmp_path / "kc", tenant()))))
    assert not facts.reachable and "Unauthorized" in errors[0].message


def test_missing_kubeconfig_and_context(tmp_path: Path) -> None:
    with pytest.raises(K8sUnavailable):
        K8sClient(str(tmp_path / "nope"))
    with FakeApiServer(gpu_cluster(1), [admin()]) as srv:
        kc = srv.kubeconfig(tmp_path / "kc", admin())
        with pytest.raises(K8sUnavailable, match="no context"):
            K8sClient(str(kc), "other")


def test_snapshot(tmp_path: Path) -> None:
    from clustergrade.facts.slurm import ClusterFacts

    with FakeApiServer(gpu_cluster(2), [tenant()]) as srv:
        kc = str(srv.kubeconfig(tmp_path / "kc", tenant(), "team-a"))
        if "k8s" not in ClusterFacts.model_fields:
            with pytest.raises(K8sUnavailable, match="no k8s field"):
                collect_k8s_snapshot(kc, None)
            return
        snap = collect_k8s_snapshot(kc, "test")
    assert snap.target.kind == "k8s"
    assert snap.target.details["identity"] == tenant().username
    assert snap.cluster.k8s.namespace == "team-a"


@pytest.mark.parametrize(
    ("status", "message", "by"),
    [
        (
            403,
            'pods "x" is forbidden: violates PodSecurity "baseline:latest": privileged',
            "admission",
        ),
        (
            403,
            'pods is forbidden: User "u" cannot create resource "pods" in API group "" in the namespace "n"',
            "rbac",
        ),
        (
            400,
            'admission webhook "validation.gatekeeper.sh" denied the request: privileged',
            "admission",
        ),
        (400, 'admission webhook "x.example.com" does not support dry run', None),
        (422, 'Pod "x" is invalid', "invalid"),
        (500, "etcdserver: request timed out", None),
        (None, "connection refused", None),
    ],
)
def test_classify_refusal(status: int | None, message: str, by: str | None) -> None:
    assert classify_refusal(status, message) == by


def test_audit_path_does_not_import_kubernetes() -> None:
    code = (
        "import sys, clustergrade.k8s.collect, clustergrade.checks.k8s, clustergrade.facts.k8s, clustergrade.audit;"
        "print('kubernetes' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


def test_100_node_audit_under_5_seconds(tmp_path: Path) -> None:
    import time
    from datetime import date

    from clustergrade.checks.k8s import JUDGES
    from tests.helpers import kb

    k = kb()
    with FakeApiServer(gpu_cluster(100, tenants=20), [admin()]) as srv:
        kc = str(srv.kubeconfig(tmp_path / "kc", admin()))
        t0 = time.perf_counter()
        client = K8sClient(kc)
        facts, errors = collect_k8s(client)
        client.close()
        for judge in JUDGES.values():
            judge(facts, k, date.today())
        wall = time.perf_counter() - t0
    assert len(facts.nodes) == 100 and not errors
    assert wall < 5.0, wall


def test_lists_follow_continue_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import clustergrade.k8s.client as client_mod

    monkeypatch.setattr(client_mod, "PAGE", 7)
    with FakeApiServer(gpu_cluster(20), [admin()]) as srv:
        facts, _ = collect_k8s(K8sClient(str(srv.kubeconfig(tmp_path / "kc", admin()))))
        pages = [p for m, p in srv.requests if p.startswith("/api/v1/nodes")]
    assert len(facts.nodes) == 20 and len({n.name for n in facts.nodes}) == 20
    assert len(pages) == 3 and "continue=" in pages[-1]


class _HostileSource:
    """Every call answers 200 with whatever hypothesis draws."""

    context = "hostile"
    namespace = "default"
    server = "https://hostile.invalid"
    user = "nobody"

    def __init__(self, doc: object) -> None:
        self.doc = doc

    def _a(self, *args: object) -> object:
        from clustergrade.k8s.client import Answer

        return Answer(200, self.doc)

    version = api_groups = nodes = namespaces = pods_all_namespaces = _a
    storage_classes = self_subject_review = _a

    def workloads(self, kind: str) -> object:
        return self._a()

    def network_policies(self, namespace: str | None = None) -> object:
        return self._a()

    def self_subject_rules_review(self, namespace: str) -> object:
        return self._a()

    def dry_run_pod(self, namespace: str, pod: object) -> object:
        return self._a()


from hypothesis import given, settings  # noqa: E402

from tests.k8s.test_parse import JSON  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(JSON)
def test_collector_never_raises_on_hostile_answers(doc: object) -> None:
    facts, errors = collect_k8s(_HostileSource(doc))  # type: ignore[arg-type]
    assert facts.reachable
