"""A loopback Kubernetes API server for tests (stdlib http.server in a thread).

It serves real API objects (tests/fixtures/k8s, see PROVENANCE.md) and
answers the requests the official Python client and kubectl make: legacy
discovery, /version, paged lists, SelfSubjectReview and
SelfSubjectRulesReview, and pod creates *only* with dryRun=All.  It refuses
what a real server refuses: 401 without the bearer token, 403 for what the
identity's rules do not allow (with the real message shapes), 404 for
unknown paths, 400/415/422 for bad bodies, and PodSecurity-style 403 for
privileged or hostPath pods in namespaces labelled enforce=baseline or
restricted.  Any write without dryRun=All is refused and counted, so a test
can assert that the audit wrote nothing.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import ssl
import subprocess
import tempfile
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

FIX = Path(__file__).parent.parent / "fixtures" / "k8s"
DISCOVERY = FIX / "discovery"


#: A self-signed certificate for 127.0.0.1, generated for these tests only:
#: kubectl does not send a bearer token over plain http.
@functools.lru_cache(maxsize=1)
def _tls_pair() -> tuple[Path, Path]:
    """A throwaway self-signed certificate for 127.0.0.1, made once per test
    process (kubectl sends a bearer token only over TLS); nothing is stored in
    the repository."""
    d = Path(tempfile.mkdtemp(prefix="cg-k8s-tls-"))
    crt, key = d / "server.crt", d / "server.key"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(crt),
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return crt, key


OBJECTS = FIX / "objects"

#: (group, version, plural, kind, namespaced) for gang-scheduling CRDs; see PROVENANCE.md.
CRD_GROUPS: dict[str, tuple[str, str, str, str, bool]] = {
    "kueue": ("kueue.x-k8s.io", "v1beta1", "workloads", "Workload", True),
    "volcano": ("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup", True),
    "mpi-operator": ("kubeflow.org", "v2beta1", "mpijobs", "MPIJob", True),
    "jobset": ("jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", True),
    "lws": ("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "LeaderWorkerSet", True),
}

READ = ["get", "list", "watch"]


def load_json(rel: str) -> Any:
    return json.loads((FIX / rel).read_text())


def load_yaml(rel: str) -> Any:
    return yaml.safe_load((FIX / rel).read_text())


@dataclass
class Persona:
    """An identity: its token, names and RBAC rules.

    ``cluster_rules`` apply everywhere (ClusterRoleBindings); ``ns_rules``
    per namespace (RoleBindings).  Rules are SelfSubjectRulesReview
    resourceRules dicts.
    """

    token: str
    username: str
    groups: list[str] = field(default_factory=lambda: ["system:authenticated"])
    uid: str = "b0b7c1a4-0000-4000-8000-000000000001"
    cluster_rules: list[dict[str, Any]] = field(default_factory=list)
    ns_rules: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def rules_for(self, namespace: str) -> list[dict[str, Any]]:
        return [*self.cluster_rules, *self.ns_rules.get(namespace, [])]

    def allows(self, verb: str, group: str, resource: str, namespace: str | None) -> bool:
        rules = self.cluster_rules if namespace is None else self.rules_for(namespace)
        for r in rules:
            if not (verb in r.get("verbs", []) or "*" in r.get("verbs", [])):
                continue
            if not (group in r.get("apiGroups", []) or "*" in r.get("apiGroups", [])):
                continue
            if resource in r.get("resources", []) or "*" in r.get("resources", []):
                return True
        return False


def admin(token: str = "admin-token") -> Persona:
    return Persona(
        token=token,
        username="kubernetes-admin",
        groups=["kubeadm:cluster-admins", "system:authenticated"],
        cluster_rules=[{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
    )


def tenant(token: str = "tenant-token", namespace: str = "team-a") -> Persona:
    own = [
        {"verbs": ["*"], "apiGroups": ["", "apps", "batch"], "resources": ["*"]},
        {"verbs": READ, "apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"]},
    ]
    return Persona(
        token=token,
        username=f"system:serviceaccount:{namespace}:default",
        groups=[
            "system:serviceaccounts",
            f"system:serviceaccounts:{namespace}",
            "system:authenticated",
        ],
        cluster_rules=[
            {
                "verbs": ["create"],
                "apiGroups": ["authorization.k8s.io"],
                "resources": ["selfsubjectrulesreviews", "selfsubjectaccessreviews"],
            },
            {
                "verbs": ["create"],
                "apiGroups": ["authentication.k8s.io"],
                "resources": ["selfsubjectreviews"],
            },
        ],
        ns_rules={namespace: own},
    )


def namespace_obj(name: str, enforce: str | None = None) -> dict[str, Any]:
    labels = {"kubernetes.io/metadata.name": name}
    if enforce:
        labels["pod-security.kubernetes.io/enforce"] = enforce
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {
            "name": name,
            "labels": labels,
            "uid": str(uuid.uuid5(uuid.NAMESPACE_DNS, name)),
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def replicate_node(node: dict[str, Any], name: str) -> dict[str, Any]:
    """The captured node under a new name (a test cluster of N real nodes)."""
    n = copy.deepcopy(node)
    n["metadata"]["name"] = name
    n["metadata"]["uid"] = str(uuid.uuid5(uuid.NAMESPACE_DNS, name))
    n["metadata"].setdefault("labels", {})["kubernetes.io/hostname"] = name
    return n


@dataclass
class ClusterState:
    version: dict[str, Any]
    nodes: list[dict[str, Any]] = field(default_factory=list)
    namespaces: list[dict[str, Any]] = field(default_factory=list)
    daemonsets: list[dict[str, Any]] = field(default_factory=list)
    deployments: list[dict[str, Any]] = field(default_factory=list)
    statefulsets: list[dict[str, Any]] = field(default_factory=list)
    storageclasses: list[dict[str, Any]] = field(default_factory=list)
    networkpolicies: list[dict[str, Any]] = field(default_factory=list)
    pods: list[dict[str, Any]] = field(default_factory=list)
    crds: list[str] = field(default_factory=list)
    #: False: the server predates SelfSubjectReview (404, as before 1.27).
    self_subject_review: bool = True


def _in_ns(obj: dict[str, Any], ns: str) -> dict[str, Any]:
    o = copy.deepcopy(obj)
    o.setdefault("metadata", {})["namespace"] = ns
    return o


def gpu_cluster(
    n_nodes: int = 3,
    *,
    ingress_nginx: bool = True,
    tenants: int = 2,
    default_deny: bool = True,
    enforce: str | None = "baseline",
    crds: tuple[str, ...] = ("kueue",),
) -> ClusterState:
    """A GPU cluster made of the captured RKE2 A16 node and the captured
    manifests: device plugin, dcgm-exporter, optionally ingress-nginx."""
    node = load_json("objects/node-rke2-a16.json")
    kubelet = node["status"]["nodeInfo"]["kubeletVersion"]
    state = ClusterState(
        version={
            "major": "1",
            "minor": "31",
            "gitVersion": kubelet,
            "gitCommit": "0000000000000000000000000000000000000000",
            "gitTreeState": "clean",
            "buildDate": "2025-02-12T00:00:00Z",
            "goVersion": "go1.22.12",
            "compiler": "gc",
            "platform": "linux/amd64",
        },
        nodes=[replicate_node(node, f"gpu-node-{i:03d}") for i in range(n_nodes)],
        crds=list(crds),
    )
    names = ["default", "kube-system", "kube-public", "kube-node-lease", "gpu-monitoring"]
    names += [f"team-{chr(ord('a') + i)}" for i in range(tenants)]
    if ingress_nginx:
        names.append("ingress-nginx")
    state.namespaces = [namespace_obj(n, enforce if n.startswith("team-") else None) for n in names]
    state.daemonsets = [
        load_yaml("objects/device-plugin-daemonset.yaml"),
        _in_ns(load_yaml("objects/dcgm-exporter-daemonset.yaml"), "gpu-monitoring"),
    ]
    if ingress_nginx:
        state.deployments.append(load_yaml("objects/ingress-nginx-controller-deployment.yaml"))
    state.storageclasses = [load_yaml("objects/storageclass-local-path.yaml")]
    if default_deny:
        deny = load_json("objects/networkpolicy-default-deny-ingress.json")
        state.networkpolicies = [_in_ns(deny, n) for n in names if n.startswith("team-")]
    return state


def _status(
    code: int, reason: str, message: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    s: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details is not None:
        s["details"] = details
    return s


# path -> (group, resource, state attribute, namespaced)
_LISTS: dict[tuple[str, str], tuple[str, str, bool]] = {
    ("", "nodes"): ("", "nodes", False),
    ("", "namespaces"): ("", "namespaces", False),
    ("", "pods"): ("", "pods", True),
    ("apps", "daemonsets"): ("apps", "daemonsets", True),
    ("apps", "deployments"): ("apps", "deployments", True),
    ("apps", "statefulsets"): ("apps", "statefulsets", True),
    ("storage.k8s.io", "storageclasses"): ("storage.k8s.io", "storageclasses", False),
    ("networking.k8s.io", "networkpolicies"): ("networking.k8s.io", "networkpolicies", True),
}
_GV = {"": "v1", "apps": "v1", "storage.k8s.io": "v1", "networking.k8s.io": "v1"}
_KINDS = {
    "nodes": "NodeList",
    "namespaces": "NamespaceList",
    "pods": "PodList",
    "daemonsets": "DaemonSetList",
    "deployments": "DeploymentList",
    "statefulsets": "StatefulSetList",
    "storageclasses": "StorageClassList",
    "networkpolicies": "NetworkPolicyList",
}
_PSA_BLOCKS = {"baseline", "restricted"}


class FakeApiServer:
    """Start with ``with FakeApiServer(state, [persona, ...]) as srv:``."""

    def __init__(self, state: ClusterState, personas: list[Persona]) -> None:
        self.state = state
        self.personas = {p.token: p for p in personas}
        self.requests: list[tuple[str, str]] = []
        self.writes_refused = 0
        self.dry_runs = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(*_tls_pair())
        self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"https://{host}:{port}"

    @staticmethod
    def ca_file() -> Path:
        return _tls_pair()[0]

    def __enter__(self) -> FakeApiServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def kubeconfig(
        self, path: Path, persona: Persona, namespace: str | None = None, context: str = "test"
    ) -> Path:
        ctx: dict[str, Any] = {"cluster": "test-cluster", "user": persona.username}
        if namespace:
            ctx["namespace"] = namespace
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "test-cluster",
                    "cluster": {
                        "server": self.url,
                        "certificate-authority-data": base64.b64encode(
                            self.ca_file().read_bytes()
                        ).decode(),
                    },
                }
            ],
            "users": [{"name": persona.username, "user": {"token": persona.token}}],
            "contexts": [{"name": context, "context": ctx}],
            "current-context": context,
        }
        path.write_text(yaml.safe_dump(doc))
        return path

    # -- request handling (called from handler threads) -------------------------
    def handle(self, method: str, raw_path: str, headers: Any, body: bytes) -> tuple[int, Any, str]:
        url = urlsplit(raw_path)
        path = url.path.rstrip("/") or "/"
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        with self._lock:
            self.requests.append((method, raw_path))
        auth = headers.get("Authorization") or ""
        persona = self.personas.get(auth[7:]) if auth.startswith("Bearer ") else None
        if persona is None:
            return 401, _status(401, "Unauthorized", "Unauthorized"), "json"
        parts = path.strip("/").split("/")
        if method == "GET":
            return self._get(persona, path, parts, query)
        if method == "POST":
            return self._post(persona, path, parts, query, headers, body)
        with self._lock:
            self.writes_refused += 1
        return (
            405,
            _status(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            ),
            "json",
        )

    def _get(
        self, who: Persona, path: str, parts: list[str], q: dict[str, str]
    ) -> tuple[int, Any, str]:
        st = self.state
        if path == "/version":
            return 200, st.version, "json"
        if path == "/api":
            return 200, load_json("discovery/api.json"), "json"
        if path == "/api/v1":
            return 200, load_json("discovery/api__v1.json"), "json"
        if path == "/apis":
            doc = load_json("discovery/apis.json")
            for key in st.crds:
                g, v, *_ = CRD_GROUPS[key]
                gv = {"groupVersion": f"{g}/{v}", "version": v}
                doc["groups"].append({"name": g, "preferredVersion": gv, "versions": [gv]})
            return 200, doc, "json"
        if len(parts) == 3 and parts[0] == "apis":
            f = DISCOVERY / f"apis__{parts[1]}__{parts[2]}.json"
            if f.exists():
                return 200, json.loads(f.read_text()), "json"
            for key in st.crds:
                g, v, plural, kind, namespaced = CRD_GROUPS[key]
                if (parts[1], parts[2]) == (g, v):
                    return (
                        200,
                        {
                            "kind": "APIResourceList",
                            "apiVersion": "v1",
                            "groupVersion": f"{g}/{v}",
                            "resources": [
                                {
                                    "name": plural,
                                    "singularName": plural[:-1],
                                    "namespaced": namespaced,
                                    "kind": kind,
                                    "verbs": [
                                        "delete",
                                        "deletecollection",
                                        "get",
                                        "list",
                                        "patch",
                                        "create",
                                        "update",
                                        "watch",
                                    ],
                                }
                            ],
                        },
                        "json",
                    )
            return (
                404,
                _status(404, "NotFound", "the server could not find the requested resource"),
                "json",
            )
        route = self._route(parts)
        if route is None:
            if path.startswith(("/api/", "/apis/")):
                return (
                    404,
                    _status(404, "NotFound", "the server could not find the requested resource"),
                    "json",
                )
            return 404, "404 page not found\n", "text"
        group, resource, ns, name = route
        if q.get("watch") in ("true", "1"):
            return (
                400,
                _status(400, "BadRequest", "watch is not supported by this test server"),
                "json",
            )
        verb = "get" if name else "list"
        if not who.allows(verb, group, resource, ns):
            return 403, _forbidden(who, verb, group, resource, ns), "json"
        items = [
            o
            for o in getattr(st, resource)
            if ns is None or o.get("metadata", {}).get("namespace", "default") == ns
        ]
        if name:
            hit = next((o for o in items if o["metadata"]["name"] == name), None)
            if hit is None:
                return (
                    404,
                    _status(
                        404,
                        "NotFound",
                        f'{resource} "{name}" not found',
                        {"name": name, "kind": resource},
                    ),
                    "json",
                )
            return 200, hit, "json"
        return self._page(resource, group, items, q)

    def _page(
        self, resource: str, group: str, items: list[dict[str, Any]], q: dict[str, str]
    ) -> tuple[int, Any, str]:
        start = 0
        if q.get("continue"):
            try:
                start = int(base64.urlsafe_b64decode(q["continue"].encode()).decode())
            except (ValueError, UnicodeDecodeError):
                return (
                    400,
                    _status(400, "BadRequest", "continue key is not valid: illegal base64 data"),
                    "json",
                )
        limit = 0
        if q.get("limit"):
            try:
                limit = int(q["limit"])
            except ValueError:
                return (
                    400,
                    _status(400, "BadRequest", f'limit: Invalid value: "{q["limit"]}"'),
                    "json",
                )
        end = len(items) if limit <= 0 else min(len(items), start + limit)
        meta: dict[str, Any] = {"resourceVersion": "37350"}
        if end < len(items):
            meta["continue"] = base64.urlsafe_b64encode(str(end).encode()).decode()
            meta["remainingItemCount"] = len(items) - end
        gv = f"{group}/{_GV[group]}" if group else "v1"
        kind = _KINDS[resource]
        out = []
        for o in items[start:end]:
            o = dict(o)
            o.setdefault("apiVersion", gv)
            o.setdefault("kind", kind[: -len("List")])
            out.append(o)
        return 200, {"kind": kind, "apiVersion": gv, "metadata": meta, "items": out}, "json"

    @staticmethod
    def _route(parts: list[str]) -> tuple[str, str, str | None, str | None] | None:
        """(group, resource, namespace, name) for a resource path, else None."""
        if parts[:2] == ["api", "v1"]:
            group, rest = "", parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis" and _GV.get(parts[1]) == parts[2]:
            group, rest = parts[1], parts[3:]
        else:
            return None
        ns = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            ns, rest = rest[1], rest[2:]
        if not rest or (group, rest[0]) not in _LISTS or len(rest) > 2:
            return None
        return group, rest[0], ns, rest[1] if len(rest) == 2 else None

    def _post(
        self,
        who: Persona,
        path: str,
        parts: list[str],
        q: dict[str, str],
        headers: Any,
        body: bytes,
    ) -> tuple[int, Any, str]:
        ctype = (headers.get("Content-Type") or "").split(";")[0].strip()
        if path == "/apis/authentication.k8s.io/v1/selfsubjectreviews":
            if not self.state.self_subject_review:
                return (
                    404,
                    _status(404, "NotFound", "the server could not find the requested resource"),
                    "json",
                )
            doc, err = _decode(ctype, body, "SelfSubjectReview", "authentication.k8s.io/v1")
            if err:
                return err
            return (
                201,
                {
                    "kind": "SelfSubjectReview",
                    "apiVersion": "authentication.k8s.io/v1",
                    "metadata": {"creationTimestamp": None},
                    "status": {
                        "userInfo": {"username": who.username, "uid": who.uid, "groups": who.groups}
                    },
                },
                "json",
            )
        if path == "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews":
            doc, err = _decode(ctype, body, "SelfSubjectRulesReview", "authorization.k8s.io/v1")
            if err:
                return err
            ns = ((doc or {}).get("spec") or {}).get("namespace")
            if not isinstance(ns, str) or not ns:
                return (
                    422,
                    _status(
                        422,
                        "Invalid",
                        'SelfSubjectRulesReview.authorization.k8s.io "" is invalid: spec.namespace: Required value',
                    ),
                    "json",
                )
            return (
                201,
                {
                    "kind": "SelfSubjectRulesReview",
                    "apiVersion": "authorization.k8s.io/v1",
                    "metadata": {"creationTimestamp": None},
                    "spec": {"namespace": ns},
                    "status": {
                        "resourceRules": who.rules_for(ns),
                        "nonResourceRules": [
                            {
                                "verbs": ["get"],
                                "nonResourceURLs": [
                                    "/healthz",
                                    "/livez",
                                    "/readyz",
                                    "/version",
                                    "/version/",
                                ],
                            }
                        ],
                        "incomplete": False,
                    },
                },
                "json",
            )
        if len(parts) == 5 and parts[:3] == ["api", "v1", "namespaces"] and parts[4] == "pods":
            return self._create_pod(who, parts[3], q, ctype, body)
        with self._lock:
            self.writes_refused += 1
        return (
            404,
            _status(404, "NotFound", "the server could not find the requested resource"),
            "json",
        )

    def _create_pod(
        self, who: Persona, ns: str, q: dict[str, str], ctype: str, body: bytes
    ) -> tuple[int, Any, str]:
        if q.get("dryRun") != "All":
            with self._lock:
                self.writes_refused += 1
            return (
                403,
                _status(
                    403,
                    "Forbidden",
                    "this test server refuses writes: only dryRun=All creates are answered",
                ),
                "json",
            )
        doc, err = _decode(ctype, body, "Pod", "v1")
        if err:
            return err
        assert doc is not None
        meta = doc.get("metadata") or {}
        name = meta.get("name") or ""
        if not who.allows("create", "", "pods", ns):
            return 403, _forbidden(who, "create", "", "pods", ns), "json"
        nso = next((n for n in self.state.namespaces if n["metadata"]["name"] == ns), None)
        if nso is None:
            return (
                404,
                _status(
                    404,
                    "NotFound",
                    f'namespaces "{ns}" not found',
                    {"name": ns, "kind": "namespaces"},
                ),
                "json",
            )
        spec = doc.get("spec") or {}
        ctrs = spec.get("containers")
        problems = []
        if not name and not meta.get("generateName"):
            problems.append("metadata.name: Required value: name or generateName is required")
        if not isinstance(ctrs, list) or not ctrs:
            problems.append("spec.containers: Required value")
        else:
            for i, c in enumerate(ctrs):
                if not isinstance(c, dict) or not c.get("name"):
                    problems.append(f"spec.containers[{i}].name: Required value")
                if not isinstance(c, dict) or not c.get("image"):
                    problems.append(f"spec.containers[{i}].image: Required value")
        if problems:
            return (
                422,
                _status(
                    422,
                    "Invalid",
                    f'Pod "{name}" is invalid: ' + ", ".join(problems),
                    {"name": name, "kind": "Pod"},
                ),
                "json",
            )
        level = (nso["metadata"].get("labels") or {}).get("pod-security.kubernetes.io/enforce")
        if level in _PSA_BLOCKS:
            why = []
            for c in ctrs:
                if (c.get("securityContext") or {}).get("privileged"):
                    why.append(
                        f'privileged (container "{c["name"]}" must not set securityContext.privileged=true)'
                    )
            hp = [
                v.get("name")
                for v in spec.get("volumes") or []
                if isinstance(v, dict) and "hostPath" in v
            ]
            if hp:
                why.append("hostPath volumes (" + ", ".join(f'volume "{n}"' for n in hp) + ")")
            if why:
                return (
                    403,
                    _status(
                        403,
                        "Forbidden",
                        f'pods "{name}" is forbidden: violates PodSecurity "{level}:latest": '
                        + ", ".join(why),
                        {"name": name, "kind": "pods"},
                    ),
                    "json",
                )
        with self._lock:
            self.dry_runs += 1
        out = copy.deepcopy(doc)
        out["metadata"] = {
            **meta,
            "namespace": ns,
            "uid": str(uuid.uuid4()),
            "creationTimestamp": "2026-12-02T00:00:00Z",
        }
        out["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
        return 201, out, "json"


def _decode(
    ctype: str, body: bytes, kind: str, api_version: str
) -> tuple[dict[str, Any] | None, tuple[int, Any, str] | None]:
    if ctype not in ("application/json", "application/merge-patch+json", ""):
        return None, (
            415,
            _status(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
            ),
            "json",
        )
    try:
        doc = json.loads(body or b"")
    except ValueError as exc:
        return None, (
            400,
            _status(
                400,
                "BadRequest",
                f"the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: {exc}",
            ),
            "json",
        )
    if not isinstance(doc, dict):
        return None, (
            400,
            _status(
                400, "BadRequest", f"the object provided is unrecognized (must be of type {kind})"
            ),
            "json",
        )
    if doc.get("kind") not in (None, kind) or doc.get("apiVersion") not in (None, api_version):
        return None, (
            400,
            _status(
                400,
                "BadRequest",
                f"the API version in the data ({doc.get('apiVersion')}) does not match the expected API version ({api_version})",
            ),
            "json",
        )
    return doc, None


def _forbidden(
    who: Persona, verb: str, group: str, resource: str, ns: str | None
) -> dict[str, Any]:
    where = "at the cluster scope" if ns is None else f'in the namespace "{ns}"'
    msg = f'{resource} is forbidden: User "{who.username}" cannot {verb} resource "{resource}" in API group "{group}" {where}'
    return _status(403, "Forbidden", msg, {"kind": resource})


def _handler(server: FakeApiServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out as separate writes; without this, delayed
        # ACKs add ~40 ms to every answer.
        disable_nagle_algorithm = True

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            try:
                code, payload, kind = server.handle(self.command, self.path, self.headers, body)
            except Exception as exc:  # a bug in the test server must show, not hang
                code, payload, kind = (
                    500,
                    _status(500, "InternalError", f"test server: {exc!r}"),
                    "json",
                )
            if kind == "json":
                data = json.dumps(payload).encode()
                ctype = "application/json"
            else:
                data = str(payload).encode()
                ctype = "text/plain; charset=utf-8"
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
