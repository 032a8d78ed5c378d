"""Facts: the software stack on a node.

Three sections.  ``cuda`` (:class:`CudaStackFacts`) is the node's user-facing
toolchain: the CUDA toolkit, NCCL, cuDNN, NVHPC, Lmod and the scheduler client
side (Slurm, MUNGE), because those are what a job links against or talks to on
that node.  ``containers`` holds the container stack and the NVIDIA Container
Toolkit's configuration; ``dcgm`` holds GPU monitoring and health tooling.
Versions are kept raw, as each tool printed them.
"""

from __future__ import annotations

from pydantic import Field

from clustergrade.facts.base import FactModel, Tool


def _absent(name: str) -> Tool:
    return Tool(name=name, installed=False)


class CudaStackFacts(FactModel):
    """CUDA toolkit, communication/DNN libraries, modules and scheduler clients."""

    cuda: Tool = Field(default_factory=lambda: _absent("cuda-toolkit"))
    #: "cuda" version from /usr/local/cuda/version.json (or version.txt), raw.
    cuda_version_file: str | None = None
    nccl: Tool = Field(default_factory=lambda: _absent("nccl"))
    cudnn: Tool = Field(default_factory=lambda: _absent("cudnn"))
    nvhpc: Tool = Field(default_factory=lambda: _absent("nvhpc"))
    lmod: Tool = Field(default_factory=lambda: _absent("lmod"))
    #: Upstream Slurm version from slurmd -V / sinfo -V ("22.05.8").
    slurm: Tool = Field(default_factory=lambda: _absent("slurm"))
    #: The distribution package's version, when packaged ("22.05.8-4+deb12u3").
    slurm_package: str | None = None
    #: Upstream MUNGE version from munged/munge --version ("0.5.15").
    munge: Tool = Field(default_factory=lambda: _absent("munge"))
    #: The distribution package's version ("0.5.15-2+deb12u1"); distros
    #: backport fixes, so this is what a fix is judged by when known.
    munge_package: str | None = None
    #: Everyday tools ClusterMAX expects on a node -> whether found in the
    #: standard bin directories.  Empty when not looked for.
    essential_tools: dict[str, bool] = Field(default_factory=dict)


class CtkConfig(FactModel):
    """What the NVIDIA Container Toolkit's config.toml says (None = key absent)."""

    path: str
    #: nvidia-container-runtime.mode: "auto", "legacy", "cdi", "csv".
    mode: str | None = None
    accept_envvar_unprivileged: bool | None = None
    disable_cuda_compat_lib_hook: bool | None = None


class DirMode(FactModel):
    """One directory's existence and permission bits."""

    path: str
    exists: bool
    mode: int | None = None
    uid: int | None = None


class ContainerFacts(FactModel):
    """Container engines, low-level runtimes, HPC container tools and the CTK."""

    docker: Tool = Field(default_factory=lambda: _absent("docker"))
    dockerd: Tool = Field(default_factory=lambda: _absent("dockerd"))
    containerd: Tool = Field(default_factory=lambda: _absent("containerd"))
    runc: Tool = Field(default_factory=lambda: _absent("runc"))
    crun: Tool = Field(default_factory=lambda: _absent("crun"))
    nvidia_ctk: Tool = Field(default_factory=lambda: _absent("nvidia-ctk"))
    nvidia_container_cli: Tool = Field(default_factory=lambda: _absent("nvidia-container-cli"))
    enroot: Tool = Field(default_factory=lambda: _absent("enroot"))
    pyxis: Tool = Field(default_factory=lambda: _absent("pyxis"))
    apptainer: Tool = Field(default_factory=lambda: _absent("apptainer"))
    singularity: Tool = Field(default_factory=lambda: _absent("singularity"))
    #: None when no CTK config file exists (the CTK then uses its defaults).
    ctk_config: CtkConfig | None = None
    #: CDI spec files found in /etc/cdi and /var/run/cdi.
    cdi_specs: list[str] = Field(default_factory=list)
    #: containerd's state directories (CVE-2024-25621).
    containerd_dirs: list[DirMode] = Field(default_factory=list)


class DcgmFacts(FactModel):
    """GPU monitoring and node health tooling."""

    dcgmi: Tool = Field(default_factory=lambda: _absent("dcgmi"))
    nv_hostengine: Tool = Field(default_factory=lambda: _absent("nv-hostengine"))
    #: Raw "<dcgm>-<exporter>" version as printed ("3.3.5-3.4.0").
    dcgm_exporter: Tool = Field(default_factory=lambda: _absent("dcgm-exporter"))
    nhc: Tool = Field(default_factory=lambda: _absent("nhc"))
