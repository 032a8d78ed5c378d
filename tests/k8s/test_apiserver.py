"""The loopback API server behaves like a real one for what the audit uses,
and both the official client and kubectl work against it."""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.k8s.apiserver import FakeApiServer, admin, gpu_cluster, tenant

ADMIN, TENANT = admin(), tenant()


@pytest.fixture(scope="module")
def srv() -> Iterator[FakeApiServer]:
    with FakeApiServer(gpu_cluster(5), [ADMIN, TENANT]) as s:
        yield s


def req(
    srv: FakeApiServer,
    method: str,
    path: str,
    body: bytes | None = None,
    token: str | None = ADMIN.token,
    ctype: str = "application/json",
) -> tuple[int, Any]:
    r = urllib.request.Request(srv.url + path, data=body, method=method)
    if token:
        r.add_header("Authorization", f"Bearer {token}")
    if body is not None:
        r.add_header("Content-Type", ctype)
    ctx = ssl.create_default_context(cafile=str(srv.ca_file()))
    try:
        with urllib.request.urlopen(r, timeout=5, context=ctx) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, raw.decode()


def test_401_without_token(srv: FakeApiServer) -> None:
    code, doc = req(srv, "GET", "/api/v1/nodes", token=None)
    assert code == 401 and doc["reason"] == "Unauthorized"
    assert req(srv, "GET", "/version", token="wrong")[0] == 401


def test_404_for_unknown_paths(srv: FakeApiServer) -> None:
    assert req(srv, "GET", "/api/v1/widgets")[1]["reason"] == "NotFound"
    assert req(srv, "GET", "/apis/example.com/v1")[0] == 404
    code, text = req(srv, "GET", "/nonsense")
    assert code == 404 and "page not found" in text
    assert req(srv, "GET", "/api/v1/nodes/no-such-node")[0] == 404


def test_paged_list(srv: FakeApiServer) -> None:
    code, page = req(srv, "GET", "/api/v1/nodes?limit=2")
    assert code == 200 and len(page["items"]) == 2 and page["metadata"]["continue"]
    names = [i["metadata"]["name"] for i in page["items"]]
    while page["metadata"].get("continue"):
        page = req(srv, "GET", f"/api/v1/nodes?limit=2&continue={page['metadata']['continue']}")[1]
        names += [i["metadata"]["name"] for i in page["items"]]
    assert names == [f"gpu-node-{i:03d}" for i in range(5)]
    assert req(srv, "GET", "/api/v1/nodes?continue=%%%")[0] == 400


def test_tenant_forbidden_with_real_message(srv: FakeApiServer) -> None:
    code, doc = req(srv, "GET", "/api/v1/nodes", token=TENANT.token)
    assert code == 403
    assert (
        doc["message"]
        == f'nodes is forbidden: User "{TENANT.username}" cannot list resource "nodes" in API group "" at the cluster scope'
    )
    assert (
        req(
            srv,
            "GET",
            "/apis/networking.k8s.io/v1/namespaces/team-a/networkpolicies",
            token=TENANT.token,
        )[0]
        == 200
    )


