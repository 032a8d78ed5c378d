"""Parse perftest bandwidth output (ib_write_bw, ib_read_bw, ib_send_bw).

Rows follow the ``#bytes #iterations BW peak[...] BW average[...] MsgRate``
header; the unit is whatever the header says (Gb/sec with --report_gbits,
else MB/sec). Pure; no rows raises PerftestParseError.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass


class PerftestParseError(ValueError):
    """The text holds no perftest bandwidth rows."""


@dataclass(frozen=True)
class BwRow:
    size_bytes: int
    iterations: int
    peak: float
    average: float
    msg_rate_mpps: float | None


@dataclass(frozen=True)
class BwResult:
    test: str | None
    device: str | None
    link_type: str | None
    #: "Gb/sec" or "MB/sec", as the header printed it.
    unit: str
    rows: list[BwRow]

    def average_gbits(self, row: BwRow) -> float:
        """The row's average in Gb/s (perftest's MB is 2**20 bytes)."""
        if self.unit == "Gb/sec":
            return row.average
        return row.average * 2**20 * 8 / 1e9


_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[(\w+/sec)\]\s+BW average\[(\w+/sec)\]")
_NUM = r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_ROW = re.compile(rf"^\s*(\d+)\s+(\d+)\s+({_NUM})\s+({_NUM})(?:\s+({_NUM}))?\s*$")
_TEST = re.compile(r"^\s*(\S.*?\b(?:BW|Bandwidth)\b.*?Test)\s*$")
_DEVICE = re.compile(r"Device\s*:\s*(\S+)")
_LINK = re.compile(r"Link type\s*:\s*(\S+)")


def _f(s: str) -> float:
    v = float(s)
    if not math.isfinite(v):
        raise PerftestParseError(f"non-finite number {s!r}")
    return v


def parse_bw(text: str) -> BwResult:
    if not isinstance(text, str):
        raise PerftestParseError("expected text")
    test = device = link = unit = None
    rows: list[BwRow] = []
    for line in text.splitlines():
        if unit is None:
            if test is None and (m := _TEST.match(line)):
                test = m.group(1)
            if device is None and (m := _DEVICE.search(line)):
                device = m.group(1)
            if link is None and (m := _LINK.search(line)):
                link = m.group(1)
            if m := _HEADER.search(line):
                unit = m.group(2)
            continue
        if m := _ROW.match(line):
            rate = m.group(5)
            rows.append(
                BwRow(
                    int(m.group(1)),
                    int(m.group(2)),
                    _f(m.group(3)),
                    _f(m.group(4)),
                    _f(rate) if rate is not None else None,
                )
            )
    if unit is None:
        raise PerftestParseError("no perftest bandwidth header")
    if not rows:
        raise PerftestParseError("perftest header but no result rows")
    return BwResult(test, device, link, unit, rows)
