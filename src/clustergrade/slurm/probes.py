"""Tenant-isolation probes that need a node: each says how it tested and what
it saw.  They run as the auditing user, as ordinary jobs, and leave nothing
behind (the /tmp marker is removed by the probe that finds it, or vanishes
with a private /tmp)."""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING

from clustergrade.facts.slurm import IsolationProbe, SlurmNode
from clustergrade.seam import Host

if TYPE_CHECKING:
    from clustergrade.slurm.fanout import FanoutOptions


def run_probes(host: Host, nodes: Sequence[SlurmNode], opts: FanoutOptions) -> list[IsolationProbe]:
    if not nodes:
        return []
    from clustergrade.slurm.fanout import gpu_nodes, srun_argv

    node = nodes[0]
    py = [opts.python, "-m", "clustergrade.cli", "node-probe"]
    out = [_ssh_probe(host, node.name)]

    token = secrets.token_hex(8)
    first = host.run(
        srun_argv(node.name, opts, [*py, "tmp-mark", token]), timeout=opts.node_timeout_s
    )
    second = host.run(
        srun_argv(node.name, opts, [*py, "tmp-check", token]), timeout=opts.node_timeout_s
    )
    if first.ok and second.ok:
        seen = second.text.strip().endswith("present")
        out.append(
            IsolationProbe(
                probe="tmp-shared-between-jobs",
                method=f"job 1 on {node.name} wrote /tmp/clustergrade-probe-<token>; job 2 on the same "
                "node looked for it (and removed it)",
                observed="job 2 saw job 1's /tmp file"
                if seen
                else "job 2 did not see job 1's /tmp file",
                exposed=seen,
            )
        )
    else:
        bad = first if not first.ok else second
        out.append(
            IsolationProbe(
                probe="tmp-shared-between-jobs",
                method="two jobs on one node",
                observed="a probe job failed",
                error=bad.describe()[:300],
            )
        )

    gnodes = gpu_nodes(nodes)
    if gnodes:
        g = gnodes[0]
        total = max(x.count for x in g.gres if x.name == "gpu")
        res = host.run(
            srun_argv(g.name, opts, [*py, "gpus"], extra=["--gres=gpu:1"]),
            timeout=opts.node_timeout_s,
        )
        if res.ok:
            try:
                seen_gpus = json.loads(res.text.strip().splitlines()[-1])
            except (ValueError, IndexError):
                seen_gpus = None
        else:
            seen_gpus = None
        if isinstance(seen_gpus, dict):
            openable = int(seen_gpus.get("openable", 0))
            devices = int(seen_gpus.get("devices", 0))
            exposed: bool | None = openable > 1 if devices else None
            obs = (
                f"a 1-GPU job on {g.name} (node has {total}) could open {openable} of "
                f"{devices} /dev/nvidiaN devices; CUDA_VISIBLE_DEVICES="
                f"{seen_gpus.get('cuda_visible_devices')!s}"
            )
            if not devices:
                obs += " (no GPU device files on the node: cannot tell)"
            out.append(
                IsolationProbe(
                    probe="gpus-outside-allocation",
                    method="srun --gres=gpu:1, then open each /dev/nvidiaN",
                    observed=obs,
                    exposed=exposed,
                )
            )
        else:
            out.append(
                IsolationProbe(
                    probe="gpus-outside-allocation",
                    method="srun --gres=gpu:1",
                    observed="probe job failed",
                    error=res.describe()[:300],
                )
            )
    return out


def _ssh_probe(host: Host, node: str) -> IsolationProbe:
    # BatchMode: never prompt; a throwaway known-hosts file: write nothing.
    res = host.run(
        [
            "ssh",
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=5",
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
            node,
            "true",
        ],
        timeout=15,
    )
    method = f"ssh -o BatchMode=yes {node} true, without an allocation"
    if res.not_found:
        return IsolationProbe(
            probe="ssh-without-allocation",
            method=method,
            observed="no ssh client on the login node",
            exposed=None,
        )
    if res.ok:
        return IsolationProbe(
            probe="ssh-without-allocation",
            method=method,
            observed=f"logged in to {node} with no job there",
            exposed=True,
        )
    text = (res.err_text + res.text).lower()
    if "permission denied" in text or "access denied" in text or "pam_slurm" in text:
        return IsolationProbe(
            probe="ssh-without-allocation",
            method=method,
            observed=f"refused: {res.err_text.strip()[:200]}",
            exposed=False,
        )
    return IsolationProbe(
        probe="ssh-without-allocation",
        method=method,
        observed=f"could not connect: {res.describe()[:200]}",
        exposed=None,
    )
