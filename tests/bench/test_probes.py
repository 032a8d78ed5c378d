"""Probes on this machine's CPU (real torch work, small sizes) and, for the
tool-driven parts, on real captured tool output answered by a fake host."""

from __future__ import annotations

from pathlib import Path

import pytest

from clustergrade.bench.nccl_tests import busbw_factor
from clustergrade.bench.probes import ib, lifecycle, storage
from clustergrade.bench.probes.base import ProbeContext, ProbeSkip
from clustergrade.seam import LocalHost
from tests.bench.fakehost import ByProgramHost
from tests.helpers import FIXTURES

BENCH = FIXTURES / "bench"


def cpu_ctx(tmp_path: Path, host: object | None = None) -> ProbeContext:
    return ProbeContext(
        host=host or LocalHost(),
        node="n1",
        workdir=tmp_path,  # type: ignore[arg-type]
        device="cpu",
        quick=True,
    )


def test_gemm_on_cpu(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from clustergrade.bench.probes import gemm

    ctx = cpu_ctx(tmp_path)
    ms = gemm.run(ctx, dtypes=("fp32", "bf16", "tf32"))
    names = {m.name for m in ms}
    assert {"gemm.fp32", "gemm.bf16"} <= names
    assert "gemm.tf32" not in names
    assert any("tf32" in n for n in ctx.notes)
    for m in ms:
        assert m.unit == "TFLOPS" and m.value > 0 and m.device == "cpu"
        assert m.gpu_index is None
        assert {"dtype", "m", "n", "k", "shape", "iters"} <= set(m.params)
    assert {m.params["shape"] for m in ms} == {"square", "llm"}


def test_gemm_tflops_is_the_flop_count_over_the_loop_time() -> None:
    pytest.importorskip("torch")
    from clustergrade.bench.probes.gemm import Shape, best_tflops

    calls = []
    shape = Shape("square", 10, 10, 10)
    ticks = iter([0.0, 2.0])

    def op() -> None:
        calls.append(1)

    import clustergrade.bench.probes.gemm as g

    real = g.time.perf_counter
    g.time.perf_counter = lambda: next(ticks)  # type: ignore[assignment]
    try:
        tflops = best_tflops(op, shape, lambda: None, iters=4, repeats=1)
    finally:
        g.time.perf_counter = real  # type: ignore[assignment]
    assert len(calls) == 4
    assert tflops == pytest.approx(2 * 10**3 * 4 / 2.0 / 1e12)


def test_memory_on_cpu(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from clustergrade.bench.probes import memory

    ctx = cpu_ctx(tmp_path)
    ms = memory.run(ctx)
    assert [m.name for m in ms] == ["memory.device_copy", "memory.triad"]
    assert all(m.unit == "GB/s" and m.value > 0 for m in ms)
    assert any("no GPU" in n for n in ctx.notes)


def test_collectives_over_gloo(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from clustergrade.bench.probes import nccl

    ctx = cpu_ctx(tmp_path)
    ms = nccl.run(ctx)
    ops = {m.params["collective"] for m in ms}
    assert ops == set(nccl.COLLECTIVES)
    for m in ms:
        p = m.params
        assert p["backend"] == "gloo" and p["world_size"] >= 2
        assert p["algbw_gbs"] == pytest.approx(p["size_bytes"] / (p["time_us"] * 1e3))
        assert m.value == pytest.approx(
            p["algbw_gbs"] * busbw_factor(p["collective"], p["world_size"])
        )
        assert p["size_bytes"] % (4 * p["world_size"]) == 0


def test_storage_builtin_without_fio(tmp_path: Path) -> None:
    host = ByProgramHost({"fio": None})
    ctx = cpu_ctx(tmp_path, host)
    ms = storage.run(ctx)
    assert [m.name for m in ms] == [
        "storage.seq_write",
        "storage.seq_read",
        "storage.rand_read_4k",
        "storage.metadata",
    ]
    assert [m.unit for m in ms] == ["MB/s", "MB/s", "IOPS", "ops/s"]
    assert all(m.value > 0 for m in ms)
    assert list(tmp_path.iterdir()) == []  # cleaned up


def test_storage_uses_fio_json_when_fio_is_there(tmp_path: Path) -> None:
    host = ByProgramHost({"fio": (BENCH / "fio_rw_4k_libaio.json").read_text()})
    ms = storage.run(cpu_ctx(tmp_path, host))
    assert host.calls[0][0] == "fio" and "--output-format=json" in host.calls[0]
    got = {m.name: (m.value, m.unit, m.source) for m in ms}
    assert got["storage.fio.sequential_read.read_bw"] == (31.383676, "MB/s", "fio")
    assert got["storage.fio.sequential_read.write_iops"][0] == pytest.approx(39338.066766)


def test_ib_skips_without_perftest(tmp_path: Path) -> None:
    with pytest.raises(ProbeSkip, match="not installed"):
        ib.run(cpu_ctx(tmp_path, ByProgramHost({"ib_write_bw": None})))


def test_ib_skips_without_devices_or_peer(tmp_path: Path) -> None:
    with pytest.raises(ProbeSkip, match="no RDMA devices"):
        ib.run(cpu_ctx(tmp_path, ByProgramHost({"ib_write_bw": ""})))
    host = ByProgramHost({"ib_write_bw": ""}, dirs={"/sys/class/infiniband": ["mlx5_0"]})
    with pytest.raises(ProbeSkip, match="--ib-peer"):
        ib.run(cpu_ctx(tmp_path, host))


def test_ib_measures_each_hca_against_the_peer(tmp_path: Path) -> None:
    text = (BENCH / "ib_write_bw_all_sizes_truncated.txt").read_text()
    host = ByProgramHost(
        {"ib_write_bw": text}, dirs={"/sys/class/infiniband": ["mlx5_0", "mlx5_1"]}
    )
    ctx = cpu_ctx(tmp_path, host)
    ctx.ib_peer = "node1"
    ms = ib.run(ctx)
    assert len(ms) == 2
    assert ms[0].name == "ib.write_bw" and ms[0].unit == "Gb/s"
    assert ms[0].value == pytest.approx(0.17)  # the largest size in the capture
    assert ms[0].params["hca"] == "mlx5_0" and ms[0].params["link_type"] == "IB"
    assert [c[-1] for c in host.calls[1:]] == ["node1", "node1"]
    assert [c[2] for c in host.calls[1:]] == ["mlx5_0", "mlx5_1"]


def test_lifecycle_times_venv_and_wheel_install(tmp_path: Path) -> None:
    host = ByProgramHost({"docker": None, "enroot": None})
    ctx = cpu_ctx(tmp_path, host)
    ms = {m.name: m for m in lifecycle.run(ctx)}
    assert {"lifecycle.venv_create", "lifecycle.pip_install_local_wheel"} <= set(ms)
    assert all(m.unit == "s" and m.value > 0 for m in ms.values())
    assert any("neither docker nor enroot" in n for n in ctx.notes)
    try:
        import torch  # noqa: F401
    except ImportError:
        assert "lifecycle.import_torch" not in ms
    else:
        assert ms["lifecycle.import_torch"].value > 0


def test_container_pull_needs_an_image(tmp_path: Path) -> None:
    host = ByProgramHost({"docker": "Docker version 27.0.3"})
    ctx = cpu_ctx(tmp_path, host)
    assert lifecycle._pull(ctx) is None
    assert any("no image given" in n for n in ctx.notes)
    ctx.pull_image = "busybox:1.36"
    m = lifecycle._pull(ctx)
    assert m is not None and m.params == {"tool": "docker", "image": "busybox:1.36"}
    assert host.calls[-1] == ("docker", "pull", "-q", "busybox:1.36")


def test_built_wheel_is_installable_zip(tmp_path: Path) -> None:
    import zipfile

    whl = lifecycle.build_wheel(tmp_path)
    with zipfile.ZipFile(whl) as zf:
        names = set(zf.namelist())
    assert "cgbenchprobe/__init__.py" in names and "cgbenchprobe-0.1.dist-info/RECORD" in names
