"""The shipped Xid catalogue, and how the checks use its severities."""

from __future__ import annotations

from clustergrade.results import Status
from tests.helpers import judge, kb
from tests.kernel_log.replay import from_dmesg


def test_catalogue_codes_are_unique_and_match_the_research_table() -> None:
    cat = kb().xids
    codes = [x.code for x in cat.xids]
    assert len(codes) == len(set(codes))
    assert cat.default_severity == "critical"
    sev = {x.code: x.severity for x in cat.xids}
    for code in (46, 48, 62, 64, 74, 79, 95, 119, 120, 136, 140, 143):
        assert sev[code] == "critical", code
    for code in (13, 31, 43, 63, 68, 92, 94):
        assert sev[code] == "warning", code
    assert sev[45] == "info"
    x79 = kb().xid(79)
    assert x79 is not None and x79.action == "RESTART_BM"


def test_unknown_code_uses_default_severity() -> None:
    # Real capture (akash-network/support#244) with one change: the Xid 43
    # summary's code set to 999, which no catalogue lists.
    facts = from_dmesg("akash-support-244-xid43-31-94.dmesg-T.txt")
    log = facts.kernel_log
    assert log is not None
    xids = [x.model_copy(update={"code": 999}) if x.code == 43 else x for x in log.xids]
    facts = facts.model_copy(update={"kernel_log": log.model_copy(update={"xids": xids})})
    results = judge("gpu.xid-fatal", facts)
    assert {r.status for r in results} == {Status.FAIL}
    assert "Xid 999 (not in the knowledge base's catalogue)" in results[0].message


def test_info_level_xid_is_evidence_only() -> None:
    facts = from_dmesg("open-gpu-kernel-modules-1150-xid45.journal.txt")
    for check_id in ("gpu.xid-fatal", "gpu.xid-warning"):
        results = judge(check_id, facts)
        assert {r.status for r in results} == {Status.PASS}, check_id
    assert "informational Xids seen: 45" in judge("gpu.xid-warning", facts)[0].message
