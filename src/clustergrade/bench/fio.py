"""Parse ``fio --output-format=json`` output.

fio may print plain-text lines before the JSON document (a "terminating on
signal" notice, a job banner when stdout is shared), so the document starts
at the first line that is a lone ``{``. Pure; anything unusable raises
FioParseError.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any


class FioParseError(ValueError):
    """The text holds no usable fio JSON document."""


@dataclass(frozen=True)
class FioSide:
    """One direction (read or write) of one job."""

    io_bytes: int
    bw_bytes_s: float
    iops: float
    runtime_ms: int
    lat_mean_ns: float | None


@dataclass(frozen=True)
class FioJob:
    name: str
    rw: str | None
    bs: str | None
    error: int
    read: FioSide | None
    write: FioSide | None


@dataclass(frozen=True)
class FioResult:
    version: str | None
    jobs: list[FioJob]


def _json_start(text: str) -> int:
    if text.lstrip().startswith("{"):
        return text.index("{")
    pos = 0
    for line in text.splitlines(keepends=True):
        if line.strip() == "{":
            return pos + line.index("{")
        pos += len(line)
    raise FioParseError("no JSON document in fio output")


def _num(d: dict[str, Any], key: str) -> float:
    v = d.get(key, 0)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise FioParseError(f"{key}: not a number ({v!r})")
    return float(v)


def _side(d: Any) -> FioSide | None:
    if not isinstance(d, dict):
        return None
    io = int(_num(d, "io_bytes"))
    if io == 0:
        return None
    lat = d.get("lat_ns")
    mean = lat.get("mean") if isinstance(lat, dict) else None
    return FioSide(
        io_bytes=io,
        bw_bytes_s=_num(d, "bw_bytes") if "bw_bytes" in d else _num(d, "bw") * 1024,
        iops=_num(d, "iops"),
        runtime_ms=int(_num(d, "runtime")),
        lat_mean_ns=float(mean) if isinstance(mean, (int, float)) and math.isfinite(mean) else None,
    )


def _opt(job: dict[str, Any], glob: dict[str, Any], key: str) -> str | None:
    opts = job.get("job options")
    for src in (opts if isinstance(opts, dict) else {}, glob):
        v = src.get(key)
        if isinstance(v, str):
            return v
    return None


def parse_fio_json(text: str) -> FioResult:
    if not isinstance(text, str):
        raise FioParseError("expected text")
    start = _json_start(text)
    try:
        doc, _ = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError) as exc:
        raise FioParseError(f"fio JSON does not parse: {str(exc)[:120]}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        raise FioParseError("fio JSON has no jobs list")
    glob = doc.get("global options")
    glob = glob if isinstance(glob, dict) else {}
    jobs = []
    for j in doc["jobs"]:
        if not isinstance(j, dict):
            raise FioParseError("fio job is not an object")
        err = j.get("error", 0)
        jobs.append(
            FioJob(
                name=str(j.get("jobname", "?")),
                rw=_opt(j, glob, "rw"),
                bs=_opt(j, glob, "bs"),
                error=err if isinstance(err, int) and not isinstance(err, bool) else -1,
                read=_side(j.get("read")),
                write=_side(j.get("write")),
            )
        )
    version = doc.get("fio version")
    return FioResult(version if isinstance(version, str) else None, jobs)
