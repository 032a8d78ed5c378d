"""The probes, one module each; every one has a CPU path."""
