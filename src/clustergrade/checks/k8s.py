"""Cluster checks on a Kubernetes cluster, judged from the API as one identity.

Each check is a pure function of :class:`K8sFacts` (``JUDGES``), so it can be
tested before the snapshot carries k8s facts.  They are registered as
cluster checks only once ``"k8s"`` is one of the registry's
``CLUSTER_SECTIONS`` (the registry refuses unknown cluster facts).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import date
from typing import Any

from clustergrade.checks.registry import CLUSTER_SECTIONS, cluster_check
from clustergrade.checks.versions import Observed, judge
from clustergrade.facts.k8s import AdmissionProbe, K8sFacts, NetworkPolicyFact, Rule
from clustergrade.facts.node import Snapshot
from clustergrade.kb.model import KnowledgeBase
from clustergrade.results import (
    Criterion,
    Finding,
    Severity,
    errored,
    failed,
    passed,
    skipped,
    warned,
)

Judge = Callable[[K8sFacts, KnowledgeBase, date], "Finding | Iterable[Finding]"]
#: check id -> pure judgement on the k8s facts.
JUDGES: dict[str, Judge] = {}

_SKEW = "https://kubernetes.io/releases/version-skew-policy/"
_PSA = "https://kubernetes.io/docs/concepts/security/pod-security-admission/"
_RBAC = "https://kubernetes.io/docs/concepts/security/rbac-good-practices/"
_NETPOL = (
    "https://kubernetes.io/docs/concepts/services-networking/network-policies/#default-policies"
)
_SYSTEM_NS = ("kube-system", "kube-public", "kube-node-lease")
#: Kubelets may be up to three minor versions older than the API server (1.28+).
_KUBELET_MAX_SKEW = 3
_GANG = {
    "kueue.x-k8s.io": "Kueue",
    "scheduling.volcano.sh": "Volcano",
    "kubeflow.org": "Kubeflow training / MPI Operator",
    "jobset.x-k8s.io": "JobSet",
    "leaderworkerset.x-k8s.io": "LeaderWorkerSet",
    "scheduling.x-k8s.io": "scheduler-plugins coscheduling",
}
_MONITORING = ("prometheus", "kube-state-metrics", "node-exporter")


def _facts(snapshot: Snapshot) -> K8sFacts:
    k: Any = getattr(snapshot.cluster, "k8s", None)
    assert isinstance(k, K8sFacts)
    return k


def _today(snapshot: Snapshot) -> date:
    return snapshot.created_at.date()


def k8s_check(id: str, **meta: Any) -> Callable[[Judge], Judge]:
    """Register ``func(facts, kb, today)`` as cluster check ``id`` (when the
    registry knows k8s facts) and in :data:`JUDGES`."""

    def deco(func: Judge) -> Judge:
        JUDGES[id] = func
        if "k8s" in CLUSTER_SECTIONS:

            def run(snapshot: Snapshot, kb: KnowledgeBase) -> Finding | Iterable[Finding]:
                return func(_facts(snapshot), kb, _today(snapshot))

            run.__name__ = func.__name__
            cluster_check(id, cluster_needs=("k8s",), **meta)(run)
        return func

    return deco


def _refused(k: K8sFacts, resource: str) -> str | None:
    a = k.listed(resource)
    if a is None:
        return f"{resource} were not listed"
    if not a.allowed:
        return f"this identity may not list {resource} cluster-wide ({a.status_code})"
    return None


# -- identity and versions ------------------------------------------------------


@k8s_check(
    "k8s.identity",
    title="The audit states which identity it ran as, and it is not a cluster admin",
    criterion=Criterion.SECURITY,
    severity=Severity.INFO,
    rationale="Every RBAC and admission finding is relative to the identity that made the calls; an audit run as cluster-admin says nothing about what a tenant can do.",
    remediation="Run the audit with a tenant's kubeconfig (the identity a customer gets) to judge isolation.",
    profiles=("security", "isolation", "orchestration"),
    references=(
        "https://kubernetes.io/docs/reference/access-authn-authz/authentication/#self-subject-review",
    ),
)
def identity(k: K8sFacts, kb: KnowledgeBase, today: date) -> Finding:
    i = k.identity
    if i is None or i.username is None:
        return warned("the API server did not say who the audit ran as", observed=None)
    who = f"{i.username} (groups: {', '.join(i.groups) or 'none'}; from {i.source})"
    ev = {"username": i.username, "groups": i.groups, "source": i.source}
    admin_groups = {"system:masters", "kubeadm:cluster-admins"} & set(i.groups)
    everything = any(_grants(r, "*", "*", "*") for rv in k.rules for r in rv.rules)
    if admin_groups or everything:
        return warned(
            f"audited as {who}: a cluster admin, so isolation results do not describe a tenant",
            observed=i.username,
            expected="a tenant identity",
            evidence=ev,
        )
    if i.source != "SelfSubjectReview":
        return warned(
            f"audited as {who}; the server could not confirm it ({i.error})",
            observed=i.username,
            evidence=ev,
        )
    return passed(f"audited as {who}", observed=i.username, evidence=ev)


_MINOR = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?")


def _minor(v: str | None) -> tuple[int, int] | None:
    m = _MINOR.match(v or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


@k8s_check(
    "k8s.version-skew",
    title="Kubelets are within the supported version skew of the API server",
    criterion=Criterion.LIFECYCLE,
    severity=Severity.MEDIUM,
    rationale="A kubelet newer than the API server, or more than three minor versions older, is outside the Kubernetes version-skew policy and untested.",
    remediation="Upgrade the kubelets (or the control plane) so every kubelet is at most three minor versions older than, and never newer than, kube-apiserver.",
    profiles=("versions", "orchestration"),
    references=(_SKEW,),
)
def version_skew(k: K8sFacts, kb: KnowledgeBase, today: date) -> Finding:
    server = _minor(k.server_version)
    note = (
        ""
        if kb.component("kubernetes")
        else "; not judged against advisories: the knowledge base has no kubernetes component"
    )
    if server is None:
        return errored(f"cannot read the API server version {k.server_version!r}")
    if not k.nodes:
        return skipped(f"no nodes visible to this identity; API server {k.server_version}{note}")
    newer, old, unknown = [], [], []
    for n in k.nodes:
        m = _minor(n.kubelet_version)
        if m is None:
            unknown.append(n.name)
        elif m > server:
            newer.append(n.name)
        elif m[0] == server[0] and server[1] - m[1] > _KUBELET_MAX_SKEW:
            old.append(n.name)
    versions = sorted({n.kubelet_version or "?" for n in k.nodes})
    ev = {"server": k.server_version, "kubelets": versions}
    if newer:
        return failed(
            f"{len(newer)} kubelets newer than the API server {k.server_version}: {', '.join(newer[:10])}{note}",
            observed=versions,
            expected=f"<= {k.server_version}",
            evidence=ev,
        )
    if old:
        return failed(
            f"{len(old)} kubelets more than {_KUBELET_MAX_SKEW} minor versions behind {k.server_version}: {', '.join(old[:10])}{note}",
            observed=versions,
            expected=f"within {_KUBELET_MAX_SKEW} minors",
            evidence=ev,
        )
    if unknown:
        return errored(f"kubelet version unreadable on {', '.join(unknown[:10])}")
    return passed(
        f"API server {k.server_version}, kubelets {', '.join(versions)}: within skew{note}",
        observed=versions,
        evidence=ev,
    )


_RUNTIME = re.compile(r"^([a-z0-9-]+)://v?(\S+)$")
_RUNTIME_COMPONENT = {"containerd": "containerd", "docker": "docker"}


@k8s_check(
    "k8s.container-runtime",
    title="Every node's container runtime has the known security fixes",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale="The runtime each kubelet reports (nodeInfo.containerRuntimeVersion) is judged against the knowledge base's containerd and Docker advisories; runc's version is not in nodeInfo and is not judged here.",
    remediation="Upgrade containerd (and the runc it ships) on the affected nodes.",
    profiles=("security", "versions", "containers"),
    references=(_SKEW,),
)
def container_runtime(k: K8sFacts, kb: KnowledgeBase, today: date) -> list[Finding]:
    if not k.nodes:
        return [skipped("no nodes visible to this identity")]
    groups: dict[str, list[str]] = {}
    for n in k.nodes:
        groups.setdefault(n.container_runtime or "", []).append(n.name)
    out = []
    for raw, names in sorted(groups.items()):
        subject = f"{raw or 'unknown runtime'} ({len(names)} nodes)"
        m = _RUNTIME.match(raw)
        if not m:
            out.append(
                errored(f"unreadable runtime {raw!r} on {', '.join(names[:5])}", subject=subject)
            )
            continue
        kind, version = m.group(1), m.group(2)
        comp = kb.component(_RUNTIME_COMPONENT.get(kind, kind))
        if comp is None:
            out.append(
                skipped(
                    f"{kind} {version}: no knowledge-base component to judge it", subject=subject
                )
            )
            continue
        # Distribution builds ("2.0.2-k3s2") carry the upstream release first;
        # semver would read the suffix as a pre-release and rank it below 2.0.2.
        base = _MINOR.match(version)
        upstream = base.group(0).lstrip("v") if base and base.group(3) else version
        f = judge(
            comp,
            Observed(upstream, subject=subject, source="nodeInfo.containerRuntimeVersion"),
            today,
            kb.meta.grace_days,
        )
        out.append(
            f.model_copy(update={"evidence": {**f.evidence, "reported": raw, "nodes": names[:20]}})
        )
    return out


# -- GPUs -------------------------------------------------------------------------


def _label_int(labels: dict[str, str], key: str) -> int | None:
    v = labels.get(key)
    return int(v) if v is not None and v.isdigit() else None


@k8s_check(
    "k8s.gpu-labels",
    title="Advertised GPUs match the GPU feature discovery labels",
    criterion=Criterion.RELIABILITY,
    severity=Severity.HIGH,
    rationale="When nvidia.com/gpu capacity disagrees with nvidia.com/gpu.count (times the sharing replicas), the device plugin lost GPUs or the labels are stale; allocatable below capacity means GPUs were marked unhealthy.",
    remediation="Check the device plugin and GPU feature discovery pods on the listed nodes (nvidia-smi, Xid errors), then restart the plugin.",
    profiles=("hardware", "health", "orchestration"),
    references=("https://github.com/NVIDIA/k8s-device-plugin#shared-access-to-gpus",),
)
def gpu_labels(k: K8sFacts, kb: KnowledgeBase, today: date) -> list[Finding]:
    if _refused(k, "nodes"):
        return [skipped(_refused(k, "nodes") or "")]
    gpu_nodes = [
        n
        for n in k.nodes
        if n.gpu_capacity or n.gpu_labels.get("nvidia.com/gpu.count") or n.mig_resources
    ]
    if not gpu_nodes:
        return [skipped("no node advertises or is labelled with NVIDIA GPUs")]
    out: list[Finding] = []
    ok = 0
    for n in gpu_nodes:
        count = _label_int(n.gpu_labels, "nvidia.com/gpu.count")
        replicas = _label_int(n.gpu_labels, "nvidia.com/gpu.replicas") or 1
        strategy = n.gpu_labels.get("nvidia.com/mig.strategy")
        cap, alloc = n.gpu_capacity, n.gpu_allocatable
        ev = {
            "capacity": cap,
            "allocatable": alloc,
            "gpu.count": count,
            "replicas": replicas,
            "mig.strategy": strategy,
            "mig": n.mig_resources,
            "product": n.gpu_labels.get("nvidia.com/gpu.product"),
        }
        if strategy == "mixed" and n.mig_resources:
            ok += 1
            continue
        if count is None:
            out.append(
                warned(
                    f"{n.name} advertises {cap} GPUs but has no nvidia.com/gpu.count label (GPU feature discovery not running?)",
                    subject=n.name,
                    evidence=ev,
                )
            )
        elif not cap:
            out.append(
                failed(
                    f"{n.name} is labelled with {count} GPUs but advertises none: the device plugin is not registering them",
                    observed=cap or 0,
                    expected=count * replicas,
                    subject=n.name,
                    evidence=ev,
                )
            )
        elif cap != count * replicas:
            out.append(
                failed(
                    f"{n.name} advertises {cap} nvidia.com/gpu, labels say {count} x {replicas} replicas",
                    observed=cap,
                    expected=count * replicas,
                    subject=n.name,
                    evidence=ev,
                )
            )
        elif alloc is not None and alloc < cap:
            out.append(
                warned(
                    f"{n.name}: {cap - alloc} of {cap} GPUs not allocatable (marked unhealthy)",
                    observed=alloc,
                    expected=cap,
                    subject=n.name,
                    evidence=ev,
                )
            )
        else:
            ok += 1
    if not out:
        return [passed(f"{ok} GPU nodes: capacity, allocatable and labels agree", observed=ok)]
    return out


# -- add-ons ----------------------------------------------------------------------


def _workloads_unknown(k: K8sFacts) -> str | None:
    for r in ("daemonsets", "deployments", "statefulsets"):
        why = _refused(k, r)
        if why:
            return f"cannot see every add-on: {why}"
    return None


@k8s_check(
    "k8s.ingress-nginx",
    title="No ingress-nginx controller runs (the project is retired)",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale="ingress-nginx's maintenance ended in March 2026 with no further releases; its admission webhook was the path for IngressNightmare (CVE-2025-1974, unauthenticated code execution, 9.8) and later injection CVEs will not be fixed.",
    remediation="Migrate to a maintained controller (Gateway API implementation or another ingress controller) and remove ingress-nginx.",
    profiles=("security", "networking"),
    references=(
        "https://www.cve.org/CVERecord?id=CVE-2025-1974",
        "https://kubernetes.io/blog/2025/11/11/ingress-nginx-retirement/",
    ),
)
def ingress_nginx(k: K8sFacts, kb: KnowledgeBase, today: date) -> Finding:
    seen = [c for c in k.components if c.component == "ingress-nginx"]
    if seen:
        where = ", ".join(f"{c.namespace}/{c.workload} {c.version or '?'}" for c in seen)
        return failed(
            f"ingress-nginx runs ({where}): retired, no more security fixes",
            observed=[c.image for c in seen],
            expected="none",
            evidence={"images": [c.image for c in seen]},
        )
    unknown = _workloads_unknown(k)
    if unknown:
        return skipped(unknown)
    return passed("no ingress-nginx controller among the cluster's workloads", observed="none")


@k8s_check(
    "k8s.monitoring",
    title="Cluster monitoring is deployed (Prometheus, kube-state-metrics, node-exporter, dcgm-exporter)",
    criterion=Criterion.MONITORING,
    severity=Severity.MEDIUM,
    rationale="Without Prometheus, kube-state-metrics, node-exporter and (on GPU nodes) dcgm-exporter there is no record of GPU health, utilisation or node failures.",
    remediation="Deploy kube-prometheus-stack (or equivalent) and NVIDIA dcgm-exporter on GPU nodes.",
    profiles=("monitoring",),
    references=("https://github.com/NVIDIA/dcgm-exporter",),
)
def monitoring(k: K8sFacts, kb: KnowledgeBase, today: date) -> Finding:
    unknown = _workloads_unknown(k)
    if unknown:
        return skipped(unknown)
    have = {c.component for c in k.components}
    wanted = list(_MONITORING)
    if any(n.gpu_capacity or n.gpu_labels.get("nvidia.com/gpu.count") for n in k.nodes):
        wanted.append("dcgm-exporter")
    missing = [w for w in wanted if w not in have]
    if missing:
        found = [w for w in wanted if w in have]
        return warned(
            f"not deployed: {', '.join(missing)}"
            + (f" (found {', '.join(found)})" if found else ""),
            observed=found,
            expected=wanted,
        )
    return passed(f"deployed: {', '.join(wanted)}", observed=wanted)


@k8s_check(
    "k8s.gang-scheduler",
    title="A gang / batch scheduler is installed (Kueue, Volcano, MPI Operator, JobSet, LeaderWorkerSet)",
    criterion=Criterion.ORCHESTRATION,
    severity=Severity.LOW,
    rationale="Multi-node training needs all-or-nothing placement; without a gang scheduler, partial placements deadlock GPUs.",
    remediation="Install Kueue (with JobSet or the MPI Operator) or Volcano.",
    profiles=("orchestration",),
    references=("https://kueue.sigs.k8s.io/", "https://volcano.sh/"),
)
def gang_scheduler(k: K8sFacts, kb: KnowledgeBase, today: date) -> Finding:
    if not k.api_groups:
        return skipped("API discovery returned no groups")
    found = [f"{_GANG[g.name]} ({g.name})" for g in k.api_groups if g.name in _GANG]
    if found:
        return passed(f"installed: {', '.join(found)}", observed=found)
    return warned(
        "no gang-scheduling API group (Kueue, Volcano, kubeflow.org, JobSet, LeaderWorkerSet) in discovery",
        observed="none",
        expected=sorted(_GANG),
    )


# -- storage and network ------------------------------------------------------------


@k8s_check(
    "k8s.default-storageclass",
    title="Exactly one default StorageClass",
    criterion=Criterion.STORAGE,
    severity=Severity.MEDIUM,
    rationale="PersistentVolumeClaims without a class stay Pending when no StorageClass is default; two defaults make the choice arbitrary. Which class gives ReadWriteMany cannot be told from the API, so provisioners are recorded.",
    remediation="Mark one StorageClass with storageclass.kubernetes.io/is-default-class=true.",
    profiles=("storage",),
    references=(
        "https://kubernetes.io/docs/concepts/storage/storage-classes/#default-storageclass",
    ),
)
def default_storageclass(k: K8sFacts, kb: KnowledgeBase, today: date) -> Finding:
    why = _refused(k, "storageclasses")
    if why:
        return skipped(why)
    provisioners = {s.name: s.provisioner for s in k.storage_classes}
    defaults = [s.name for s in k.storage_classes if s.default]
    ev = {"provisioners": provisioners}
    if not k.storage_classes:
        return failed(
            "no StorageClass at all: dynamic provisioning is unavailable",
            observed=0,
            expected=1,
            evidence=ev,
        )
    if not defaults:
        return failed(
            f"no default among {len(provisioners)} StorageClasses ({', '.join(provisioners)})",
            observed="none",
            expected="one default",
            evidence=ev,
        )
    if len(defaults) > 1:
        return warned(
            f"{len(defaults)} default StorageClasses: {', '.join(defaults)}",
            observed=defaults,
            expected="one default",
            evidence=ev,
        )
    return passed(
        f"default StorageClass {defaults[0]} ({provisioners[defaults[0]]})",
        observed=defaults[0],
        evidence=ev,
    )


def _denies_ingress(p: NetworkPolicyFact) -> bool:
    return p.selects_all_pods and "Ingress" in p.policy_types and p.ingress_rules == 0


@k8s_check(
    "k8s.default-deny",
    title="Every tenant namespace has a default-deny ingress NetworkPolicy",
    criterion=Criterion.SECURITY,
    severity=Severity.MEDIUM,
    rationale="Pods accept traffic from every other pod in the cluster unless a NetworkPolicy selects them; a namespace without a default deny is open to all tenants.",
    remediation="Add a NetworkPolicy with podSelector: {} and policyTypes: [Ingress] (and Egress) to every tenant namespace, then allow what is needed.",
    profiles=("security", "isolation", "networking"),
    references=(_NETPOL,),
)
def default_deny(k: K8sFacts, kb: KnowledgeBase, today: date) -> Finding:
    if k.namespaces:
        names = [n.name for n in k.namespaces if n.name not in _SYSTEM_NS]
        scope = "namespaces"
    elif (own := k.listed(f"networkpolicies/{k.namespace}")) is not None and own.allowed:
        names, scope = [k.namespace], "own namespace"
    else:
        return skipped("neither namespaces nor this namespace's NetworkPolicies are readable")
    if _refused(k, "networkpolicies") and scope == "namespaces":
        names, scope = [k.namespace], "own namespace"
    denied = {p.namespace for p in k.network_policies if _denies_ingress(p)}
    open_ = [n for n in names if n not in denied]
    if open_:
        return failed(
            f"{len(open_)}/{len(names)} {scope} without a default-deny ingress policy: {', '.join(open_[:20])}",
            observed=open_,
            expected="default deny everywhere",
        )
    return passed(
        f"all {len(names)} {scope} have a default-deny ingress policy", observed=len(names)
    )


# -- RBAC and admission --------------------------------------------------------------


def _grants(r: Rule, verb: str, group: str, resource: str) -> bool:
    return (
        (verb in r.verbs or "*" in r.verbs)
        and (group in r.api_groups or "*" in r.api_groups)
        and (resource in r.resources or "*" in r.resources)
        and not r.resource_names
    )


def _where(
    k: K8sFacts, verbs: tuple[str, ...], resource: str, own_ok: bool
) -> tuple[list[str], list[str]]:
    """(namespaces where the identity has any of ``verbs`` on ``resource``,
    namespaces whose review failed or was incomplete)."""
    hits, unsure = [], []
    for rv in k.rules:
        if rv.error or rv.incomplete:
            unsure.append(rv.namespace)
        if own_ok and rv.namespace == k.namespace:
            continue
        if any(_grants(r, v, "", resource) for r in rv.rules for v in verbs):
            hits.append(rv.namespace)
    return hits, unsure


def _rbac(
    k: K8sFacts,
    verbs: tuple[str, ...],
    resource: str,
    what: str,
    own_ok: bool,
    cluster_scoped: bool = False,
) -> Finding:
    if not k.rules:
        return skipped("no SelfSubjectRulesReview was made")
    hits, unsure = _where(k, verbs, resource, own_ok)
    if cluster_scoped and len(hits) < len([r for r in k.rules if not r.error]):
        # A Role's "*" cannot reach a cluster-scoped resource; only a grant that
        # shows in every namespace's review comes from a ClusterRoleBinding.
        hits = []
    who = k.identity.username if k.identity else "this identity"
    if hits:
        return failed(
            f"{who} can {what} in {len(hits)} namespaces: {', '.join(hits[:20])}",
            observed=hits,
            expected="none",
        )
    if unsure and len(unsure) == len(k.rules):
        return errored(
            f"rules reviews failed or were incomplete in every namespace: {', '.join(unsure[:5])}"
        )
    scope = f"{len(k.rules)} namespaces reviewed" + (
        f", {len(unsure)} incomplete" if unsure else ""
    )
    if unsure:
        return warned(
            f"{who} cannot {what} where reviewed ({scope})",
            observed=[],
            evidence={"incomplete": unsure},
        )
    return passed(f"{who} cannot {what} ({scope})", observed=[])


@k8s_check(
    "k8s.rbac-secrets",
    title="The identity cannot read secrets outside its own namespace",
    criterion=Criterion.SECURITY,
    severity=Severity.CRITICAL,
    rationale="Reading secrets in other namespaces yields other tenants' service-account tokens and credentials: full cross-tenant compromise.",
    remediation="Remove get/list/watch on secrets from ClusterRoles and RoleBindings outside the tenant's namespace.",
    profiles=("security", "isolation"),
    references=(_RBAC,),
)
def rbac_secrets(k: K8sFacts, kb: KnowledgeBase, today: date) -> Finding:
    return _rbac(
        k, ("get", "list", "watch"), "secrets", "read secrets outside its namespace", own_ok=True
    )


@k8s_check(
    "k8s.rbac-nodes-proxy",
    title="The identity has no nodes/proxy access",
    criterion=Criterion.SECURITY,
    severity=Severity.CRITICAL,
    rationale="nodes/proxy reaches the kubelet API of every node: exec into any pod on it, bypassing audit logging and admission.",
    remediation="Remove nodes/proxy from every role bound to tenants (monitoring should use nodes/metrics).",
    profiles=("security", "isolation"),
    references=(_RBAC,),
)
def rbac_nodes_proxy(k: K8sFacts, kb: KnowledgeBase, today: date) -> Finding:
    return _rbac(
        k,
        ("get", "create", "*"),
        "nodes/proxy",
        "use nodes/proxy",
        own_ok=False,
        cluster_scoped=True,
    )


@k8s_check(
    "k8s.rbac-pods-exec",
    title="The identity cannot exec into pods outside its own namespace",
    criterion=Criterion.SECURITY,
    severity=Severity.HIGH,
    rationale="pods/exec in another namespace is a shell in another tenant's workload.",
    remediation="Grant create on pods/exec only in the tenant's own namespace.",
    profiles=("security", "isolation"),
    references=(_RBAC,),
)
def rbac_pods_exec(k: K8sFacts, kb: KnowledgeBase, today: date) -> Finding:
    return _rbac(k, ("create",), "pods/exec", "exec into pods outside its namespace", own_ok=True)


@k8s_check(
    "k8s.rbac-cluster-reads",
    title="The identity cannot list every namespace's pods",
    criterion=Criterion.SECURITY,
    severity=Severity.MEDIUM,
    rationale="Listing pods cluster-wide shows other tenants' workloads, images, commands and environment variables.",
    remediation="Bind tenants to namespaced Roles; keep cluster-wide list of pods to operators.",
    profiles=("security", "isolation"),
    references=(_RBAC,),
)
def rbac_cluster_reads(k: K8sFacts, kb: KnowledgeBase, today: date) -> Finding:
    a = k.listed("pods")
    if a is None:
        return skipped("pods were not listed cluster-wide")
    readable = [r.resource for r in k.lists if r.allowed and "/" not in r.resource]
    if a.allowed:
        return warned(
            "this identity can list pods in every namespace",
            observed=readable,
            expected="own namespace only",
        )
    return passed("listing pods across namespaces is refused", observed=readable)


def _probe(k: K8sFacts, name: str, what: str) -> Finding:
    p: AdmissionProbe | None = next((a for a in k.admission if a.probe == name), None)
    if p is None:
        return skipped(f"the {what} dry run was not attempted")
    ev = {"namespace": p.namespace, "status": p.status_code, "message": p.message}
    if p.admitted:
        return failed(
            f"a {what} would be admitted in namespace {p.namespace} (server-side dry run)",
            observed="admitted",
            expected="refused by admission",
            evidence=ev,
        )
    if p.refused_by == "admission":
        return passed(
            f"a {what} is refused in {p.namespace}: {p.message}", observed="refused", evidence=ev
        )
    if p.refused_by == "rbac":
        return skipped(
            f"this identity may not create pods in {p.namespace}; admission not tested", evidence=ev
        )
    return errored(
        f"the {what} dry run did not tell: HTTP {p.status_code}: {p.message}", evidence=ev
    )


@k8s_check(
    "k8s.admission-privileged",
    title="A privileged pod is refused at admission",
    criterion=Criterion.SECURITY,
    severity=Severity.CRITICAL,
    rationale="A privileged container is root on the node: every other tenant's pods, GPUs and secrets on it are exposed.",
    remediation=f"Enforce Pod Security 'baseline' or 'restricted' on tenant namespaces (pod-security.kubernetes.io/enforce) or an equivalent policy engine. See {_PSA}",
    profiles=("security", "isolation", "containers"),
    references=(_PSA,),
)
def admission_privileged(k: K8sFacts, kb: KnowledgeBase, today: date) -> Finding:
    return _probe(k, "privileged-pod", "privileged pod")


@k8s_check(
    "k8s.admission-hostpath",
    title="A pod mounting the host's / is refused at admission",
    criterion=Criterion.SECURITY,
    severity=Severity.CRITICAL,
    rationale="A hostPath mount of / reads the node's files, including kubelet credentials and other pods' volumes.",
    remediation="Enforce Pod Security 'baseline' (forbids hostPath) on tenant namespaces.",
    profiles=("security", "isolation", "containers"),
    references=(_PSA,),
)
def admission_hostpath(k: K8sFacts, kb: KnowledgeBase, today: date) -> Finding:
    return _probe(k, "hostpath-pod", "hostPath pod")
