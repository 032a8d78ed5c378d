"""Facts for the GPU tests and check cases, built by replaying real captures
(tests/fixtures/nvidia/PROVENANCE.md) through the nvidia collector."""

from __future__ import annotations

from typing import Any

from clustergrade.facts.gpu import NvidiaGpu
from clustergrade.facts.node import NodeFacts
from clustergrade.seam import CommandResult
from tests.helpers import fixture_bytes, replay_facts

NVIDIA_SMI = ("nvidia-smi", "-q", "-x")
PROC = "/proc/driver/nvidia/version"

A100 = "nvidia/a100-sxm4-80gb-mig.xml"
P100 = "nvidia/tesla-p100-pcie-16gb.xml"
ORIGIN_A100 = "Checkmk/checkmk test_nvidia_smi.sh capture: A100-SXM4-80GB, MIG on, driver 535.54.03"
ORIGIN_P100 = "netdata/netdata testdata tesla-p100.xml: P100-PCIE-16GB, idle, driver 510.47.03"

#: What nvidia-smi prints (exit status 9) when the kernel driver is not
#: loaded; the wording as NVIDIA's tool prints it, widely reported.
SMI_NO_DRIVER = (
    b"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    b"Make sure that the latest NVIDIA driver is installed and running.\n\n"
)


def from_smi(fixture: str, proc: str | None = None) -> NodeFacts:
    """Replay one nvidia-smi -q -x capture.  The captures came without
    /proc/driver/nvidia/version, so unless ``proc`` names a procfs fixture
    the file is replayed as absent."""
    files: dict[str, bytes | None] = {PROC: fixture_bytes(proc) if proc else None}
    return replay_facts(["nvidia"], commands={NVIDIA_SMI: fixture_bytes(fixture)}, files=files)


def a100() -> NodeFacts:
    return from_smi(A100)


def p100() -> NodeFacts:
    return from_smi(P100)


def no_driver() -> NodeFacts:
    """nvidia-smi installed, kernel module not loaded (procfs file absent)."""
    return replay_facts(
        ["nvidia"],
        commands={NVIDIA_SMI: CommandResult(NVIDIA_SMI, 9, stdout=SMI_NO_DRIVER)},
        files={PROC: None},
    )


def nothing_nvidia() -> NodeFacts:
    """No nvidia-smi, no procfs file: a node without NVIDIA software."""
    return replay_facts(["nvidia"], missing_commands=[NVIDIA_SMI], files={PROC: None})


def with_gpus(facts: NodeFacts, gpus: list[NvidiaGpu]) -> NodeFacts:
    assert facts.nvidia is not None
    nv = facts.nvidia.model_copy(update={"gpus": gpus, "gpu_count": len(gpus)})
    return facts.model_copy(update={"nvidia": nv})


def change_gpu(facts: NodeFacts, index: int = 0, **update: Any) -> NodeFacts:
    """``facts`` with GPU ``index`` changed; nested models given whole."""
    assert facts.nvidia is not None
    gpus = list(facts.nvidia.gpus)
    gpus[index] = gpus[index].model_copy(update=update)
    return with_gpus(facts, gpus)


def change_driver(facts: NodeFacts, **update: Any) -> NodeFacts:
    assert facts.nvidia is not None
    return facts.model_copy(update={"nvidia": facts.nvidia.model_copy(update=update)})
