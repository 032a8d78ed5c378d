"""Each component's rules, judged on versions whose answer the sources fix."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from clustergrade.checks.versions import Observed, affecting, judge
from clustergrade.kb.loader import load_dir, shipped_dir
from clustergrade.kb.model import Component, KnowledgeBase
from clustergrade.results import Finding, Status
from clustergrade.versions import parse

TODAY = date(2026, 10, 1)


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load_dir(shipped_dir())


def _judge(kb: KnowledgeBase, comp: str, version: str, today: date = TODAY) -> Finding:
    return judge(kb.components[comp], Observed(version), today, kb.meta.grace_days)


def _ids(comp: Component, version: str) -> set[str]:
    v = parse(comp.scheme, version)
    assert v is not None, version
    return {a.id for a, _ in affecting(comp, v)}


CASES = [
    # (component, version, status, advisories that must be named)
    ("nvidia-driver", "580.126.09", Status.FAIL, {"CVE-2026-24187"}),
    ("nvidia-driver", "580.95.05", Status.FAIL, {"CVE-2025-33219", "CVE-2026-24187"}),
    ("nvidia-driver", "580.159.03", Status.PASS, set()),
    ("nvidia-driver", "535.309.01", Status.PASS, set()),
    ("nvidia-driver", "595.71.05", Status.PASS, set()),
    ("nvidia-driver", "570.211.01", Status.FAIL, set()),  # unsupported branch
    ("nvidia-driver", "470.256.02", Status.FAIL, set()),
    ("nvidia-container-toolkit", "1.17.7", Status.FAIL, {"CVE-2025-23266", "CVE-2025-23267"}),
    ("nvidia-container-toolkit", "1.17.8", Status.FAIL, {"CVE-2026-24260"}),
    ("nvidia-container-toolkit", "1.19.1", Status.PASS, set()),
    ("nvidia-container-toolkit", "1.16.1", Status.FAIL, {"CVE-2024-0132"}),
    ("gpu-operator", "v25.3.1", Status.FAIL, {"CVE-2025-23266"}),
    ("gpu-operator", "v26.3.2", Status.PASS, set()),
    ("k8s-device-plugin", "v0.17.2", Status.FAIL, {"CVE-2025-23266"}),
    ("k8s-device-plugin", "0.17.3", Status.PASS, set()),
    ("runc", "1.1.11", Status.FAIL, {"CVE-2024-21626"}),
    ("runc", "1.4.3", Status.PASS, set()),
    ("runc", "1.3.2", Status.FAIL, {"CVE-2025-31133", "CVE-2025-52565", "CVE-2025-52881"}),
    ("runc", "1.4.0-rc.2", Status.FAIL, {"CVE-2025-31133"}),
    ("containerd", "1.7.26", Status.FAIL, {"CVE-2024-40635", "CVE-2024-25621"}),
    ("containerd", "1.7.29", Status.PASS, set()),
    ("containerd", "2.1.5", Status.PASS, set()),
    ("containerd", "2.3.1", Status.FAIL, {"CVE-2026-50195", "CVE-2026-53495"}),
    ("docker", "27.1.0", Status.FAIL, {"CVE-2024-41110"}),
    ("docker", "26.1.5", Status.WARN, set()),  # fixed, below the ClusterMAX policy minimum
    ("docker", "29.7.0", Status.PASS, set()),
    ("cuda-toolkit", "12.8", Status.WARN, set()),
    ("cuda-toolkit", "13.1", Status.PASS, set()),
    ("dcgm", "3.1.6", Status.FAIL, {"CVE-2023-0208", "CVE-2026-47483"}),
    ("dcgm", "4.5.3", Status.PASS, set()),
    ("dcgm-exporter", "4.8.1", Status.FAIL, {"CVE-2026-47483"}),
    ("dcgm-exporter", "4.8.2", Status.PASS, set()),
    ("mlnx-firmware", "28.39.3560", Status.FAIL, {"CVE-2025-23262", "CVE-2025-23350"}),
    ("mlnx-firmware", "28.39.8002", Status.PASS, set()),
    ("mlnx-firmware", "22.37.1000", Status.FAIL, {"CVE-2025-23350"}),  # a GA train without a fix
    ("mlnx-firmware", "28.46.3008", Status.PASS, set()),
    ("mlnx-firmware", "12.28.4702", Status.PASS, set()),  # ConnectX-4 row
    ("mlnx-firmware", "12.28.2006", Status.FAIL, {"CVE-2025-23350", "CVE-2025-23351"}),
    ("mlnx-firmware", "14.32.1908", Status.PASS, set()),  # ConnectX-4 Lx row
    ("slurm", "25.05.8", Status.FAIL, {"CVE-2026-65107"}),
    ("slurm", "25.05.9", Status.PASS, set()),
    ("slurm", "25.11.8", Status.PASS, set()),
    ("slurm", "26.05.3", Status.FAIL, {"CVE-2026-65140"}),
    ("slurm", "24.05.4", Status.FAIL, set()),  # unsupported line
    ("slurm", "slurm-wlm 25.11.7-1", Status.FAIL, {"CVE-2026-65108"}),
    ("munge", "0.5.15-4", Status.FAIL, {"CVE-2026-25506"}),
    ("munge", "0.5.15-4ubuntu0.1", Status.PASS, set()),
    ("munge", "0.5.18-1", Status.PASS, set()),
    ("ingress-nginx", "1.11.4", Status.FAIL, {"CVE-2025-1974"}),
    ("ingress-nginx", "v1.12.0", Status.FAIL, {"CVE-2025-1974", "CVE-2025-1097"}),
    ("ingress-nginx", "1.15.0", Status.PASS, set()),
]


@pytest.mark.parametrize(("comp", "version", "status", "ids"), CASES)
def test_known_versions(
    kb: KnowledgeBase, comp: str, version: str, status: Status, ids: set[str]
) -> None:
    f = _judge(kb, comp, version)
    assert f.status == status, f.message
    assert ids <= set(f.advisories), f.advisories


def test_runc_1_1_12_is_affected_only_by_later_advisories(kb: KnowledgeBase) -> None:
    comp = kb.components["runc"]
    assert "CVE-2024-21626" in _ids(comp, "1.1.11")
    later = _ids(comp, "1.1.12")
    assert "CVE-2024-21626" not in later
    assert later == {"CVE-2025-31133", "CVE-2025-52565", "CVE-2025-52881", "CVE-2026-41579"}


def test_munge_backport_is_not_affected(kb: KnowledgeBase) -> None:
    comp = kb.components["munge"]
    assert _ids(comp, "0.5.15-4ubuntu0.1") == set()
    assert _ids(comp, "0.5.15-4") == {"CVE-2026-25506"}
    # The backport covers only its own upstream version.
    assert _ids(comp, "0.5.16-1") == {"CVE-2026-25506"}


def test_driver_lines_follow_the_newest_bulletin(kb: KnowledgeBase) -> None:
    lines = kb.components["nvidia-driver"].lines
    assert lines is not None
    assert lines.supported == ["535", "580", "595"]
    assert set(lines.unsupported) == {"470", "550", "555", "565", "570", "575", "590"}
    f = _judge(kb, "nvidia-driver", "570.211.01")
    assert "out of support" in f.message


def test_conditions_travel_with_the_finding(kb: KnowledgeBase) -> None:
    f = _judge(kb, "nvidia-container-toolkit", "1.17.4")
    conds = " ".join(f.evidence.get("conditions", []))
    assert "CDI mode" in conds and "crun" in conds
    f = _judge(kb, "slurm", "24.05.3")
    assert f.status == Status.FAIL  # unsupported line wins before conditions matter


def test_grace_period(kb: KnowledgeBase) -> None:
    comp = kb.components["nvidia-container-toolkit"]
    adv = next(a for a in comp.advisories if a.id == "CVE-2026-24260")
    start = adv.fix_available or adv.published
    grace = kb.meta.grace_days
    inside = judge(comp, Observed("1.19.0"), start + timedelta(days=grace - 1), grace)
    assert inside.status == Status.WARN and "grace" in inside.message
    after = judge(comp, Observed("1.19.0"), start + timedelta(days=grace), grace)
    assert after.status == Status.FAIL
    # One advisory past its grace period is enough to FAIL.
    old = judge(comp, Observed("1.17.7"), start + timedelta(days=1), grace)
    assert old.status == Status.FAIL


def test_unparseable_version_is_an_error_not_a_pass(kb: KnowledgeBase) -> None:
    for comp in kb.components:
        f = _judge(kb, comp, "not a version")
        assert f.status == Status.ERROR, comp


def test_every_fixed_version_passes_its_own_advisory(kb: KnowledgeBase) -> None:
    for comp in kb.components.values():
        for adv in comp.advisories:
            for r in adv.affected:
                if r.fixed is None:
                    continue
                text = r.fixed
                if comp.scheme == "mlnxfw" and text.startswith("xx."):
                    text = f"{(r.families or [28])[0]}.{text[3:]}"
                v = parse(comp.scheme, text)
                assert v is not None
                hit = {a.id for a, _ in affecting(comp, v)}
                assert adv.id not in hit, (comp.component, adv.id, r.fixed)


def test_a_backport_covers_only_its_own_lineage() -> None:
    comp = load_dir(shipped_dir()).component("munge")
    assert comp is not None
    assert _ids(comp, "0.5.15-2+deb12u1") == set()
    assert _ids(comp, "0.5.15-2+deb12u2") == set()
    # dpkg orders Ubuntu's unpatched 0.5.15-4 above Debian's backport.
    assert _ids(comp, "0.5.15-4") == {"CVE-2026-25506"}
    assert _ids(comp, "0.5.15-2") == {"CVE-2026-25506"}
