"""Collect a Kubernetes cluster's facts through its API server.

Read-only, as the kubeconfig's identity: what that identity may not list is
recorded as a fact (``ListAttempt.allowed=False``), not an error.  Errors
(unreachable server, 5xx, answers that do not parse) go to the returned
error list; nothing here raises.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from clustergrade.facts.base import CollectorError
from clustergrade.facts.k8s import (
    AdmissionProbe,
    Identity,
    K8sFacts,
    ListAttempt,
    NamespaceFact,
    RulesReview,
    Workload,
)
from clustergrade.facts.node import Snapshot, Target
from clustergrade.k8s.client import Answer, K8sUnavailable
from clustergrade.k8s.parse import (
    K8sParseError,
    parse_api_groups,
    parse_namespaces,
    parse_network_policies,
    parse_nodes,
    parse_rules_review,
    parse_self_subject_review,
    parse_storage_classes,
    parse_version,
    parse_workloads,
    recognise,
)

T = TypeVar("T")
_NAME = "k8s"
#: Namespaces reviewed with SelfSubjectRulesReview at most (one POST each).
MAX_RULE_NAMESPACES = 200
_REVIEW_THREADS = 8
#: The image the dry-run pods name; never pulled, since nothing is created.
PROBE_IMAGE = "registry.k8s.io/pause:3.10"


class K8sSource(Protocol):
    """What the collector asks of the API (see :class:`~clustergrade.k8s.client.K8sClient`)."""

    context: str | None
    namespace: str
    server: str
    user: str | None

    def version(self) -> Answer: ...
    def api_groups(self) -> Answer: ...
    def nodes(self) -> Answer: ...
    def namespaces(self) -> Answer: ...
    def pods_all_namespaces(self) -> Answer: ...
    def workloads(self, kind: str) -> Answer: ...
    def storage_classes(self) -> Answer: ...
    def network_policies(self, namespace: str | None = None) -> Answer: ...
    def self_subject_review(self) -> Answer: ...
    def self_subject_rules_review(self, namespace: str) -> Answer: ...
    def dry_run_pod(self, namespace: str, pod: dict[str, Any]) -> Answer: ...


def probe_pods() -> dict[str, dict[str, Any]]:
    """The pods the admission probes try to create (dry run only)."""

    def pod(name: str, spec_extra: dict[str, Any], ctr_extra: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"clustergrade-dryrun-{name}",
                "labels": {"app.kubernetes.io/managed-by": "clustergrade"},
            },
            "spec": {
                "containers": [{"name": "probe", "image": PROBE_IMAGE, **ctr_extra}],
                "restartPolicy": "Never",
                **spec_extra,
            },
        }

    return {
        "privileged-pod": pod("privileged", {}, {"securityContext": {"privileged": True}}),
        "hostpath-pod": pod(
            "hostpath",
            {"volumes": [{"name": "host", "hostPath": {"path": "/"}}]},
            {"volumeMounts": [{"name": "host", "mountPath": "/host", "readOnly": True}]},
        ),
    }


class _Run:
    def __init__(self, src: K8sSource) -> None:
        self.src = src
        self.errors: list[CollectorError] = []
        self.lists: list[ListAttempt] = []

    def error(self, message: str, path: str | None = None) -> None:
        self.errors.append(CollectorError(collector=_NAME, message=message, path=path))

    def parsed(self, what: str, a: Answer, parse: Callable[[Any], T]) -> T | None:
        try:
            return parse(a.data)
        except K8sParseError as exc:
            self.error(f"{what}: unexpected answer: {exc}")
            return None

    def listing(self, resource: str, a: Answer, parse: Callable[[Any], list[T]]) -> list[T] | None:
        """A list call's items; None when it was refused or failed."""
        if a.ok:
            items = self.parsed(resource, a, parse)
            if items is not None:
                self.lists.append(ListAttempt(resource=resource, allowed=True, count=len(items)))
            return items
        if a.status in (401, 403):
            self.lists.append(
                ListAttempt(
                    resource=resource, allowed=False, status_code=a.status, message=a.message
                )
            )
        else:
            self.error(f"list {resource}: HTTP {a.status}: {a.message}")
        return None


def collect_k8s(src: K8sSource) -> tuple[K8sFacts, list[CollectorError]]:
    """Every fact the audit judges, read as ``src``'s identity."""
    run = _Run(src)
    base = {"server": src.server, "context": src.context, "namespace": src.namespace}
    v = src.version()
    if v.unreachable or v.status == 401:
        run.error(f"API server {src.server} did not answer: {v.message}")
        return K8sFacts(reachable=False, **base), run.errors
    server_version = platform = None
    if v.ok:
        got = run.parsed("version", v, parse_version)
        if got is not None:
            server_version, platform = got
    else:
        run.error(f"/version: HTTP {v.status}: {v.message}")

    identity = _identity(run)
    groups = run.parsed("/apis", a, parse_api_groups) if (a := src.api_groups()).ok else None
    if groups is None and not a.ok:
        run.error(f"/apis: HTTP {a.status}: {a.message}")
    nodes = run.listing("nodes", src.nodes(), parse_nodes) or []
    namespaces = run.listing("namespaces", src.namespaces(), parse_namespaces)
    pods = src.pods_all_namespaces()
    run.listing("pods", pods, _any_items)
    workloads: list[Workload] = []
    for kind, resource in (
        ("DaemonSet", "daemonsets"),
        ("Deployment", "deployments"),
        ("StatefulSet", "statefulsets"),
    ):
        got_w = run.listing(resource, src.workloads(kind), functools.partial(_workloads, kind))
        workloads.extend(got_w or [])
    storage = run.listing("storageclasses", src.storage_classes(), parse_storage_classes) or []
    policies = run.listing("networkpolicies", src.network_policies(), parse_network_policies)
    if policies is None:
        # Cluster-wide refused: a tenant can usually still read its own namespace's.
        policies = (
            run.listing(
                f"networkpolicies/{src.namespace}",
                src.network_policies(src.namespace),
                parse_network_policies,
            )
            or []
        )
    reviewed = _review_namespaces(src.namespace, namespaces)
    if namespaces is not None and len(namespaces) > MAX_RULE_NAMESPACES:
        run.error(f"rules reviewed in {MAX_RULE_NAMESPACES} of {len(namespaces)} namespaces")
    rules = _rules(run, reviewed)
    admission = _admission(run, src.namespace)
    facts = K8sFacts(
        reachable=True,
        **base,
        server_version=server_version,
        platform=platform,
        identity=identity,
        nodes=nodes,
        namespaces=namespaces or [],
        workloads=workloads,
        components=recognise(workloads),
        storage_classes=storage,
        network_policies=policies,
        api_groups=groups or [],
        rules=rules,
        admission=admission,
        lists=run.lists,
    )
    return facts, run.errors


