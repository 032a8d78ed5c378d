"""The kernel_log collector's choice of source, on replayed answers."""

from __future__ import annotations

from clustergrade.collect.kernel_log import DMESG_ARGV, DMESG_RESTRICT, JOURNALCTL_ARGV, LOG_FILES
from clustergrade.collect.runner import collect_node
from clustergrade.facts.kernel_log import KernelLogFacts
from clustergrade.facts.node import NodeFacts
from clustergrade.seam import CommandResult, FileResult, ReplayHost
from tests.helpers import fixture_bytes, replay_facts
from tests.kernel_log.replay import ci_vm_clean, ci_vm_journal, ci_vm_non_root, from_syslog

XID79 = fixture_bytes("kernel_log/gpud-sxid-readme-xid79-sxid20034.dmesg.txt")


def _log(facts: NodeFacts) -> KernelLogFacts:
    assert facts.collectors["kernel_log"].status == "ok", facts.collectors["kernel_log"]
    assert facts.kernel_log is not None
    return facts.kernel_log


def test_empty_journal_falls_back_to_dmesg() -> None:
    log = _log(ci_vm_clean())
    assert log.readable and log.source == "dmesg"
    assert [(a.source, a.outcome) for a in log.attempts] == [
        ("journalctl", "empty"),
        ("dmesg", "used"),
    ]
    assert log.attempts[0].message == "No journal files were found."
    assert log.dmesg_restrict == 1
    assert log.lines == 346


def test_restricted_dmesg_is_a_fact_not_an_error() -> None:
    facts = ci_vm_non_root()
    log = _log(facts)
    assert not log.readable
    assert log.unreadable_reason == "kernel log not readable by this user (dmesg_restrict=1)"
    assert [a.outcome for a in log.attempts] == ["empty", "denied", "missing", "missing", "missing"]
    assert facts.errors == []


def test_journal_is_preferred_when_it_has_entries() -> None:
    facts = replay_facts(
        ["kernel_log"],
        commands={JOURNALCTL_ARGV: XID79},
        files={DMESG_RESTRICT: "0\n"},
    )
    log = _log(facts)
    assert log.source == "journalctl" and [x.code for x in log.xids] == [79]
    assert len(log.attempts) == 1


def test_syslog_file_when_no_commands() -> None:
    log = _log(from_syslog("gpu-operator-1146-xid48.syslog.txt"))
    assert log.source == "file" and log.source_detail == "/var/log/syslog"
    assert [x.code for x in log.xids] == [48]
    assert log.dmesg_restrict is None


def test_timeout_is_an_error_and_next_source_is_tried() -> None:
    facts = replay_facts(
        ["kernel_log"],
        commands={
            JOURNALCTL_ARGV: CommandResult(JOURNALCTL_ARGV, None, timed_out=True, duration_s=20),
            DMESG_ARGV: XID79,
        },
        files={DMESG_RESTRICT: "1\n"},
    )
    log = _log(facts)
    assert log.source == "dmesg"
    assert log.attempts[0].outcome == "failed"
    assert any("timed out" in e.message for e in facts.errors)


def test_nothing_installed_or_present() -> None:
    facts = replay_facts(
        ["kernel_log"],
        missing_commands=[JOURNALCTL_ARGV, DMESG_ARGV],
        files={**{p: None for p in LOG_FILES}, DMESG_RESTRICT: None},
    )
    log = _log(facts)
    assert not log.readable
    assert (log.unreadable_reason or "").startswith("no kernel log source could be read")
    assert facts.errors == []


def test_unreadable_file_is_denied() -> None:
    host = ReplayHost.from_mapping(
        commands={JOURNALCTL_ARGV: ci_vm_journal()},
        missing_commands=[DMESG_ARGV],
        files={DMESG_RESTRICT: "1\n"},
    )
    for p in LOG_FILES:
        host.recording.files[p] = FileResult(p, None, error="Permission denied")
    log = _log(collect_node(host, ["kernel_log"], source="replay"))
    assert not log.readable
    assert [a.outcome for a in log.attempts][-3:] == ["denied", "denied", "denied"]
    assert "not readable by this user" in (log.unreadable_reason or "")


def test_facts_round_trip_through_json() -> None:
    facts = replay_facts(
        ["kernel_log"], commands={JOURNALCTL_ARGV: XID79}, files={DMESG_RESTRICT: "1"}
    )
    again = NodeFacts.model_validate_json(facts.model_dump_json())
    assert again.kernel_log == facts.kernel_log
