"""Imports every built-in check module so their checks register."""

from clustergrade.checks import (  # noqa: F401
    fleet,
    gpu,
    host,
    k8s,
    kb_meta,
    kernel_log,
    network,
    security,
    slurm,
    software,
)
