"""Collectors: the node's NVIDIA and AMD GPUs.

NVIDIA, in order of preference: NVML (in-process, only when auditing this
machine itself), else ``nvidia-smi -q -x``, else just the kernel module's
``/proc/driver/nvidia/version``.  The procfs file is read in every case: it
needs no root and says whether the kernel driver is loaded even when the
userspace tools are broken.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from clustergrade.collect.amdsmi import (
    AmdSmiParseError,
    parse_amd_smi_static,
    parse_amd_smi_version,
)
from clustergrade.collect.base import CollectContext, collector
from clustergrade.collect.nvml import NvmlApi, load_pynvml, read_nvml
from clustergrade.collect.nvsmi_xml import parse_nvidia_smi_xml
from clustergrade.facts.gpu import AmdFacts, NvidiaFacts
from clustergrade.seam import LocalHost

PROC_VERSION = "/proc/driver/nvidia/version"
NVIDIA_SMI = ("nvidia-smi", "-q", "-x")
#: nvidia-smi -q on 8 GPUs takes seconds; a wedged driver can take minutes.
NVIDIA_SMI_TIMEOUT_S = 45.0
AMD_SMI_VERSION = ("amd-smi", "version")
AMD_SMI_STATIC = ("amd-smi", "static", "--json")
AMD_SMI_TIMEOUT_S = 45.0
#: Enough to show a pattern without flooding the report.
MAX_NVML_ERRORS = 20

# "NVIDIA UNIX x86_64 Kernel Module  535.54.03" and, for the open modules,
# "NVIDIA UNIX Open Kernel Module for x86_64  565.57.01".
_PROC_RE = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+(?:\.\d+)+)")

NvmlLoader = Callable[[CollectContext], "NvmlApi | None"]


def parse_proc_version(text: str) -> str | None:
    """The driver version in /proc/driver/nvidia/version, or None."""
    m = _PROC_RE.search(text.split("\n", 1)[0])
    return m.group(1) if m else None


def driver_branch(version: str | None) -> str | None:
    if not version:
        return None
    head = version.split(".", 1)[0]
    return head if head.isdigit() else None


def local_nvml(ctx: CollectContext) -> NvmlApi | None:
    """NVML only describes the machine this process runs on, so it is used
    only when the audit's host is that machine (not a replay, not a mounted
    image, and not a recording, whose capture must hold nvidia-smi's answer)."""
    host = ctx.host
    if type(host) is not LocalHost or getattr(host, "_root", None) != Path("/"):
        return None
    return load_pynvml()


def collect_nvidia(ctx: CollectContext, nvml: NvmlLoader = local_nvml) -> NvidiaFacts:
    proc_text = ctx.read_text(PROC_VERSION)
    proc_line = None if proc_text is None else proc_text.split("\n", 1)[0].strip()[:300]
    proc_version = None if proc_text is None else parse_proc_version(proc_text)
    if proc_text is not None and proc_version is None:
        ctx.error(f"no driver version in {PROC_VERSION}", path=PROC_VERSION)
    base = {"proc_version": proc_line}

    api = nvml(ctx)
    if api is not None:
        reading, _unavailable = read_nvml(api)
        if reading is not None:
            for msg in reading.errors[:MAX_NVML_ERRORS]:
                ctx.error(msg)
            if len(reading.errors) > MAX_NVML_ERRORS:
                ctx.error(f"... and {len(reading.errors) - MAX_NVML_ERRORS} more NVML errors")
            version = reading.driver_version or proc_version
            return NvidiaFacts(
                driver_loaded=True,
                driver_version=version,
                branch=driver_branch(version),
                cuda_driver_version=reading.cuda_driver_version,
                source="nvml",
                gpu_count=reading.gpu_count,
                gpus=reading.gpus,
                **base,
            )

    res = ctx.run(NVIDIA_SMI, timeout=NVIDIA_SMI_TIMEOUT_S)
    smi_installed: bool | None = None
    smi_error: str | None = None
    if res.not_found:
        smi_installed = False
    elif res.ran and b"<nvidia_smi_log" in res.stdout[:4096]:
        smi_installed = True
        parsed = parse_nvidia_smi_xml(res.stdout)
        if parsed.error is not None:
            ctx.error(f"nvidia-smi -q -x: {parsed.error}", argv=list(NVIDIA_SMI))
        if res.truncated:
            ctx.error("nvidia-smi -q -x: output truncated", argv=list(NVIDIA_SMI))
        if parsed.driver_version or parsed.gpus:
            version = parsed.driver_version or proc_version
            return NvidiaFacts(
                driver_loaded=True,
                driver_version=version,
                branch=driver_branch(version),
                cuda_driver_version=parsed.cuda_version,
                source="nvidia-smi",
                smi_installed=True,
                smi_error=None if res.ok else res.describe(),
                gpu_count=parsed.attached_gpus,
                gpus=parsed.gpus,
                **base,
            )
    elif res.ran:
        # nvidia-smi's own exit status is a fact about the driver (9: cannot
        # talk to the driver, 6: no GPU found), not a collector failure.
        smi_installed = True
        smi_error = res.describe()
    else:
        ctx.error(res.describe(), argv=list(NVIDIA_SMI))

    if proc_text is not None:
        return NvidiaFacts(
            driver_loaded=True,
            driver_version=proc_version,
            branch=driver_branch(proc_version),
            source="procfs",
            smi_installed=smi_installed,
            smi_error=smi_error,
            **base,
        )
    return NvidiaFacts(
        driver_loaded=False,
        source="none",
        smi_installed=smi_installed,
        smi_error=smi_error,
        **base,
    )


@collector("nvidia")
def nvidia(ctx: CollectContext) -> NvidiaFacts:
    return collect_nvidia(ctx)


@collector("amd")
def amd(ctx: CollectContext) -> AmdFacts:
    ver = ctx.run(AMD_SMI_VERSION, timeout=AMD_SMI_TIMEOUT_S)
    if ver.not_found:
        return AmdFacts(present=False)
    versions: dict[str, str | None] = {"tool": None, "rocm": None, "amdgpu": None}
    if ver.ran:
        versions = parse_amd_smi_version(ver.text + "\n" + ver.err_text)
        if versions["tool"] is None:
            ctx.error("amd-smi version: no version in output", argv=list(AMD_SMI_VERSION))
    else:
        ctx.error(ver.describe(), argv=list(AMD_SMI_VERSION))
    facts = AmdFacts(
        present=True,
        amd_smi_version=versions["tool"],
        rocm_version=versions["rocm"],
        driver_version=versions["amdgpu"],
    )
    static = ctx.output(AMD_SMI_STATIC, timeout=AMD_SMI_TIMEOUT_S)
    if static is None:
        return facts
    try:
        gpus, driver = parse_amd_smi_static(static)
    except AmdSmiParseError as exc:
        ctx.error(f"amd-smi static --json: {exc}", argv=list(AMD_SMI_STATIC))
        return facts
    return facts.model_copy(
        update={
            "gpus": gpus,
            "gpu_count": len(gpus),
            "driver_version": facts.driver_version or driver,
        }
    )
