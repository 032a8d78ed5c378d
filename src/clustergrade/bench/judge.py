"""Judge a bench run: measurements against the knowledge base's per-GPU-model
expectations (kb/data/gpus.yaml) and against the node's own best GPU.

Pure: a BenchRun and a KnowledgeBase in, findings out. The thresholds are
the project research notes (health-bench-anchors §2.8): GEMM bf16 WARN below 90% and FAIL
below 80% of the model's achieved reference; any GPU more than 10% below the
node's best is an outlier (FAIL); HBM triad FAIL below 80% of spec, WARN
below 95% of the model's measured reference.
CPU runs have no expectations: spec judgements SKIP, measurements stay.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from clustergrade.bench.model import BenchRun, Measurement
from clustergrade.kb.model import GpuModel, KnowledgeBase
from clustergrade.results import (
    Criterion,
    Finding,
    Result,
    Severity,
    errored,
    failed,
    passed,
    skipped,
    warned,
)

GEMM_WARN, GEMM_FAIL = 0.90, 0.80
OUTLIER = 0.10
HBM_FAIL = 0.80
#: Ours: healthy HBM lands near the published measurement (BabelStream), so
#: 5% under it is worth a look even while above the 80%-of-spec FAIL line.
HBM_WARN_OF_ACHIEVED = 0.95
CPU_SKIP = "CPU run: the knowledge base has no CPU expectations (measurements are recorded)"


@dataclass(frozen=True)
class BenchCheck:
    id: str
    title: str
    criterion: Criterion
    severity: Severity


CHECKS = {
    c.id: c
    for c in (
        BenchCheck(
            "bench.gemm.bf16_reference",
            "GEMM bf16 TFLOPS vs the GPU model's achieved reference",
            Criterion.RELIABILITY,
            Severity.HIGH,
        ),
        BenchCheck(
            "bench.gemm.node_outlier",
            "GEMM bf16 TFLOPS within 10% of the node's best GPU",
            Criterion.RELIABILITY,
            Severity.HIGH,
        ),
        BenchCheck(
            "bench.memory.hbm_spec",
            "HBM triad bandwidth vs the GPU model's spec",
            Criterion.RELIABILITY,
            Severity.MEDIUM,
        ),
        BenchCheck(
            "bench.memory.node_outlier",
            "HBM triad bandwidth within 10% of the node's best GPU",
            Criterion.RELIABILITY,
            Severity.MEDIUM,
        ),
        BenchCheck(
            "bench.nccl.data_errors",
            "nccl-tests reported no wrong results",
            Criterion.NETWORKING,
            Severity.CRITICAL,
        ),
        *(
            BenchCheck(f"bench.{p}.ran", f"The {p} probe ran", crit, Severity.INFO)
            for p, crit in (
                ("gemm", Criterion.RELIABILITY),
                ("memory", Criterion.RELIABILITY),
                ("nccl", Criterion.NETWORKING),
                ("ib", Criterion.NETWORKING),
                ("storage", Criterion.STORAGE),
                ("lifecycle", Criterion.LIFECYCLE),
            )
        ),
    )
}


def _best_per_gpu(ms: Iterable[Measurement], name: str) -> dict[int, Measurement]:
    best: dict[int, Measurement] = {}
    for m in ms:
        if m.name != name or m.device != "cuda" or m.gpu_index is None:
            continue
        if m.gpu_index not in best or m.value > best[m.gpu_index].value:
            best[m.gpu_index] = m
    return best


def _on_cpu(ms: list[Measurement], name: str) -> bool:
    return any(m.name == name and m.device == "cpu" for m in ms)


def _spec(
    ms: list[Measurement],
    name: str,
    kb: KnowledgeBase,
    what: str,
    judge: Callable[[Measurement, GpuModel, str], Finding],
) -> list[Finding]:
    per_gpu = _best_per_gpu(ms, name)
    if not per_gpu:
        return [skipped(CPU_SKIP if _on_cpu(ms, name) else f"no {what} measurement")]
    out = []
    for idx, m in sorted(per_gpu.items()):
        subject = f"GPU {idx}"
        model = kb.gpu_model(m.gpu_model or "")
        if model is None:
            out.append(skipped(f"{m.gpu_model!r} is not in the knowledge base", subject=subject))
            continue
        out.append(judge(m, model, subject))
    return out


def judge_gemm_reference(bench: BenchRun, kb: KnowledgeBase) -> list[Finding]:
    def one(m: Measurement, model: GpuModel, subject: str) -> Finding:
        ref = model.achieved_tflops.get("bf16")
        if ref is None:
            return skipped(f"no achieved bf16 reference for {model.id}", subject=subject)
        ratio = m.value / ref
        shape = f"{m.params.get('m')}x{m.params.get('n')}x{m.params.get('k')}"
        msg = f"{m.value:.1f} TFLOPS bf16 ({shape}), {ratio:.0%} of {model.id}'s {ref:g}"
        kw = {
            "observed": round(m.value, 2),
            "expected": ref,
            "subject": subject,
            "evidence": {"ratio": round(ratio, 4), "gpu_model": m.gpu_model, "shape": shape},
        }
        if ratio < GEMM_FAIL:
            return failed(msg + f" (below {GEMM_FAIL:.0%})", **kw)
        if ratio < GEMM_WARN:
            return warned(msg + f" (below {GEMM_WARN:.0%})", **kw)
        return passed(msg, **kw)

    return _spec(bench.measurements("gemm"), "gemm.bf16", kb, "bf16 GEMM", one)


def judge_hbm_spec(bench: BenchRun, kb: KnowledgeBase) -> list[Finding]:
    def one(m: Measurement, model: GpuModel, subject: str) -> Finding:
        spec = model.hbm_bandwidth_tbs * 1000
        ratio = m.value / spec
        msg = f"triad {m.value:.0f} GB/s, {ratio:.0%} of {model.id}'s {spec:g} GB/s spec"
        kw = {
            "observed": round(m.value, 1),
            "expected": spec,
            "subject": subject,
            "evidence": {"ratio": round(ratio, 4), "gpu_model": m.gpu_model},
        }
        if ratio < HBM_FAIL:
            return failed(msg + f" (below {HBM_FAIL:.0%})", **kw)
        achieved = model.achieved_hbm_tbs
        if achieved is not None and m.value < HBM_WARN_OF_ACHIEVED * achieved * 1000:
            return warned(
                msg
                + f"; below {HBM_WARN_OF_ACHIEVED:.0%} of the {achieved:g} TB/s measured reference",
                **kw,
            )
        return passed(msg, **kw)

    return _spec(bench.measurements("memory"), "memory.triad", kb, "HBM triad", one)


def judge_outliers(bench: BenchRun, name: str, unit: str) -> list[Finding]:
    ms = bench.measurements()
    per_gpu = _best_per_gpu(ms, name)
    if not per_gpu:
        return [skipped(CPU_SKIP if _on_cpu(ms, name) else f"no {name} measurement")]
    if len(per_gpu) < 2:
        return [skipped(f"one GPU: no sibling to compare {name} with")]
    top_idx, top = max(per_gpu.items(), key=lambda kv: kv[1].value)
    out = []
    for idx, m in sorted(per_gpu.items()):
        gap = 1 - m.value / top.value if top.value > 0 else 0.0
        msg = f"{m.value:.1f} {unit}, {gap:.1%} below GPU {top_idx} ({top.value:.1f})"
        kw = {
            "observed": round(m.value, 2),
            "expected": round(top.value * (1 - OUTLIER), 2),
            "subject": f"GPU {idx}",
            "evidence": {"gap": round(gap, 4), "best_gpu": top_idx},
        }
        out.append(
            failed(msg + f" (more than {OUTLIER:.0%})", **kw)
            if gap > OUTLIER
            else passed(msg, **kw)
        )
    return out


def judge_nccl_errors(bench: BenchRun) -> list[Finding]:
    ms = [m for m in bench.measurements("nccl") if m.source == "nccl-tests"]
    if not ms:
        return [skipped("no nccl-tests output in this run")]
    checked = [m for m in ms if m.params.get("wrong") is not None]
    if not checked:
        return [skipped("nccl-tests ran with validation off (#wrong N/A)")]
    bad = [
        m
        for m in checked
        if (m.params.get("wrong") or 0) > 0 or (m.params.get("in_place_wrong") or 0) > 0
    ]
    if bad:
        return [
            failed(
                f"{len(bad)} nccl-tests row(s) with wrong results, first {bad[0].name} at {bad[0].params.get('size_bytes')} B",
                observed=len(bad),
                expected=0,
                evidence={"rows": [(m.name, m.params.get("size_bytes")) for m in bad[:20]]},
            )
        ]
    return [passed(f"{len(checked)} nccl-tests rows validated, none wrong", observed=0, expected=0)]


def judge_probe_runs(bench: BenchRun) -> list[tuple[str, Finding]]:
    out = []
    for p in bench.probes:
        cid = f"bench.{p.probe}.ran"
        if p.status == "skipped":
            out.append((cid, skipped(p.reason or "skipped")))
        elif p.status == "error":
            out.append((cid, errored(p.reason or "probe failed")))
        else:
            out.append(
                (
                    cid,
                    passed(
                        f"{len(p.measurements)} measurement(s) in {p.duration_s:.1f}s",
                        observed=len(p.measurements),
                    ),
                )
            )
    return out


def judge(bench: BenchRun, kb: KnowledgeBase) -> list[tuple[str, Finding]]:
    """Every bench judgement, as (check id, finding) pairs."""
    ran = {p.probe for p in bench.probes if p.status == "ran"}
    out = judge_probe_runs(bench)
    if "gemm" in ran:
        out += [("bench.gemm.bf16_reference", f) for f in judge_gemm_reference(bench, kb)]
        out += [
            ("bench.gemm.node_outlier", f) for f in judge_outliers(bench, "gemm.bf16", "TFLOPS")
        ]
    if "memory" in ran:
        out += [("bench.memory.hbm_spec", f) for f in judge_hbm_spec(bench, kb)]
        out += [
            ("bench.memory.node_outlier", f) for f in judge_outliers(bench, "memory.triad", "GB/s")
        ]
    if "nccl" in ran:
        out += [("bench.nccl.data_errors", f) for f in judge_nccl_errors(bench)]
    return out


def to_results(bench: BenchRun, judged: Iterable[tuple[str, Finding]]) -> list[Result]:
    out = []
    for cid, f in judged:
        spec = CHECKS[cid]
        out.append(
            Result(
                check_id=cid,
                node=bench.node,
                status=f.status,
                severity=f.severity or spec.severity,
                criterion=spec.criterion,
                message=f.message,
                observed=f.observed,
                expected=f.expected,
                subject=f.subject,
                evidence=f.evidence,
                advisories=f.advisories,
            )
        )
    return out
