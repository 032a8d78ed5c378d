"""The NVML reader, fed by FakeNvml (readings recorded from the A100 capture)."""

from __future__ import annotations

from clustergrade.collect.nvml import PynvmlApi, load_pynvml, read_nvml
from clustergrade.collect.nvsmi_xml import parse_nvidia_smi_xml
from clustergrade.facts.gpu import HW_POWER_BRAKE_SLOWDOWN, HW_SLOWDOWN
from tests.gpu.fake_nvml import GPU_IS_LOST, FakeNvml, FakeNvmlError
from tests.helpers import fixture_bytes


def test_nvml_reading_matches_the_capture_it_was_recorded_from() -> None:
    fake = FakeNvml()
    reading, why = read_nvml(fake)
    assert why is None and reading is not None
    assert reading.errors == []
    assert fake.shut
    assert reading.driver_version == "535.54.03"
    assert reading.cuda_driver_version == "12.2"
    assert reading.gpu_count == 1
    nvml_gpu = reading.gpus[0]
    smi_gpu = parse_nvidia_smi_xml(fixture_bytes("nvidia/a100-sxm4-80gb-mig.xml")).gpus[0]
    # Same facts by either route, except what only NVML reports.
    assert nvml_gpu.model_dump(exclude={"nvlinks"}) == smi_gpu.model_dump(exclude={"nvlinks"})
    assert nvml_gpu.nvlinks is not None and len(nvml_gpu.nvlinks) == 12
    assert all(link.up for link in nvml_gpu.nvlinks)


def test_not_supported_is_a_fact_other_errors_are_reported() -> None:
    fake = FakeNvml(fail={"ecc_errors": FakeNvmlError(GPU_IS_LOST, "GPU is lost")})
    reading, _ = read_nvml(fake)
    assert reading is not None
    g = reading.gpus[0]
    assert g.ecc.volatile_uncorrectable is None
    assert len(reading.errors) == 4 and all("GPU is lost" in e for e in reading.errors)
    # Retired pages / remapped rows / fabric raised NOT_SUPPORTED: no errors for them.
    assert not any("retired" in e or "remapped" in e or "fabric" in e for e in reading.errors)


def test_remap_fabric_throttle_and_links() -> None:
    fake = FakeNvml(
        remap=(0, 2, True, False),
        fabric_info=(2, 0, 7, "0f0e0d0c-0b0a-0908-0706-050403020100"),
        reasons=0x8 | 0x80,
        down_links=(5,),
    )
    reading, _ = read_nvml(fake)
    assert reading is not None
    g = reading.gpus[0]
    assert g.row_remap.model_dump() == {
        "correctable": 0,
        "uncorrectable": 2,
        "pending": True,
        "failure": False,
    }
    assert g.fabric.state == "In Progress" and g.fabric.clique_id == "7"
    assert g.throttle_reasons == [HW_SLOWDOWN, HW_POWER_BRAKE_SLOWDOWN]
    assert g.nvlinks is not None and [link.link for link in g.nvlinks if not link.up] == [5]


def test_gpu_without_nvlink() -> None:
    fake = FakeNvml(fail={"nvlink_up": FakeNvmlError(3, "Not Supported")})
    reading, _ = read_nvml(fake)
    assert reading is not None and reading.gpus[0].nvlinks == []


def test_init_failure_is_unavailable_not_an_error() -> None:
    reading, why = read_nvml(
        FakeNvml(init_error=FakeNvmlError(12, "NVML Shared Library Not Found"))
    )
    assert reading is None and why is not None and "Library Not Found" in why


def test_real_pynvml_without_a_gpu_does_not_crash() -> None:
    # This machine has nvidia-ml-py but no libnvidia-ml.so (or no GPU): NVML
    # must report itself unavailable, whatever the reason.
    api = load_pynvml()
    assert isinstance(api, PynvmlApi)
    reading, why = read_nvml(api)
    if reading is None:
        assert why is not None and why.startswith("NVML did not initialise")
