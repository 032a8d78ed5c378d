"""Host collectors replayed from real captures, and their failure paths."""

from __future__ import annotations

from tests.helpers import fixture_bytes, replay_facts
from tests.host.fixture_tree import tree_facts


def test_ci_vm_replay() -> None:
    f = tree_facts("ci-vm")
    assert not f.errors, f.errors
    assert f.os is not None and f.os.id == "debian" and f.os.detect_virt == "docker"
    assert "/.dockerenv" in f.os.container_hints
    assert f.kernel is not None and f.kernel.release == "6.18.44-fc-v1098"
    assert f.kernel.tainted == 0 and f.kernel.package_tool == "dpkg"
    assert f.kernel.package_version is None  # a kernel not from a package
    assert f.cpu is not None and f.cpu.threads == 2 and f.cpu.hypervisor is True
    assert f.cpu.cpufreq_present is False
    assert f.memory is not None and f.memory.swap_total_kb == 0
    assert f.memory.numa_nodes[0].mem_total_kb == 4024040
    assert f.pci is not None and len(f.pci.devices) == 6
    assert {d.driver for d in f.pci.devices} == {None, "virtio-pci"}
    assert f.pci.of_kind("nvidia-gpu") == []


def test_a100_derived_pci() -> None:
    f = tree_facts("a100-derived", ["pci"])
    assert f.pci is not None
    (gpu,) = f.pci.devices
    assert gpu.kind == "nvidia-gpu" and gpu.driver == "nvidia"
    assert gpu.max_link_width == 16 and gpu.current_link_speed == "16.0 GT/s PCIe"


def test_gpu_without_driver_is_a_fact() -> None:
    stats = {"/sys/bus/pci/devices/0000:01:00.0/driver": None}
    f = tree_facts("a100-derived", ["pci"], stats=stats)
    # A stat the capture holds as None is unrecorded: that is an error, not "no driver".
    assert f.pci is not None and f.pci.devices[0].driver is None
    assert any("driver" in e.message for e in f.errors)


def test_unreadable_sysctl_is_error_not_absent() -> None:
    f = replay_facts(["kernel"], files={"/proc/sys/kernel/osrelease": "6.8.0-90-generic\n"})
    assert f.kernel is not None and f.kernel.tainted is None
    assert any("tainted" in e.message for e in f.errors)


def test_hostile_taint_value() -> None:
    f = tree_facts("ci-vm", ["kernel"], files={"/proc/sys/kernel/tainted": b"\xff\xfe12\n"})
    assert f.kernel is not None and f.kernel.tainted is None
    assert any("tainted" in e.message for e in f.errors)


def test_empty_and_huge_cpuinfo() -> None:
    f = tree_facts("ci-vm", ["cpu"], files={"/proc/cpuinfo": ""})
    assert f.cpu is not None and f.cpu.threads == 0
    big = fixture_bytes("host/ci-vm/root/proc/cpuinfo") * 2000
    f = tree_facts("ci-vm", ["cpu"], files={"/proc/cpuinfo": big})
    assert f.cpu is not None and f.cpu.threads is not None and f.cpu.threads > 2


def test_missing_everything_never_raises() -> None:
    f = replay_facts(["os", "kernel", "cpu", "memory", "pci"])
    for section in ("os", "kernel", "cpu", "memory", "pci"):
        assert f.collectors[section].status == "ok", f.collectors[section]
    assert f.errors  # every unrecorded read is reported
