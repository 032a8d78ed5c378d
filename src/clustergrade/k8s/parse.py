"""Pure parsers: Kubernetes API JSON (as decoded dicts) into facts.

API objects come from a server the auditor does not control, so anything
that is not the documented shape raises :class:`K8sParseError` (which the
collector records) instead of a stray KeyError or TypeError.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any, ParamSpec, TypeVar

from clustergrade.facts.k8s import (
    ApiGroup,
    ComponentSeen,
    Identity,
    K8sNode,
    NamespaceFact,
    NetworkPolicyFact,
    Rule,
    RulesReview,
    StorageClassFact,
    Taint,
    Workload,
)

P = ParamSpec("P")
T = TypeVar("T")

GPU_RESOURCE = "nvidia.com/gpu"
MIG_PREFIX = "nvidia.com/mig-"
DEFAULT_SC_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
_PSA_PREFIX = "pod-security.kubernetes.io/"


class K8sParseError(ValueError):
    """An API answer that is not the shape the API documents."""


def _typed(func: Callable[P, T]) -> Callable[P, T]:
    @wraps(func)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return func(*args, **kwargs)
        except K8sParseError:
            raise
        except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
            raise K8sParseError(f"{func.__name__}: {type(exc).__name__}: {exc}") from exc

    return run


def _obj(v: Any, what: str) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise K8sParseError(f"{what} is {type(v).__name__}, not an object")
    return v


def _items(doc: Any, what: str) -> list[dict[str, Any]]:
    d = _obj(doc, what)
    items = d.get("items")
    if items is None:
        return []
    if not isinstance(items, list):
        raise K8sParseError(f"{what}.items is not a list")
    return [_obj(i, f"{what} item") for i in items]


def _str(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, str | int | float | bool):
        return str(v)
    raise K8sParseError(f"expected a string, got {type(v).__name__}")


def _strmap(v: Any, what: str) -> dict[str, str]:
    return {str(k): str(x) for k, x in _obj(v, what).items() if x is not None}


def _strlist(v: Any, what: str) -> list[str]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise K8sParseError(f"{what} is not a list")
    return [str(x) for x in v if x is not None]


_QTY = re.compile(r"^\s*(\d+)\s*$")


def quantity_int(v: Any) -> int | None:
    """A count-like resource quantity ("8") as an int; None if it is not one."""
    if v is None:
        return None
    m = _QTY.match(str(v))
    return int(m.group(1)) if m else None


@_typed
def parse_version(doc: Any) -> tuple[str | None, str | None]:
    d = _obj(doc, "version")
    return _str(d.get("gitVersion")), _str(d.get("platform"))


@_typed
def parse_node(obj: Any) -> K8sNode:
    o = _obj(obj, "node")
    meta = _obj(o.get("metadata"), "metadata")
    spec = _obj(o.get("spec"), "spec")
    status = _obj(o.get("status"), "status")
    info = _obj(status.get("nodeInfo"), "nodeInfo")
    labels = _strmap(meta.get("labels"), "labels")
    capacity = _obj(status.get("capacity"), "capacity")
    allocatable = _obj(status.get("allocatable"), "allocatable")
    ready: bool | None = None
    for c in status.get("conditions") or []:
        c = _obj(c, "condition")
        if c.get("type") == "Ready":
            ready = c.get("status") == "True"
    taints = [
        Taint(
            key=str(_obj(t, "taint").get("key", "")),
            value=_str(t.get("value")),
            effect=_str(t.get("effect")),
        )
        for t in spec.get("taints") or []
    ]
    mig = {
        k: n
        for k, v in capacity.items()
        if k.startswith(MIG_PREFIX) and (n := quantity_int(v)) is not None
    }
    name = _str(meta.get("name"))
    if not name:
        raise K8sParseError("node without metadata.name")
    return K8sNode(
        name=name,
        ready=ready,
        unschedulable=bool(spec.get("unschedulable", False)),
        kubelet_version=_str(info.get("kubeletVersion")),
        container_runtime=_str(info.get("containerRuntimeVersion")),
        os_image=_str(info.get("osImage")),
        kernel_version=_str(info.get("kernelVersion")),
        gpu_capacity=quantity_int(capacity.get(GPU_RESOURCE)),
        gpu_allocatable=quantity_int(allocatable.get(GPU_RESOURCE)),
        mig_resources=mig,
        gpu_labels={k: v for k, v in labels.items() if k.startswith("nvidia.com/")},
        taints=taints,
    )


def parse_nodes(doc: Any) -> list[K8sNode]:
    return [parse_node(i) for i in _items(doc, "NodeList")]


def _pod_images(template_spec: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ("initContainers", "containers"):
        for c in template_spec.get(key) or []:
            img = _str(_obj(c, "container").get("image"))
            if img:
                out.append(img)
    return out


@_typed
def parse_workloads(doc: Any, kind: str) -> list[Workload]:
    out = []
    for i in _items(doc, f"{kind}List"):
        meta = _obj(i.get("metadata"), "metadata")
        tmpl = _obj(_obj(i.get("spec"), "spec").get("template"), "template")
        out.append(
            Workload(
                kind=kind,
                namespace=_str(meta.get("namespace")) or "",
                name=_str(meta.get("name")) or "",
                images=_pod_images(_obj(tmpl.get("spec"), "podspec")),
                labels=_strmap(meta.get("labels"), "labels"),
            )
        )
    return out


def split_image(image: str) -> tuple[str, str | None]:
    """("nvcr.io/nvidia/k8s-device-plugin", "v0.17.1") from an image reference;
    a digest is dropped, a missing tag is None."""
    ref = image.split("@", 1)[0]
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        return ref[:colon], ref[colon + 1 :] or None
    return ref, None


#: (component, test on the image repository) — the repository's last path
#: elements are what every distribution (upstream, Rancher, Bitnami mirrors) keeps.
_COMPONENTS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("gpu-operator", lambda r: r.endswith("/gpu-operator") or r == "gpu-operator"),
    ("k8s-device-plugin", lambda r: r.endswith("k8s-device-plugin")),
    ("dcgm-exporter", lambda r: r.endswith("dcgm-exporter")),
    ("node-problem-detector", lambda r: r.endswith("node-problem-detector")),
    (
        "ingress-nginx",
        lambda r: (
            r.endswith("ingress-nginx/controller")
            or r.endswith("ingress-nginx/controller-chroot")
            or r.endswith("/nginx-ingress-controller")
        ),
    ),
    ("prometheus", lambda r: r.endswith("prometheus/prometheus") or r.endswith("/prometheus")),
    ("kube-state-metrics", lambda r: r.endswith("kube-state-metrics")),
    ("node-exporter", lambda r: r.endswith("node-exporter")),
)


def recognise(workloads: Iterable[Workload]) -> list[ComponentSeen]:
    """Known add-ons among the workloads, by image repository."""
    out: list[ComponentSeen] = []
    for w in workloads:
        for image in w.images:
            repo, tag = split_image(image)
            for name, test in _COMPONENTS:
                if test(repo.lower()):
                    out.append(
                        ComponentSeen(
                            component=name,
                            namespace=w.namespace,
                            workload=w.name,
                            kind=w.kind,
                            image=image,
                            version=tag,
                        )
                    )
                    break
    return out


@_typed
def parse_storage_classes(doc: Any) -> list[StorageClassFact]:
    out = []
    for i in _items(doc, "StorageClassList"):
        meta = _obj(i.get("metadata"), "metadata")
        ann = _strmap(meta.get("annotations"), "annotations")
        ave = i.get("allowVolumeExpansion")
        out.append(
            StorageClassFact(
                name=_str(meta.get("name")) or "",
                provisioner=_str(i.get("provisioner")),
                default=any(ann.get(a, "").lower() == "true" for a in DEFAULT_SC_ANNOTATIONS),
                volume_binding_mode=_str(i.get("volumeBindingMode")),
                reclaim_policy=_str(i.get("reclaimPolicy")),
                allow_volume_expansion=ave if isinstance(ave, bool) else None,
            )
        )
    return out


@_typed
def parse_network_policies(doc: Any) -> list[NetworkPolicyFact]:
    out = []
    for i in _items(doc, "NetworkPolicyList"):
        meta = _obj(i.get("metadata"), "metadata")
        spec = _obj(i.get("spec"), "spec")
        sel = _obj(spec.get("podSelector"), "podSelector")
        ingress = spec.get("ingress") or []
        egress = spec.get("egress") or []
        types = _strlist(spec.get("policyTypes"), "policyTypes")
        if not types:
            # The API's default: Ingress always, Egress only when egress rules exist.
            types = ["Ingress"] + (["Egress"] if egress else [])
        out.append(
            NetworkPolicyFact(
                namespace=_str(meta.get("namespace")) or "",
                name=_str(meta.get("name")) or "",
                selects_all_pods=not sel.get("matchLabels") and not sel.get("matchExpressions"),
                policy_types=types,
                ingress_rules=len(ingress) if isinstance(ingress, list) else 0,
                egress_rules=len(egress) if isinstance(egress, list) else 0,
            )
        )
    return out


@_typed
def parse_namespaces(doc: Any) -> list[NamespaceFact]:
    out = []
    for i in _items(doc, "NamespaceList"):
        meta = _obj(i.get("metadata"), "metadata")
        labels = _strmap(meta.get("labels"), "labels")
        out.append(
            NamespaceFact(
                name=_str(meta.get("name")) or "",
                pod_security={
                    k[len(_PSA_PREFIX) :]: v for k, v in labels.items() if k.startswith(_PSA_PREFIX)
                },
            )
        )
    return out


@_typed
def parse_api_groups(doc: Any) -> list[ApiGroup]:
    d = _obj(doc, "APIGroupList")
    out = []
    for g in d.get("groups") or []:
        g = _obj(g, "group")
        versions = [
            str(_obj(v, "version").get("version")) for v in g.get("versions") or [] if v is not None
        ]
        pref = _obj(g.get("preferredVersion"), "preferredVersion").get("version")
        out.append(ApiGroup(name=str(g.get("name", "")), versions=versions, preferred=_str(pref)))
    return out


@_typed
def parse_self_subject_review(doc: Any) -> Identity:
    ui = _obj(
        _obj(_obj(doc, "SelfSubjectReview").get("status"), "status").get("userInfo"), "userInfo"
    )
    return Identity(
        username=_str(ui.get("username")),
        uid=_str(ui.get("uid")),
        groups=_strlist(ui.get("groups"), "groups"),
    )


@_typed
def parse_rules_review(namespace: str, doc: Any) -> RulesReview:
    status = _obj(_obj(doc, "SelfSubjectRulesReview").get("status"), "status")
    rules = []
    for r in status.get("resourceRules") or []:
        r = _obj(r, "resourceRule")
        rules.append(
            Rule(
                verbs=_strlist(r.get("verbs"), "verbs"),
                api_groups=_strlist(r.get("apiGroups"), "apiGroups"),
                resources=_strlist(r.get("resources"), "resources"),
                resource_names=_strlist(r.get("resourceNames"), "resourceNames"),
            )
        )
    return RulesReview(
        namespace=namespace,
        rules=rules,
        incomplete=bool(status.get("incomplete", False)),
        evaluation_error=_str(status.get("evaluationError")) or None,
    )
