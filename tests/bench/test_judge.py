"""Bench judgements: against the KB's per-model references and the node's best GPU.

GPU measurements here are built by hand (no GPU on CI). The H100 starting
figure, 730 TFLOPS bf16 at 8192^3, is the huggingface/gpu-fryer README's; the
other values are that figure scaled, as each test says.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from clustergrade.bench.judge import CHECKS, judge, to_results
from clustergrade.bench.model import BenchRun, Measurement, ProbeOutcome
from clustergrade.bench.nccl_tests import parse_nccl_tests
from clustergrade.bench.probes.base import ProbeContext
from clustergrade.bench.probes.nccl import from_nccl_tests
from clustergrade.kb.loader import load
from clustergrade.results import Status
from clustergrade.seam import ReplayHost
from tests.helpers import FIXTURES

H100 = "NVIDIA H100 80GB HBM3"


def gemm(idx: int, tflops: float, model: str = H100) -> Measurement:
    return Measurement(
        probe="gemm",
        name="gemm.bf16",
        value=tflops,
        unit="TFLOPS",
        node="n1",
        device="cuda",
        gpu_index=idx,
        gpu_model=model,
        driver="550.90.07",
        params={"dtype": "bf16", "m": 8192, "n": 8192, "k": 8192},
    )


def triad(idx: int, gbs: float, model: str = H100) -> Measurement:
    return Measurement(
        probe="memory",
        name="memory.triad",
        value=gbs,
        unit="GB/s",
        node="n1",
        device="cuda",
        gpu_index=idx,
        gpu_model=model,
        params={"size_bytes": 1 << 30},
    )


def run_of(*ms: Measurement, probes: tuple[str, ...] = ("gemm", "memory", "nccl")) -> BenchRun:
    now = datetime.now(UTC)
    outs = [
        ProbeOutcome(probe=p, status="ran", measurements=[m for m in ms if m.probe == p])
        for p in probes
    ]
    return BenchRun(
        run_id="r1", node="n1", started_at=now, finished_at=now, device="cuda", probes=outs
    )


def by_check(bench: BenchRun, check_id: str) -> list[tuple[str | None, Status]]:
    return [(f.subject, f.status) for cid, f in judge(bench, load()) if cid == check_id]


def test_gemm_pass_warn_fail_against_the_achieved_reference() -> None:
    # H100 achieved bf16 reference in gpus.yaml: 794.5 TFLOPS.
    bench = run_of(gemm(0, 730.0), gemm(1, 730.0 * 0.95), gemm(2, 730.0 * 0.85))
    assert by_check(bench, "bench.gemm.bf16_reference") == [
        ("GPU 0", Status.PASS),  # 91.9%
        ("GPU 1", Status.WARN),  # 87.3%
        ("GPU 2", Status.FAIL),  # 78.1%
    ]


def test_the_best_shape_counts() -> None:
    bench = run_of(gemm(0, 500.0), gemm(0, 730.0))
    (f,) = [f for cid, f in judge(bench, load()) if cid == "bench.gemm.bf16_reference"]
    assert f.status is Status.PASS and f.observed == 730.0 and f.expected == 794.5


def test_outlier_more_than_ten_percent_below_the_best_gpu() -> None:
    values = [730.0] * 7 + [730.0 * 0.88]
    bench = run_of(*(gemm(i, v) for i, v in enumerate(values)))
    got = by_check(bench, "bench.gemm.node_outlier")
    assert got[:7] == [(f"GPU {i}", Status.PASS) for i in range(7)]
    assert got[7] == ("GPU 7", Status.FAIL)


def test_within_ten_percent_is_not_an_outlier() -> None:
    bench = run_of(gemm(0, 730.0), gemm(1, 730.0 * 0.95))
    assert {s for _, s in by_check(bench, "bench.gemm.node_outlier")} == {Status.PASS}


def test_one_gpu_has_no_sibling() -> None:
    assert by_check(run_of(gemm(0, 730.0)), "bench.gemm.node_outlier") == [(None, Status.SKIP)]


def test_unknown_model_skips_the_spec_judgement() -> None:
    bench = run_of(gemm(0, 50.0, model="NVIDIA GeForce GTX 1080"))
    assert by_check(bench, "bench.gemm.bf16_reference") == [("GPU 0", Status.SKIP)]


def test_cpu_runs_skip_spec_judgements_but_keep_measurements() -> None:
    cpu = Measurement(
        probe="gemm",
        name="gemm.bf16",
        value=0.8,
        unit="TFLOPS",
        node="n1",
        device="cpu",
        params={"dtype": "bf16"},
    )
    bench = run_of(cpu)
    for cid in ("bench.gemm.bf16_reference", "bench.gemm.node_outlier"):
        ((_, status),) = by_check(bench, cid)
        assert status is Status.SKIP
    assert bench.measurements("gemm") == [cpu]


@pytest.mark.parametrize(
    ("gbs", "status"),
    [
        (2970.0, Status.PASS),  # the Azure BabelStream H100 triad figure
        (2700.0, Status.WARN),  # 80.6% of the 3350 spec, under 95% of the 2900 reference
        (2600.0, Status.FAIL),
    ],  # 77.6% of spec
)
def test_hbm_triad_against_spec_and_measured_reference(gbs: float, status: Status) -> None:
    # H100 in gpus.yaml: spec 3.35 TB/s, measured reference 2.90 TB/s.
    assert by_check(run_of(triad(0, gbs)), "bench.memory.hbm_spec") == [("GPU 0", status)]


def test_hbm_outlier() -> None:
    bench = run_of(triad(0, 2970.0), triad(1, 2500.0))
    assert by_check(bench, "bench.memory.node_outlier") == [
        ("GPU 0", Status.PASS),
        ("GPU 1", Status.FAIL),
    ]


def _nccl_tests_run(text: str) -> BenchRun:
    ctx = ProbeContext(host=ReplayHost.from_mapping(), node="n1", workdir=Path("."))
    ms = from_nccl_tests(ctx, parse_nccl_tests(text), "all_reduce")
    return run_of(*ms, probes=("nccl",))


def test_nccl_tests_rows_without_wrong_results_pass() -> None:
    text = (FIXTURES / "bench" / "nccl_all_reduce_ring_8xh100.out").read_text()
    assert by_check(_nccl_tests_run(text), "bench.nccl.data_errors") == [(None, Status.PASS)]


def test_nccl_tests_wrong_results_fail() -> None:
    # Derived: the real capture with the 1 GiB row's out-of-place #wrong set to 3.
    text = (FIXTURES / "bench" / "nccl_all_reduce_ring_8xh100.out").read_text()
    text = text.replace("205.75  360.07       0", "205.75  360.07       3")
    assert by_check(_nccl_tests_run(text), "bench.nccl.data_errors") == [(None, Status.FAIL)]


def test_probe_outcomes_and_results_carry_check_metadata() -> None:
    now = datetime.now(UTC)
    bench = BenchRun(
        run_id="r1",
        node="n1",
        started_at=now,
        finished_at=now,
        device="cpu",
        probes=[
            ProbeOutcome(probe="ib", status="skipped", reason="no HCA"),
            ProbeOutcome(probe="storage", status="error", reason="OSError: x"),
        ],
    )
    results = to_results(bench, judge(bench, load()))
    assert [(r.check_id, r.status) for r in results] == [
        ("bench.ib.ran", Status.SKIP),
        ("bench.storage.ran", Status.ERROR),
    ]
    assert all(r.criterion == CHECKS[r.check_id].criterion for r in results)
