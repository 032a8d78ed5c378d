"""Parsers: real objects parse; hostile JSON raises only K8sParseError."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from clustergrade.k8s import parse as p
from tests.k8s.apiserver import load_json, load_yaml

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda c: (
        st.lists(c, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "items",
                    "metadata",
                    "spec",
                    "status",
                    "labels",
                    "name",
                    "nodeInfo",
                    "capacity",
                    "conditions",
                    "template",
                    "containers",
                    "image",
                    "groups",
                    "versions",
                    "resourceRules",
                    "userInfo",
                    "podSelector",
                    "taints",
                    "type",
                    "key",
                ]
            )
            | st.text(max_size=6),
            c,
            max_size=5,
        )
    ),
    max_leaves=25,
)
PARSERS = [
    p.parse_nodes,
    p.parse_node,
    lambda d: p.parse_workloads(d, "DaemonSet"),
    p.parse_storage_classes,
    p.parse_network_policies,
    p.parse_namespaces,
    p.parse_api_groups,
    p.parse_self_subject_review,
    lambda d: p.parse_rules_review("ns", d),
    p.parse_version,
]


@settings(max_examples=150, deadline=None)
@given(JSON)
def test_hostile_json_raises_only_parse_errors(doc: Any) -> None:
    for parse in PARSERS:
        try:
            parse(doc)
        except p.K8sParseError:
            pass


def _mutations(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append(((*path, k), v))
            out.extend(_mutations(v, (*path, k)))
    return out


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_real_node_with_one_field_replaced(data: st.DataObject) -> None:
    node = load_json("objects/node-rke2-a16.json")
    paths = _mutations(node)
    path, _ = data.draw(st.sampled_from(paths))
    cur = node
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = data.draw(JSON)
    try:
        p.parse_node(node)
    except p.K8sParseError:
        pass


def test_truncated_real_node_is_a_parse_error_or_partial() -> None:
    raw = json.dumps(load_json("objects/node-rke2-a16.json"))
    for cut in (0, 10, len(raw) // 2):
        try:
            doc = json.loads(raw[:cut])
        except ValueError:
            continue  # the client reports undecodable bodies before parsing
        p.parse_node(doc)


def test_real_objects() -> None:
    n = p.parse_node(load_json("objects/node-rke2-a16.json"))
    assert n.name == "nori" and n.ready is True and n.gpu_capacity == 1
    ds = p.parse_workloads(
        {"items": [load_yaml("objects/device-plugin-daemonset.yaml")]}, "DaemonSet"
    )
    assert ds[0].images == ["nvcr.io/nvidia/k8s-device-plugin:v0.17.1"]
    deny = p.parse_network_policies(
        {"items": [load_json("objects/networkpolicy-default-deny-ingress.json")]}
    )
    assert (
        deny[0].selects_all_pods
        and deny[0].policy_types == ["Ingress"]
        and deny[0].ingress_rules == 0
    )
    groups = p.parse_api_groups(load_json("discovery/apis.json"))
    assert [g.name for g in groups][:2] == ["apps", "authentication.k8s.io"]


def test_split_image() -> None:
    assert p.split_image("k8s.gcr.io/ingress-nginx/controller:v0.41.2@sha256:1f4f") == (
        "k8s.gcr.io/ingress-nginx/controller",
        "v0.41.2",
    )
    assert p.split_image("localhost:5000/prom/node-exporter") == (
        "localhost:5000/prom/node-exporter",
        None,
    )
    assert p.split_image("quay.io/prometheus/node-exporter:v1.8.2") == (
        "quay.io/prometheus/node-exporter",
        "v1.8.2",
    )


def test_recognise_does_not_confuse_nginx_inc() -> None:
    from clustergrade.facts.k8s import Workload

    w = [
        Workload(
            kind="Deployment",
            namespace="n",
            name="x",
            images=[
                "nginx/nginx-ingress:3.7.0",
                "docker.io/rancher/nginx-ingress-controller:v1.12.0-hardened6",
            ],
        )
    ]
    assert [(c.component, c.version) for c in p.recognise(w)] == [
        ("ingress-nginx", "v1.12.0-hardened6")
    ]


def test_quantity() -> None:
    assert (
        p.quantity_int("8") == 8 and p.quantity_int("100m") is None and p.quantity_int(None) is None
    )
