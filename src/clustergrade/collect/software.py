"""Collectors: the software stack (sections ``cuda``, ``containers``, ``dcgm``).

Read-only: every version comes from a ``--version``-style command, a header,
a library file name or a package database, through ``ctx`` only.  Parsers are
pure and return None on anything they do not recognise; only the CTK config
parser raises, with :class:`CtkConfigError`, which the collector records.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from typing import Any

from clustergrade.collect.base import CollectContext, collector
from clustergrade.facts.base import Tool
from clustergrade.facts.software import (
    ContainerFacts,
    CtkConfig,
    CudaStackFacts,
    DcgmFacts,
    DirMode,
)

# --------------------------------------------------------------------------
# Pure parsers
# --------------------------------------------------------------------------

_NUM = r"\d+(?:\.\d+)+"
_TOKEN = r"v?(\d+(?:\.\d+)+(?:[-+~][0-9A-Za-z.+~-]*)?)"


def _search(pattern: str, text: str, flags: int = 0) -> str | None:
    m = re.search(pattern, text, flags)
    return m.group(1) if m else None


def parse_nvcc(text: str) -> str | None:
    """'Cuda compilation tools, release 12.4, V12.4.131' -> '12.4.131'."""
    m = re.search(r"release (\d+\.\d+), V(" + _NUM + ")", text)
    if m:
        return m.group(2)
    return _search(r"release (\d+\.\d+)", text)


def parse_cuda_version_file(text: str) -> str | None:
    """version.json's cuda.version, or version.txt's 'CUDA Version 11.0.228'."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            return None
        cuda = data.get("cuda") if isinstance(data, dict) else None
        ver = cuda.get("version") if isinstance(cuda, dict) else None
        return ver if isinstance(ver, str) and re.fullmatch(_NUM, ver) else None
    return _search(r"CUDA Version (" + _NUM + ")", text)


def _defines(text: str, names: tuple[str, str, str]) -> str | None:
    parts = []
    for name in names:
        v = _search(r"^\s*#\s*define\s+" + name + r"\s+(\d+)\b", text, re.M)
        if v is None:
            return None
        parts.append(str(int(v)))
    return ".".join(parts)


def parse_nccl_header(text: str) -> str | None:
    """nccl.h's NCCL_MAJOR/NCCL_MINOR/NCCL_PATCH defines -> '2.21.5'."""
    return _defines(text, ("NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH"))


def parse_cudnn_header(text: str) -> str | None:
    """cudnn_version.h's CUDNN_MAJOR/MINOR/PATCHLEVEL defines -> '9.1.0'."""
    return _defines(text, ("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"))


def parse_lib_version(lib: str, names: tuple[str, ...]) -> str | None:
    """The highest fully versioned 'libX.so.A.B.C' among directory entries."""
    pat = re.compile(r"^" + re.escape(lib) + r"\.so\.(" + _NUM + r")$")
    found = [m.group(1) for n in names if (m := pat.match(n))]
    if not found:
        return None
    return max(found, key=lambda v: tuple(int(x) for x in v.split(".")))


def parse_ldconfig(text: str, lib: str) -> str | None:
    """The path ldconfig -p lists for 'libX.so.N', or None."""
    pat = r"^\s*" + re.escape(lib) + r"\.so\.\d+\s+\([^)]*\)\s+=>\s+(\S+)"
    return _search(pat, text, re.M)


def parse_runc(text: str) -> str | None:
    """'runc version 1.2.5' -> '1.2.5'."""
    return _search(r"\brunc version " + _TOKEN, text)


def parse_crun(text: str) -> str | None:
    return _search(r"\bcrun version " + _TOKEN, text)


def parse_containerd(text: str) -> str | None:
    """'containerd containerd.io 1.7.27 05044ec...' / 'containerd github.com/
    containerd/containerd v1.7.7 8c08...' -> '1.7.27' / '1.7.7'."""
    return _search(r"^\s*containerd\s+\S+\s+" + _TOKEN, text, re.M)


def parse_docker(text: str) -> str | None:
    """'Docker version 28.2.2, build e6534b4' -> '28.2.2'."""
    return _search(r"\bDocker version v?(\d[^,\s]*)", text)


def parse_ctk(text: str) -> str | None:
    """'NVIDIA Container Toolkit CLI version 1.17.8' -> '1.17.8'."""
    return _search(r"NVIDIA Container (?:Toolkit CLI|Runtime(?: Hook)?) version " + _TOKEN, text)


