"""Check cases for the software stack, from the CI VM's real capture
(tests/fixtures/software/ci-vm-software.tar.gz) with answers replaced by public
captures (tests/fixtures/software/PROVENANCE.md).  A case that changes a value
says so in its origin."""

from __future__ import annotations

from typing import Any

from clustergrade.facts.base import Tool
from clustergrade.facts.node import NodeFacts
from clustergrade.results import Status
from tests.gpu.replay import nothing_nvidia
from tests.helpers import Case
from tests.software.replay import CI_VM, ci_vm, dir_info, on_gpu_node, public

CTK_CFG = "/etc/nvidia-container-runtime/config.toml"
DEFAULT_CFG = public("ctk-config-default-1.14.toml")
CTK_1_12 = {("nvidia-ctk", "--version"): public("nvidia-ctk-1.12.0.txt")}
CTK_SRC = "nvidia-ctk 1.12.0 (NVIDIA/nvidia-container-toolkit#50)"
CFG_SRC = "CTK default config (NVIDIA/nvidia-container-toolkit#110)"
GPU = "on the A100 capture's node"
KEY = b"#accept-nvidia-visible-devices-envvar-when-unprivileged = true"
KEY_ON = KEY.lstrip(b"#")
KEY_OFF = KEY_ON.replace(b"true", b"false")


def _ctk(cfg: bytes | None = DEFAULT_CFG) -> NodeFacts:
    return ci_vm(commands=CTK_1_12, files={CTK_CFG: cfg} if cfg is not None else None)


def _section(facts: NodeFacts, name: str, **tools: Any) -> NodeFacts:
    sec = getattr(facts, name)
    return facts.model_copy(update={name: sec.model_copy(update=tools)})


def _gpu(**kw: Any) -> NodeFacts:
    return on_gpu_node(ci_vm(**kw))


def _no_gpu() -> NodeFacts:
    sw = ci_vm()
    return sw.model_copy(update={"nvidia": nothing_nvidia().nvidia})


def _containerd(mode: int) -> NodeFacts:
    return ci_vm(
        commands={("containerd", "--version"): public("containerd-containerd.io-1.7.27.txt")},
        stats={"/var/lib/containerd": dir_info("/var/lib/containerd", mode)},
    )


def _tool(section: str, field: str, name: str, version: str, src: str = "changed") -> Any:
    def build() -> NodeFacts:
        t = Tool(name=name, installed=True, version=version, source=src)
        return _section(ci_vm(), section, **{field: t})

    return build


def _replaced(**commands: bytes) -> Any:
    return lambda: ci_vm(commands={tuple(k.split("|")): v for k, v in commands.items()})


