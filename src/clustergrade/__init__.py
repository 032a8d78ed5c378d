"""clustergrade: audit, benchmark, burn in and rate GPU clusters."""

__version__ = "0.1.0"
