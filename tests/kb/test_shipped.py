"""The shipped knowledge base: every file validates, a broken one is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from clustergrade.kb.loader import KBError, load_dir, shipped_dir
from clustergrade.kb.model import Component, GpuCatalog, KnowledgeBase, Meta, XidCatalog

COMPONENTS = {
    "nvidia-driver",
    "nvidia-container-toolkit",
    "cuda-toolkit",
    "runc",
    "containerd",
    "docker",
    "dcgm",
    "dcgm-exporter",
    "mlnx-firmware",
    "slurm",
    "munge",
    "ingress-nginx",
    "gpu-operator",
    "k8s-device-plugin",
}


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load_dir(shipped_dir())


def test_shipped_kb_loads_with_every_component(kb: KnowledgeBase) -> None:
    assert set(kb.components) == COMPONENTS
    assert kb.meta.max_age_days == 30
    assert kb.meta.grace_days == 3


@pytest.mark.parametrize("name", sorted(COMPONENTS))
def test_component_file_is_well_formed(kb: KnowledgeBase, name: str) -> None:
    comp = kb.components[name]
    assert comp.remediation.strip()
    ids = [a.id for a in comp.advisories]
    assert len(ids) == len(set(ids)), "duplicate advisory ids"
    for a in comp.advisories:
        assert a.sources, a.id
        assert a.published <= kb.meta.date, f"{a.id} is newer than the edition"
    assert comp.retrieved <= kb.meta.date


def test_edition_date_covers_newest_source(kb: KnowledgeBase) -> None:
    newest = max(a.published for c in kb.components.values() for a in c.advisories)
    assert newest <= kb.meta.date


def test_gpu_catalogue_matches_nvml_and_amd_smi_names(kb: KnowledgeBase) -> None:
    def gid(name: str) -> str | None:
        g = kb.gpu_model(name)
        return g.id if g else None

    assert gid("NVIDIA H100 80GB HBM3") == "h100-sxm"
    assert gid("NVIDIA H200") == "h200-sxm"
    assert gid("NVIDIA B200") == "b200"
    # "B200" is a substring of "GB200": the longer match must win.
    assert gid("NVIDIA GB200") == "gb200"
    assert gid("NVIDIA GB300") == "gb300"
    assert gid("AMD Instinct MI300X") == "mi300x"
    assert gid("AMD Instinct MI325X") == "mi325x"
    assert gid("AMD Instinct MI355X") == "mi355x"
    assert gid("NVIDIA A100-SXM4-80GB") == "a100-sxm4-80gb"
    assert gid("NVIDIA A100 80GB PCIe") is None  # no sourced PCIe entry
    assert gid("Tesla T4") is None
    assert not kb.gpus.gpus[-1].hopper_or_newer
    for g in kb.gpus.gpus:
        for dtype, achieved in g.achieved_tflops.items():
            assert achieved < g.peak_tflops[dtype], (g.id, dtype)
        if g.achieved_hbm_tbs is not None:
            assert g.achieved_hbm_tbs < g.hbm_bandwidth_tbs


def _copy(tmp_path: Path) -> Path:
    dest = tmp_path / "kb"
    shutil.copytree(shipped_dir(), dest)
    return dest


def test_malformed_component_is_refused_with_its_file_name(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    path = d / "components" / "runc.yaml"
    data = yaml.safe_load(path.read_text())
    data["advisories"][0]["affected"][0]["fixed"] = "one.two"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(KBError, match=r"runc\.yaml"):
        load_dir(d)


def test_missing_source_is_refused(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    path = d / "components" / "slurm.yaml"
    data = yaml.safe_load(path.read_text())
    data["advisories"][0]["sources"] = []
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(KBError, match=r"slurm\.yaml"):
        load_dir(d)


def test_broken_meta_and_gpus_are_refused(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    (d / "gpus.yaml").write_text(
        (d / "gpus.yaml").read_text().replace("memory_gb: 80", "memory_gb: -1")
    )
    with pytest.raises(KBError, match=r"gpus\.yaml"):
        load_dir(d)
    d2 = _copy(tmp_path / "second")
    (d2 / "meta.yaml").write_text("schema: clustergrade.kb/1\ndate: not-a-date\n")
    with pytest.raises(KBError, match=r"meta\.yaml"):
        load_dir(d2)


@pytest.mark.parametrize("model", [Component, GpuCatalog, XidCatalog, Meta])
def test_json_schema_exports(model: type) -> None:
    schema = model.model_json_schema(by_alias=True)  # type: ignore[attr-defined]
    assert schema["type"] == "object"
    assert "schema" in schema["properties"]
