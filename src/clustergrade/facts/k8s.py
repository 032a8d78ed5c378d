"""Facts: a Kubernetes cluster as one identity sees it through the API server.

Everything is what the API answered to the identity in the kubeconfig; what
that identity may not list is itself a fact (``ListAttempt.allowed=False``),
because a tenant's view is what the isolation checks judge.
"""

from __future__ import annotations

from pydantic import Field

from clustergrade.facts.base import FactModel


class Taint(FactModel):
    key: str
    value: str | None = None
    effect: str | None = None


class K8sNode(FactModel):
    name: str
    ready: bool | None = None
    unschedulable: bool = False
    kubelet_version: str | None = None
    #: As nodeInfo gives it: "containerd://2.0.2-k3s2", "cri-o://1.30.1".
    container_runtime: str | None = None
    os_image: str | None = None
    kernel_version: str | None = None
    #: nvidia.com/gpu in status.capacity / status.allocatable; None when absent.
    gpu_capacity: int | None = None
    gpu_allocatable: int | None = None
    #: MIG resources the device plugin advertises (mixed strategy), name -> count.
    mig_resources: dict[str, int] = Field(default_factory=dict)
    #: GPU feature discovery / GPU Operator labels (nvidia.com/*) as seen.
    gpu_labels: dict[str, str] = Field(default_factory=dict)
    taints: list[Taint] = Field(default_factory=list)


class Workload(FactModel):
    """A DaemonSet, Deployment or StatefulSet and the images it runs."""

    kind: str
    namespace: str
    name: str
    images: list[str] = Field(default_factory=list)
    labels: dict[str, str] = Field(default_factory=dict)


class ComponentSeen(FactModel):
    """A known cluster add-on recognised from a workload's image."""

    component: str
    namespace: str
    workload: str
    kind: str
    image: str
    #: The image tag as written ("v0.17.1", "3.3.9-3.6.1-ubuntu22.04").
    version: str | None = None


class StorageClassFact(FactModel):
    name: str
    provisioner: str | None = None
    default: bool = False
    volume_binding_mode: str | None = None
    reclaim_policy: str | None = None
    allow_volume_expansion: bool | None = None


class NetworkPolicyFact(FactModel):
    namespace: str
    name: str
    #: podSelector is {} (selects every pod in the namespace).
    selects_all_pods: bool
    policy_types: list[str] = Field(default_factory=list)
    ingress_rules: int = 0
    egress_rules: int = 0


class NamespaceFact(FactModel):
    name: str
    #: pod-security.kubernetes.io/* labels (enforce, audit, warn).
    pod_security: dict[str, str] = Field(default_factory=dict)


class ApiGroup(FactModel):
    name: str
    versions: list[str] = Field(default_factory=list)
    preferred: str | None = None


class Identity(FactModel):
    """Who the API server says the audit ran as (SelfSubjectReview)."""

    username: str | None = None
    uid: str | None = None
    groups: list[str] = Field(default_factory=list)
    #: "SelfSubjectReview" or "kubeconfig" when the server could not say.
    source: str = "SelfSubjectReview"
    error: str | None = None


class Rule(FactModel):
    verbs: list[str] = Field(default_factory=list)
    api_groups: list[str] = Field(default_factory=list)
    resources: list[str] = Field(default_factory=list)
    resource_names: list[str] = Field(default_factory=list)


class RulesReview(FactModel):
    """SelfSubjectRulesReview for one namespace."""

    namespace: str
    rules: list[Rule] = Field(default_factory=list)
    incomplete: bool = False
    evaluation_error: str | None = None
    #: Set when the review itself could not be made.
    error: str | None = None


class AdmissionProbe(FactModel):
    """One server-side dry-run create (dryRun=All: nothing is persisted)."""

    probe: str
    namespace: str
    #: True: the server would have created it; False: refused; None: unknown.
    admitted: bool | None = None
    status_code: int | None = None
    reason: str | None = None
    message: str | None = None
    #: "admission" (policy refused it), "rbac" (identity may not create pods),
    #: "invalid" (the server rejected the body) or None.
    refused_by: str | None = None


class ListAttempt(FactModel):
    """Whether one list call was allowed, and how many objects it returned."""

    resource: str
    allowed: bool
    count: int | None = None
    status_code: int | None = None
    message: str | None = None


class K8sFacts(FactModel):
    reachable: bool
    server: str | None = None
    context: str | None = None
    #: The kubeconfig context's namespace (or "default").
    namespace: str = "default"
    server_version: str | None = None
    platform: str | None = None
    identity: Identity | None = None
    nodes: list[K8sNode] = Field(default_factory=list)
    namespaces: list[NamespaceFact] = Field(default_factory=list)
    workloads: list[Workload] = Field(default_factory=list)
    components: list[ComponentSeen] = Field(default_factory=list)
    storage_classes: list[StorageClassFact] = Field(default_factory=list)
    network_policies: list[NetworkPolicyFact] = Field(default_factory=list)
    api_groups: list[ApiGroup] = Field(default_factory=list)
    rules: list[RulesReview] = Field(default_factory=list)
    admission: list[AdmissionProbe] = Field(default_factory=list)
    lists: list[ListAttempt] = Field(default_factory=list)

    def listed(self, resource: str) -> ListAttempt | None:
        return next((a for a in self.lists if a.resource == resource), None)

    def group(self, name: str) -> ApiGroup | None:
        return next((g for g in self.api_groups if g.name == name), None)
