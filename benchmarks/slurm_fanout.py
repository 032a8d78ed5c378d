"""Time `clustergrade audit --slurm` on a real local Slurm cluster with 4 and
then 16 nodes (tools/slurm-local), print both walls and their ratio against
the bar (16-node wall <= 1.5x the 4-node wall: the per-node steps run in
parallel), then the hung-collector and stopped-slurmd cases against
node-timeout + 10 s.

    sudo .venv/bin/python benchmarks/slurm_fanout.py [--runs 3] [--node-timeout 15]

Needs root and the slurm-wlm/munge packages (the launcher installs them when
it may).  Exit 0 when every bar holds, 1 when one does not, 3 when this
machine cannot host the cluster.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = ROOT / "tools" / "slurm-local" / "slurm-local"
RATIO_BAR = 1.5
SLACK_S = 10.0


def start(base: Path, nodes: int) -> dict[str, str]:
    env = {
        **os.environ,
        "TMPDIR": str(base),
        "SLURM_LOCAL_NODES": str(nodes),
        "SLURM_LOCAL_NODE_PREFIX": "bn",
    }
    res = subprocess.run([str(LAUNCHER), "start"], env=env, capture_output=True, text=True)
    if res.returncode == 3:
        print(f"cannot host the local cluster: {res.stderr.strip()[-300:]}", file=sys.stderr)
        raise SystemExit(3)
    if res.returncode != 0:
        raise SystemExit(f"slurm-local start failed:\n{res.stderr[-2000:]}")
    for line in res.stdout.splitlines():
        if line.startswith("export "):
            key, _, value = line.removeprefix("export ").partition("=")
            env[key] = value.strip("'\"")
    return env


def stop(env: dict[str, str]) -> None:
    subprocess.run(
        [str(LAUNCHER), "stop", env["SLURM_LOCAL_DIR"]], env=env, capture_output=True, text=True
    )


def _cpu_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs so far, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


BUSY: dict[int, list[float]] = {}


def node_facts_cpu_s() -> float:
    """CPU seconds one `clustergrade node-facts` costs on this machine."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "clustergrade.slurm.node_main"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    _, _, usage = os.wait4(proc.pid, 0)
    return float(usage.ru_utime + usage.ru_stime)


def audit(env: dict[str, str], runs_dir: Path, *extra: str) -> tuple[float, dict[str, object]]:
    argv = [sys.executable, "-m", "clustergrade.cli", "audit", "--slurm", "-f", "json"]
    argv += ["--runs-dir", str(runs_dir), *extra]
    b0, t0j = _cpu_jiffies()
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    b1, t1j = _cpu_jiffies()
    BUSY.setdefault(int(env["SLURM_LOCAL_NODES"]), []).append((b1 - b0) / max(1, t1j - t0j))
    if not proc.stdout.strip():
        raise SystemExit(f"audit gave no report (rc {proc.returncode}):\n{proc.stderr[-2000:]}")
    report: dict[str, object] = json.loads(proc.stdout)
    return wall, report


def replay_wrapper(base: Path) -> Path:
    """A --node-python that answers with this machine's real facts, collected
    once: what is left is the fan-out itself (srun, parsing, judging)."""
    line = subprocess.run(
        [sys.executable, "-m", "clustergrade.slurm.node_main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    saved = base / "facts.line"
    saved.write_text(line)
    wrapper = base / "replay-python"
    wrapper.write_text(f"#!/bin/sh\nexec cat {saved}\n")
    wrapper.chmod(0o755)
    return wrapper


def fanout_walls(
    base: Path, nodes: int, runs: int, timeout: float, *extra: str
) -> tuple[float, float]:
    env = start(base, nodes)
    try:
        walls, fans = [], []
        for i in range(runs):
            wall, report = audit(
                env, base / f"runs-{nodes}-{i}-{len(extra)}", "--node-timeout", str(timeout), *extra
            )
            run = report["run"]
            assert isinstance(run, dict)
            assert run["node_count"] == nodes, run
            walls.append(wall)
            fans.append(float(run["target"]["details"]["fanout_s"]))
        return statistics.median(walls), statistics.median(fans)
    finally:
        stop(env)


def fault_walls(base: Path, timeout: float) -> tuple[float, float]:
    env = start(base, 4)
    try:
        wrapper = base / "node-python"
        wrapper.write_text(
            '#!/bin/sh\nif [ "$(hostname)" = bn2 ]; then exec sleep 600; fi\n'
            f'exec {sys.executable} "$@"\n'
        )
        wrapper.chmod(0o755)
        hung, _ = audit(
            env,
            base / "runs-hung",
            "--no-probes",
            "--node-timeout",
            str(timeout),
            "--node-python",
            str(wrapper),
        )
        subprocess.run(
            [str(LAUNCHER), "stop-node", "bn4", env["SLURM_LOCAL_DIR"]],
            env=env,
            capture_output=True,
        )
        stopped, _ = audit(
            env, base / "runs-stopped", "--no-probes", "--node-timeout", str(timeout)
        )
        return hung, stopped
    finally:
        stop(env)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--node-timeout", type=float, default=15.0)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root (the local cluster runs real slurmd daemons)", file=sys.stderr)
        return 3
    # munged wants every directory above its socket world-searchable.
    base = Path(tempfile.mkdtemp(prefix="cg-slurm-bench-"))
    base.chmod(0o755)
    try:
        w4, f4 = fanout_walls(base, 4, args.runs, args.node_timeout)
        w16, f16 = fanout_walls(base, 16, args.runs, args.node_timeout)
        replay = ("--node-python", str(replay_wrapper(base)))
        r4, _ = fanout_walls(base, 4, args.runs, args.node_timeout, *replay)
        r16, _ = fanout_walls(base, 16, args.runs, args.node_timeout, *replay)
        hung, stopped = fault_walls(base, args.node_timeout)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    per_node = statistics.median(node_facts_cpu_s() for _ in range(3))
    ratio = w16 / w4
    limit = args.node_timeout + SLACK_S
    ok = ratio <= RATIO_BAR and hung <= limit and stopped <= limit
    print(f"cpus: {os.cpu_count()}  runs: {args.runs} (medians)")
    print(f"4 nodes:  audit wall {w4:6.2f} s  (fan-out {f4:5.2f} s)")
    print(f"16 nodes: audit wall {w16:6.2f} s  (fan-out {f16:5.2f} s)")
    ncpu = os.cpu_count() or 1
    busy4, busy16 = (
        statistics.median(BUSY[4][: args.runs]),
        statistics.median(BUSY[16][: args.runs]),
    )
    print(f"CPU busy during the audit: 4 nodes {busy4:.0%}, 16 nodes {busy16:.0%} of {ncpu} CPUs")
    print(
        f"one node-facts costs {per_node:.2f} CPU-s here; every 'node' shares these {ncpu} CPUs, "
        f"so 16 collectors need >= {16 * per_node / ncpu:.2f} s of wall on CPU alone "
        f"(4: {4 * per_node / ncpu:.2f} s)"
    )
    print(
        f"ratio 16/4: {ratio:.2f}  (bar <= {RATIO_BAR})  {'ok' if ratio <= RATIO_BAR else 'OVER'}"
    )
    print(
        f"fan-out alone (nodes answer with a saved real capture): 4 nodes {r4:.2f} s, "
        f"16 nodes {r16:.2f} s, ratio {r16 / r4:.2f}"
    )
    print(f"hung collector on 1/4 nodes: {hung:6.2f} s  (bar <= {limit:.0f} s)")
    print(f"stopped slurmd on 1/4 nodes: {stopped:6.2f} s  (bar <= {limit:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
