"""nvidia-smi -q -x parser: real captures, derived hostile variants, hypothesis."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from clustergrade.collect.nvsmi_xml import MAX_GPUS, NvsmiXmlError, parse_nvidia_smi_xml
from clustergrade.facts.gpu import GPU_IDLE
from tests.helpers import fixture_bytes

A100 = fixture_bytes("nvidia/a100-sxm4-80gb-mig.xml")
P100 = fixture_bytes("nvidia/tesla-p100-pcie-16gb.xml")


def test_a100_mig_capture() -> None:
    r = parse_nvidia_smi_xml(A100)
    assert r.error is None and r.complete
    assert (r.driver_version, r.cuda_version, r.attached_gpus) == ("535.54.03", "12.2", 4)
    # Checkmk kept one of the four GPUs.
    assert len(r.gpus) == 1
    g = r.gpus[0]
    assert g.index == 0 and g.minor_number == 1
    assert g.name == "NVIDIA A100-SXM4-80GB"
    assert g.serial == "1650522003820"
    assert g.uuid == "GPU-513536b6-7d19-9063-b049-1e69664bb298"
    assert g.vbios == "92.00.36.00.02"
    assert g.pci_bus_id == "00000000:01:00.0"
    assert g.memory_total_mib == 81920
    assert (g.ecc_current, g.ecc_pending) == (True, True)
    assert g.ecc.model_dump() == {
        "volatile_correctable": 0,
        "volatile_uncorrectable": 0,
        "aggregate_correctable": 0,
        "aggregate_uncorrectable": 0,
    }
    # N/A in the capture: unknown, not zero.
    assert g.retired_pages.model_dump() == {"single_bit": None, "double_bit": None, "pending": None}
    assert g.row_remap.pending is None and g.row_remap.failure is None
    assert (g.mig_current, g.mig_pending) == (True, True)
    assert g.persistence_mode is False
    assert g.throttle_reasons == []
    assert g.pcie.model_dump() == {
        "gen_current": 4,
        "gen_max": 4,
        "width_current": 16,
        "width_max": 16,
    }
    assert g.clocks.model_dump() == {
        "sm_mhz": 1275,
        "sm_max_mhz": 1410,
        "mem_mhz": 1593,
        "mem_max_mhz": 1593,
    }
    assert g.fabric.state is None and g.fabric.status is None
    assert g.nvlinks is None
    assert g.temperature_c == 27.0
    assert g.power_draw_w == 67.03 and g.power_limit_w == 500.0
    assert g.utilization_pct is None  # N/A with MIG on
    assert g.performance_state == "P0"


def test_p100_capture_old_schema() -> None:
    r = parse_nvidia_smi_xml(P100)
    assert r.error is None
    assert (r.driver_version, r.cuda_version, r.attached_gpus) == ("510.47.03", "11.6", 1)
    g = r.gpus[0]
    assert g.name == "Tesla P100-PCIE-16GB"
    assert g.serial == "0324217145110"
    assert g.vbios == "86.00.52.00.02"
    assert g.pci_bus_id == "00000000:00:04.0"
    assert g.memory_total_mib == 16384
    # single_bit/double_bit totals (pre-Ampere layout); aggregate SBE 3.
    assert g.ecc.volatile_correctable == 0 and g.ecc.volatile_uncorrectable == 0
    assert g.ecc.aggregate_correctable == 3 and g.ecc.aggregate_uncorrectable == 0
    assert g.retired_pages.model_dump() == {"single_bit": 0, "double_bit": 0, "pending": False}
    assert g.mig_current is None and g.mig_pending is None
    assert g.throttle_reasons == [GPU_IDLE]
    assert g.utilization_pct == 0
    assert g.clocks.sm_mhz == 405 and g.clocks.sm_max_mhz == 1328
    assert g.power_limit_w == 250.0  # <power_readings><power_limit> in this schema


def test_truncated_keeps_what_parsed() -> None:
    r = parse_nvidia_smi_xml(fixture_bytes("nvidia/derived-a100-truncated.xml"))
    assert isinstance(r.error, NvsmiXmlError) and not r.complete
    assert r.driver_version == "535.54.03"
    g = r.gpus[0]
    assert g.name == "NVIDIA A100-SXM4-80GB" and g.pcie.width_current == 16
    # Cut inside <ecc_mode>: those and later fields are unknown.
    assert g.ecc_current is None and g.ecc.volatile_uncorrectable is None


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    r = parse_nvidia_smi_xml(fixture_bytes("nvidia/derived-p100-invalid-utf8.xml"))
    assert isinstance(r.error, NvsmiXmlError) and "UTF-8" in str(r.error)
    g = r.gpus[0]
    assert g.serial is not None and "\ufffd" in g.serial
    assert g.name == "Tesla P100-PCIE-16GB" and g.ecc.aggregate_correctable == 3


def test_empty_and_foreign() -> None:
    for data in (fixture_bytes("nvidia/derived-empty.xml"), b"   \n", b"<a/>", b"not xml at all"):
        r = parse_nvidia_smi_xml(data)
        assert isinstance(r.error, NvsmiXmlError) and r.gpus == []


def test_entity_expansion_and_external_entities_refused() -> None:
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
        b"<nvidia_smi_log><driver_version>&b;</driver_version></nvidia_smi_log>"
    )
    assert "forbidden" in str(parse_nvidia_smi_xml(bomb).error)
    ext = (
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
        b"<nvidia_smi_log><driver_version>&e;</driver_version></nvidia_smi_log>"
    )
    r = parse_nvidia_smi_xml(ext)
    assert r.error is not None and r.driver_version is None


def test_huge_repeated_gpus_are_bounded() -> None:
    # Derived: the P100's <gpu> element repeated past the bound (~4 MiB).
    text = P100.decode()
    gpu = re.search(r"<gpu id=.*?</gpu>", text, re.S)
    assert gpu is not None
    body = gpu.group(0) * (MAX_GPUS + 44)
    huge = (text[: gpu.start()] + body + text[gpu.end() :]).encode()
    r = parse_nvidia_smi_xml(huge)
    assert len(r.gpus) == MAX_GPUS
    assert r.error is not None and "only the first" in str(r.error)
    assert r.gpus[-1].index == MAX_GPUS - 1


def test_every_prefix_of_a_capture_parses_without_raising() -> None:
    for cut in range(0, len(A100), 97):
        r = parse_nvidia_smi_xml(A100[:cut])
        assert r.error is not None


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2048))
def test_random_bytes_never_raise(data: bytes) -> None:
    r = parse_nvidia_smi_xml(data)
    assert r.error is None or isinstance(r.error, NvsmiXmlError)


_TAGS = st.sampled_from(
    [
        "gpu",
        "product_name",
        "ecc_errors",
        "volatile",
        "dram_uncorrectable",
        "pcie_gen",
        "current_link_gen",
        "clocks_event_reasons",
        "clocks_event_reason_hw_slowdown",
        "remapped_rows",
        "remapped_row_pending",
        "fabric",
        "state",
        "fb_memory_usage",
        "total",
    ]
)
_VALUES = st.one_of(
    st.sampled_from(
        ["N/A", "Active", "Not Active", "Yes", "No", "16x", "81920 MiB", "-1", "1e400"]
    ),
    st.text(max_size=30),
    st.integers().map(str),
)


@st.composite
def _gpu_xml(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 12))):
        tag = draw(_TAGS)
        value = draw(_VALUES).replace("&", "&amp;").replace("<", "&lt;")
        parts.append(f"<{tag}>{value}</{tag}>" if draw(st.booleans()) else f"<{tag}>{value}")
    return "<nvidia_smi_log><gpu>" + "".join(parts) + "</gpu></nvidia_smi_log>"


@settings(max_examples=300, deadline=None)
@given(_gpu_xml(), st.integers(0, 4000))
def test_shaped_xml_never_raises(xml: str, cut: int) -> None:
    # Surrogates cannot be encoded; the collector only ever sees bytes.
    data = xml.encode("utf-8", errors="replace")
    for d in (data, data[:cut]):
        r = parse_nvidia_smi_xml(d)
        assert r.error is None or isinstance(r.error, NvsmiXmlError)
