"""Imports every built-in check module so their checks register."""

from clustergrade.checks import (  # noqa: F401
    gpu,
    host,
    kernel_log,
    kb_meta,
    network,
    security,
    slurm,
    software,
)
