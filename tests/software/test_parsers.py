"""Parsers of the software collectors, on real captures
(tests/fixtures/software/PROVENANCE.md) and on hostile text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clustergrade.collect import software as sw
from tests.software.replay import SW, public


def ci(name: str) -> str:
    return (SW / "ci-vm" / name).read_text()


def test_ci_vm_captures() -> None:
    assert sw.parse_docker(ci("docker--version.txt")) == "28.2.2"
    assert sw.parse_nvcc(ci("nvcc--version.txt")) == "13.0.88"
    assert sw.parse_munge(ci("munge--version.txt")) == "0.5.15"
    assert sw.parse_munge(ci("munged--version.txt")) == "0.5.15"
    assert sw.parse_slurm(ci("slurmd-V.txt")) == "22.05.8"
    assert sw.parse_slurm(ci("sinfo-V.stderr")) is None
    ldc = ci("ldconfig-p.txt")
    assert sw.parse_ldconfig(ldc, "libcudart") == "/usr/local/cuda-13.0/lib/libcudart.so.13"
    assert sw.parse_ldconfig(ldc, "libnccl") is None


@pytest.mark.parametrize(
    ("parser", "fixture", "want"),
    [
        (sw.parse_containerd, "containerd-containerd.io-1.7.27.txt", "1.7.27"),
        (sw.parse_containerd, "containerd-github-v1.7.7.txt", "1.7.7"),
        (sw.parse_runc, "runc-1.0.0-rc91.txt", "1.0.0-rc91+dev"),
        (sw.parse_ctk, "nvidia-ctk-1.12.0.txt", "1.12.0"),
        (sw.parse_nvidia_container_cli, "nvidia-container-cli-V-1.0.7.txt", "1.0.7"),
        (sw.parse_dcgm, "dcgmi-v-3.3.5.txt", "3.3.5"),
        (sw.parse_ctk, "derived-nvidia-ctk-truncated.txt", None),
        (sw.parse_runc, "derived-empty.txt", None),
    ],
)
def test_public_captures(parser: object, fixture: str, want: str | None) -> None:
    text = public(fixture).decode("utf-8", errors="replace")
    assert parser(text) == want  # type: ignore[operator]


def test_invalid_utf8_runc_is_not_a_version() -> None:
    text = public("derived-runc-invalid-utf8.txt").decode("utf-8", errors="replace")
    v = sw.parse_runc(text)
    assert v is None or "\ufffd" not in v


def test_ctk_default_config() -> None:
    cfg = sw.parse_ctk_config(public("ctk-config-default-1.14.toml").decode(), "/x")
    assert cfg.mode == "auto"
    # Commented out in the default file: absent, so the toolkit default applies.
    assert cfg.accept_envvar_unprivileged is None
    assert cfg.disable_cuda_compat_lib_hook is None


def test_ctk_config_truncated_raises_typed_error() -> None:
    text = public("derived-ctk-config-truncated.toml").decode()
    try:
        sw.parse_ctk_config(text, "/x")
    except sw.CtkConfigError:
        pass


def test_headers_and_lib_names() -> None:
    # The defines nccl.h / cudnn_version.h carry (format of NVIDIA's headers).
    hdr = "#define NCCL_MAJOR 2\n#define NCCL_MINOR 21\n#define NCCL_PATCH 5\n"
    assert sw.parse_nccl_header(hdr) == "2.21.5"
    assert sw.parse_nccl_header("#define NCCL_MAJOR 2\n") is None
    names = ("libnccl.so", "libnccl.so.2", "libnccl.so.2.9.9", "libnccl.so.2.21.5")
    assert sw.parse_lib_version("libnccl", names) == "2.21.5"
    assert sw.parse_cuda_version_file('{"cuda": {"version": "12.4.1"}}') == "12.4.1"
    assert sw.parse_cuda_version_file("{not json") is None
    assert sw.parse_dcgm_exporter("3.3.5-3.4.0") == "3.3.5-3.4.0"


PARSERS = [
    sw.parse_nvcc,
    sw.parse_cuda_version_file,
    sw.parse_nccl_header,
    sw.parse_cudnn_header,
    sw.parse_runc,
    sw.parse_crun,
    sw.parse_containerd,
    sw.parse_docker,
    sw.parse_ctk,
    sw.parse_nvidia_container_cli,
    sw.parse_plain_version,
    sw.parse_dcgm,
    sw.parse_dcgm_exporter,
    sw.parse_munge,
    sw.parse_slurm,
    sw.parse_package_version,
    sw.parse_nhc_header,
]


@given(st.text(max_size=400))
def test_parsers_never_raise(text: str) -> None:
    for p in PARSERS:
        out = p(text)
        assert out is None or isinstance(out, str)
    sw.parse_lib_version("libnccl", tuple(text.split()))
    sw.parse_ldconfig(text, "libnccl")
    try:
        sw.parse_ctk_config(text, "/x")
    except sw.CtkConfigError:
        pass


@given(st.binary(max_size=400))
def test_ctk_config_hostile_bytes(data: bytes) -> None:
    try:
        sw.parse_ctk_config(data.decode("utf-8", errors="replace"), "/x")
    except sw.CtkConfigError:
        pass
