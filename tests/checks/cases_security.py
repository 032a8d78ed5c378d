"""Check cases for the security area: the CI VM capture
(tests/fixtures/security/ci-vm) replayed through the collectors, with real
public captures from tests/fixtures/security/public placed on top where the
VM has no GPU.  See tests/fixtures/security/PROVENANCE.md."""

from __future__ import annotations

from clustergrade.facts.node import NodeFacts
from clustergrade.results import Status
from clustergrade.seam import PathInfo
from tests.helpers import Case
from tests.security.scenarios import CI, as_user, ci, gpu_node, imex_pr375, node, public

KVM = "/dev/kvm"
OPEN = "nvidia-version-open-555.58.02.txt"
PROP = "nvidia-version-proprietary-515.76.txt"
LSMOD = "lsmod-nvidia-peermem.txt"


def kvm(symbolic: str, gid: int = 0, access: bool = True) -> NodeFacts:
    return ci(stats={KVM: node(KVM, symbolic, gid=gid, access=access)})


def with_files(**files: str) -> NodeFacts:
    return ci(files=files)


def old_kernel(facts: NodeFacts) -> NodeFacts:
    g = facts.gpudirect
    assert g is not None
    upd = {"kernel_release": "5.4.0-216-generic"}
    return facts.model_copy(update={"gpudirect": g.model_copy(update=upd)})


def bare_metal(facts: NodeFacts) -> NodeFacts:
    os_ = facts.os
    cpu = facts.cpu
    assert os_ is not None and cpu is not None
    return facts.model_copy(
        update={
            "os": os_.model_copy(update={"detect_virt": "none"}),
            "cpu": cpu.model_copy(update={"hypervisor": False}),
        }
    )


def iommu_groups(kind: str, n: int = 2) -> NodeFacts:
    groups = [str(i) for i in range(n)]
    files = {f"/sys/kernel/iommu_groups/{g}/type": kind + "\n" for g in groups}
    return bare_metal(
        ci(dirs={"/sys/kernel/iommu_groups": groups, "/sys/class/iommu": ["dmar0"]}, files=files)
    )


PARAMS = "/proc/driver/nvidia/params"