def parse_nvidia_container_cli(text: str) -> str | None:
    """'cli-version: 1.17.8' (newer) or 'version: 1.0.7' (older) -> version."""
    return _search(r"^\s*(?:cli-)?version:\s*" + _TOKEN, text, re.M)


def parse_plain_version(text: str) -> str | None:
    """The first version-looking token ('enroot version' prints a bare '3.4.1';
    'apptainer version 1.3.4')."""
    return _search(r"(?:^|\s)" + _TOKEN + r"(?:\s|$)", text)


def parse_dcgm(text: str) -> str | None:
    """'dcgmi  version: 3.3.9' (dcgmi --version) or 'Version : 4.7.0'
    (dcgmi -v, nv-hostengine --version) -> version."""
    return _search(r"\bversion\s*:\s*" + _TOKEN, text, re.I)


def parse_dcgm_exporter(text: str) -> str | None:
    """The '<dcgm>-<exporter>' pair ('3.3.5-3.4.0'), else a plain version."""
    pair = _search(r"\b(\d+\.\d+\.\d+-\d+\.\d+\.\d+)\b", text)
    return pair or parse_plain_version(text)


def parse_munge(text: str) -> str | None:
    """'munge-0.5.15 (2022-06-22)' -> '0.5.15'."""
    return _search(r"\bmunge-(" + _NUM + r")\b", text)


def parse_slurm(text: str) -> str | None:
    """'slurm-wlm 22.05.8' / 'slurm 23.11.1' -> upstream version."""
    return _search(r"^\s*slurm(?:-wlm)?\s+(\d+\.\d+(?:\.\d+)?(?:-?(?:rc|pre)\d+)?)\b", text, re.M)


def parse_package_version(text: str) -> str | None:
    """The first line of a dpkg-query/rpm --qf answer, when it looks like one."""
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    return line if re.fullmatch(r"\d[0-9A-Za-z.+~:_-]*", line) else None


def parse_nhc_header(text: str) -> str | None:
    """A 'NHC_VERSION="1.4.3"' / 'VERSION="1.4.3"' assignment in the script."""
    return _search(r'^\s*(?:NHC_)?VERSION="?(' + _NUM + ")", text[:65536], re.M)


class CtkConfigError(ValueError):
    """The CTK config.toml could not be parsed."""


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def parse_ctk_config(text: str, path: str) -> CtkConfig:
    """The settings clustergrade judges from a CTK config.toml."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise CtkConfigError(f"{path}: not valid TOML: {exc}") from exc
    runtime = data.get("nvidia-container-runtime")
    features = data.get("features")
    mode = runtime.get("mode") if isinstance(runtime, dict) else None
    hook = features.get("disable-cuda-compat-lib-hook") if isinstance(features, dict) else None
    return CtkConfig(
        path=path,
        mode=mode if isinstance(mode, str) else None,
        accept_envvar_unprivileged=_bool(
            data.get("accept-nvidia-visible-devices-envvar-when-unprivileged")
        ),
        disable_cuda_compat_lib_hook=_bool(hook),
    )


# --------------------------------------------------------------------------
# Collectors
# --------------------------------------------------------------------------

LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/cuda/lib64")
CTK_CONFIGS = (
    "/etc/nvidia-container-runtime/config.toml",
    "/etc/nvidia-container-toolkit/config.toml",
)
CDI_DIRS = ("/etc/cdi", "/var/run/cdi")
#: The directories GHSA-pwhc-rpq9-4c8w (CVE-2024-25621) says were created too open.
CONTAINERD_DIRS = (
    "/var/lib/containerd",
    "/run/containerd/io.containerd.grpc.v1.cri",
    "/run/containerd/io.containerd.sandbox.controller.v1.shim",
)
PYXIS_PATHS = (
    "/usr/lib/x86_64-linux-gnu/slurm/spank_pyxis.so",
    "/usr/lib64/slurm/spank_pyxis.so",
    "/usr/local/lib/slurm/spank_pyxis.so",
)
PLUGSTACK_DIR = "/etc/slurm/plugstack.conf.d"
LMOD_DIRS = ("/usr/share/lmod", "/opt/apps/lmod")
NVHPC_DIR = "/opt/nvidia/hpc_sdk"


def _first_tool(
    ctx: CollectContext,
    name: str,
    argvs: tuple[tuple[str, ...], ...],
    parse: Callable[[str], str | None],
) -> Tool:
    """The first of several commands that is installed and gives a version."""
    best: Tool | None = None
    for argv in argvs:
        t = ctx.tool_version(name, argv, parse)
        if t.installed and t.version is not None:
            return t
        best = best or (t if t.installed else None)
    return best or Tool(name=name, installed=False)


def _package(ctx: CollectContext, pkg: str) -> str | None:
    """The installed distribution package's version (dpkg, then rpm)."""
    for argv in (
        ("dpkg-query", "-W", "-f=${Version}", pkg),
        ("rpm", "-q", "--qf", "%{VERSION}-%{RELEASE}", pkg),
    ):
        res = ctx.run(argv)
        if res.not_found:
            continue
        if res.ok:
            return parse_package_version(res.text)
        # Not installed under this package manager: an answer, not an error.
        if res.ran:
            continue
        ctx.error(res.describe(), argv=list(argv))
    return None


