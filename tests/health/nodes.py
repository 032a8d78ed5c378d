"""Whole nodes for the health tests, replayed from real captures.

A node is composed from the first wave's fixtures, each served from where it
was captured (see their PROVENANCE.md files and ``fixtures/PROVENANCE.md``
here): the host tree (PCI), one ``nvidia-smi -q -x`` document, the CI VM's
empty journal plus a dmesg capture, an InfiniBand tree, and this folder's
CI VM boot id and mount table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clustergrade.collect.gpu import NVIDIA_SMI, PROC_VERSION
from clustergrade.collect.kernel_log import DMESG_ARGV, DMESG_RESTRICT, JOURNALCTL_ARGV
from clustergrade.health.evaluate import BOOT_ID, MOUNTS
from clustergrade.seam import CommandResult, ReplayHost
from tests.helpers import fixture_bytes
from tests.host.fixture_tree import mapping as host_mapping
from tests.kernel_log.replay import ci_vm_journal
from tests.network.ib_tree import mapping as ib_mapping

HERE = Path(__file__).parent / "fixtures"
A100_XML = "nvidia/a100-sxm4-80gb-mig.xml"
XID79 = "kernel_log/gpud-sxid-readme-xid79-sxid20034.dmesg.txt"
XID48 = "kernel_log/gpu-operator-1146-xid48.syslog.txt"
CLEAN_DMESG = "kernel_log/ci-vm-dmesg-iso.txt"
BOOT = (HERE / "ci-vm-boot_id.txt").read_bytes()
PROC_MOUNTS = (HERE / "ci-vm-proc-self-mounts.txt").read_bytes()


def _merge(into: dict[str, Any], extra: dict[str, Any]) -> None:
    for key, value in extra.items():
        if key == "hostname":
            continue
        if isinstance(value, dict):
            into.setdefault(key, {}).update(value)
        elif isinstance(value, list):
            into.setdefault(key, []).extend(value)


def node(
    *,
    dmesg: bytes | None = None,
    smi: bytes | None = None,
    host_tree: str = "a100-derived",
    ib: str | None = None,
    ib_files: dict[str, bytes | str] | None = None,
    boot_id: bytes = BOOT,
    commands: dict[tuple[str, ...], Any] | None = None,
    hostname: str = "gpu-node-01",
) -> ReplayHost:
    """A replayed node: A100 XML and a clean CI VM dmesg unless told otherwise."""
    m: dict[str, Any] = {"files": {}, "dirs": {}, "stats": {}, "commands": {}, "missing_files": []}
    _merge(m, host_mapping(host_tree))
    if ib is not None:
        _merge(m, ib_mapping(ib))
    else:
        m["dirs"].update({"/sys/class/infiniband": None, "/dev/infiniband": None})
    for path, content in (ib_files or {}).items():
        m["files"][path] = content
    smi_bytes = fixture_bytes(A100_XML) if smi is None else smi
    m["commands"][NVIDIA_SMI] = CommandResult(NVIDIA_SMI, 0, stdout=smi_bytes)
    m["files"][PROC_VERSION] = None
    m["commands"][JOURNALCTL_ARGV] = ci_vm_journal()
    log = fixture_bytes(CLEAN_DMESG) if dmesg is None else dmesg
    m["commands"][DMESG_ARGV] = CommandResult(DMESG_ARGV, 0, stdout=log)
    m["files"][DMESG_RESTRICT] = fixture_bytes("kernel_log/ci-vm-dmesg_restrict.txt")
    m["files"][BOOT_ID] = boot_id
    m["files"][MOUNTS] = PROC_MOUNTS
    m["commands"].update(commands or {})
    return ReplayHost.from_mapping(hostname=hostname, **m)


def xid79_log() -> bytes:
    return fixture_bytes(XID79)


def xid79_then_xid48_log() -> bytes:
    """Derived: the Xid 79 capture followed by the Xid 48 capture's lines, as
    if the second error arrived after the first check."""
    return fixture_bytes(XID79) + fixture_bytes(XID48)


def a100_with_replays(count: int) -> bytes:
    """Derived: the real A100 capture with ``<replay_counter>`` set to ``count``."""
    xml = fixture_bytes(A100_XML)
    old = b"<replay_counter>0</replay_counter>"
    assert xml.count(old) == 1
    return xml.replace(old, f"<replay_counter>{count}</replay_counter>".encode())
