"""Collect every node's facts through Slurm itself: one ``srun`` job step per
node, in parallel up to a concurrency limit, each bounded by a timeout.

One srun per node (rather than one srun over all nodes) is what lets a hung
or dead node become an ERROR row for that node while the others complete.
Every step carries the run's job name, so an interrupted fan-out cancels
exactly its own steps with ``scancel --name``.

The nodes run ``<python> -m clustergrade.slurm.node_main``: clustergrade must
be importable there from the same path (a shared home or software tree);
nothing is installed on the nodes.
"""

from __future__ import annotations

import os
import re
import secrets
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from pydantic import ValidationError

from clustergrade.facts.node import NodeFacts
from clustergrade.facts.slurm import IsolationProbe, SlurmFacts, SlurmNode
from clustergrade.seam import CommandResult, Host

#: Node states in which Slurm will not run a step for an ordinary user.
UNREACHABLE_STATES = {
    "DOWN",
    "DRAIN",
    "DRAINED",
    "DRAINING",
    "FAIL",
    "FAILING",
    "NOT_RESPONDING",
    "FUTURE",
    "POWERED_DOWN",
    "POWERING_DOWN",
    "INVAL",
    "UNKNOWN",
}

NodeProgress = Callable[[str, NodeFacts], None]


@dataclass(frozen=True)
class FanoutOptions:
    nodes: Sequence[str] = ()
    partitions: Sequence[str] = ()
    account: str | None = None
    qos: str | None = None
    within_allocation: bool = False
    node_timeout_s: float = 120.0
    concurrency: int = 32
    python: str = sys.executable
    probes: bool = True
    #: Sections the nodes collect (None: all); narrowed by --profile.
    sections: tuple[str, ...] | None = None
    job_name: str = field(default_factory=lambda: f"clustergrade-{secrets.token_hex(3)}")


def select_nodes(
    facts: SlurmFacts, opts: FanoutOptions, expand: Callable[[str], list[str]]
) -> list[str]:
    """The nodes to audit: the given list, else the given partitions' nodes,
    else every node the controller knows."""
    if opts.nodes:
        out: list[str] = []
        for spec in opts.nodes:
            out.extend(expand(spec))
        return list(dict.fromkeys(out))
    if opts.partitions:
        wanted = set(opts.partitions)
        return [n.name for n in facts.nodes if wanted & set(n.partitions)]
    return [n.name for n in facts.nodes]


def expand_hostlist(host: Host, spec: str) -> list[str]:
    """``n[1-4],gpu7`` -> names, using Slurm's own expansion."""
    if not re.search(r"[\[,]", spec):
        return [spec]
    res = host.run(["scontrol", "show", "hostnames", spec], timeout=15)
    if res.ok:
        return [line.strip() for line in res.text.splitlines() if line.strip()]
    return [spec]


