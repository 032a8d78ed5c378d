"""gpu.model-known against a locally built GPU catalogue (the shipped
kb/data/gpus.yaml is filled by another part of the project)."""

from __future__ import annotations

from clustergrade.kb.model import GpuModel, KnowledgeBase
from clustergrade.results import Status
from tests.gpu.replay import a100, change_gpu
from tests.helpers import judge, kb, statuses

A100_MODEL = GpuModel(
    id="a100-sxm4-80gb",
    vendor="nvidia",
    match=["A100-SXM4-80GB"],
    architecture="ampere",
    memory_gb=80,
    hbm_bandwidth_tbs=2.039,
    peak_tflops={"bf16": 312.0},
    hopper_or_newer=False,
    sources=[
        "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf"
    ],
)


def _kb_with_a100() -> KnowledgeBase:
    k = kb()
    return k.model_copy(update={"gpus": k.gpus.model_copy(update={"gpus": [A100_MODEL]})})


def test_known_model_passes() -> None:
    assert statuses(judge("gpu.model-known", a100(), _kb_with_a100())) == {Status.PASS}


def test_unknown_model_warns() -> None:
    f = change_gpu(a100(), name="NVIDIA Imaginary X1")
    assert statuses(judge("gpu.model-known", f, _kb_with_a100())) == {Status.WARN}


def test_empty_catalogue_skips() -> None:
    k = kb()
    empty = k.model_copy(update={"gpus": k.gpus.model_copy(update={"gpus": []})})
    assert statuses(judge("gpu.model-known", a100(), empty)) == {Status.SKIP}