def _exists(ctx: CollectContext, path: str) -> bool:
    info = ctx.stat(path)
    if info.error:
        ctx.error(f"cannot stat {path}: {info.error}", path=path)
    return info.exists


def _cuda_tool(ctx: CollectContext) -> tuple[Tool, str | None]:
    t = _first_tool(
        ctx,
        "cuda-toolkit",
        (("nvcc", "--version"), ("/usr/local/cuda/bin/nvcc", "--version")),
        parse_nvcc,
    )
    file_version = None
    for path in ("/usr/local/cuda/version.json", "/usr/local/cuda/version.txt"):
        text = ctx.read_text(path)
        if text is not None:
            file_version = parse_cuda_version_file(text)
            if file_version is None:
                ctx.error(f"could not parse a CUDA version from {path}", path=path)
            break
    if not t.installed and file_version is not None:
        t = Tool(name="cuda-toolkit", installed=True, version=file_version, source=path)
    return t, file_version


def _library(
    ctx: CollectContext,
    name: str,
    lib: str,
    pkg: str,
    header: str,
    parse_header: Callable[[str], str | None],
    ldconfig: str | None,
) -> Tool:
    version = _package(ctx, pkg)
    if version is not None:
        return Tool(name=name, installed=True, version=version, source=f"package {pkg}")
    text = ctx.read_text(header)
    if text is not None and (hv := parse_header(text)) is not None:
        return Tool(name=name, installed=True, version=hv, path=header, source=header)
    for d in LIB_DIRS:
        v = parse_lib_version(lib, ctx.entries(d))
        if v is not None:
            return Tool(name=name, installed=True, version=v, path=f"{d}/{lib}.so.{v}", source=d)
    path = parse_ldconfig(ldconfig, lib) if ldconfig else None
    if path is not None:
        return Tool(name=name, installed=True, path=path, source="ldconfig -p")
    return Tool(name=name, installed=False)


@collector("cuda")
def collect_cuda(ctx: CollectContext) -> CudaStackFacts:
    cuda, file_version = _cuda_tool(ctx)
    ldconfig = ctx.output(["ldconfig", "-p"])
    nccl = _library(
        ctx, "nccl", "libnccl", "libnccl2", "/usr/include/nccl.h", parse_nccl_header, ldconfig
    )
    cudnn = _library(
        ctx,
        "cudnn",
        "libcudnn",
        "libcudnn9",
        "/usr/include/cudnn_version.h",
        parse_cudnn_header,
        ldconfig,
    )
    nvhpc = Tool(name="nvhpc", installed=_exists(ctx, NVHPC_DIR), path=NVHPC_DIR)
    lmod_dir = next((d for d in LMOD_DIRS if _exists(ctx, d)), None)
    lmod = Tool(name="lmod", installed=lmod_dir is not None, path=lmod_dir)
    # slurmd -V answers without a config; sinfo/srun need one (they fail on a
    # node that cannot reach slurmctld), so they come second.
    slurm = _first_tool(
        ctx, "slurm", (("slurmd", "-V"), ("sinfo", "-V"), ("srun", "--version")), parse_slurm
    )
    munge = _first_tool(
        ctx, "munge", (("munged", "--version"), ("munge", "--version")), parse_munge
    )
    return CudaStackFacts(
        cuda=cuda,
        cuda_version_file=file_version,
        nccl=nccl,
        cudnn=cudnn,
        nvhpc=nvhpc,
        lmod=lmod,
        slurm=slurm,
        slurm_package=_package(ctx, "slurmd") if slurm.installed else None,
        munge=munge,
        munge_package=_package(ctx, "munge") if munge.installed else None,
        essential_tools=_essential_tools(ctx),
    )