CASES: list[Case] = [
    # -- CTK envvar ---------------------------------------------------------
    Case(
        "containers.ctk-unprivileged-envvar",
        Status.WARN,
        _ctk,
        f"{CI_VM} + {CTK_SRC} + {CFG_SRC} (key commented out: default true)",
    ),
    Case(
        "containers.ctk-unprivileged-envvar",
        Status.FAIL,
        lambda: _ctk(DEFAULT_CFG.replace(KEY, KEY_ON)),
        f"{CI_VM} + {CTK_SRC} + {CFG_SRC} with the key uncommented (= true)",
    ),
    Case(
        "containers.ctk-unprivileged-envvar",
        Status.PASS,
        lambda: _ctk(DEFAULT_CFG.replace(KEY, KEY_OFF)),
        f"{CI_VM} + {CTK_SRC} + {CFG_SRC} with the key changed to false",
    ),
    Case(
        "containers.ctk-unprivileged-envvar",
        Status.SKIP,
        ci_vm,
        f"{CI_VM} (no CTK installed)",
    ),
    # -- CTK compat hook ----------------------------------------------------
    Case(
        "containers.ctk-cuda-compat-hook",
        Status.WARN,
        _ctk,
        f"{CI_VM} + {CTK_SRC} + {CFG_SRC} (hook not disabled)",
    ),
    Case(
        "containers.ctk-cuda-compat-hook",
        Status.PASS,
        lambda: _ctk(DEFAULT_CFG + b"\n[features]\ndisable-cuda-compat-lib-hook = true\n"),
        f"{CI_VM} + {CTK_SRC} + {CFG_SRC} with [features] disable-cuda-compat-lib-hook = true added",
    ),
    Case(
        "containers.ctk-cuda-compat-hook",
        Status.PASS,
        lambda: _section(
            _ctk(None),
            "containers",
            nvidia_ctk=Tool(name="nvidia-ctk", installed=True, version="1.17.8", source="changed"),
        ),
        f"{CI_VM} + {CTK_SRC} with the version changed to 1.17.8",
    ),
    # -- containerd dirs ----------------------------------------------------
    Case(
        "containers.containerd-dir-perms",
        Status.FAIL,
        lambda: _containerd(0o711),
        f"{CI_VM} + containerd 1.7.27 (ssst0n3/docker_archive) + /var/lib/containerd mode set "
        "to 0711 (the affected default per GHSA-pwhc-rpq9-4c8w)",
        subject="/var/lib/containerd",
    ),
    Case(
        "containers.containerd-dir-perms",
        Status.PASS,
        lambda: _containerd(0o700),
        f"{CI_VM} + containerd 1.7.27 + /var/lib/containerd mode set to 0700",
    ),
    # -- presence on GPU nodes ----------------------------------------------
    Case("software.nccl-present", Status.WARN, _gpu, f"{CI_VM} {GPU} (no NCCL)"),
    Case(
        "software.nccl-present",
        Status.PASS,
        lambda: _section(
            _gpu(),
            "cuda",
            nccl=Tool(name="nccl", installed=True, version="2.21.5", source="changed"),
        ),
        f"{CI_VM} {GPU}, nccl changed to installed 2.21.5",
    ),
    Case("software.nccl-present", Status.SKIP, _no_gpu, f"{CI_VM} + no NVIDIA driver"),
    Case("software.cuda-toolkit-present", Status.PASS, _gpu, f"{CI_VM} {GPU} (nvcc 13.0.88)"),
    Case(
        "software.cuda-toolkit-present",
        Status.WARN,
        lambda: _section(_gpu(), "cuda", cuda=Tool(name="cuda-toolkit", installed=False)),
        f"{CI_VM} {GPU}, cuda-toolkit changed to not installed",
    ),
    Case("software.cuda-toolkit-present", Status.SKIP, _no_gpu, f"{CI_VM} + no NVIDIA driver"),
    Case("containers.runtime-present", Status.PASS, _gpu, f"{CI_VM} {GPU} (docker client)"),
    Case(
        "containers.runtime-present",
        Status.WARN,
        lambda: _section(_gpu(), "containers", docker=Tool(name="docker", installed=False)),
        f"{CI_VM} {GPU}, docker changed to not installed",
    ),
    Case("monitoring.dcgm-present", Status.WARN, _gpu, f"{CI_VM} {GPU} (no DCGM)"),
    Case(
        "monitoring.dcgm-present",
        Status.PASS,
        lambda: _gpu(commands={("dcgmi", "--version"): public("dcgmi-v-3.3.5.txt")}),
        f"{CI_VM} {GPU} + dcgmi -v 3.3.5 output (NVIDIA/dcgm-exporter#319) as dcgmi's answer",
    ),
    Case("monitoring.dcgm-exporter-present", Status.WARN, _gpu, f"{CI_VM} {GPU} (none)"),
    Case(
        "monitoring.dcgm-exporter-present",
        Status.PASS,
        lambda: on_gpu_node(_tool("dcgm", "dcgm_exporter", "dcgm-exporter", "3.3.5-3.4.0")()),
        f"{CI_VM} {GPU}, dcgm-exporter changed to installed 3.3.5-3.4.0 (a release tag)",
    ),
    Case("health.nhc-present", Status.WARN, _gpu, f"{CI_VM} {GPU} (no NHC)"),
    Case(
        "health.nhc-present",
        Status.PASS,
        lambda: _section(
            _gpu(), "dcgm", nhc=Tool(name="nhc", installed=True, path="/usr/sbin/nhc")
        ),
        f"{CI_VM} {GPU}, nhc changed to installed at /usr/sbin/nhc",
    ),
    # -- version rules (observers in checks/software.py) --------------------
    Case("version.cuda-toolkit", Status.WARN, ci_vm, f"{CI_VM} (nvcc 13.0.88 < policy 13.1)"),
    Case(
        "version.cuda-toolkit",
        Status.PASS,
        _tool("cuda", "cuda", "cuda-toolkit", "13.1.80"),
        f"{CI_VM}, nvcc version changed to 13.1.80",
    ),
    Case(
        "version.munge",
        Status.PASS,
        ci_vm,
        f"{CI_VM} (munge package 0.5.15-2+deb12u1: Debian's security backport of CVE-2026-25506)",
    ),
    Case(
        "version.munge",
        Status.FAIL,
        lambda: _section(ci_vm(), "cuda", munge_package="0.5.15-2"),
        f"{CI_VM}, munge package set to 0.5.15-2 (the Debian release before the security upload)",
    ),
    Case(
        "version.munge",
        Status.PASS,
        lambda: _section(ci_vm(), "cuda", munge_package="0.5.15-4ubuntu0.1"),
        f"{CI_VM}, munge package changed to Ubuntu's backport 0.5.15-4ubuntu0.1",
    ),
    Case("version.slurm", Status.FAIL, ci_vm, f"{CI_VM} (slurmd 22.05.8, unsupported line)"),
    Case(
        "version.slurm",
        Status.PASS,
        _tool("cuda", "slurm", "slurm", "26.05.4"),
        f"{CI_VM}, slurm version changed to 26.05.4",
    ),
    Case("version.docker", Status.WARN, ci_vm, f"{CI_VM} (docker client 28.2.2)"),
    Case(
        "version.docker",
        Status.PASS,
        _tool("containers", "docker", "docker", "29.7.0"),
        f"{CI_VM}, docker version changed to 29.7.0",
    ),
    Case(
        "version.containerd",
        Status.FAIL,
        _replaced(**{"containerd|--version": public("containerd-containerd.io-1.7.27.txt")}),
        f"{CI_VM} + containerd 1.7.27 (ssst0n3/docker_archive)",
    ),
    Case(
        "version.containerd",
        Status.PASS,
        _tool("containers", "containerd", "containerd", "2.2.2"),
        f"{CI_VM}, containerd changed to installed 2.2.2",
    ),
    Case(
        "version.runc",
        Status.FAIL,
        _replaced(**{"runc|--version": public("runc-1.0.0-rc91.txt")}),
        f"{CI_VM} + runc 1.0.0-rc91+dev (opencontainers/runc#2541)",
    ),
    Case(
        "version.runc",
        Status.PASS,
        _tool("containers", "runc", "runc", "1.4.3"),
        f"{CI_VM}, runc changed to installed 1.4.3",
    ),
    Case(
        "version.nvidia-container-toolkit",
        Status.FAIL,
        _ctk,
        f"{CI_VM} + {CTK_SRC}",
    ),
    Case(
        "version.nvidia-container-toolkit",
        Status.PASS,
        _tool("containers", "nvidia_ctk", "nvidia-ctk", "1.19.1"),
        f"{CI_VM}, nvidia-ctk changed to installed 1.19.1",
    ),
    Case(
        "version.dcgm",
        Status.FAIL,
        _replaced(**{"dcgmi|--version": public("dcgmi-v-3.3.5.txt")}),
        f"{CI_VM} + dcgmi -v 3.3.5 output (NVIDIA/dcgm-exporter#319)",
    ),
    Case(
        "version.dcgm",
        Status.PASS,
        _tool("dcgm", "dcgmi", "dcgmi", "4.5.3"),
        f"{CI_VM}, dcgmi changed to installed 4.5.3",
    ),
    Case(
        "version.dcgm-exporter",
        Status.FAIL,
        _tool("dcgm", "dcgm_exporter", "dcgm-exporter", "3.3.5-3.4.0"),
        f"{CI_VM}, dcgm-exporter changed to installed 3.3.5-3.4.0 (release tag, #273)",
    ),
    Case(
        "version.dcgm-exporter",
        Status.PASS,
        _tool("dcgm", "dcgm_exporter", "dcgm-exporter", "4.8.2-4.5.3"),
        f"{CI_VM}, dcgm-exporter changed to installed 4.8.2-4.5.3",
    ),
]

# What the CI VM has, as `ls /usr/bin /bin /usr/local/bin` showed on 2026-12-02:
# no nano.
_CI_TOOLS = {"python3": True, "git": True, "curl": True, "wget": True, "vim": True, "nano": False}

CASES += [
    Case(
        "software.essential-tools",
        Status.WARN,
        lambda: _section(ci_vm(), "cuda", essential_tools=_CI_TOOLS),
        f"{CI_VM}; tool presence as found on the CI VM (nano missing)",
    ),
    Case(
        "software.essential-tools",
        Status.PASS,
        lambda: _section(ci_vm(), "cuda", essential_tools={**_CI_TOOLS, "nano": True}),
        f"{CI_VM}; tool presence as on the CI VM with nano installed",
    ),
]
