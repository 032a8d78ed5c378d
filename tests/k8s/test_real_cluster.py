"""Against a real cluster: CLUSTERGRADE_REAL_K8S=1 and KUBECONFIG set."""

from __future__ import annotations

import os
from datetime import date

import pytest

from clustergrade.checks.k8s import JUDGES
from clustergrade.k8s.client import K8sClient
from clustergrade.k8s.collect import collect_k8s
from clustergrade.results import Finding
from tests.helpers import kb

pytestmark = [
    pytest.mark.k8s,
    pytest.mark.skipif(
        os.environ.get("CLUSTERGRADE_REAL_K8S") != "1" or not os.environ.get("KUBECONFIG"),
        reason="set CLUSTERGRADE_REAL_K8S=1 and KUBECONFIG to audit a real cluster",
    ),
]


def test_real_cluster_audit() -> None:
    client = K8sClient(os.environ["KUBECONFIG"], os.environ.get("CLUSTERGRADE_K8S_CONTEXT"))
    facts, errors = collect_k8s(client)
    client.close()
    assert facts.reachable, errors
    assert facts.server_version and facts.identity is not None
    for cid, judge in JUDGES.items():
        got = judge(facts, kb(), date.today())
        for f in [got] if isinstance(got, Finding) else list(got):
            assert f.message, cid
