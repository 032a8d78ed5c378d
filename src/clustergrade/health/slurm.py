"""Slurm glue: HealthCheckProgram takes a path, not a command line, so the
health check is installed behind a tiny wrapper script."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

DEFAULT_ARGS = ("--mode", "slurm", "--drain")


def healthcheck_script(command: Sequence[str], args: Sequence[str] = DEFAULT_ARGS) -> str:
    """The text of an executable wrapper for ``HealthCheckProgram=`` (or a
    prolog): ``command`` is how to start clustergrade on the node, e.g.
    ``["/opt/clustergrade/bin/clustergrade", "health"]``.

    slurmd ignores HealthCheckProgram's exit status, so the script drains by
    itself (``--drain``); as a prolog a non-zero exit drains the node anyway.
    """
    if not command:
        raise ValueError("command must name the clustergrade executable")
    line = " ".join(shlex.quote(a) for a in [*command, *args])
    return f'#!/bin/sh\n# Installed for Slurm by clustergrade.\nexec {line} "$@"\n'