def srun_argv(
    node: str, opts: FanoutOptions, command: Sequence[str], extra: Sequence[str] = ()
) -> list[str]:
    minutes = max(1, int(opts.node_timeout_s // 60) + 1)
    argv = [
        "srun",
        "-N1",
        "-n1",
        f"--nodelist={node}",
        f"--job-name={opts.job_name}",
        f"--time={minutes}",
        "--quiet",
        "--kill-on-bad-exit=1",
    ]
    if opts.within_allocation:
        job = os.environ.get("SLURM_JOB_ID")
        if job:
            argv += [f"--jobid={job}", "--overlap"]
    else:
        # Fail fast instead of queueing behind other work on a busy node.
        argv.append(f"--immediate={max(5, int(opts.node_timeout_s // 2))}")
    if opts.account:
        argv.append(f"--account={opts.account}")
    if opts.qos:
        argv.append(f"--qos={opts.qos}")
    return [*argv, *extra, "--", *command]


def node_failure(name: str, problem: str) -> NodeFacts:
    return NodeFacts(
        hostname=name, collected_at=datetime.now(UTC), source=f"slurm:{name}", failure=problem
    )


def parse_node_output(name: str, res: CommandResult, timeout_s: float) -> NodeFacts:
    """A node's srun answer -> its facts, or a failure row saying why."""
    if res.timed_out:
        return node_failure(
            name, f"no answer within {timeout_s:.0f}s (node hung or job step stuck)"
        )
    if not res.ran:
        return node_failure(name, res.describe())
    lines = [ln for ln in res.text.splitlines() if ln.startswith("{")]
    if res.returncode != 0 and not lines:
        return node_failure(name, res.describe())
    if not lines:
        return node_failure(name, "srun returned no node facts (clustergrade not runnable there?)")
    try:
        facts = NodeFacts.model_validate_json(lines[-1])
    except (ValidationError, ValueError) as exc:
        return node_failure(name, f"returned output that is not node facts ({str(exc)[:200]})")
    return facts.model_copy(
        update={"source": f"slurm:{name}", "hostname": name}
        if facts.hostname != name
        else {"source": f"slurm:{name}"}
    )


@dataclass
class FanoutResult:
    nodes: list[NodeFacts]
    probes: list[IsolationProbe]
    interrupted: bool
    duration_s: float


def fan_out(
    host: Host, facts: SlurmFacts, opts: FanoutOptions, progress: NodeProgress | None = None
) -> FanoutResult:
    """Collect every selected node; see the module docstring."""
    t0 = time.monotonic()
    by_name = {n.name: n for n in facts.nodes}
    names = select_nodes(facts, opts, lambda s: expand_hostlist(host, s))
    results: dict[str, NodeFacts] = {}
    lock = threading.Lock()
    todo: list[str] = []
    for name in names:
        node = by_name.get(name)
        bad = sorted(UNREACHABLE_STATES & set(node.states)) if node else []
        if node is None:
            results[name] = node_failure(name, "the controller does not know this node")
        elif bad:
            reason = f" (reason: {node.reason})" if node.reason else ""
            results[name] = node_failure(
                name, f"node state {'+'.join(node.states)}{reason}: Slurm will not run a step there"
            )
        else:
            todo.append(name)
    for name, nf in list(results.items()):
        if progress:
            progress(name, nf)

    command = [opts.python, "-m", "clustergrade.slurm.node_main"]
    for section in opts.sections or ():
        command += ["--section", section]
    queue = list(todo)
    done = threading.Event()

    def worker() -> None:
        while True:
            with lock:
                if not queue:
                    return
                name = queue.pop(0)
            res = host.run(srun_argv(name, opts, command), timeout=opts.node_timeout_s)
            if res.timed_out:
                # Killing srun leaves its job running on the node until the
                # time limit; cancel that node's step of this run only.
                host.run(["scancel", f"--name={opts.job_name}", f"--nodelist={name}"], timeout=15)
            nf = parse_node_output(name, res, opts.node_timeout_s)
            with lock:
                results[name] = nf
                if len(results) == len(names):
                    done.set()
            if progress:
                progress(name, nf)

    threads = [
        threading.Thread(target=worker, daemon=True, name=f"srun-{i}")
        for i in range(max(1, min(opts.concurrency, len(todo))))
    ]
    for t in threads:
        t.start()
    interrupted = False
    try:
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(timeout=0.2)
    except KeyboardInterrupt:
        interrupted = True
        # Cancel exactly this run's steps; whatever already answered is kept.
        host.run(["scancel", f"--name={opts.job_name}"], timeout=15)
    with lock:
        for name in names:
            results.setdefault(name, node_failure(name, "interrupted before this node answered"))
        ordered = [results[n] for n in names]
    probes: list[IsolationProbe] = []
    if opts.probes and not interrupted:
        from clustergrade.slurm.probes import run_probes

        healthy = [n for n in ordered if n.failure is None]
        probes = run_probes(
            host, [by_name[n.hostname] for n in healthy if n.hostname in by_name], opts
        )
    return FanoutResult(ordered, probes, interrupted, time.monotonic() - t0)


def gpu_nodes(nodes: Sequence[SlurmNode]) -> list[SlurmNode]:
    return [n for n in nodes if any(g.name == "gpu" and g.count > 0 for g in n.gres)]
