"""Parse the text nccl-tests binaries print (all_reduce_perf and friends), and
the bus-bandwidth factors of nccl-tests doc/PERFORMANCE.md.

Pure: text in, typed result out; anything else raises NcclTestsParseError.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

#: nccl-tests binary name -> collective name used in measurements.
BINARIES = {
    "all_reduce_perf": "all_reduce",
    "all_gather_perf": "all_gather",
    "reduce_scatter_perf": "reduce_scatter",
    "alltoall_perf": "all_to_all",
    "broadcast_perf": "broadcast",
    "reduce_perf": "reduce",
    "sendrecv_perf": "sendrecv",
}


class NcclTestsParseError(ValueError):
    """The text is not nccl-tests output (or holds no result rows)."""


def busbw_factor(collective: str, nranks: int) -> float:
    """busbw = algbw * factor (nccl-tests doc/PERFORMANCE.md)."""
    if nranks < 1:
        raise ValueError(f"nranks must be >= 1, got {nranks}")
    n = nranks
    if collective == "all_reduce":
        return 2 * (n - 1) / n
    if collective in ("reduce_scatter", "all_gather", "all_to_all"):
        return (n - 1) / n
    if collective in ("broadcast", "reduce", "sendrecv"):
        return 1.0
    raise ValueError(f"no bus bandwidth factor for {collective!r}")


@dataclass(frozen=True)
class Sample:
    time_us: float
    algbw_gbs: float
    busbw_gbs: float
    #: None when the run had validation off ("N/A").
    wrong: int | None
    #: Decimal places printed, to bound rounding when checking the arithmetic.
    time_places: int = 2
    bw_places: int = 2


@dataclass(frozen=True)
class Row:
    size_bytes: int
    count: int
    dtype: str
    redop: str
    root: int
    out_of_place: Sample
    in_place: Sample


@dataclass(frozen=True)
class RankDevice:
    rank: int
    host: str
    device: int
    model: str


@dataclass(frozen=True)
class NcclTestsResult:
    collective: str | None
    version: str | None
    ranks: list[RankDevice]
    rows: list[Row]
    avg_busbw_gbs: float | None
    out_of_bounds: int | None
    notes: list[str] = field(default_factory=list)

    @property
    def nranks(self) -> int | None:
        return len(self.ranks) or None


# mpirun --tag-output puts "[1,0]<stdout>:" before every line.
_TAG = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:")
_RANK = re.compile(
    r"^#\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[[^\]]*\]\s+(.+?)\s*$"
)
_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_WRONG = r"(?:\d+|N/A)"
_ROW = re.compile(
    rf"^\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(-?\d+)\s+"
    rf"({_NUM})\s+({_NUM})\s+({_NUM})\s+({_WRONG})\s+"
    rf"({_NUM})\s+({_NUM})\s+({_NUM})\s+({_WRONG})\s*$"
)
_VERSION = re.compile(r"^#\s*nccl-tests version\s+(\S+)")
_STARTING = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_AVG = re.compile(rf"^#\s*Avg bus bandwidth\s*:\s*({_NUM})")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)")


def _float(s: str) -> float:
    v = float(s)
    if not math.isfinite(v):
        raise NcclTestsParseError(f"non-finite number {s!r}")
    return v


def _places(s: str) -> int:
    return len(s.partition(".")[2])


def _sample(t: str, alg: str, bus: str, wrong: str) -> Sample:
    return Sample(
        _float(t),
        _float(alg),
        _float(bus),
        None if wrong == "N/A" else int(wrong),
        time_places=_places(t),
        bw_places=min(_places(alg), _places(bus)),
    )


def parse_nccl_tests(text: str) -> NcclTestsResult:
    """Parse one nccl-tests run's stdout."""
    if not isinstance(text, str):
        raise NcclTestsParseError("expected text")
    version = collective = None
    ranks: list[RankDevice] = []
    rows: list[Row] = []
    avg = oob = None
    notes: list[str] = []
    for raw in text.splitlines():
        line = _TAG.sub("", raw).rstrip()
        if not line:
            continue
        if m := _VERSION.match(line):
            version = m.group(1)
        elif m := _STARTING.match(line):
            collective = BINARIES.get(m.group(1).removesuffix("_mpi"), m.group(1))
        elif m := _RANK.match(line):
            ranks.append(RankDevice(int(m.group(1)), m.group(2), int(m.group(3)), m.group(4)))
        elif m := _AVG.match(line):
            avg = _float(m.group(1))
        elif m := _OOB.match(line):
            oob = int(m.group(1))
        elif m := _ROW.match(line):
            g = m.groups()
            rows.append(
                Row(
                    size_bytes=int(g[0]),
                    count=int(g[1]),
                    dtype=g[2],
                    redop=g[3],
                    root=int(g[4]),
                    out_of_place=_sample(g[5], g[6], g[7], g[8]),
                    in_place=_sample(g[9], g[10], g[11], g[12]),
                )
            )
        elif not line.lstrip().startswith("#") and line.strip()[:1].isdigit():
            notes.append(f"unparsed line: {line.strip()[:120]}")
    if not rows:
        raise NcclTestsParseError("no nccl-tests result rows found")
    return NcclTestsResult(collective, version, ranks, rows, avg, oob, notes)


def busbw_bounds(size_bytes: int, s: Sample, factor: float) -> tuple[float, float]:
    """The range the true busbw lies in, given what was printed: the true
    algbw is within half a last-place unit of the printed algbw, and also
    size / time for any time that rounds to the printed time."""
    half_bw = 0.5 * 10.0**-s.bw_places
    lo, hi = s.algbw_gbs - half_bw, s.algbw_gbs + half_bw
    if size_bytes > 0 and s.time_us > 0:
        half_t = 0.5 * 10.0**-s.time_places
        lo = max(lo, size_bytes / ((s.time_us + half_t) * 1e3))
        if s.time_us > half_t:
            hi = min(hi, size_bytes / ((s.time_us - half_t) * 1e3))
    return lo * factor, hi * factor


def busbw_matches(size_bytes: int, s: Sample, factor: float) -> bool:
    """Whether the printed busbw is what algbw * factor rounds to, for some
    algbw consistent with the printed size, time and algbw."""
    lo, hi = busbw_bounds(size_bytes, s, factor)
    if lo > hi + 1e-12:
        return False
    half = 0.5 * 10.0**-s.bw_places
    return lo <= s.busbw_gbs + half + 1e-9 and hi >= s.busbw_gbs - half - 1e-9