def _workloads(kind: str, doc: Any) -> list[Workload]:
    return parse_workloads(doc, kind)


def _any_items(doc: Any) -> list[Any]:
    items = doc.get("items") if isinstance(doc, dict) else None
    if items is not None and not isinstance(items, list):
        raise K8sParseError("PodList.items is not a list")
    return items or []


def _identity(run: _Run) -> Identity:
    a = run.src.self_subject_review()
    if a.ok:
        got = run.parsed("SelfSubjectReview", a, parse_self_subject_review)
        if got is not None:
            return got
    # Before 1.28 (or with the API disabled) the server cannot say who we are;
    # the kubeconfig's user name is the best remaining evidence.
    return Identity(
        username=run.src.user,
        source="kubeconfig",
        error=f"SelfSubjectReview: HTTP {a.status}: {a.message}" if not a.ok else "unparseable",
    )


def _review_namespaces(own: str, namespaces: list[NamespaceFact] | None) -> list[str]:
    if namespaces is None:
        names = [own, "default", "kube-system"]
    else:
        names = [own, *sorted(n.name for n in namespaces)]
    return list(dict.fromkeys(names))[:MAX_RULE_NAMESPACES]


def _rules(run: _Run, namespaces: list[str]) -> list[RulesReview]:
    def one(ns: str) -> RulesReview:
        a = run.src.self_subject_rules_review(ns)
        if not a.ok:
            return RulesReview(namespace=ns, error=f"HTTP {a.status}: {a.message}")
        try:
            return parse_rules_review(ns, a.data)
        except K8sParseError as exc:
            return RulesReview(namespace=ns, error=f"unexpected answer: {exc}")

    with ThreadPoolExecutor(max_workers=_REVIEW_THREADS) as pool:
        return list(pool.map(one, namespaces))


def classify_refusal(status: int | None, message: str | None) -> str | None:
    """Who refused a dry-run create: "rbac", "admission", "invalid" or None."""
    m = (message or "").lower()
    if status == 403 and "cannot create resource" in m:
        return "rbac"
    if status == 422:
        return "invalid"
    if status in (400, 403) and ("podsecurity" in m or "admission webhook" in m or "denied" in m):
        if "does not support dry run" in m:
            return None
        return "admission"
    if status == 403:
        return "admission"
    return None


def _admission(run: _Run, namespace: str) -> list[AdmissionProbe]:
    out = []
    for probe, pod in probe_pods().items():
        a = run.src.dry_run_pod(namespace, pod)
        if a.ok:
            out.append(
                AdmissionProbe(
                    probe=probe, namespace=namespace, admitted=True, status_code=a.status
                )
            )
            continue
        by = classify_refusal(a.status, a.message)
        out.append(
            AdmissionProbe(
                probe=probe,
                namespace=namespace,
                admitted=False if by == "admission" else None,
                status_code=a.status,
                message=a.message,
                refused_by=by,
            )
        )
    return out


def collect_k8s_snapshot(kubeconfig: str | None, context: str | None) -> Snapshot:
    """Audit the cluster of ``context`` in ``kubeconfig`` (defaults as kubectl).

    Raises :class:`K8sUnavailable` when the client library, the kubeconfig or
    the context is missing, or the API server does not answer.
    """
    from clustergrade import __version__
    from clustergrade.facts.slurm import ClusterFacts
    from clustergrade.k8s.client import K8sClient

    if "k8s" not in ClusterFacts.model_fields:
        raise K8sUnavailable("this build's ClusterFacts has no k8s field yet")
    client = K8sClient(kubeconfig, context)
    started = datetime.now(UTC)
    try:
        facts, errors = collect_k8s(client)
    finally:
        client.close()
    if not facts.reachable:
        raise K8sUnavailable(errors[0].message if errors else f"{client.server} did not answer")
    ident = facts.identity
    return Snapshot(
        tool_version=__version__,
        created_at=started,
        target=Target(
            kind="k8s",
            name=facts.context or facts.server or "kubernetes",
            details={
                "server": facts.server,
                "context": facts.context,
                "namespace": facts.namespace,
                "identity": ident.username if ident else None,
                "groups": ident.groups if ident else [],
                "identity_source": ident.source if ident else None,
                "server_version": facts.server_version,
                "nodes": len(facts.nodes),
                "collect_s": round((datetime.now(UTC) - started).total_seconds(), 3),
            },
        ),
        nodes=[],
        cluster=ClusterFacts(**{"k8s": facts}),
        errors=errors,
    )
