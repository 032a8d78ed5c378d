"""parse_kernel_log on real captures, and on hostile text derived from them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clustergrade.collect import kernel_log as kl
from clustergrade.collect.kernel_log import parse_kernel_log
from tests.helpers import fixture_bytes

D = "kernel_log/"


def _text(name: str) -> str:
    return fixture_bytes(D + name).decode("utf-8", errors="replace")


def test_xid79_with_sxids_from_gpud_readme() -> None:
    p = parse_kernel_log(_text("gpud-sxid-readme-xid79-sxid20034.dmesg.txt"))
    assert [(x.code, x.bus_id, x.count) for x in p.xids] == [(79, "0000:91:00", 1)]
    ev = p.xid_events[0]
    assert ev.pid is None and ev.process is None  # pid='<unknown>', name=<unknown>
    assert ev.timestamp == "6781741.548779"
    assert ev.message.startswith("pid='<unknown>'")
    by_bus = {s.bus_id: s for s in p.sxids}
    assert set(by_bus) == {"0000:05:00.0", "0000:06:00.0", "0000:07:00.0"}
    sw0 = by_bus["0000:05:00.0"]
    # Two "Fatal" headlines, one "Severity" and one "Data" continuation line.
    assert (sw0.code, sw0.device, sw0.lines, sw0.fatal, sw0.nonfatal) == (
        20034,
        "nvidia-nvswitch0",
        4,
        2,
        0,
    )
    # The "GPU 0000:91:00.0: GPU has fallen off the bus" line, keyed like the Xid.
    assert [(f.bus_id, f.count) for f in p.fallen_off_bus] == [("0000:91:00", 1)]
    assert p.first_timestamp == "6781741.548768" and p.last_timestamp == "6781753.409792"


def test_ctime_dmesg_counts_and_processes() -> None:
    p = parse_kernel_log(_text("gpud-xid-readme-xid13-31-109.dmesg-ctime.txt"))
    got = {(x.code, x.count) for x in p.xids}
    assert got == {(13, 3), (31, 1), (109, 2)}
    x109 = next(x for x in p.xids if x.code == 109)
    assert x109.processes == ["pt_main_thread"]
    assert x109.first_seen == "Fri Aug 30 11:43:14 2024"
    assert x109.last_seen == "Sat Aug 31 08:53:21 2024"
    assert [e.pid for e in p.xid_events if e.code == 109] == [1797828, 1158578]
    assert p.lines == 10


def test_syslog_prefix_and_truncated_line() -> None:
    # The paste ends mid-line ("... partition"); the event is still read.
    p = parse_kernel_log(_text("gpu-operator-1146-xid48.syslog.txt"))
    assert [(x.code, x.bus_id) for x in p.xids] == [(48, "0000:07:00")]
    assert p.xids[0].first_seen == "Dec  2 10:43:35"


def test_journal_lines_without_clock() -> None:
    p = parse_kernel_log(_text("open-gpu-kernel-modules-1150-xid45.journal.txt"))
    assert {x.bus_id: x.count for x in p.xids} == {
        "0000:97:00": 1,
        "0000:ba:00": 2,
        "0000:dc:00": 2,
        "0000:ed:00": 2,
    }
    assert p.first_timestamp is None


def test_multiline_fallen_off_bus_notice() -> None:
    p = parse_kernel_log(_text("nvsentinel-155-fallen-off-bus.dmesg.txt"))
    assert p.xids == []
    assert [(f.bus_id, f.first_seen) for f in p.fallen_off_bus] == [("0000:b3:00", "1843.308145")]


def test_sxid_with_decoded_level_prefix() -> None:
    p = parse_kernel_log(_text("gpud-pr338-sxid12028.dmesg-decode.txt"))
    (s,) = p.sxids
    assert (s.code, s.bus_id, s.fatal, s.nonfatal, s.lines) == (12028, "0000:84:00.0", 0, 0, 1)
    assert p.first_timestamp == "2025-01-25T10:34:54,859532+00:00"


def test_aer_counts_one_per_severity_line() -> None:
    p = parse_kernel_log(_text("lkml-pci-aer-uncorrected.dmesg.txt"))
    assert (p.aer.corrected, p.aer.uncorrected_nonfatal, p.aer.uncorrected_fatal) == (0, 2, 0)
    assert p.aer.uncorrected_devices == ["0000:00:1b.0", "0000:00:1d.0"]


def test_clean_ci_vm_capture() -> None:
    p = parse_kernel_log(_text("ci-vm-dmesg-iso.txt"))
    assert p.lines == 346
    assert not (p.xids or p.sxids or p.fallen_off_bus or p.aer.uncorrected or p.gpu_crash_dumps)
    assert p.first_timestamp == "2026-12-02T12:38:27,000000+00:00"


# -- hostile input, derived from the real captures ------------------------------

REAL = [
    "gpud-sxid-readme-xid79-sxid20034.dmesg.txt",
    "gpud-xid-readme-xid13-31-109.dmesg-ctime.txt",
    "akash-support-244-xid43-31-94.dmesg-T.txt",
    "lkml-pci-aer-uncorrected.dmesg.txt",
]


@pytest.mark.parametrize("name", REAL)
def test_every_truncation_parses(name: str) -> None:
    data = fixture_bytes(D + name)
    step = max(1, len(data) // 97)
    for cut in range(0, len(data), step):
        p = parse_kernel_log(data[:cut].decode("utf-8", errors="replace"))
        assert p.lines <= data[:cut].count(b"\n") + 1


def test_invalid_utf8_and_binary_junk() -> None:
    data = fixture_bytes(D + "gpud-sxid-readme-xid79-sxid20034.dmesg.txt")
    junk = bytes(range(256)) * 4 + b"\xff\xfe\x00\x00" + data + b"\x80\x81\n\x00NVRM: Xid (PCI:"
    p = parse_kernel_log(junk.decode("utf-8", errors="replace"))
    assert [x.code for x in p.xids] == [79]


def test_empty() -> None:
    p = parse_kernel_log("")
    assert p.lines == 0 and p.xids == [] and p.first_timestamp is None


def test_huge_input_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    line = _text("akash-support-244-xid43-31-94.dmesg-T.txt").splitlines()[3] + "\n"
    monkeypatch.setattr(kl, "MAX_LINES", 5000)
    p = parse_kernel_log(line * 20000)
    assert p.truncated and p.lines == 5000
    assert p.xids[0].count == 5000
    # Events are kept per code up to the cap, not one per line.
    assert len(p.xid_events) == kl.EVENTS_PER_CODE


def test_very_long_line_is_clipped() -> None:
    line = _text("gpu-operator-1146-xid48.syslog.txt").rstrip("\n") + " x" * 1_000_000
    p = parse_kernel_log(line)
    assert p.xids[0].code == 48
    assert len(p.xids[0].sample) <= kl.MAX_MESSAGE_CHARS


def test_many_distinct_codes_are_capped() -> None:
    text = "".join(f"NVRM: Xid (PCI:0000:{i % 256:02x}:00): {i}, x\n" for i in range(3000))
    p = parse_kernel_log(text)
    assert len(p.xids) == kl.MAX_SUMMARIES


_fragments = st.sampled_from(
    [
        "NVRM: Xid (PCI:",
        "0000:91:00",
        "): ",
        "79",
        ", pid=",
        "<unknown>",
        "name=",
        "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): ",
        "Fatal",
        "Non-fatal",
        "PCIe Bus Error: severity=",
        "Uncorrected (Fatal)",
        "NVRM: The NVIDIA GPU 0000:b3:00.0",
        "fallen off the bus and is not responding to commands",
        "NVRM: GPU 0000:91:00.0: GPU has fallen off the bus",
        "mce: [Hardware Error]",
        "[ 1843.308145] ",
        "2026-12-02T12:38:27,000000+00:00 ",
        "\n",
        "\r\n",
        "\x00",
        "\ufffd",
        " ",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_fragments, st.text(max_size=20)), max_size=60))
def test_random_text_never_raises(parts: list[str]) -> None:
    p = parse_kernel_log("".join(parts))
    assert p.lines >= 0
    for x in p.xids:
        assert x.count >= 1


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_random_bytes_never_raise(data: bytes) -> None:
    parse_kernel_log(data.decode("utf-8", errors="replace"))


def test_machine_check_error_lines_only() -> None:
    # Two lines from a real report (mikeizbicki/ucr-cs100#404: the syslogd
    # broadcast of the kernel's "[Hardware Error]" lines), see PROVENANCE.md.
    text = (
        "kernel:[Hardware Error]: MC4 Error (node 3): DRAM ECC error detected on the NB.\n"
        "kernel:[Hardware Error]: Error Status: Corrected error, no action required.\n"
    )
    assert parse_kernel_log(text).mce_lines == 2
