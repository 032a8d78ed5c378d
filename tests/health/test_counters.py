"""Error counters judged by rate against kb/data/thresholds.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from clustergrade.health.counters import (
    CounterReading,
    from_infiniband,
    from_nvidia_smi_xml,
    from_nvml,
)
from clustergrade.health.evaluate import CHECK_COUNTERS, HealthOptions, judge_counters, run_health
from clustergrade.health.thresholds import Thresholds, ThresholdsError, load_thresholds
from clustergrade.results import Status
from tests.health.nodes import a100_with_replays, node
from tests.helpers import fixture_bytes

T0 = 1_796_000_000.0
IB_SYM = "/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error"


def check(tmp_path: Path, at: float, **kw: object) -> list[tuple[str, str]]:
    report = run_health(HealthOptions(mode="json", state_dir=tmp_path), node(**kw), now=at)  # type: ignore[arg-type]
    return [(i.status.value, i.message) for i in report.items if i.check == CHECK_COUNTERS]


def test_shipped_thresholds_have_sources() -> None:
    t = load_thresholds()
    assert {x.counter for x in t.thresholds} == {
        "pcie_replay",
        "nvlink_crc",
        "ib_symbol_error",
        "ib_link_downed",
    }
    replay = t.for_counter("pcie_replay")
    crc = t.for_counter("nvlink_crc")
    assert replay is not None and (replay.limit, replay.per_s) == (8, 60)
    assert crc is not None and (crc.limit, crc.per_s) == (100, 1)
    assert all(x.sources for x in t.thresholds)


def test_rising_pcie_replay_past_the_threshold_is_unhealthy(tmp_path: Path) -> None:
    first = check(tmp_path, T0, smi=a100_with_replays(100))
    assert first[0][0] == "SKIP" and "first reading" in first[0][1]
    # 20 more replays in one minute: above 8/min.
    second = check(tmp_path, T0 + 60, smi=a100_with_replays(120))
    assert second[0][0] == "FAIL"
    assert "20.0 replays/min" in second[0][1] and "100 -> 120" in second[0][1]


def test_replays_below_the_threshold_pass(tmp_path: Path) -> None:
    check(tmp_path, T0, smi=a100_with_replays(100))
    assert check(tmp_path, T0 + 60, smi=a100_with_replays(108))[0][0] == "PASS"
    # 5 replays one second later: a short gap is not blown up to 300/min.
    assert check(tmp_path, T0 + 61, smi=a100_with_replays(113))[0][0] == "PASS"
    # 40 over ten minutes is 4/min.
    assert check(tmp_path, T0 + 661, smi=a100_with_replays(153))[0][0] == "PASS"


def test_counter_reset_starts_a_new_baseline(tmp_path: Path) -> None:
    check(tmp_path, T0, smi=a100_with_replays(500))
    assert check(tmp_path, T0 + 60, smi=a100_with_replays(3))[0][0] == "SKIP"
    assert check(tmp_path, T0 + 120, smi=a100_with_replays(30))[0][0] == "FAIL"


def test_ib_symbol_errors_rising(tmp_path: Path) -> None:
    # procfs-mlx's real counters read 0; the later readings are derived.
    check(tmp_path, T0, ib="procfs-mlx")
    res = check(tmp_path, T0 + 60, ib="procfs-mlx", ib_files={IB_SYM: "50\n"})
    assert [s for s, _ in res] == ["FAIL"]
    assert "symbol errors" in res[0][1]


def test_judge_counters_nvlink_crc() -> None:
    t = load_thresholds()
    r0 = CounterReading("nvlink_crc", "00000000:18:00.0", "GPU 0", 1000)
    _, state = judge_counters([r0], {}, T0, t)
    r1 = CounterReading("nvlink_crc", "00000000:18:00.0", "GPU 0", 1000 + 101 * 10)
    items, _ = judge_counters([r1], state, T0 + 10, t)
    assert [i.status for i in items] == [Status.FAIL]
    r2 = CounterReading("nvlink_crc", "00000000:18:00.0", "GPU 0", 1000 + 99 * 10)
    items, _ = judge_counters([r2], state, T0 + 10, t)
    assert [i.status for i in items] == [Status.PASS]


def test_replay_counter_from_real_xml() -> None:
    for name in ("nvidia/a100-sxm4-80gb-mig.xml", "nvidia/tesla-p100-pcie-16gb.xml"):
        readings = from_nvidia_smi_xml(fixture_bytes(name))
        assert [(r.kind, r.subject, r.value) for r in readings] == [("pcie_replay", "GPU 0", 0)]
    assert from_nvidia_smi_xml(fixture_bytes("nvidia/derived-empty.xml")) == []


def test_ib_counters_skip_na() -> None:
    from tests.network.ib_tree import ib_facts

    facts = ib_facts("node-exporter-ib")
    readings = from_infiniband(facts.infiniband)
    assert all(r.subject.startswith("mlx4_0/") for r in readings)
    assert {r.kind for r in readings} == {"ib_link_downed"}


class FakeNvml:
    """Answers like NVML on an 2-GPU NVLink system; GPU 1 has no NVLink CRC."""

    def __init__(self, fail_init: bool = False) -> None:
        self.fail_init = fail_init
        self.shut = False

    def init(self) -> None:
        if self.fail_init:
            raise RuntimeError("NVML Shared Library Not Found")

    def shutdown(self) -> None:
        self.shut = True

    def device_count(self) -> int:
        return 2

    def pci_bus_id(self, i: int) -> str:
        return f"00000000:{0x18 + i:02X}:00.0"

    def pcie_replay(self, i: int) -> int:
        return 7 + i

    def nvlink_up(self, i: int, link: int) -> bool:
        if link >= 18:
            raise ValueError("invalid argument")
        return True

    def nvlink_error(self, i: int, link: int, counter: int) -> int:
        if i == 1:
            raise RuntimeError("not supported")
        return 1


def test_from_nvml_fake() -> None:
    api = FakeNvml()
    readings, why = from_nvml(api)
    assert why is None and api.shut
    got = {(r.kind, r.subject): r.value for r in readings}
    assert got == {
        ("pcie_replay", "GPU 0"): 7,
        ("pcie_replay", "GPU 1"): 8,
        ("nvlink_crc", "GPU 0"): 36,
    }


def test_from_nvml_init_failure() -> None:
    readings, why = from_nvml(FakeNvml(fail_init=True))
    assert readings == [] and why is not None and "Not Found" in why


def test_bad_thresholds_file(tmp_path: Path) -> None:
    bad = tmp_path / "thresholds.yaml"
    bad.write_text(
        "schema: clustergrade.health.thresholds/1\nretrieved: 2026-01-01\nthresholds: []\n"
    )
    with pytest.raises(ThresholdsError, match="thresholds"):
        load_thresholds(bad)
    bad.write_text(": : :")
    with pytest.raises(ThresholdsError, match="YAML"):
        load_thresholds(bad)
    with pytest.raises(ThresholdsError):
        load_thresholds(tmp_path / "absent.yaml")


def test_one_threshold_per_counter() -> None:
    data = load_thresholds().model_dump(by_alias=True, mode="json")
    data["thresholds"].append(dict(data["thresholds"][0], id="again"))
    with pytest.raises(ValidationError, match="more than one"):
        Thresholds.model_validate(data)
