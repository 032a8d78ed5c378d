"""``clustergrade health``: a fast, passive node check fit to run every minute
(Slurm HealthCheckProgram or prolog, Kubernetes node-problem-detector,
node_exporter's textfile collector).

It reuses the audit's collectors (only the sections it needs) and checks,
and adds what a one-shot audit cannot do: remembering, in a small state
file, which kernel-log errors and counter readings it has already seen, so
that an Xid is reported once and error counters are judged by their rate.
"""
