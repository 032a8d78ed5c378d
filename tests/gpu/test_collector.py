"""The nvidia and amd collectors through ReplayHost (and the NVML route with
the fake NVML injected)."""

from __future__ import annotations

from clustergrade.collect.base import CollectContext
from clustergrade.collect.gpu import (
    AMD_SMI_STATIC,
    AMD_SMI_VERSION,
    collect_nvidia,
    driver_branch,
    local_nvml,
    parse_proc_version,
)
from clustergrade.seam import CommandResult, LocalHost, RecordingHost, ReplayHost
from tests.gpu.fake_nvml import FakeNvml, FakeNvmlError
from tests.gpu.replay import NVIDIA_SMI, PROC, a100, from_smi, no_driver, nothing_nvidia, p100
from tests.helpers import fixture_bytes, replay_facts

OPEN_565 = "nvidia/proc-version-open-565.txt"
PROP_384 = "nvidia/proc-version-proprietary-384.txt"


def test_proc_version_both_formats() -> None:
    assert parse_proc_version(fixture_bytes(OPEN_565).decode()) == "565.57.01"
    assert parse_proc_version(fixture_bytes(PROP_384).decode()) == "384.98"
    assert parse_proc_version("garbage") is None
    assert driver_branch("565.57.01") == "565" and driver_branch("x.1") is None


def test_nvidia_smi_route() -> None:
    f = a100()
    assert f.collectors["nvidia"].status == "ok" and f.errors == []
    nv = f.nvidia
    assert nv is not None
    assert nv.source == "nvidia-smi" and nv.driver_loaded and nv.smi_installed
    assert (nv.driver_version, nv.branch, nv.cuda_driver_version) == ("535.54.03", "535", "12.2")
    assert nv.gpu_count == 4 and len(nv.gpus) == 1
    assert nv.proc_version is None
    assert p100().nvidia is not None


def test_proc_version_is_kept_alongside_nvidia_smi() -> None:
    # Replay pairs two unrelated real captures: the fields stay apart.
    nv = from_smi("nvidia/tesla-p100-pcie-16gb.xml", proc=OPEN_565).nvidia
    assert nv is not None and nv.driver_version == "510.47.03"
    assert nv.proc_version is not None and "565.57.01" in nv.proc_version


def test_procfs_only_when_nvidia_smi_is_missing() -> None:
    f = replay_facts(
        ["nvidia"], missing_commands=[NVIDIA_SMI], files={PROC: fixture_bytes(PROP_384)}
    )
    nv = f.nvidia
    assert nv is not None and f.errors == []
    assert (nv.source, nv.driver_loaded, nv.driver_version, nv.smi_installed) == (
        "procfs",
        True,
        "384.98",
        False,
    )
    assert nv.gpus == []


def test_driver_not_loaded_is_a_fact() -> None:
    f = no_driver()
    nv = f.nvidia
    assert nv is not None and f.errors == []
    assert not nv.driver_loaded and nv.source == "none"
    assert nv.smi_installed and nv.smi_error is not None and "exit status 9" in nv.smi_error
    bare = nothing_nvidia().nvidia
    assert bare is not None and not bare.driver_loaded and bare.smi_installed is False


def test_timeout_and_garbage_are_errors_with_partial_facts() -> None:
    timeout = CommandResult(NVIDIA_SMI, None, timed_out=True, duration_s=45.0)
    f = replay_facts(
        ["nvidia"], commands={NVIDIA_SMI: timeout}, files={PROC: fixture_bytes(OPEN_565)}
    )
    assert f.nvidia is not None and f.nvidia.source == "procfs"
    assert any("timed out" in e.message for e in f.errors)
    trunc = fixture_bytes("nvidia/derived-a100-truncated.xml")
    g = replay_facts(["nvidia"], commands={NVIDIA_SMI: trunc}, files={PROC: None})
    assert g.nvidia is not None and g.nvidia.source == "nvidia-smi" and len(g.nvidia.gpus) == 1
    assert any("malformed XML" in e.message for e in g.errors)


def test_nvml_route_preferred_and_fallback() -> None:
    host = ReplayHost.from_mapping(
        commands={NVIDIA_SMI: fixture_bytes("nvidia/tesla-p100-pcie-16gb.xml")},
        files={PROC: None},
    )
    ctx = CollectContext(host, "nvidia")
    nv = collect_nvidia(ctx, nvml=lambda c: FakeNvml())
    assert nv.source == "nvml" and nv.gpus[0].name == "NVIDIA A100-SXM4-80GB"
    assert nv.gpus[0].nvlinks is not None and ctx.errors == []
    # NVML present but not initialising (no libnvidia-ml.so): nvidia-smi answers.
    ctx2 = CollectContext(host, "nvidia")
    broken = FakeNvml(init_error=FakeNvmlError(12, "NVML Shared Library Not Found"))
    nv2 = collect_nvidia(ctx2, nvml=lambda c: broken)
    assert nv2.source == "nvidia-smi" and nv2.gpus[0].name == "Tesla P100-PCIE-16GB"
    assert ctx2.errors == []


def test_nvml_only_for_this_machine() -> None:
    replay = ReplayHost.from_mapping()
    assert local_nvml(CollectContext(replay, "nvidia")) is None
    assert local_nvml(CollectContext(RecordingHost(LocalHost()), "nvidia")) is None
    assert local_nvml(CollectContext(LocalHost(root="/tmp"), "nvidia")) is None


def test_local_machine_without_gpu_collects_cleanly() -> None:
    # This machine: pynvml installed, no NVIDIA driver.  Whatever it has, the
    # collector must return facts without raising.
    nv = collect_nvidia(CollectContext(LocalHost(), "nvidia"))
    assert nv.source in ("nvml", "nvidia-smi", "procfs", "none")


VERSION_LINE = fixture_bytes("amd/amd-smi-version-24.7.1.txt")


def test_amd_absent() -> None:
    f = replay_facts(["amd"], missing_commands=[AMD_SMI_VERSION])
    assert f.amd is not None and f.amd.present is False and f.errors == []


def test_amd_version_and_static() -> None:
    # amd-smi static --json shape as amd-smi documents it; no real capture
    # was found (tests/fixtures/amd/PROVENANCE.md), so this one is hand-built.
    static = (
        b'[{"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X", "asic_serial": "0x1"},'
        b' "bus": {"bdf": "0000:0c:00.0"}, "vbios": {"version": "022.040.003.042.000001"},'
        b' "vram": {"type": "HBM3", "size": {"value": 196592, "unit": "MB"}}}]'
    )
    f = replay_facts(["amd"], commands={AMD_SMI_VERSION: VERSION_LINE, AMD_SMI_STATIC: static})
    amd = f.amd
    assert amd is not None and f.errors == []
    assert (amd.amd_smi_version, amd.rocm_version, amd.driver_version) == (
        "24.7.1+b446d6c-dirty",
        None,
        "6.10.10",
    )
    assert amd.gpu_count == 1 and amd.gpus[0].memory_total_mib == 196592
    assert amd.gpus[0].pci_bus_id == "0000:0c:00.0"


def test_amd_static_garbage_is_an_error() -> None:
    f = replay_facts(["amd"], commands={AMD_SMI_VERSION: VERSION_LINE, AMD_SMI_STATIC: b"{oops"})
    assert f.amd is not None and f.amd.present and f.amd.gpus == []
    assert any("amd-smi static" in e.message for e in f.errors)