def test_bad_bodies(srv: FakeApiServer) -> None:
    path = "/api/v1/namespaces/team-a/pods?dryRun=All"
    assert req(srv, "POST", path, b"{not json")[0] == 400
    assert req(srv, "POST", path, b'{"kind":"Service","apiVersion":"v1"}')[0] == 400
    assert req(srv, "POST", path, b"{}", ctype="text/plain")[0] == 415
    code, doc = req(
        srv,
        "POST",
        path,
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "x"},
                "spec": {"containers": [{"name": "c"}]},
            }
        ).encode(),
    )
    assert code == 422 and "spec.containers[0].image: Required value" in doc["message"]
    assert (
        req(srv, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", b'{"spec":{}}')[0]
        == 422
    )


def test_writes_without_dry_run_are_refused(srv: FakeApiServer) -> None:
    before = srv.writes_refused
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "x"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    assert req(srv, "POST", "/api/v1/namespaces/team-a/pods", json.dumps(pod).encode())[0] == 403
    assert req(srv, "DELETE", "/api/v1/nodes/gpu-node-000")[0] == 405
    assert srv.writes_refused == before + 2


def test_official_client_typed_calls(srv: FakeApiServer, tmp_path: Path) -> None:
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=str(srv.kubeconfig(tmp_path / "kc", ADMIN)))
    nodes = client.CoreV1Api(api).list_node()
    assert len(nodes.items) == 5
    assert nodes.items[0].status.node_info.container_runtime_version == "containerd://2.0.2-k3s2"
    assert client.VersionApi(api).get_code().git_version == "v1.31.6+rke2r1"
    ds = client.AppsV1Api(api).list_daemon_set_for_all_namespaces()
    assert {d.metadata.name for d in ds.items} == {
        "nvidia-device-plugin-daemonset",
        "dcgm-exporter",
    }
    groups = client.ApisApi(api).get_api_versions()
    assert "kueue.x-k8s.io" in {g.name for g in groups.groups}
    with pytest.raises(client.ApiException) as e:
        client.CoreV1Api(api).read_node("missing")
    assert e.value.status == 404
    api.close()


KUBECTL = shutil.which("kubectl")


def _kubectl(
    srv: FakeApiServer, tmp_path: Path, persona: Any, *args: str, ns: str | None = None
) -> subprocess.CompletedProcess[str]:
    kc = srv.kubeconfig(tmp_path / "kc", persona, ns)
    return subprocess.run(
        [
            KUBECTL or "kubectl",
            "--kubeconfig",
            str(kc),
            "--cache-dir",
            str(tmp_path / "cache"),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed (Debian: kubernetes-client)")
def test_kubectl_reads(srv: FakeApiServer, tmp_path: Path) -> None:
    r = _kubectl(srv, tmp_path, ADMIN, "version", "-o", "json")
    assert json.loads(r.stdout)["serverVersion"]["gitVersion"] == "v1.31.6+rke2r1", r.stderr
    r = _kubectl(srv, tmp_path, ADMIN, "get", "nodes", "-o", "json")
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["items"]) == 5
    r = _kubectl(srv, tmp_path, ADMIN, "get", "ds", "-A", "-o", "json")
    assert r.returncode == 0 and len(json.loads(r.stdout)["items"]) == 2, r.stderr
    r = _kubectl(srv, tmp_path, TENANT, "get", "nodes", "-o", "json")
    assert r.returncode != 0 and "cannot list resource" in r.stderr


@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed (Debian: kubernetes-client)")
def test_kubectl_identity_and_rules(srv: FakeApiServer, tmp_path: Path) -> None:
    r = _kubectl(srv, tmp_path, TENANT, "auth", "whoami", "-o", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"]["userInfo"]["username"] == TENANT.username
    r = _kubectl(srv, tmp_path, TENANT, "auth", "can-i", "--list", "-n", "team-a")
    assert r.returncode == 0 and "networkpolicies.networking.k8s.io" in r.stdout, r.stderr


@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed (Debian: kubernetes-client)")
def test_kubectl_server_dry_run(srv: FakeApiServer, tmp_path: Path) -> None:
    from clustergrade.k8s.collect import probe_pods

    f = tmp_path / "pod.json"
    f.write_text(json.dumps(probe_pods()["privileged-pod"]))
    refused = _kubectl(
        srv,
        tmp_path,
        TENANT,
        "create",
        "--dry-run=server",
        "--validate=false",
        "-f",
        str(f),
        ns="team-a",
    )
    assert refused.returncode != 0 and "violates PodSecurity" in refused.stderr
    before = srv.dry_runs
    ok = _kubectl(
        srv,
        tmp_path,
        ADMIN,
        "create",
        "--dry-run=server",
        "--validate=false",
        "-n",
        "default",
        "-f",
        str(f),
    )
    assert ok.returncode == 0 and "created (server dry run)" in ok.stdout, ok.stderr
    assert srv.dry_runs == before + 1
