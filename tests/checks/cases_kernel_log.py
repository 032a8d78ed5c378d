"""Check cases for the kernel-log checks, from real captures replayed through
the collector (tests/kernel_log/replay.py; sources in
tests/fixtures/kernel_log/PROVENANCE.md)."""

from __future__ import annotations

from clustergrade.results import Status
from tests.helpers import Case
from tests.kernel_log.replay import ci_vm_clean, ci_vm_non_root, from_dmesg, from_syslog

CLEAN = "CI VM capture 2026-12-02 (empty journal, dmesg without GPU errors)"
NON_ROOT = "CI VM capture 2026-12-02 as uid 65534 (dmesg: Operation not permitted)"
GPUD_SXID = "leptonai/gpud sxid/README.md dmesg paste: Xid 79 + SXid 20034 Fatal"
GPUD_XID = "leptonai/gpud xid/README.md dmesg --ctime paste: Xid 13, 31, 109"
AKASH = "akash-network/support#244 dmesg -T paste: Xid 43, 31, 94"
GPU_OP = "NVIDIA/gpu-operator#1146 /var/log/syslog paste: Xid 48 (DBE)"
SENTINEL = "NVIDIA/NVSentinel#155 dmesg paste: GPU fallen off the bus without Xid 79"
GPUD_PR338 = "leptonai/gpud#338 dmesg paste: SXid 12028 Data line (no Fatal label)"
LKML_AER = "LKML PCI/AER patch (Kai-Heng Feng, 2022-01-27) dmesg paste: uncorrected AER"

CASES: list[Case] = [
    Case("gpu.xid-fatal", Status.PASS, ci_vm_clean, CLEAN),
    Case("gpu.xid-fatal", Status.ERROR, ci_vm_non_root, NON_ROOT),
    Case(
        "gpu.xid-fatal",
        Status.FAIL,
        lambda: from_dmesg("gpud-sxid-readme-xid79-sxid20034.dmesg.txt"),
        GPUD_SXID,
        subject="GPU 0000:91:00",
    ),
    Case(
        "gpu.xid-fatal",
        Status.FAIL,
        lambda: from_syslog("gpu-operator-1146-xid48.syslog.txt"),
        GPU_OP,
        subject="GPU 0000:07:00",
    ),
    Case(
        "gpu.xid-fatal",
        Status.FAIL,
        lambda: from_dmesg("nvsentinel-155-fallen-off-bus.dmesg.txt"),
        SENTINEL,
        subject="GPU 0000:b3:00",
    ),
    Case(
        "gpu.xid-fatal",
        Status.PASS,
        lambda: from_dmesg("akash-support-244-xid43-31-94.dmesg-T.txt"),
        AKASH + " (no critical code among them)",
    ),
    Case("gpu.xid-warning", Status.PASS, ci_vm_clean, CLEAN),
    Case("gpu.xid-warning", Status.ERROR, ci_vm_non_root, NON_ROOT),
    Case(
        "gpu.xid-warning",
        Status.WARN,
        lambda: from_dmesg("akash-support-244-xid43-31-94.dmesg-T.txt"),
        AKASH,
        subject="GPU 0000:00:05",
    ),
    Case(
        "gpu.xid-warning",
        Status.WARN,
        lambda: from_dmesg("gpud-xid-readme-xid13-31-109.dmesg-ctime.txt"),
        GPUD_XID,
        subject="GPU 0000:cb:00",
    ),
    Case(
        "gpu.xid-warning",
        Status.PASS,
        lambda: from_syslog("gpu-operator-1146-xid48.syslog.txt"),
        GPU_OP + " (critical only, nothing at warning level)",
    ),
    Case("gpu.sxid", Status.PASS, ci_vm_clean, CLEAN),
    Case("gpu.sxid", Status.ERROR, ci_vm_non_root, NON_ROOT),
    Case(
        "gpu.sxid",
        Status.FAIL,
        lambda: from_dmesg("gpud-sxid-readme-xid79-sxid20034.dmesg.txt"),
        GPUD_SXID,
        subject="nvidia-nvswitch0 0000:05:00.0",
    ),
    Case(
        "gpu.sxid",
        Status.WARN,
        lambda: from_dmesg("gpud-pr338-sxid12028.dmesg-decode.txt"),
        GPUD_PR338,
    ),
    Case("host.pcie-aer-errors", Status.PASS, ci_vm_clean, CLEAN),
    Case("host.pcie-aer-errors", Status.ERROR, ci_vm_non_root, NON_ROOT),
    Case(
        "host.pcie-aer-errors",
        Status.WARN,
        lambda: from_dmesg("lkml-pci-aer-uncorrected.dmesg.txt"),
        LKML_AER,
    ),
]
