"""Replay the kernel-log fixtures through the real collector.

Each fixture is served from the source it was captured from: dmesg output as
the stdout of the dmesg command, syslog excerpts as /var/log/syslog.  The
journal is always the CI VM's real answer (an empty, volatile journal), so the
collector's fallback from journalctl to dmesg is exercised as it happens there.
"""

from __future__ import annotations

from clustergrade.collect.kernel_log import DMESG_ARGV, DMESG_RESTRICT, JOURNALCTL_ARGV, LOG_FILES
from clustergrade.facts.node import NodeFacts
from clustergrade.seam import CommandResult
from tests.helpers import fixture_bytes, replay_facts

D = "kernel_log/"


def ci_vm_journal() -> CommandResult:
    return CommandResult(
        JOURNALCTL_ARGV,
        0,
        stdout=fixture_bytes(D + "ci-vm-journalctl-k.stdout"),
        stderr=fixture_bytes(D + "ci-vm-journalctl-k.stderr"),
    )


def ci_vm_restricted_dmesg() -> CommandResult:
    return CommandResult(DMESG_ARGV, 1, stderr=fixture_bytes(D + "ci-vm-dmesg-nonroot.stderr"))


def from_dmesg(fixture: str) -> NodeFacts:
    """``fixture`` served as dmesg's output, after the CI VM's empty journal."""
    return replay_facts(
        ["kernel_log"],
        commands={
            JOURNALCTL_ARGV: ci_vm_journal(),
            DMESG_ARGV: CommandResult(DMESG_ARGV, 0, stdout=fixture_bytes(D + fixture)),
        },
        files={DMESG_RESTRICT: fixture_bytes(D + "ci-vm-dmesg_restrict.txt")},
    )


def from_syslog(fixture: str) -> NodeFacts:
    """``fixture`` served as /var/log/syslog on a node without journalctl or dmesg."""
    return replay_facts(
        ["kernel_log"],
        missing_commands=[JOURNALCTL_ARGV, DMESG_ARGV],
        files={
            "/var/log/kern.log": None,
            "/var/log/syslog": fixture_bytes(D + fixture),
            DMESG_RESTRICT: None,
        },
    )


def ci_vm_clean() -> NodeFacts:
    """The CI VM as captured: empty journal, readable dmesg without GPU errors."""
    return from_dmesg("ci-vm-dmesg-iso.txt")


def ci_vm_non_root() -> NodeFacts:
    """The CI VM as a non-root user sees it (dmesg_restrict=1), no syslog files."""
    return replay_facts(
        ["kernel_log"],
        commands={JOURNALCTL_ARGV: ci_vm_journal(), DMESG_ARGV: ci_vm_restricted_dmesg()},
        files={
            **{p: None for p in LOG_FILES},
            DMESG_RESTRICT: fixture_bytes(D + "ci-vm-dmesg_restrict.txt"),
        },
    )
