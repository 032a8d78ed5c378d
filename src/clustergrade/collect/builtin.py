"""Imports every built-in collector module so their collectors register."""

from clustergrade.collect import (  # noqa: F401
    gpu,
    host,
    kernel_log,
    network,
    security,
    software,
)
