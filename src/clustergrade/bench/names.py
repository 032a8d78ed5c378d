"""Probe names, kept apart so the CLI can list them without loading models."""

PROBES = ("gemm", "memory", "nccl", "ib", "storage", "lifecycle")
