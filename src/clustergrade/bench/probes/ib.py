"""RDMA write bandwidth per HCA with perftest's ib_write_bw, against a peer
that runs the server side (``ib_write_bw -d <dev> --report_gbits -F``)."""

from __future__ import annotations

from clustergrade.bench.model import Measurement
from clustergrade.bench.perftest import BwResult, PerftestParseError, parse_bw
from clustergrade.bench.probes.base import ProbeContext, ProbeSkip, measurement


def from_perftest(ctx: ProbeContext, result: BwResult, source: str = "perftest") -> Measurement:
    """The largest message size's average: the one that shows the link, not the stack."""
    row = max(result.rows, key=lambda r: r.size_bytes)
    return measurement(
        ctx,
        "ib",
        "ib.write_bw",
        result.average_gbits(row),
        "Gb/s",
        source=source,
        hca=result.device,
        link_type=result.link_type,
        size_bytes=row.size_bytes,
        iterations=row.iterations,
        peak=row.peak,
        unit_printed=result.unit,
    )


def run(ctx: ProbeContext) -> list[Measurement]:
    probe = ctx.host.run(["ib_write_bw", "--version"], timeout=10)
    if probe.not_found:
        raise ProbeSkip("ib_write_bw (perftest) is not installed")
    listing = ctx.host.listdir("/sys/class/infiniband")
    devices = sorted(listing.entries or ())
    if not devices:
        raise ProbeSkip("no RDMA devices under /sys/class/infiniband")
    if not ctx.ib_peer:
        raise ProbeSkip(
            f"{len(devices)} RDMA device(s), but ib_write_bw needs a peer running the server (--ib-peer HOST)"
        )
    out = []
    for dev in devices:
        res = ctx.host.run(
            [
                "ib_write_bw",
                "-d",
                dev,
                "--report_gbits",
                "-F",
                "-D",
                "2" if ctx.quick else "5",
                ctx.ib_peer,
            ],
            timeout=60,
        )
        if not res.ok:
            ctx.note(f"{dev}: {res.describe()}")
            continue
        try:
            out.append(from_perftest(ctx, parse_bw(res.text)))
        except PerftestParseError as exc:
            ctx.note(f"{dev}: {exc}")
    return out