CASES: list[Case] = [
    # isolation.kvm-exposed
    Case("isolation.kvm-exposed", Status.PASS, ci, CI + ": /dev/kvm crw------- root root"),
    Case(
        "isolation.kvm-exposed",
        Status.FAIL,
        lambda: kvm("crw-rw-rw-", gid=992),
        CI + "; changed: /dev/kvm mode 0666 group 992 (systemd's default udev rule)",
    ),
    Case(
        "isolation.kvm-exposed",
        Status.FAIL,
        lambda: as_user(kvm("crw-rw----", gid=992)),
        CI + "; changed: /dev/kvm 0660 group kvm, audit as uid 1000 who can open it",
    ),
    Case(
        "isolation.kvm-exposed",
        Status.PASS,
        lambda: as_user(kvm("crw-rw----", gid=992, access=False)),
        CI + "; changed: /dev/kvm 0660 group kvm, audit as uid 1000 who cannot open it",
    ),
    Case(
        "isolation.kvm-exposed",
        Status.WARN,
        lambda: kvm("crw-rw----", gid=992),
        CI + "; changed: /dev/kvm 0660 group 992, seen as root",
    ),
    Case(
        "isolation.kvm-exposed",
        Status.WARN,
        lambda: with_files(**{"/sys/module/kvm_intel/parameters/nested": "Y\n"}),
        CI + "; changed: kvm_intel nested=Y",
    ),
    # isolation.bmc-device
    Case("isolation.bmc-device", Status.PASS, ci, CI + ": no /dev/ipmi* devices"),
    Case(
        "isolation.bmc-device",
        Status.PASS,
        lambda: ci(stats={"/dev/ipmi0": node("/dev/ipmi0", "crw-------")}),
        CI + "; changed: /dev/ipmi0 present, crw------- root root",
    ),
    Case(
        "isolation.bmc-device",
        Status.FAIL,
        lambda: as_user(ci(stats={"/dev/ipmi0": node("/dev/ipmi0", "crw-rw-rw-")})),
        CI + "; changed: /dev/ipmi0 crw-rw-rw-, audit as uid 1000 who can open it",
    ),
    # isolation.redfish-host-interface
    Case(
        "isolation.redfish-host-interface", Status.PASS, ci, CI + ": eth0 (virtio_net), ifb0/1, lo"
    ),
    Case(
        "isolation.redfish-host-interface",
        Status.WARN,
        lambda: ci(
            dirs={"/sys/class/net": ["eth0", "ifb0", "ifb1", "lo", "usb0"]},
            stats={
                "/sys/class/net/usb0/device/driver": PathInfo(
                    "/sys/class/net/usb0/device/driver",
                    exists=True,
                    is_symlink=True,
                    target="../../../../../../bus/usb/drivers/cdc_ether",
                )
            },
            files={"/sys/class/net/usb0/address": "02:fc:00:00:00:02\n"},
        ),
        CI + "; changed: one more interface usb0 bound to cdc_ether (a BMC host interface)",
    ),
    # isolation.imex-channel-shared
    Case(
        "isolation.imex-channel-shared",
        Status.FAIL,
        imex_pr375,
        "ci-vm + IMEX channel listing from NVIDIA/nvidia-container-toolkit#375 (crw-rw-rw-)",
    ),
    Case(
        "isolation.imex-channel-shared",
        Status.PASS,
        lambda: imex_pr375(
            stats={
                "/dev/nvidia-caps-imex-channels/channel0": node(
                    "/dev/nvidia-caps-imex-channels/channel0", "crw-------", uid=1000
                ),
                "/dev/nvidia-caps-imex-channels/channel1": node(
                    "/dev/nvidia-caps-imex-channels/channel1", "crw-------", uid=1001
                ),
                "/dev/nvidia-caps-imex-channels/channel2047": node(
                    "/dev/nvidia-caps-imex-channels/channel2047", "crw-------", uid=1002
                ),
            }
        ),
        "toolkit#375 listing; changed: each channel crw------- owned by one job user",
    ),
    Case("isolation.imex-channel-shared", Status.SKIP, ci, CI + ": no IMEX channels"),
    # security.perf-event-paranoid
    Case("security.perf-event-paranoid", Status.WARN, ci, CI + ": perf_event_paranoid = 2"),
    Case(
        "security.perf-event-paranoid",
        Status.PASS,
        lambda: with_files(**{"/proc/sys/kernel/perf_event_paranoid": "1\n"}),
        CI + "; changed: perf_event_paranoid = 1",
    ),
    # security.kptr-restrict
    Case("security.kptr-restrict", Status.PASS, ci, CI + ": kptr_restrict = 0"),
    Case(
        "security.kptr-restrict",
        Status.WARN,
        lambda: with_files(**{"/proc/sys/kernel/kptr_restrict": "1\n"}),
        CI + "; changed: kptr_restrict = 1",
    ),
    # security.dmesg-restrict
    Case("security.dmesg-restrict", Status.PASS, ci, CI + ": dmesg_restrict = 1"),
    Case(
        "security.dmesg-restrict",
        Status.WARN,
        lambda: with_files(**{"/proc/sys/kernel/dmesg_restrict": "0\n"}),
        CI + "; changed: dmesg_restrict = 0",
    ),
    # security.nvidia-profiling-restricted
    Case("security.nvidia-profiling-restricted", Status.SKIP, ci, CI + ": no NVIDIA driver"),
    Case(
        "security.nvidia-profiling-restricted",
        Status.WARN,
        lambda: with_files(**{PARAMS: public("nvidia-params-h100-580.105.08.txt")}),
        "ci-vm + H100 params from NVIDIA/k8s-test-infra (RmProfilingAdminOnly: 1)",
    ),
    Case(
        "security.nvidia-profiling-restricted",
        Status.PASS,
        lambda: with_files(
            **{
                PARAMS: public("nvidia-params-h100-580.105.08.txt").replace(
                    "RmProfilingAdminOnly: 1", "RmProfilingAdminOnly: 0"
                )
            }
        ),
        "k8s-test-infra H100 params; changed: RmProfilingAdminOnly: 0",
    ),
    # security.iommu
    Case("security.iommu", Status.SKIP, ci, CI + ": VM without IOMMU groups"),
    Case(
        "security.iommu",
        Status.PASS,
        lambda: iommu_groups("identity"),
        CI + "; changed: bare metal, dmar0 and two IOMMU groups of type identity",
    ),
    Case(
        "security.iommu",
        Status.WARN,
        lambda: iommu_groups("DMA-FQ"),
        CI + "; changed: bare metal, dmar0 and two IOMMU groups of type DMA-FQ",
    ),
    Case(
        "security.iommu",
        Status.PASS,
        lambda: bare_metal(ci()),
        CI + "; changed: detect_virt none / no hypervisor flag (IOMMU off)",
    ),
    # gpudirect.peermem-legacy
    Case("gpudirect.peermem-legacy", Status.SKIP, ci, CI + ": no NVIDIA driver"),
    Case(
        "gpudirect.peermem-legacy",
        Status.WARN,
        lambda: gpu_node(PROP, LSMOD),
        "ci-vm + proprietary 515.76 version file + lsmod excerpt with nvidia_peermem",
    ),
    Case(
        "gpudirect.peermem-legacy",
        Status.PASS,
        lambda: gpu_node(OPEN, LSMOD),
        "ci-vm + open 555.58.02 version file + lsmod excerpt with nvidia_peermem",
    ),
    # gpudirect.dmabuf
    Case("gpudirect.dmabuf", Status.SKIP, ci, CI + ": no NVIDIA driver"),
    Case(
        "gpudirect.dmabuf",
        Status.PASS,
        lambda: gpu_node(OPEN, None),
        "ci-vm (kernel 6.18) + open 555.58.02 version file",
    ),
    Case(
        "gpudirect.dmabuf",
        Status.WARN,
        lambda: gpu_node(PROP, None),
        "ci-vm + proprietary 515.76 version file",
    ),
    Case(
        "gpudirect.dmabuf",
        Status.WARN,
        lambda: old_kernel(gpu_node(OPEN, None)),
        "ci-vm + open 555.58.02 version file; changed: kernel_release 5.4.0-216-generic",
    ),
    # gpudirect.gdrcopy
    Case("gpudirect.gdrcopy", Status.SKIP, ci, CI + ": no NVIDIA driver"),
    Case(
        "gpudirect.gdrcopy",
        Status.WARN,
        lambda: gpu_node(OPEN, LSMOD),
        "ci-vm + open version file + lsmod excerpt (no gdrdrv)",
    ),
    Case(
        "gpudirect.gdrcopy",
        Status.PASS,
        lambda: ci(
            files={
                "/proc/driver/nvidia/version": public(OPEN),
                "/proc/modules": public(LSMOD) + "gdrdrv                 24576  0\n",
            }
        ),
        "ci-vm + open version file + lsmod excerpt; changed: one gdrdrv line appended",
    ),
]

