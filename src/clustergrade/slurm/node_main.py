"""The node side of the Slurm fan-out: collect this node and print its facts
as one JSON line.  Run as ``python -m clustergrade.slurm.node_main
[--section S ...]``; kept free of the CLI's imports (typer, rich) because it
starts once per node and its start-up is the fan-out's CPU cost."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="clustergrade-node-facts")
    ap.add_argument("--section", action="append", default=None)
    args = ap.parse_args(argv)

    from clustergrade.collect.runner import collect_node
    from clustergrade.seam import LocalHost

    facts = collect_node(LocalHost(), args.section or None, source="slurm")
    sys.stdout.write(facts.model_dump_json() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
