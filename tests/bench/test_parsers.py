"""The pure parsers, on real captures and on hostile text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clustergrade.bench.fio import FioParseError, parse_fio_json
from clustergrade.bench.nccl_tests import (
    NcclTestsParseError,
    busbw_bounds,
    busbw_factor,
    busbw_matches,
    parse_nccl_tests,
)
from clustergrade.bench.perftest import PerftestParseError, parse_bw
from tests.helpers import FIXTURES

BENCH = FIXTURES / "bench"
ALL_REDUCE = (BENCH / "nccl_all_reduce_ring_8xh100.out").read_text()
ALL_GATHER = (BENCH / "nccl_all_gather_ring_8xh100.out").read_text()
FIO = (BENCH / "fio_rw_4k_libaio.json").read_text()


# --- nccl-tests -------------------------------------------------------------


def test_all_reduce_parses_every_row_and_the_context() -> None:
    r = parse_nccl_tests(ALL_REDUCE)
    assert r.collective == "all_reduce"
    assert r.version == "2.17.9"
    assert r.nranks == 8
    assert {d.model for d in r.ranks} == {"NVIDIA H100 80GB HBM3"}
    assert [d.device for d in r.ranks] == list(range(8))
    assert len(r.rows) == 31
    assert r.rows[0].size_bytes == 8 and r.rows[-1].size_bytes == 8589934592
    last = r.rows[-1]
    assert (last.count, last.dtype, last.redop, last.root) == (2147483648, "float", "sum", -1)
    assert last.out_of_place.time_us == 40838.9
    assert last.out_of_place.algbw_gbs == 210.34
    assert last.out_of_place.busbw_gbs == 368.09
    assert last.in_place.busbw_gbs == 368.62
    assert last.out_of_place.wrong == 0
    assert r.avg_busbw_gbs == 122.955
    assert r.out_of_bounds == 0


@pytest.mark.parametrize(
    ("collective", "n", "factor"),
    [
        ("all_reduce", 8, 1.75),
        ("all_reduce", 2, 1.0),
        ("reduce_scatter", 8, 0.875),
        ("all_gather", 4, 0.75),
        ("all_to_all", 2, 0.5),
        ("broadcast", 8, 1.0),
        ("reduce", 16, 1.0),
    ],
)
def test_busbw_factors_are_the_nccl_tests_formulas(collective: str, n: int, factor: float) -> None:
    assert busbw_factor(collective, n) == pytest.approx(factor)


@pytest.mark.parametrize("text", [ALL_REDUCE, ALL_GATHER])
def test_busbw_column_is_algbw_times_the_factor_to_printed_precision(text: str) -> None:
    r = parse_nccl_tests(text)
    assert r.collective is not None and r.nranks is not None
    factor = busbw_factor(r.collective, r.nranks)
    samples = [(row.size_bytes, s) for row in r.rows for s in (row.out_of_place, row.in_place)]
    assert len(samples) == 62
    for size, s in samples:
        assert busbw_matches(size, s, factor), (size, s)
        lo, hi = busbw_bounds(size, s, factor)
        # The check is tight: the uncertainty never exceeds a couple of last-place units.
        assert hi - lo <= 0.02 * factor + 1e-9
    # The wrong rank count is caught on every row with a visible bandwidth.
    wrong = busbw_factor(r.collective, 4)
    assert not any(busbw_matches(size, s, wrong) for size, s in samples if s.busbw_gbs >= 1)


@pytest.mark.parametrize("text", [ALL_REDUCE, ALL_GATHER])
def test_avg_bus_bandwidth_is_the_mean_of_every_busbw(text: str) -> None:
    r = parse_nccl_tests(text)
    values = [s.busbw_gbs for row in r.rows for s in (row.out_of_place, row.in_place)]
    assert f"{sum(values) / len(values):g}" == f"{r.avg_busbw_gbs:g}"


def test_mpirun_tagged_output_parses_the_same() -> None:
    # Derived: every line of the real capture prefixed as mpirun --tag-output does.
    tagged = "\n".join(f"[1,0]<stdout>:{line}" for line in ALL_REDUCE.splitlines())
    assert parse_nccl_tests(tagged).rows == parse_nccl_tests(ALL_REDUCE).rows


def test_truncated_output_keeps_the_complete_rows() -> None:
    # Derived: the real capture cut in the middle of its 20th result row.
    lines = ALL_REDUCE.splitlines()
    first_row = next(i for i, line in enumerate(lines) if line.strip().startswith("8 "))
    cut = "\n".join(lines[: first_row + 19]) + "\n" + lines[first_row + 19][:40]
    r = parse_nccl_tests(cut)
    assert len(r.rows) == 19
    assert r.avg_busbw_gbs is None


@pytest.mark.parametrize(
    "text", ["", "\n\n", "# nThread 1 nGpus 8\n# Using devices\n", ALL_REDUCE.split("#  Rank")[0]]
)
def test_no_rows_is_a_typed_error(text: str) -> None:
    with pytest.raises(NcclTestsParseError):
        parse_nccl_tests(text)


def test_invalid_utf8_decoded_with_replacement_still_parses() -> None:
    # Derived: a stray invalid byte inserted into the banner of the real capture.
    raw = ALL_REDUCE.encode().replace(b"# Using devices", b"# Using \xff\xfe devices")
    assert len(parse_nccl_tests(raw.decode("utf-8", errors="replace")).rows) == 31


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_nccl_parser_never_raises_anything_else(text: str) -> None:
    try:
        parse_nccl_tests(text)
    except NcclTestsParseError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=len(ALL_REDUCE)), st.text(max_size=20))
def test_nccl_parser_on_spliced_real_text(pos: int, junk: str) -> None:
    try:
        parse_nccl_tests(ALL_REDUCE[:pos] + junk + ALL_REDUCE[pos:])
    except NcclTestsParseError:
        pass


# --- fio ----------------------------------------------------------------------


def test_fio_json_after_a_text_preamble() -> None:
    r = parse_fio_json(FIO)
    assert r.version == "fio-3.33"
    (job,) = r.jobs
    assert (job.name, job.rw, job.bs, job.error) == ("sequential_read", "rw", "4k", 0)
    assert job.read is not None and job.write is not None
    assert job.read.bw_bytes_s == 31383676
    assert job.read.iops == pytest.approx(7662.030309)
    assert job.read.lat_mean_ns == pytest.approx(7891233.793714)
    assert job.write.bw_bytes_s == 161128721
    assert job.write.runtime_ms == 48168


@pytest.mark.parametrize(
    "text",
    ["", "fio: terminating on signal 2\n", FIO[: len(FIO) // 2], '{"jobs": 3}', "[1, 2]"],
)
def test_fio_unusable_is_a_typed_error(text: str) -> None:
    # Derived from the real capture: empty, preamble only, cut in half, wrong shapes.
    with pytest.raises(FioParseError):
        parse_fio_json(text)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_fio_parser_never_raises_anything_else(text: str) -> None:
    try:
        parse_fio_json(text)
    except FioParseError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=len(FIO)), st.text(max_size=10))
def test_fio_parser_on_spliced_real_json(pos: int, junk: str) -> None:
    try:
        parse_fio_json(FIO[:pos] + junk + FIO[pos:])
    except FioParseError:
        pass


# --- perftest -----------------------------------------------------------------


def test_ib_write_bw_post_list_row() -> None:
    r = parse_bw((BENCH / "ib_write_bw_postlist_8b.txt").read_text())
    assert r.test == "RDMA_Write Post List BW Test"
    assert (r.device, r.link_type, r.unit) == ("ib0", "Ethernet", "Gb/sec")
    (row,) = r.rows
    assert (row.size_bytes, row.iterations, row.peak, row.average) == (8, 224958464, 0.0, 0.48)
    assert row.msg_rate_mpps == pytest.approx(7.498617)
    assert r.average_gbits(row) == 0.48


def test_ib_write_bw_sweep_rows() -> None:
    r = parse_bw((BENCH / "ib_write_bw_all_sizes_truncated.txt").read_text())
    assert (r.device, r.link_type) == ("mlx5_0", "IB")
    assert [x.size_bytes for x in r.rows] == [2, 4, 8]
    assert r.rows[0].average == pytest.approx(0.042185)


def test_megabytes_convert_to_gigabits() -> None:
    # Derived: the real post-list capture with the header in perftest's default MB/sec.
    text = (BENCH / "ib_write_bw_postlist_8b.txt").read_text().replace("Gb/sec", "MB/sec")
    r = parse_bw(text)
    assert r.unit == "MB/sec"
    assert r.average_gbits(r.rows[0]) == pytest.approx(0.48 * 2**20 * 8 / 1e9)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "RDMA_Write BW Test\n",
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n",
    ],
)
def test_perftest_without_rows_is_a_typed_error(text: str) -> None:
    with pytest.raises(PerftestParseError):
        parse_bw(text)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_perftest_parser_never_raises_anything_else(text: str) -> None:
    try:
        parse_bw(text)
    except PerftestParseError:
        pass
