"""Time `clustergrade audit` on this machine side by side with the public
ClusterMAX CLI (`cmax audit --local --yes`), and compare check counts.

    python benchmarks/audit_vs_cmax.py [--runs 5]

Installs clustermax==0.2.1 into benchmarks/.cache/cmax-venv on first use (from
the package registry).  Prints both medians, the ratio, peak memory and how
many checks each applied.  The bar: clustergrade at most 0.25x cmax's wall
time with at least as many applicable checks, under 100 MiB peak RSS.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import time_process

HERE = Path(__file__).parent
CACHE = HERE / ".cache"
CMAX_VERSION = "0.2.1"


def cmax_bin() -> Path:
    venv = CACHE / "cmax-venv"
    exe = venv / "bin" / "cmax"
    if not exe.exists():
        CACHE.mkdir(exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", f"clustermax=={CMAX_VERSION}"], check=True
        )
    return exe


def cmax_counts(text: str) -> dict[str, int]:
    m = re.search(r"(\d+) failed, (\d+) warnings?, (\d+) passed, (\d+) skipped", text)
    if not m:
        raise SystemExit(f"could not find cmax's summary line in its output:\n{text[-2000:]}")
    failed, warned, passed, skipped = map(int, m.groups())
    return {
        "FAIL": failed,
        "WARN": warned,
        "PASS": passed,
        "SKIP": skipped,
        "total": failed + warned + passed + skipped,
        "applicable": failed + warned + passed,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()

    home = tempfile.mkdtemp(prefix="cmax-home-")
    cmax = time_process(
        [str(cmax_bin()), "audit", "--local", "--yes"],
        args.runs,
        env={"HOME": home, "NO_COLOR": "1"},
        cwd=home,
    )
    cmax_c = cmax_counts(cmax.last_stdout)

    ours = time_process(
        [sys.executable, "-m", "clustergrade.cli", "audit", "--no-save", "--format", "json"],
        args.runs,
    )
    rep = json.loads(ours.last_stdout)
    counts = rep["summary"]["counts"]
    applicable = rep["summary"]["applicable_checks"]
    results_applicable = sum(v for k, v in counts.items() if k != "SKIP")

    ratio = ours.median / cmax.median
    print(f"{'':24}{'clustergrade':>16}{'cmax ' + CMAX_VERSION:>16}")
    print(f"{'median wall (s)':24}{ours.median:>16.3f}{cmax.median:>16.3f}")
    print(
        f"{'all runs (s)':24}{' '.join(f'{w:.2f}' for w in ours.wall_s):>16}  "
        f"{' '.join(f'{w:.2f}' for w in cmax.wall_s)}"
    )
    print(f"{'peak RSS (MiB)':24}{ours.peak:>16.1f}{cmax.peak:>16.1f}")
    print(f"{'checks':24}{rep['summary']['checks']:>16}{cmax_c['total']:>16}")
    print(f"{'applicable checks':24}{applicable:>16}{cmax_c['applicable']:>16}")
    print(f"{'applicable results':24}{results_applicable:>16}{cmax_c['applicable']:>16}")
    print(
        f"{'PASS/WARN/FAIL/ERROR':24}"
        f"{counts['PASS']}/{counts['WARN']}/{counts['FAIL']}/{counts['ERROR']:<6}".rjust(40)
        + f"{cmax_c['PASS']}/{cmax_c['WARN']}/{cmax_c['FAIL']}/-".rjust(16)
    )
    print(f"ratio clustergrade/cmax wall time: {ratio:.3f} (bar: <= 0.25)")
    ok = ratio <= 0.25 and applicable >= cmax_c["applicable"] and ours.peak < 100
    print("bar met" if ok else "BAR NOT MET")


if __name__ == "__main__":
    main()