#: ClusterMAX's Slurm expectations name python, git, curl, wget, vim and nano
#: (and a package manager) as installed on the nodes users log in to.
ESSENTIAL_TOOLS = ("python3", "git", "curl", "wget", "vim", "nano")
_BIN_DIRS = ("/usr/bin", "/bin", "/usr/local/bin")


def _essential_tools(ctx: CollectContext) -> dict[str, bool]:
    found: dict[str, bool] = {}
    for tool in ESSENTIAL_TOOLS:
        infos = [ctx.stat(f"{d}/{tool}") for d in _BIN_DIRS]
        if any(i.exists for i in infos):
            found[tool] = True
        elif all(i.error is None for i in infos):
            found[tool] = False
        # else: could not tell (e.g. a capture that did not record it): left out
    return found


def _ctk_config(ctx: CollectContext) -> CtkConfig | None:
    for path in CTK_CONFIGS:
        text = ctx.read_text(path)
        if text is None:
            continue
        try:
            return parse_ctk_config(text, path)
        except CtkConfigError as exc:
            ctx.error(str(exc), path=path)
            return None
    return None


def _dir_mode(ctx: CollectContext, path: str) -> DirMode:
    info = ctx.stat(path)
    if info.error:
        ctx.error(f"cannot stat {path}: {info.error}", path=path)
    return DirMode(path=path, exists=info.exists, mode=info.perms, uid=info.uid)


def _pyxis(ctx: CollectContext) -> Tool:
    for path in PYXIS_PATHS:
        if _exists(ctx, path):
            return Tool(name="pyxis", installed=True, path=path, source="spank plugin")
    for entry in ctx.entries(PLUGSTACK_DIR):
        if "pyxis" in entry:
            path = f"{PLUGSTACK_DIR}/{entry}"
            return Tool(name="pyxis", installed=True, path=path, source="plugstack.conf.d")
    return Tool(name="pyxis", installed=False)


@collector("containers")
def collect_containers(ctx: CollectContext) -> ContainerFacts:
    tv = ctx.tool_version
    cdi = [f"{d}/{e}" for d in CDI_DIRS for e in ctx.entries(d) if e.endswith((".yaml", ".json"))]
    return ContainerFacts(
        docker=tv("docker", ["docker", "--version"], parse_docker),
        dockerd=tv("dockerd", ["dockerd", "--version"], parse_docker),
        containerd=tv("containerd", ["containerd", "--version"], parse_containerd),
        runc=tv("runc", ["runc", "--version"], parse_runc),
        crun=tv("crun", ["crun", "--version"], parse_crun),
        nvidia_ctk=tv("nvidia-ctk", ["nvidia-ctk", "--version"], parse_ctk),
        nvidia_container_cli=tv(
            "nvidia-container-cli",
            ["nvidia-container-cli", "--version"],
            parse_nvidia_container_cli,
        ),
        enroot=tv("enroot", ["enroot", "version"], parse_plain_version),
        pyxis=_pyxis(ctx),
        apptainer=tv("apptainer", ["apptainer", "--version"], parse_plain_version),
        singularity=tv("singularity", ["singularity", "--version"], parse_plain_version),
        ctk_config=_ctk_config(ctx),
        cdi_specs=cdi,
        containerd_dirs=[_dir_mode(ctx, p) for p in CONTAINERD_DIRS],
    )


def _nhc(ctx: CollectContext) -> Tool:
    path = "/usr/sbin/nhc"
    if not _exists(ctx, path):
        return Tool(name="nhc", installed=False)
    text = ctx.read_text(path)
    version = parse_nhc_header(text) if text is not None else None
    return Tool(name="nhc", installed=True, version=version, path=path, source=path)


@collector("dcgm")
def collect_dcgm(ctx: CollectContext) -> DcgmFacts:
    return DcgmFacts(
        dcgmi=ctx.tool_version("dcgmi", ["dcgmi", "--version"], parse_dcgm),
        nv_hostengine=ctx.tool_version("nv-hostengine", ["nv-hostengine", "--version"], parse_dcgm),
        dcgm_exporter=ctx.tool_version(
            "dcgm-exporter", ["dcgm-exporter", "--version"], parse_dcgm_exporter
        ),
        nhc=_nhc(ctx),
    )