MUNGE_KEY = "/etc/munge/munge.key"


def _sec_update(facts: NodeFacts, **upd: object) -> NodeFacts:
    sec = facts.security
    assert sec is not None
    return facts.model_copy(update={"security": sec.model_copy(update=upd)})


def munge_key(symbolic: str) -> NodeFacts:
    # uid/gid 103/106: the munge account on the CI VM (`id munge`).
    return ci(stats={MUNGE_KEY: node(MUNGE_KEY, symbolic, uid=103, gid=106)})


CASES += [
    Case("security.proc-hidepid", Status.WARN, ci, CI + ": /proc mounted rw,relatime"),
    Case(
        "security.proc-hidepid",
        Status.PASS,
        lambda: _sec_update(
            ci(), proc_mount_options="rw,relatime,hidepid=invisible", proc_hidepid="invisible"
        ),
        CI + "; /proc options changed to add hidepid=invisible",
    ),
    Case("security.ptrace-scope", Status.SKIP, ci, CI + ": no Yama in this kernel"),
    Case(
        "security.ptrace-scope",
        Status.PASS,
        lambda: _sec_update(ci(), ptrace_scope=1),
        CI + "; ptrace_scope set to 1 (Ubuntu's default)",
    ),
    Case(
        "security.ptrace-scope",
        Status.WARN,
        lambda: _sec_update(ci(), ptrace_scope=0),
        CI + "; ptrace_scope set to 0",
    ),
    Case(
        "security.munge-key",
        Status.PASS,
        lambda: munge_key("-rw-------"),
        CI + ": munge.key -rw------- munge munge, as ls -l shows it on the CI VM",
    ),
    Case(
        "security.munge-key",
        Status.FAIL,
        lambda: munge_key("-rw-r--r--"),
        CI + "; munge.key mode changed to 0644",
    ),
    Case("security.munge-key", Status.PASS, ci, CI + ": munge.key 0600 munge:munge"),
]
