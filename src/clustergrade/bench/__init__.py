"""Performance probes: measurements with units and context, saved per run and judged
against the knowledge base. PyTorch is imported only inside a probe run."""
