"""Slurm: cluster-level facts from the controller's view, and the fan-out that
collects every node's facts through srun."""
