"""The security collectors replayed from the CI VM capture, and hostile variants."""

from __future__ import annotations

from tests.helpers import replay_facts
from tests.security.fixture_tree import mapping
from tests.security.scenarios import as_user, ci, gpu_node, imex_pr375


def test_ci_vm_security() -> None:
    f = ci()
    sec = f.security
    assert sec is not None
    assert (sec.uid, sec.euid, sec.is_root) == (0, 0, True)
    assert sec.viewpoint() == "seen as root"
    assert sec.perf_event_paranoid == 2 and sec.kptr_restrict == 0 and sec.dmesg_restrict == 1
    assert sec.ptrace_scope is None
    assert sec.kvm is not None and sec.kvm.exists and sec.kvm.perms == 0o600
    assert sec.ipmi_devices == [] and sec.host_interface_nics == []
    assert sec.net_interfaces == ["eth0", "ifb0", "ifb1", "lo"]
    assert sec.iommu_groups == 0 and sec.iommu_units == []
    assert not sec.nvidia_params_present
    assert f.errors == []


def test_ci_vm_imex_and_gpudirect() -> None:
    f = ci()
    assert f.imex is not None and not f.imex.channels_dir_present
    assert f.imex.daemon is not None and not f.imex.daemon.installed
    g = f.gpudirect
    assert g is not None and not g.nvidia_driver and g.kernel_release == "6.18.44-fc-v1098"


def test_imex_listing() -> None:
    imex = imex_pr375().imex
    assert imex is not None
    assert [c.path.rsplit("/", 1)[1] for c in imex.channels] == [
        "channel0",
        "channel1",
        "channel2047",
    ]
    assert all(c.world_rw and c.is_char_device for c in imex.channels)


def test_gpu_node_modules() -> None:
    g = gpu_node("nvidia-version-open-555.58.02.txt", "lsmod-nvidia-peermem.txt").gpudirect
    assert g is not None
    assert g.open_kernel_module is True
    assert g.loaded_modules == ["nvidia", "nvidia_peermem"]


def test_as_user_view() -> None:
    sec = as_user(ci()).security
    assert sec is not None and sec.viewpoint() == "seen as uid 1000 (not root)"


def test_status_invalid_utf8() -> None:
    # Derived: the CI VM's /proc/self/status with its Uid line's bytes broken.
    raw = mapping("ci-vm")["files"]["/proc/self/status"]
    broken = raw.replace(b"Uid:", b"U\xff\xfed:")
    f = ci(files={"/proc/self/status": broken})
    assert f.security is not None and f.security.uid is None
    assert f.collectors["security"].status == "ok"


def test_truncated_and_empty_files() -> None:
    m = mapping("ci-vm")["files"]
    f = ci(
        files={
            "/proc/mounts": m["/proc/mounts"][:17],
            "/proc/sys/kernel/perf_event_paranoid": b"",
            "/proc/cmdline": m["/proc/cmdline"] * 500,
        }
    )
    sec = f.security
    assert sec is not None and sec.perf_event_paranoid is None
    assert f.collectors["security"].status == "ok"


def test_unrecorded_reads_are_errors_not_absent() -> None:
    # The CI VM capture with /proc/self/status taken out: replay says "not
    # recorded", which must become an error, not "uid unknown" in silence.
    m = mapping("ci-vm")
    del m["files"]["/proc/self/status"]
    f = replay_facts(["security"], **m)
    assert f.security is not None and f.security.uid is None
    assert any(e.path == "/proc/self/status" for e in f.errors)
